package msg

import (
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// BuildInfo is RESPONSE_BUILD_INFO, slurm_ctl_conf as slurmctld reports it
// (scontrol show config): 215 fields at protocol 22.05, in wire order. The
// comments give Slurm's field name where the Go name differs from it.
// Nullable slices (key-pair lists, plugin-parameter lists, job defaults) are
// nil for a NO_VAL count; ControlAddr and ControlMachine are packstr_arrays.
type BuildInfo struct {
	LastUpdate                     int64          // 1 last_update
	AccountingStorageEnforce       uint16         // 2 accounting_storage_enforce
	AccountingStorageBackupHost    NullString     // 3 accounting_storage_backup_host
	AccountingStorageHost          NullString     // 4 accounting_storage_host
	AccountingStorageExtHost       NullString     // 5 accounting_storage_ext_host
	AccountingStorageParams        NullString     // 6 accounting_storage_params
	AccountingStoragePort          uint16         // 7 accounting_storage_port
	AccountingStorageTRES          NullString     // 8 accounting_storage_tres
	AccountingStorageType          NullString     // 9 accounting_storage_type
	AccountingStorageUser          NullString     // 10 accounting_storage_user
	AcctGatherConf                 []KeyPair      `slurm:"nullable"` // 11 acct_gather_conf; ProfileInfluxDBPass/User entries are left out by slurmctld
	AcctGatherEnergyType           NullString     // 12 acct_gather_energy_type
	AcctGatherFilesystemType       NullString     // 13 acct_gather_filesystem_type
	AcctGatherInterconnectType     NullString     // 14 acct_gather_interconnect_type
	AcctGatherNodeFreq             uint16         // 15 acct_gather_node_freq
	AcctGatherProfileType          NullString     // 16 acct_gather_profile_type
	AuthAltTypes                   NullString     // 17 authalttypes
	AuthAltParams                  NullString     // 18 authalt_params
	AuthInfo                       NullString     // 19 authinfo
	AuthType                       NullString     // 20 authtype
	BatchStartTimeout              uint16         // 21 batch_start_timeout
	BootTime                       int64          // 22 boot_time
	BBType                         NullString     // 23 bb_type
	BcastExclude                   NullString     // 24 bcast_exclude
	BcastParameters                NullString     // 25 bcast_parameters
	CgroupConf                     []KeyPair      `slurm:"nullable"` // 26 cgroup_conf
	CliFilterPlugins               NullString     // 27 cli_filter_plugins
	ClusterName                    NullString     // 28 cluster_name
	CommParams                     NullString     // 29 comm_params
	CompleteWait                   uint16         // 30 complete_wait
	ConfFlags                      uint32         // 31 conf_flags
	ControlAddr                    []NullString   // 32 control_addr; one per SlurmctldHost; the count is control_cnt
	ControlMachine                 []NullString   // 33 control_machine
	CoreSpecPlugin                 NullString     // 34 core_spec_plugin
	CPUFreqDef                     uint32         // 35 cpu_freq_def
	CPUFreqGovs                    uint32         // 36 cpu_freq_govs
	CredType                       NullString     // 37 cred_type
	DefMemPerCPU                   uint64         // 38 def_mem_per_cpu
	DebugFlags                     uint64         // 39 debug_flags
	DependencyParams               NullString     // 40 dependency_params
	EIOTimeout                     uint16         // 41 eio_timeout
	EnforcePartLimits              uint16         // 42 enforce_part_limits
	Epilog                         NullString     // 43 epilog
	EpilogMsgTime                  uint32         // 44 epilog_msg_time
	EpilogSlurmctld                NullString     // 45 epilog_slurmctld
	ExtSensorsConf                 []KeyPair      `slurm:"nullable"` // 46 ext_sensors_conf
	ExtSensorsType                 NullString     // 47 ext_sensors_type
	ExtSensorsFreq                 uint16         // 48 ext_sensors_freq
	FedParams                      NullString     // 49 fed_params
	FirstJobID                     uint32         // 50 first_job_id
	FSDampeningFactor              uint16         // 51 fs_dampening_factor
	GetEnvTimeout                  uint16         // 52 get_env_timeout
	GresPlugins                    NullString     // 53 gres_plugins
	GroupTime                      uint16         // 54 group_time
	GroupForce                     uint16         // 55 group_force
	GPUFreqDef                     NullString     // 56 gpu_freq_def
	HashVal                        uint32         // 57 hash_val
	HealthCheckInterval            uint16         // 58 health_check_interval
	HealthCheckNodeState           uint16         // 59 health_check_node_state
	HealthCheckProgram             NullString     // 60 health_check_program
	InactiveLimit                  uint16         // 61 inactive_limit
	InteractiveStepOpts            NullString     // 62 interactive_step_opts
	JobAcctGatherFreq              NullString     // 63 job_acct_gather_freq
	JobAcctGatherType              NullString     // 64 job_acct_gather_type
	JobAcctGatherParams            NullString     // 65 job_acct_gather_params
	JobCompHost                    NullString     // 66 job_comp_host
	JobCompLoc                     NullString     // 67 job_comp_loc
	JobCompParams                  NullString     // 68 job_comp_params
	JobCompPort                    uint32         // 69 job_comp_port; packed as u32
	JobCompType                    NullString     // 70 job_comp_type
	JobCompUser                    NullString     // 71 job_comp_user
	JobContainerPlugin             NullString     // 72 job_container_plugin
	JobCredentialPrivateKey        NullString     // 73 job_credential_private_key
	JobCredentialPublicCertificate NullString     // 74 job_credential_public_certificate
	JobDefaultsList                []JobDefault   `slurm:"nullable"` // 75 job_defaults_list
	JobFileAppend                  uint16         // 76 job_file_append
	JobRequeue                     uint16         // 77 job_requeue
	JobSubmitPlugins               NullString     // 78 job_submit_plugins
	KillOnBadExit                  uint16         // 79 kill_on_bad_exit
	KillWait                       uint16         // 80 kill_wait
	LaunchParams                   NullString     // 81 launch_params
	LaunchType                     NullString     // 82 launch_type
	Licenses                       NullString     // 83 licenses
	LogFmt                         uint16         // 84 log_fmt
	MaxArraySz                     uint32         // 85 max_array_sz
	MaxDBDMsgs                     uint32         // 86 max_dbd_msgs
	MailDomain                     NullString     // 87 mail_domain
	MailProg                       NullString     // 88 mail_prog
	MaxJobCnt                      uint32         // 89 max_job_cnt
	MaxJobID                       uint32         // 90 max_job_id
	MaxMemPerCPU                   uint64         // 91 max_mem_per_cpu
	MaxNodeCnt                     uint32         // 92 max_node_cnt
	MaxStepCnt                     uint32         // 93 max_step_cnt
	MaxTasksPerNode                uint16         // 94 max_tasks_per_node
	MCSPlugin                      NullString     // 95 mcs_plugin
	MCSPluginParams                NullString     // 96 mcs_plugin_params
	MinJobAge                      uint32         // 97 min_job_age
	MPIConf                        []KeyPair      `slurm:"nullable"` // 98 mpi_conf
	MPIDefault                     NullString     // 99 mpi_default
	MPIParams                      NullString     // 100 mpi_params
	MsgTimeout                     uint16         // 101 msg_timeout
	NextJobID                      uint32         // 102 next_job_id
	NodeFeaturesConf               []PluginParams `slurm:"nullable"` // 103 node_features_conf
	NodeFeaturesPlugins            NullString     // 104 node_features_plugins
	NodePrefix                     NullString     // 105 node_prefix
	OverTimeLimit                  uint16         // 106 over_time_limit
	PluginDir                      NullString     // 107 plugindir
	PlugStack                      NullString     // 108 plugstack
	PowerParameters                NullString     // 109 power_parameters
	PowerPlugin                    NullString     // 110 power_plugin
	PreemptMode                    uint16         // 111 preempt_mode
	PreemptType                    NullString     // 112 preempt_type
	PreemptExemptTime              uint32         // 113 preempt_exempt_time
	PrEpParams                     NullString     // 114 prep_params
	PrEpPlugins                    NullString     // 115 prep_plugins
	PriorityDecayHL                uint32         // 116 priority_decay_hl
	PriorityCalcPeriod             uint32         // 117 priority_calc_period
	PriorityFavorSmall             uint16         // 118 priority_favor_small
	PriorityFlags                  uint16         // 119 priority_flags
	PriorityMaxAge                 uint32         // 120 priority_max_age
	PriorityParams                 NullString     // 121 priority_params
	PriorityResetPeriod            uint16         // 122 priority_reset_period
	PriorityType                   NullString     // 123 priority_type
	PriorityWeightAge              uint32         // 124 priority_weight_age
	PriorityWeightAssoc            uint32         // 125 priority_weight_assoc
	PriorityWeightFS               uint32         // 126 priority_weight_fs
	PriorityWeightJS               uint32         // 127 priority_weight_js
	PriorityWeightPart             uint32         // 128 priority_weight_part
	PriorityWeightQOS              uint32         // 129 priority_weight_qos
	PriorityWeightTRES             NullString     // 130 priority_weight_tres
	PrivateData                    uint16         // 131 private_data
	ProctrackType                  NullString     // 132 proctrack_type
	Prolog                         NullString     // 133 prolog
	PrologEpilogTimeout            uint16         // 134 prolog_epilog_timeout
	PrologSlurmctld                NullString     // 135 prolog_slurmctld
	PrologFlags                    uint16         // 136 prolog_flags
	PropagatePrioProcess           uint16         // 137 propagate_prio_process
	PropagateRlimits               NullString     // 138 propagate_rlimits
	PropagateRlimitsExcept         NullString     // 139 propagate_rlimits_except
	RebootProgram                  NullString     // 140 reboot_program
	ReconfigFlags                  uint16         // 141 reconfig_flags
	RequeueExit                    NullString     // 142 requeue_exit
	RequeueExitHold                NullString     // 143 requeue_exit_hold
	ResumeFailProgram              NullString     // 144 resume_fail_program
	ResumeProgram                  NullString     // 145 resume_program
	ResumeRate                     uint16         // 146 resume_rate
	ResumeTimeout                  uint16         // 147 resume_timeout
	ResvEpilog                     NullString     // 148 resv_epilog
	ResvOverRun                    uint16         // 149 resv_over_run
	ResvProlog                     NullString     // 150 resv_prolog
	Ret2Service                    uint16         // 151 ret2service
	RoutePlugin                    NullString     // 152 route_plugin
	SchedParams                    NullString     // 153 sched_params
	SchedLogFile                   NullString     // 154 sched_logfile
	SchedLogLevel                  uint16         // 155 sched_log_level
	SchedTimeSlice                 uint16         // 156 sched_time_slice
	SchedType                      NullString     // 157 schedtype
	ScronParams                    NullString     // 158 scron_params
	SelectType                     NullString     // 159 select_type
	SelectConfKeyPairs             []KeyPair      `slurm:"nullable"` // 160 select_conf_key_pairs
	SelectTypeParam                uint16         // 161 select_type_param
	SlurmConf                      NullString     // 162 slurm_conf
	SlurmUserID                    uint32         // 163 slurm_user_id
	SlurmUserName                  NullString     // 164 slurm_user_name
	SlurmdUserID                   uint32         // 165 slurmd_user_id
	SlurmdUserName                 NullString     // 166 slurmd_user_name
	SlurmctldAddr                  NullString     // 167 slurmctld_addr
	SlurmctldDebug                 uint16         // 168 slurmctld_debug
	SlurmctldLogFile               NullString     // 169 slurmctld_logfile
	SlurmctldParams                NullString     // 170 slurmctld_params
	SlurmctldPidFile               NullString     // 171 slurmctld_pidfile
	SlurmctldPlugStack             NullString     // 172 slurmctld_plugstack
	SlurmctldPlugStackConf         []PluginParams `slurm:"nullable"` // 173 slurmctld_plugstack_conf
	SlurmctldPort                  uint32         // 174 slurmctld_port
	SlurmctldPortCount             uint16         // 175 slurmctld_port_count
	SlurmctldPrimaryOffProg        NullString     // 176 slurmctld_primary_off_prog
	SlurmctldPrimaryOnProg         NullString     // 177 slurmctld_primary_on_prog
	SlurmctldSyslogDebug           uint16         // 178 slurmctld_syslog_debug
	SlurmctldTimeout               uint16         // 179 slurmctld_timeout
	SlurmdDebug                    uint16         // 180 slurmd_debug
	SlurmdLogFile                  NullString     // 181 slurmd_logfile
	SlurmdParams                   NullString     // 182 slurmd_params
	SlurmdPidFile                  NullString     // 183 slurmd_pidfile
	SlurmdPort                     uint32         // 184 slurmd_port
	SlurmdSpoolDir                 NullString     // 185 slurmd_spooldir
	SlurmdSyslogDebug              uint16         // 186 slurmd_syslog_debug
	SlurmdTimeout                  uint16         // 187 slurmd_timeout
	SrunEpilog                     NullString     // 188 srun_epilog
	SrunPortRangeLo                uint16         // 189 srun_port_range_lo; SrunPortRange low end
	SrunPortRangeHi                uint16         // 190 srun_port_range_hi; SrunPortRange high end
	SrunProlog                     NullString     // 191 srun_prolog
	StateSaveLocation              NullString     // 192 state_save_location
	SuspendExcNodes                NullString     // 193 suspend_exc_nodes
	SuspendExcParts                NullString     // 194 suspend_exc_parts
	SuspendProgram                 NullString     // 195 suspend_program
	SuspendRate                    uint16         // 196 suspend_rate
	SuspendTime                    uint32         // 197 suspend_time
	SuspendTimeout                 uint16         // 198 suspend_timeout
	SwitchParam                    NullString     // 199 switch_param
	SwitchType                     NullString     // 200 switch_type
	TaskEpilog                     NullString     // 201 task_epilog
	TaskProlog                     NullString     // 202 task_prolog
	TaskPlugin                     NullString     // 203 task_plugin
	TaskPluginParam                uint32         // 204 task_plugin_param
	TCPTimeout                     uint16         // 205 tcp_timeout
	TmpFS                          NullString     // 206 tmp_fs
	TopologyParam                  NullString     // 207 topology_param
	TopologyPlugin                 NullString     // 208 topology_plugin
	TreeWidth                      uint16         // 209 tree_width
	UnkillableProgram              NullString     // 210 unkillable_program
	UnkillableTimeout              uint16         // 211 unkillable_timeout
	Version                        NullString     // 212 version
	VSizeFactor                    uint16         // 213 vsize_factor
	WaitTime                       uint16         // 214 wait_time
	X11Params                      NullString     // 215 x11_params
}

func walkBuildInfo(w fieldWalker, _ codec.Version, b *BuildInfo) {
	w.time(&b.LastUpdate)
	w.u16(&b.AccountingStorageEnforce)
	w.str(&b.AccountingStorageBackupHost)
	w.str(&b.AccountingStorageHost)
	w.str(&b.AccountingStorageExtHost)
	w.str(&b.AccountingStorageParams)
	w.u16(&b.AccountingStoragePort)
	w.str(&b.AccountingStorageTRES)
	w.str(&b.AccountingStorageType)
	w.str(&b.AccountingStorageUser)
	walkKeyPairs(w, &b.AcctGatherConf)
	w.str(&b.AcctGatherEnergyType)
	w.str(&b.AcctGatherFilesystemType)
	w.str(&b.AcctGatherInterconnectType)
	w.u16(&b.AcctGatherNodeFreq)
	w.str(&b.AcctGatherProfileType)
	w.str(&b.AuthAltTypes)
	w.str(&b.AuthAltParams)
	w.str(&b.AuthInfo)
	w.str(&b.AuthType)
	w.u16(&b.BatchStartTimeout)
	w.time(&b.BootTime)
	w.str(&b.BBType)
	w.str(&b.BcastExclude)
	w.str(&b.BcastParameters)
	walkKeyPairs(w, &b.CgroupConf)
	w.str(&b.CliFilterPlugins)
	w.str(&b.ClusterName)
	w.str(&b.CommParams)
	w.u16(&b.CompleteWait)
	w.u32(&b.ConfFlags)
	walkStrArray(w, &b.ControlAddr)
	walkStrArray(w, &b.ControlMachine)
	w.str(&b.CoreSpecPlugin)
	w.u32(&b.CPUFreqDef)
	w.u32(&b.CPUFreqGovs)
	w.str(&b.CredType)
	w.u64(&b.DefMemPerCPU)
	w.u64(&b.DebugFlags)
	w.str(&b.DependencyParams)
	w.u16(&b.EIOTimeout)
	w.u16(&b.EnforcePartLimits)
	w.str(&b.Epilog)
	w.u32(&b.EpilogMsgTime)
	w.str(&b.EpilogSlurmctld)
	walkKeyPairs(w, &b.ExtSensorsConf)
	w.str(&b.ExtSensorsType)
	w.u16(&b.ExtSensorsFreq)
	w.str(&b.FedParams)
	w.u32(&b.FirstJobID)
	w.u16(&b.FSDampeningFactor)
	w.u16(&b.GetEnvTimeout)
	w.str(&b.GresPlugins)
	w.u16(&b.GroupTime)
	w.u16(&b.GroupForce)
	w.str(&b.GPUFreqDef)
	w.u32(&b.HashVal)
	w.u16(&b.HealthCheckInterval)
	w.u16(&b.HealthCheckNodeState)
	w.str(&b.HealthCheckProgram)
	w.u16(&b.InactiveLimit)
	w.str(&b.InteractiveStepOpts)
	w.str(&b.JobAcctGatherFreq)
	w.str(&b.JobAcctGatherType)
	w.str(&b.JobAcctGatherParams)
	w.str(&b.JobCompHost)
	w.str(&b.JobCompLoc)
	w.str(&b.JobCompParams)
	w.u32(&b.JobCompPort)
	w.str(&b.JobCompType)
	w.str(&b.JobCompUser)
	w.str(&b.JobContainerPlugin)
	w.str(&b.JobCredentialPrivateKey)
	w.str(&b.JobCredentialPublicCertificate)
	walkJobDefaults(w, &b.JobDefaultsList)
	w.u16(&b.JobFileAppend)
	w.u16(&b.JobRequeue)
	w.str(&b.JobSubmitPlugins)
	w.u16(&b.KillOnBadExit)
	w.u16(&b.KillWait)
	w.str(&b.LaunchParams)
	w.str(&b.LaunchType)
	w.str(&b.Licenses)
	w.u16(&b.LogFmt)
	w.u32(&b.MaxArraySz)
	w.u32(&b.MaxDBDMsgs)
	w.str(&b.MailDomain)
	w.str(&b.MailProg)
	w.u32(&b.MaxJobCnt)
	w.u32(&b.MaxJobID)
	w.u64(&b.MaxMemPerCPU)
	w.u32(&b.MaxNodeCnt)
	w.u32(&b.MaxStepCnt)
	w.u16(&b.MaxTasksPerNode)
	w.str(&b.MCSPlugin)
	w.str(&b.MCSPluginParams)
	w.u32(&b.MinJobAge)
	walkKeyPairs(w, &b.MPIConf)
	w.str(&b.MPIDefault)
	w.str(&b.MPIParams)
	w.u16(&b.MsgTimeout)
	w.u32(&b.NextJobID)
	walkPluginParams(w, &b.NodeFeaturesConf)
	w.str(&b.NodeFeaturesPlugins)
	w.str(&b.NodePrefix)
	w.u16(&b.OverTimeLimit)
	w.str(&b.PluginDir)
	w.str(&b.PlugStack)
	w.str(&b.PowerParameters)
	w.str(&b.PowerPlugin)
	w.u16(&b.PreemptMode)
	w.str(&b.PreemptType)
	w.u32(&b.PreemptExemptTime)
	w.str(&b.PrEpParams)
	w.str(&b.PrEpPlugins)
	w.u32(&b.PriorityDecayHL)
	w.u32(&b.PriorityCalcPeriod)
	w.u16(&b.PriorityFavorSmall)
	w.u16(&b.PriorityFlags)
	w.u32(&b.PriorityMaxAge)
	w.str(&b.PriorityParams)
	w.u16(&b.PriorityResetPeriod)
	w.str(&b.PriorityType)
	w.u32(&b.PriorityWeightAge)
	w.u32(&b.PriorityWeightAssoc)
	w.u32(&b.PriorityWeightFS)
	w.u32(&b.PriorityWeightJS)
	w.u32(&b.PriorityWeightPart)
	w.u32(&b.PriorityWeightQOS)
	w.str(&b.PriorityWeightTRES)
	w.u16(&b.PrivateData)
	w.str(&b.ProctrackType)
	w.str(&b.Prolog)
	w.u16(&b.PrologEpilogTimeout)
	w.str(&b.PrologSlurmctld)
	w.u16(&b.PrologFlags)
	w.u16(&b.PropagatePrioProcess)
	w.str(&b.PropagateRlimits)
	w.str(&b.PropagateRlimitsExcept)
	w.str(&b.RebootProgram)
	w.u16(&b.ReconfigFlags)
	w.str(&b.RequeueExit)
	w.str(&b.RequeueExitHold)
	w.str(&b.ResumeFailProgram)
	w.str(&b.ResumeProgram)
	w.u16(&b.ResumeRate)
	w.u16(&b.ResumeTimeout)
	w.str(&b.ResvEpilog)
	w.u16(&b.ResvOverRun)
	w.str(&b.ResvProlog)
	w.u16(&b.Ret2Service)
	w.str(&b.RoutePlugin)
	w.str(&b.SchedParams)
	w.str(&b.SchedLogFile)
	w.u16(&b.SchedLogLevel)
	w.u16(&b.SchedTimeSlice)
	w.str(&b.SchedType)
	w.str(&b.ScronParams)
	w.str(&b.SelectType)
	walkKeyPairs(w, &b.SelectConfKeyPairs)
	w.u16(&b.SelectTypeParam)
	w.str(&b.SlurmConf)
	w.u32(&b.SlurmUserID)
	w.str(&b.SlurmUserName)
	w.u32(&b.SlurmdUserID)
	w.str(&b.SlurmdUserName)
	w.str(&b.SlurmctldAddr)
	w.u16(&b.SlurmctldDebug)
	w.str(&b.SlurmctldLogFile)
	w.str(&b.SlurmctldParams)
	w.str(&b.SlurmctldPidFile)
	w.str(&b.SlurmctldPlugStack)
	walkPluginParams(w, &b.SlurmctldPlugStackConf)
	w.u32(&b.SlurmctldPort)
	w.u16(&b.SlurmctldPortCount)
	w.str(&b.SlurmctldPrimaryOffProg)
	w.str(&b.SlurmctldPrimaryOnProg)
	w.u16(&b.SlurmctldSyslogDebug)
	w.u16(&b.SlurmctldTimeout)
	w.u16(&b.SlurmdDebug)
	w.str(&b.SlurmdLogFile)
	w.str(&b.SlurmdParams)
	w.str(&b.SlurmdPidFile)
	w.u32(&b.SlurmdPort)
	w.str(&b.SlurmdSpoolDir)
	w.u16(&b.SlurmdSyslogDebug)
	w.u16(&b.SlurmdTimeout)
	w.str(&b.SrunEpilog)
	w.u16(&b.SrunPortRangeLo)
	w.u16(&b.SrunPortRangeHi)
	w.str(&b.SrunProlog)
	w.str(&b.StateSaveLocation)
	w.str(&b.SuspendExcNodes)
	w.str(&b.SuspendExcParts)
	w.str(&b.SuspendProgram)
	w.u16(&b.SuspendRate)
	w.u32(&b.SuspendTime)
	w.u16(&b.SuspendTimeout)
	w.str(&b.SwitchParam)
	w.str(&b.SwitchType)
	w.str(&b.TaskEpilog)
	w.str(&b.TaskProlog)
	w.str(&b.TaskPlugin)
	w.u32(&b.TaskPluginParam)
	w.u16(&b.TCPTimeout)
	w.str(&b.TmpFS)
	w.str(&b.TopologyParam)
	w.str(&b.TopologyPlugin)
	w.u16(&b.TreeWidth)
	w.str(&b.UnkillableProgram)
	w.u16(&b.UnkillableTimeout)
	w.str(&b.Version)
	w.u16(&b.VSizeFactor)
	w.u16(&b.WaitTime)
	w.str(&b.X11Params)
}

func init() { registrars = append(registrars, registerConfig) }

func registerConfig(g *codec.Registry) {
	g.Register(msgtype.RESPONSE_BUILD_INFO, bodyCodec("RESPONSE_BUILD_INFO", walkBuildInfo))
}
