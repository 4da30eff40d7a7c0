package conf

// Config is a parsed slurm.conf with Slurm 22.05's defaults applied.
//
// Every top-level key the 22.05 parser accepts has a field tagged
// `slurm:"Name,kind"`; kind says how Slurm's parser reads the value:
//
//	str      string (kept as written, quotes removed)
//	list     comma separated list (commas inside [...] do not split)
//	opts     comma separated options, each "name" or "name=value"
//	u16/u32/u64  unsigned integer as Slurm reads it: decimal, 0x hex or 0
//	         octal; u32/u64 accept a trailing k/K (x1024); UNLIMITED and
//	         INFINITE give the all-ones value of the width
//	bool     YES/NO, TRUE/FALSE, UP/DOWN, 1/0 (any case)
//	tmin     job time syntax (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]),
//	         rounded up to minutes and stored as seconds
//	tsec     job time syntax stored as seconds
//	special  read by code in slurmconf.go (raw value kept here)
//
// and `def:"..."` gives the 22.05 default in slurm.conf syntax. Durations
// carry their unit in the type (Seconds, Minutes, Microseconds); memory
// sizes are MB. Obsolete keys are accepted with the diagnostics 22.05 gives.
type Config struct {
	AccountingStorageBackupHost    string       `slurm:"AccountingStorageBackupHost,str"`
	AccountingStorageEnforce       Options      `slurm:"AccountingStorageEnforce,opts"`
	AccountingStorageExternalHost  string       `slurm:"AccountingStorageExternalHost,str"`
	AccountingStorageHost          string       `slurm:"AccountingStorageHost,str" def:"localhost"`
	AccountingStorageLoc           string       `slurm:"AccountingStorageLoc,str,obsolete"`
	AccountingStorageParameters    Options      `slurm:"AccountingStorageParameters,opts"`
	AccountingStoragePass          string       `slurm:"AccountingStoragePass,str"`
	AccountingStoragePort          uint16       `slurm:"AccountingStoragePort,u16"`
	AccountingStorageTRES          List         `slurm:"AccountingStorageTRES,list"`
	AccountingStorageType          string       `slurm:"AccountingStorageType,str" def:"accounting_storage/none"`
	AccountingStorageUser          string       `slurm:"AccountingStorageUser,str" def:"root"`
	AccountingStoreFlags           List         `slurm:"AccountingStoreFlags,list"`
	AccountingStoreJobComment      bool         `slurm:"AccountingStoreJobComment,bool,obsolete"`
	AcctGatherEnergyType           string       `slurm:"AcctGatherEnergyType,str" def:"acct_gather_energy/none"`
	AcctGatherFilesystemType       string       `slurm:"AcctGatherFilesystemType,str" def:"acct_gather_filesystem/none"`
	AcctGatherInfinibandType       string       `slurm:"AcctGatherInfinibandType,str,obsolete"`
	AcctGatherInterconnectType     string       `slurm:"AcctGatherInterconnectType,str" def:"acct_gather_interconnect/none"`
	AcctGatherNodeFreq             Seconds      `slurm:"AcctGatherNodeFreq,u16" def:"0"`
	AcctGatherProfileType          string       `slurm:"AcctGatherProfileType,str" def:"acct_gather_profile/none"`
	AllowSpecResourcesUsage        bool         `slurm:"AllowSpecResourcesUsage,bool" def:"no"`
	AuthAltParameters              Options      `slurm:"AuthAltParameters,opts"`
	AuthAltTypes                   List         `slurm:"AuthAltTypes,list"`
	AuthInfo                       Options      `slurm:"AuthInfo,opts"`
	AuthType                       string       `slurm:"AuthType,str" def:"auth/munge"`
	BackupAddr                     string       `slurm:"BackupAddr,str,obsolete"`
	BackupController               string       `slurm:"BackupController,str,obsolete"`
	BatchStartTimeout              Seconds      `slurm:"BatchStartTimeout,u16" def:"10"`
	BcastExclude                   List         `slurm:"BcastExclude,list" def:"/lib,/usr/lib,/lib64,/usr/lib64"`
	BcastParameters                Options      `slurm:"BcastParameters,opts"`
	BurstBufferParameters          string       `slurm:"BurstBufferParameters,str,obsolete"`
	BurstBufferType                string       `slurm:"BurstBufferType,str"`
	CliFilterPlugins               List         `slurm:"CliFilterPlugins,list"`
	ClusterName                    string       `slurm:"ClusterName,str"`
	CommunicationParameters        Options      `slurm:"CommunicationParameters,opts"`
	CompleteWait                   Seconds      `slurm:"CompleteWait,u16" def:"0"`
	ControlAddr                    string       `slurm:"ControlAddr,str,obsolete"`
	ControlMachine                 string       `slurm:"ControlMachine,str,obsolete"`
	CoreSpecPlugin                 string       `slurm:"CoreSpecPlugin,str" def:"core_spec/none"`
	CpuFreqDef                     string       `slurm:"CpuFreqDef,str"`
	CpuFreqGovernors               List         `slurm:"CpuFreqGovernors,list" def:"OnDemand,Performance,UserSpace"`
	CredType                       string       `slurm:"CredType,str"`
	CryptoType                     string       `slurm:"CryptoType,str,obsolete"`
	DebugFlags                     List         `slurm:"DebugFlags,list"`
	DefCPUPerGPU                   uint64       `slurm:"DefCPUPerGPU,u64"`
	DefMemPerCPU                   MB           `slurm:"DefMemPerCPU,u64"`
	DefMemPerGPU                   MB           `slurm:"DefMemPerGPU,u64"`
	DefMemPerNode                  MB           `slurm:"DefMemPerNode,u64"`
	DependencyParameters           Options      `slurm:"DependencyParameters,opts"`
	DisableRootJobs                bool         `slurm:"DisableRootJobs,bool" def:"no"`
	EioTimeout                     Seconds      `slurm:"EioTimeout,u16" def:"60"`
	EnforcePartLimits              string       `slurm:"EnforcePartLimits,special" def:"NO"`
	Epilog                         string       `slurm:"Epilog,str"`
	EpilogMsgTime                  Microseconds `slurm:"EpilogMsgTime,u32" def:"2000"`
	EpilogSlurmctld                string       `slurm:"EpilogSlurmctld,str"`
	ExtSensorsFreq                 Seconds      `slurm:"ExtSensorsFreq,u16" def:"0"`
	ExtSensorsType                 string       `slurm:"ExtSensorsType,str" def:"ext_sensors/none"`
	FairShareDampeningFactor       uint16       `slurm:"FairShareDampeningFactor,u16" def:"1"`
	FastSchedule                   uint16       `slurm:"FastSchedule,u16,obsolete"`
	FederationParameters           Options      `slurm:"FederationParameters,opts"`
	FirstJobId                     uint32       `slurm:"FirstJobId,u32" def:"1"`
	GetEnvTimeout                  Seconds      `slurm:"GetEnvTimeout,u16" def:"2"`
	GpuFreqDef                     string       `slurm:"GpuFreqDef,str" def:"high,memory=high"`
	GresTypes                      List         `slurm:"GresTypes,list"`
	GroupUpdateForce               uint16       `slurm:"GroupUpdateForce,u16" def:"1"`
	GroupUpdateTime                Seconds      `slurm:"GroupUpdateTime,u16" def:"600"`
	HealthCheckInterval            Seconds      `slurm:"HealthCheckInterval,u16" def:"0"`
	HealthCheckNodeState           List         `slurm:"HealthCheckNodeState,list" def:"ANY"`
	HealthCheckProgram             string       `slurm:"HealthCheckProgram,str"`
	InactiveLimit                  Seconds      `slurm:"InactiveLimit,u16" def:"0"`
	InteractiveStepOptions         string       `slurm:"InteractiveStepOptions,str" def:"--interactive --preserve-env --pty $SHELL"`
	JobAcctGatherFrequency         Options      `slurm:"JobAcctGatherFrequency,opts" def:"30"`
	JobAcctGatherParams            Options      `slurm:"JobAcctGatherParams,opts"`
	JobAcctGatherType              string       `slurm:"JobAcctGatherType,str" def:"jobacct_gather/none"`
	JobCompHost                    string       `slurm:"JobCompHost,str" def:"localhost"`
	JobCompLoc                     string       `slurm:"JobCompLoc,str"`
	JobCompParams                  Options      `slurm:"JobCompParams,opts"`
	JobCompPass                    string       `slurm:"JobCompPass,str"`
	JobCompPort                    uint32       `slurm:"JobCompPort,u32"`
	JobCompType                    string       `slurm:"JobCompType,str" def:"jobcomp/none"`
	JobCompUser                    string       `slurm:"JobCompUser,str" def:"root"`
	JobContainerType               string       `slurm:"JobContainerType,str" def:"job_container/none"`
	JobCredentialPrivateKey        string       `slurm:"JobCredentialPrivateKey,str,obsolete"`
	JobCredentialPublicCertificate string       `slurm:"JobCredentialPublicCertificate,str,obsolete"`
	JobFileAppend                  uint16       `slurm:"JobFileAppend,u16" def:"0"`
	JobRequeue                     uint16       `slurm:"JobRequeue,u16" def:"1"`
	JobSubmitPlugins               List         `slurm:"JobSubmitPlugins,list"`
	KeepAliveTime                  Seconds      `slurm:"KeepAliveTime,u32,obsolete"`
	KillOnBadExit                  uint16       `slurm:"KillOnBadExit,u16" def:"0"`
	KillWait                       Seconds      `slurm:"KillWait,u16" def:"30"`
	LaunchParameters               Options      `slurm:"LaunchParameters,opts"`
	LaunchType                     string       `slurm:"LaunchType,str" def:"launch/slurm"`
	Licenses                       List         `slurm:"Licenses,list"`
	LogTimeFormat                  string       `slurm:"LogTimeFormat,special" def:"iso8601_ms"`
	MailDomain                     string       `slurm:"MailDomain,str"`
	MailProg                       string       `slurm:"MailProg,str" def:"/bin/mail"`
	MaxArraySize                   uint32       `slurm:"MaxArraySize,u32" def:"1001"`
	MaxDBDMsgs                     uint32       `slurm:"MaxDBDMsgs,u32" def:"0"`
	MaxJobCount                    uint32       `slurm:"MaxJobCount,u32" def:"10000"`
	MaxJobId                       uint32       `slurm:"MaxJobId,u32" def:"67043328"`
	MaxMemPerCPU                   MB           `slurm:"MaxMemPerCPU,u64"`
	MaxMemPerNode                  MB           `slurm:"MaxMemPerNode,u64"`
	MaxNodeCount                   uint32       `slurm:"MaxNodeCount,u32"`
	MaxStepCount                   uint32       `slurm:"MaxStepCount,u32" def:"40000"`
	MaxTasksPerNode                uint16       `slurm:"MaxTasksPerNode,u16" def:"512"`
	MCSParameters                  string       `slurm:"MCSParameters,str"`
	MCSPlugin                      string       `slurm:"MCSPlugin,str" def:"mcs/none"`
	MessageTimeout                 Seconds      `slurm:"MessageTimeout,u16" def:"10"`
	MinJobAge                      Seconds      `slurm:"MinJobAge,u32" def:"300"`
	MpiDefault                     string       `slurm:"MpiDefault,str" def:"none"`
	MpiParams                      Options      `slurm:"MpiParams,opts"`
	NodeFeaturesPlugins            List         `slurm:"NodeFeaturesPlugins,list"`
	OverTimeLimit                  Minutes      `slurm:"OverTimeLimit,u16" def:"0"`
	PluginDir                      string       `slurm:"PluginDir,str" def:"/usr/lib/x86_64-linux-gnu/slurm-wlm"`
	PlugStackConfig                string       `slurm:"PlugStackConfig,str"`
	PowerParameters                Options      `slurm:"PowerParameters,opts"`
	PowerPlugin                    string       `slurm:"PowerPlugin,str"`
	PreemptExemptTime              Seconds      `slurm:"PreemptExemptTime,tsec" def:"0"`
	PreemptMode                    List         `slurm:"PreemptMode,special" def:"OFF"`
	PreemptType                    string       `slurm:"PreemptType,str" def:"preempt/none"`
	PrEpParameters                 Options      `slurm:"PrEpParameters,opts"`
	PrEpPlugins                    List         `slurm:"PrEpPlugins,list" def:"prep/script"`
	PriorityCalcPeriod             Seconds      `slurm:"PriorityCalcPeriod,tmin" def:"5"`
	PriorityDecayHalfLife          Seconds      `slurm:"PriorityDecayHalfLife,tmin" def:"7-0"`
	PriorityFavorSmall             bool         `slurm:"PriorityFavorSmall,bool" def:"no"`
	PriorityFlags                  List         `slurm:"PriorityFlags,list"`
	PriorityMaxAge                 Seconds      `slurm:"PriorityMaxAge,tmin" def:"7-0"`
	PriorityParameters             Options      `slurm:"PriorityParameters,opts"`
	PrioritySiteFactorParameters   Options      `slurm:"PrioritySiteFactorParameters,opts"`
	PrioritySiteFactorPlugin       string       `slurm:"PrioritySiteFactorPlugin,str" def:"site_factor/none"`
	PriorityType                   string       `slurm:"PriorityType,str" def:"priority/basic"`
	PriorityUsageResetPeriod       string       `slurm:"PriorityUsageResetPeriod,special" def:"NONE"`
	PriorityWeightAge              uint32       `slurm:"PriorityWeightAge,u32" def:"0"`
	PriorityWeightAssoc            uint32       `slurm:"PriorityWeightAssoc,u32" def:"0"`
	PriorityWeightFairshare        uint32       `slurm:"PriorityWeightFairshare,u32" def:"0"`
	PriorityWeightJobSize          uint32       `slurm:"PriorityWeightJobSize,u32" def:"0"`
	PriorityWeightPartition        uint32       `slurm:"PriorityWeightPartition,u32" def:"0"`
	PriorityWeightQOS              uint32       `slurm:"PriorityWeightQOS,u32" def:"0"`
	PriorityWeightTRES             Options      `slurm:"PriorityWeightTRES,opts"`
	PrivateData                    List         `slurm:"PrivateData,list"`
	ProctrackType                  string       `slurm:"ProctrackType,str" def:"proctrack/cgroup"`
	Prolog                         string       `slurm:"Prolog,str"`
	PrologEpilogTimeout            Seconds      `slurm:"PrologEpilogTimeout,u16" def:"65534"`
	PrologFlags                    List         `slurm:"PrologFlags,list"`
	PrologSlurmctld                string       `slurm:"PrologSlurmctld,str"`
	PropagatePrioProcess           uint16       `slurm:"PropagatePrioProcess,u16" def:"0"`
	PropagateResourceLimits        List         `slurm:"PropagateResourceLimits,list"`
	PropagateResourceLimitsExcept  List         `slurm:"PropagateResourceLimitsExcept,list"`
	RebootProgram                  string       `slurm:"RebootProgram,str"`
	ReconfigFlags                  List         `slurm:"ReconfigFlags,list"`
	RequeueExit                    List         `slurm:"RequeueExit,list"`
	RequeueExitHold                List         `slurm:"RequeueExitHold,list"`
	ResumeFailProgram              string       `slurm:"ResumeFailProgram,str"`
	ResumeProgram                  string       `slurm:"ResumeProgram,str"`
	ResumeRate                     uint16       `slurm:"ResumeRate,u16" def:"300"`
	ResumeTimeout                  Seconds      `slurm:"ResumeTimeout,u16" def:"60"`
	ResvEpilog                     string       `slurm:"ResvEpilog,str"`
	ResvOverRun                    Minutes      `slurm:"ResvOverRun,u16" def:"0"`
	ResvProlog                     string       `slurm:"ResvProlog,str"`
	ReturnToService                uint16       `slurm:"ReturnToService,u16" def:"0"`
	RoutePlugin                    string       `slurm:"RoutePlugin,str" def:"route/default"`
	SallocDefaultCommand           string       `slurm:"SallocDefaultCommand,str,obsolete"`
	SbcastParameters               Options      `slurm:"SbcastParameters,opts,obsolete"`
	SchedulerAuth                  string       `slurm:"SchedulerAuth,str,obsolete"`
	SchedulerParameters            Options      `slurm:"SchedulerParameters,opts"`
	SchedulerTimeSlice             Seconds      `slurm:"SchedulerTimeSlice,u16" def:"30"`
	SchedulerType                  string       `slurm:"SchedulerType,str" def:"sched/backfill"`
	ScronParameters                Options      `slurm:"ScronParameters,opts"`
	SelectType                     string       `slurm:"SelectType,str" def:"select/linear"`
	SelectTypeParameters           List         `slurm:"SelectTypeParameters,list"`
	SlurmctldAddr                  string       `slurm:"SlurmctldAddr,str"`
	SlurmctldDebug                 string       `slurm:"SlurmctldDebug,special" def:"info"`
	SlurmctldLogFile               string       `slurm:"SlurmctldLogFile,str"`
	SlurmctldParameters            Options      `slurm:"SlurmctldParameters,opts"`
	SlurmctldPidFile               string       `slurm:"SlurmctldPidFile,str" def:"/run/slurmctld.pid"`
	SlurmctldPlugstack             List         `slurm:"SlurmctldPlugstack,list"`
	SlurmctldPort                  PortRange    `slurm:"SlurmctldPort,special" def:"6817"`
	SlurmctldPrimaryOffProg        string       `slurm:"SlurmctldPrimaryOffProg,str"`
	SlurmctldPrimaryOnProg         string       `slurm:"SlurmctldPrimaryOnProg,str"`
	SlurmctldSyslogDebug           string       `slurm:"SlurmctldSyslogDebug,special"`
	SlurmctldTimeout               Seconds      `slurm:"SlurmctldTimeout,u16" def:"120"`
	SlurmdDebug                    string       `slurm:"SlurmdDebug,special" def:"info"`
	SlurmdLogFile                  string       `slurm:"SlurmdLogFile,str"`
	SlurmdParameters               Options      `slurm:"SlurmdParameters,opts"`
	SlurmdPidFile                  string       `slurm:"SlurmdPidFile,str" def:"/run/slurmd.pid"`
	SlurmdPort                     uint32       `slurm:"SlurmdPort,u32" def:"6818"`
	SlurmdSpoolDir                 string       `slurm:"SlurmdSpoolDir,str" def:"/var/spool/slurmd"`
	SlurmdSyslogDebug              string       `slurm:"SlurmdSyslogDebug,special"`
	SlurmdTimeout                  Seconds      `slurm:"SlurmdTimeout,u16" def:"300"`
	SlurmdUser                     string       `slurm:"SlurmdUser,str" def:"root"`
	SlurmSchedLogFile              string       `slurm:"SlurmSchedLogFile,str"`
	SlurmSchedLogLevel             uint16       `slurm:"SlurmSchedLogLevel,u16" def:"0"`
	SlurmUser                      string       `slurm:"SlurmUser,str" def:"root"`
	SrunEpilog                     string       `slurm:"SrunEpilog,str"`
	SrunPortRange                  PortRange    `slurm:"SrunPortRange,special"`
	SrunProlog                     string       `slurm:"SrunProlog,str"`
	StateSaveLocation              string       `slurm:"StateSaveLocation,str" def:"/var/spool"`
	SuspendExcNodes                string       `slurm:"SuspendExcNodes,str"`
	SuspendExcParts                List         `slurm:"SuspendExcParts,list"`
	SuspendProgram                 string       `slurm:"SuspendProgram,str"`
	SuspendRate                    uint16       `slurm:"SuspendRate,u16" def:"60"`
	SuspendTime                    Seconds      `slurm:"SuspendTime,special" def:"NONE"`
	SuspendTimeout                 Seconds      `slurm:"SuspendTimeout,u16" def:"30"`
	SwitchParameters               Options      `slurm:"SwitchParameters,opts"`
	SwitchType                     string       `slurm:"SwitchType,str" def:"switch/none"`
	TaskEpilog                     string       `slurm:"TaskEpilog,str"`
	TaskPlugin                     List         `slurm:"TaskPlugin,list" def:"task/none"`
	TaskPluginParam                List         `slurm:"TaskPluginParam,list"`
	TaskProlog                     string       `slurm:"TaskProlog,str"`
	TCPTimeout                     Seconds      `slurm:"TCPTimeout,u16" def:"2"`
	TmpFS                          string       `slurm:"TmpFS,str" def:"/tmp"`
	TopologyParam                  Options      `slurm:"TopologyParam,opts"`
	TopologyPlugin                 string       `slurm:"TopologyPlugin,str" def:"topology/none"`
	TrackWCKey                     bool         `slurm:"TrackWCKey,bool" def:"no"`
	TreeWidth                      uint16       `slurm:"TreeWidth,u16" def:"50"`
	UnkillableStepProgram          string       `slurm:"UnkillableStepProgram,str"`
	UnkillableStepTimeout          Seconds      `slurm:"UnkillableStepTimeout,u16" def:"60"`
	UsePAM                         bool         `slurm:"UsePAM,bool" def:"no"`
	VSizeFactor                    uint16       `slurm:"VSizeFactor,u16" def:"0"`
	WaitTime                       Seconds      `slurm:"WaitTime,u16" def:"0"`
	X11Parameters                  Options      `slurm:"X11Parameters,opts"`

	// Records (the six S_P_ARRAY keys of 22.05's table).
	SlurmctldHost []ControllerHost `slurm:"SlurmctldHost,record"`
	NodeLines     []*NodeLine      `slurm:"NodeName,record"`
	Partitions    []*Partition     `slurm:"PartitionName,record"`
	NodeSets      []*NodeSet       `slurm:"NodeSet,record"`
	DownNodes     []*DownNodes     `slurm:"DownNodes,record"`
	Frontends     []*Frontend      `slurm:"FrontendName,record"`

	// Derived data.

	// Nodes holds every node of every NodeName line, in configuration
	// order; NodeIndex maps a node name to its index in Nodes.
	Nodes     []Node
	NodeIndex map[string]int `json:"-"`
	// DefaultPartition is the name of the default partition ("" if none).
	DefaultPartition string

	// Typed readings of flag-list keys (flags.go), as 22.05 interprets
	// them; the raw lists stay in the keys' own fields.
	AccountingEnforceFlags uint16           // ACCOUNTING_ENFORCE_* bits
	PrivateDataFlags       PrivateDataFlags // substring matches, as 22.05
	PriorityFlagBits       PriorityFlagBits // FAIR_TREE unless turned off
	TaskPluginParamFlags   uint32           // CPUBind* / CPUAutoBind* bits
	LicenseList            []License        // Licenses, duplicates summed

	// Set maps the canonical name of every key given in the file to the
	// place it was (last) set.
	Set map[string]Pos
	// Files lists slurm.conf and every file it included, in reading order.
	Files []string
	// Warnings holds the non-fatal diagnostics, in order.
	Warnings []Diagnostic
}

// ControllerHost is one SlurmctldHost entry: "host" or "host(addr)".
// The first is the primary controller, the rest are backups.
type ControllerHost struct {
	Host string
	Addr string
	Pos  Pos
}

// PortRange is a port or an inclusive range of ports.
type PortRange struct {
	First uint16
	Count uint16 // 0 when unset
}
