package ctld

import (
	"context"
	"os"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// rpcBuildInfo is _slurm_rpc_dump_conf: slurm.conf as the controller
// reads it (scontrol show config).
func (c *Controller) rpcBuildInfo(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.LastUpdateRequest](r.Body)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if noChange(req.LastUpdate, c.confUpdate) {
		return server.RC(slurmerr.SLURM_NO_CHANGE_IN_DATA)
	}
	return &server.Response{MsgType: msgtype.RESPONSE_BUILD_INFO, Body: c.buildInfo()}
}

// logLevels numbers SlurmctldDebug/SlurmdDebug as log_level_t does.
var logLevels = map[string]uint16{
	"quiet": 0, "fatal": 1, "error": 2, "info": 3, "verbose": 4, "debug": 5,
	"debug2": 6, "debug3": 7, "debug4": 8, "debug5": 9,
}

func logLevel(s string, def uint16) uint16 {
	if v, ok := logLevels[strings.ToLower(s)]; ok {
		return v
	}
	return def
}

// selectTypeParam reads SelectTypeParameters into CR_* bits.
func selectTypeParam(l conf.List) uint16 {
	var v uint16
	for _, s := range l {
		switch strings.ToUpper(s) {
		case "CR_CPU":
			v |= 0x0001
		case "CR_SOCKET":
			v |= 0x0002
		case "CR_CORE":
			v |= 0x0004
		case "CR_BOARD":
			v |= 0x0008
		case "CR_MEMORY":
			v |= 0x0010
		case "CR_CPU_MEMORY":
			v |= 0x0011
		case "CR_SOCKET_MEMORY":
			v |= 0x0012
		case "CR_CORE_MEMORY":
			v |= 0x0014
		case "CR_ONE_TASK_PER_CORE":
			v |= 0x0100
		case "CR_PACK_NODES":
			v |= 0x0200
		case "CR_CORE_DEFAULT_DIST_BLOCK":
			v |= 0x1000
		case "CR_LLN":
			v |= 0x4000
		}
	}
	return v
}

func joinList(l conf.List) msg.NullString { return optStr(strings.Join(l, ",")) }

func optsStr(o conf.Options) msg.NullString { return optStr(o.String()) }

// buildInfo fills RESPONSE_BUILD_INFO from the configuration. Key-pair
// lists that come from plugin configuration files (cgroup.conf when a
// cgroup plugin is configured, acct_gather.conf, ...) are sent empty, so
// scontrol show config lacks the sections real Slurm prints for them.
func (c *Controller) buildInfo() *msg.BuildInfo {
	cf := c.cfg.Conf
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	var addrs, machines []msg.NullString
	for _, h := range cf.SlurmctldHost {
		a := h.Addr
		if a == "" {
			a = h.Host
		}
		m := h.Host
		if m == "localhost" {
			m = host // as 22.05 reads "localhost" as this machine's name
		}
		addrs = append(addrs, msg.Str(a))
		machines = append(machines, msg.Str(m))
	}
	var confFlags uint32
	if c.cfg.ConfigOverrides {
		confFlags |= 1 << 0
	}
	if cf.DisableRootJobs {
		confFlags |= 1 << 2
	}
	if cf.AllowSpecResourcesUsage {
		confFlags |= 1 << 3
	}
	if cf.UsePAM {
		confFlags |= 1 << 4
	}
	if cf.TrackWCKey {
		confFlags |= 1 << 5
	}
	confFlags |= 1 << 6 // IPv4
	if cf.CommunicationParameters.Has("EnableIPv6") {
		confFlags |= 1 << 7
	}
	tresStr := strings.Join(cf.AccountingStorageTRES, ",")
	suspendTime := uint32(cf.SuspendTime)
	if suspendTime == 0 || suspendTime == conf.NoVal32 {
		suspendTime = conf.Infinite32
	}
	pm, _ := preemptMode(cf.PreemptMode)
	if pm == noVal16 {
		pm = 0
	}
	jobCompLoc := cf.JobCompLoc
	if jobCompLoc == "" {
		jobCompLoc = "/var/log/slurm_jobcomp.log"
	}
	propagate := strings.Join(cf.PropagateResourceLimits, ",")
	if propagate == "" && len(cf.PropagateResourceLimitsExcept) == 0 {
		propagate = "ALL"
	}
	return &msg.BuildInfo{
		LastUpdate:                  c.confUpdate,
		AccountingStorageHost:       optStr(cf.AccountingStorageHost),
		AccountingStorageBackupHost: optStr(cf.AccountingStorageBackupHost),
		AccountingStorageExtHost:    optStr(cf.AccountingStorageExternalHost),
		AccountingStorageParams:     optsStr(cf.AccountingStorageParameters),
		AccountingStoragePort:       cf.AccountingStoragePort,
		AccountingStorageTRES:       optStr(tresStr),
		AccountingStorageType:       optStr(cf.AccountingStorageType),
		AccountingStorageUser:       optStr(cf.AccountingStorageUser),
		AccountingStorageEnforce:    cf.AccountingEnforceFlags,
		AcctGatherConf:              []msg.KeyPair{},
		AcctGatherEnergyType:        optStr(cf.AcctGatherEnergyType),
		AcctGatherFilesystemType:    optStr(cf.AcctGatherFilesystemType),
		AcctGatherInterconnectType:  optStr(cf.AcctGatherInterconnectType),
		AcctGatherNodeFreq:          uint16(cf.AcctGatherNodeFreq),
		AcctGatherProfileType:       optStr(cf.AcctGatherProfileType),
		AuthAltTypes:                joinList(cf.AuthAltTypes),
		AuthAltParams:               optsStr(cf.AuthAltParameters),
		AuthInfo:                    optsStr(cf.AuthInfo),
		AuthType:                    optStr(cf.AuthType),
		BatchStartTimeout:           uint16(cf.BatchStartTimeout),
		BootTime:                    c.boot,
		BBType:                      optStr(cf.BurstBufferType),
		BcastExclude:                joinList(cf.BcastExclude),
		BcastParameters:             optsStr(cf.BcastParameters),
		CliFilterPlugins:            joinList(cf.CliFilterPlugins),
		ClusterName:                 optStr(cf.ClusterName),
		CommParams:                  optsStr(cf.CommunicationParameters),
		CompleteWait:                uint16(cf.CompleteWait),
		ConfFlags:                   confFlags,
		ControlAddr:                 addrs,
		ControlMachine:              machines,
		CoreSpecPlugin:              optStr(cf.CoreSpecPlugin),
		CPUFreqDef:                  noVal,
		CPUFreqGovs:                 cpuFreqGovs(cf.CpuFreqGovernors),
		CredType:                    optStr(cf.CredType),
		DefMemPerCPU:                defMemPerCPU(cf),
		DebugFlags:                  c.debugFlags(),
		DependencyParams:            optsStr(cf.DependencyParameters),
		EIOTimeout:                  uint16(cf.EioTimeout),
		Epilog:                      optStr(cf.Epilog),
		EpilogMsgTime:               uint32(cf.EpilogMsgTime),
		EpilogSlurmctld:             optStr(cf.EpilogSlurmctld),
		ExtSensorsType:              optStr(cf.ExtSensorsType),
		ExtSensorsFreq:              uint16(cf.ExtSensorsFreq),
		FedParams:                   optsStr(cf.FederationParameters),
		FirstJobID:                  cf.FirstJobId,
		FSDampeningFactor:           cf.FairShareDampeningFactor,
		GetEnvTimeout:               uint16(cf.GetEnvTimeout),
		GresPlugins:                 joinList(cf.GresTypes),
		GroupTime:                   uint16(cf.GroupUpdateTime),
		GroupForce:                  cf.GroupUpdateForce,
		GPUFreqDef:                  optStr(cf.GpuFreqDef),
		HashVal:                     c.cfg.HashVal,
		HealthCheckInterval:         uint16(cf.HealthCheckInterval),
		HealthCheckNodeState:        0x000f,
		HealthCheckProgram:          optStr(cf.HealthCheckProgram),
		InactiveLimit:               uint16(cf.InactiveLimit),
		InteractiveStepOpts:         optStr(cf.InteractiveStepOptions),
		JobAcctGatherFreq:           optsStr(cf.JobAcctGatherFrequency),
		JobAcctGatherType:           optStr(cf.JobAcctGatherType),
		JobAcctGatherParams:         optsStr(cf.JobAcctGatherParams),
		JobCompHost:                 optStr(cf.JobCompHost),
		JobCompLoc:                  msg.Str(jobCompLoc),
		JobCompParams:               optsStr(cf.JobCompParams),
		JobCompPort:                 cf.JobCompPort,
		JobCompType:                 optStr(cf.JobCompType),
		JobCompUser:                 optStr(cf.JobCompUser),
		JobContainerPlugin:          optStr(cf.JobContainerType),
		JobFileAppend:               cf.JobFileAppend,
		JobRequeue:                  cf.JobRequeue,
		JobSubmitPlugins:            joinList(cf.JobSubmitPlugins),
		KillOnBadExit:               cf.KillOnBadExit,
		KillWait:                    uint16(cf.KillWait),
		LaunchParams:                optsStr(cf.LaunchParameters),
		LaunchType:                  optStr(cf.LaunchType),
		Licenses:                    joinList(cf.Licenses),
		MaxArraySz:                  cf.MaxArraySize,
		MaxDBDMsgs:                  cf.MaxDBDMsgs,
		MailDomain:                  optStr(cf.MailDomain),
		MailProg:                    optStr(cf.MailProg),
		MaxJobCnt:                   cf.MaxJobCount,
		MaxJobID:                    cf.MaxJobId,
		MaxMemPerCPU:                maxMemPerCPU(cf),
		MaxNodeCnt:                  uint32(len(c.nodes)),
		MaxStepCnt:                  cf.MaxStepCount,
		MaxTasksPerNode:             cf.MaxTasksPerNode,
		MCSPlugin:                   optStr(cf.MCSPlugin),
		MCSPluginParams:             optStr(cf.MCSParameters),
		MinJobAge:                   uint32(cf.MinJobAge),
		MPIDefault:                  optStr(cf.MpiDefault),
		MPIParams:                   optsStr(cf.MpiParams),
		MsgTimeout:                  uint16(cf.MessageTimeout),
		NextJobID:                   cf.FirstJobId,
		NodeFeaturesPlugins:         joinList(cf.NodeFeaturesPlugins),
		OverTimeLimit:               uint16(cf.OverTimeLimit),
		PluginDir:                   optStr(cf.PluginDir),
		PlugStack:                   optStr(cf.PlugStackConfig),
		PowerParameters:             optsStr(cf.PowerParameters),
		PowerPlugin:                 msg.Str(cf.PowerPlugin),
		PreemptMode:                 pm,
		PreemptType:                 optStr(cf.PreemptType),
		PreemptExemptTime:           uint32(cf.PreemptExemptTime),
		PrEpParams:                  optsStr(cf.PrEpParameters),
		PrEpPlugins:                 joinList(cf.PrEpPlugins),
		PriorityDecayHL:             uint32(cf.PriorityDecayHalfLife),
		PriorityCalcPeriod:          uint32(cf.PriorityCalcPeriod),
		PriorityFlags:               uint16(cf.PriorityFlagBits),
		PriorityMaxAge:              uint32(cf.PriorityMaxAge),
		PriorityParams:              optsStr(cf.PriorityParameters),
		PriorityType:                optStr(cf.PriorityType),
		PriorityWeightAge:           cf.PriorityWeightAge,
		PriorityWeightAssoc:         cf.PriorityWeightAssoc,
		PriorityWeightFS:            cf.PriorityWeightFairshare,
		PriorityWeightJS:            cf.PriorityWeightJobSize,
		PriorityWeightPart:          cf.PriorityWeightPartition,
		PriorityWeightQOS:           cf.PriorityWeightQOS,
		PriorityWeightTRES:          optsStr(cf.PriorityWeightTRES),
		PrivateData:                 uint16(cf.PrivateDataFlags),
		ProctrackType:               optStr(cf.ProctrackType),
		Prolog:                      optStr(cf.Prolog),
		PrologEpilogTimeout:         uint16(cf.PrologEpilogTimeout),
		PrologSlurmctld:             optStr(cf.PrologSlurmctld),
		PropagatePrioProcess:        cf.PropagatePrioProcess,
		PropagateRlimits:            optStr(propagate),
		PropagateRlimitsExcept:      joinList(cf.PropagateResourceLimitsExcept),
		RebootProgram:               optStr(cf.RebootProgram),
		RequeueExit:                 joinList(cf.RequeueExit),
		RequeueExitHold:             joinList(cf.RequeueExitHold),
		ResumeFailProgram:           optStr(cf.ResumeFailProgram),
		ResumeProgram:               optStr(cf.ResumeProgram),
		ResumeRate:                  cf.ResumeRate,
		ResumeTimeout:               uint16(cf.ResumeTimeout),
		ResvEpilog:                  optStr(cf.ResvEpilog),
		ResvOverRun:                 uint16(cf.ResvOverRun),
		ResvProlog:                  optStr(cf.ResvProlog),
		Ret2Service:                 cf.ReturnToService,
		RoutePlugin:                 optStr(cf.RoutePlugin),
		SchedParams:                 optsStr(cf.SchedulerParameters),
		SchedLogFile:                optStr(cf.SlurmSchedLogFile),
		SchedLogLevel:               c.schedLogLevel(),
		SchedTimeSlice:              uint16(cf.SchedulerTimeSlice),
		SchedType:                   optStr(cf.SchedulerType),
		ScronParams:                 optsStr(cf.ScronParameters),
		SelectType:                  optStr(cf.SelectType),
		SelectTypeParam:             selectTypeParam(cf.SelectTypeParameters),
		SlurmConf:                   optStr(c.cfg.Path),
		SlurmUserID:                 c.cfg.SlurmUID,
		SlurmUserName:               optStr(cf.SlurmUser),
		SlurmdUserID:                c.cfg.SlurmdUID,
		SlurmdUserName:              optStr(cf.SlurmdUser),
		SlurmctldAddr:               optStr(cf.SlurmctldAddr),
		SlurmctldDebug:              c.slurmctldDebug(),
		SlurmctldLogFile:            optStr(cf.SlurmctldLogFile),
		SlurmctldParams:             optsStr(cf.SlurmctldParameters),
		SlurmctldPidFile:            optStr(cf.SlurmctldPidFile),
		SlurmctldPlugStack:          joinList(cf.SlurmctldPlugstack),
		SlurmctldPort:               uint32(cf.SlurmctldPort.First),
		SlurmctldPortCount:          max(cf.SlurmctldPort.Count, 1),
		SlurmctldPrimaryOffProg:     optStr(cf.SlurmctldPrimaryOffProg),
		SlurmctldPrimaryOnProg:      optStr(cf.SlurmctldPrimaryOnProg),
		SlurmctldSyslogDebug:        logLevel(cf.SlurmctldSyslogDebug, 10),
		SlurmctldTimeout:            uint16(cf.SlurmctldTimeout),
		SlurmdDebug:                 logLevel(cf.SlurmdDebug, 3),
		SlurmdLogFile:               optStr(cf.SlurmdLogFile),
		SlurmdParams:                optsStr(cf.SlurmdParameters),
		SlurmdPidFile:               optStr(cf.SlurmdPidFile),
		SlurmdPort:                  cf.SlurmdPort,
		SlurmdSpoolDir:              optStr(cf.SlurmdSpoolDir),
		SlurmdSyslogDebug:           logLevel(cf.SlurmdSyslogDebug, 10),
		SlurmdTimeout:               uint16(cf.SlurmdTimeout),
		SrunEpilog:                  optStr(cf.SrunEpilog),
		SrunPortRangeLo:             srunPortLo(cf),
		SrunPortRangeHi:             srunPortHi(cf),
		SrunProlog:                  optStr(cf.SrunProlog),
		StateSaveLocation:           optStr(cf.StateSaveLocation),
		SuspendExcNodes:             optStr(cf.SuspendExcNodes),
		SuspendExcParts:             joinList(cf.SuspendExcParts),
		SuspendProgram:              optStr(cf.SuspendProgram),
		SuspendRate:                 cf.SuspendRate,
		SuspendTime:                 suspendTime,
		SuspendTimeout:              uint16(cf.SuspendTimeout),
		SwitchParam:                 optsStr(cf.SwitchParameters),
		SwitchType:                  optStr(cf.SwitchType),
		TaskEpilog:                  optStr(cf.TaskEpilog),
		TaskProlog:                  optStr(cf.TaskProlog),
		TaskPlugin:                  joinList(cf.TaskPlugin),
		TaskPluginParam:             cf.TaskPluginParamFlags,
		TCPTimeout:                  uint16(cf.TCPTimeout),
		TmpFS:                       optStr(cf.TmpFS),
		TopologyParam:               optsStr(cf.TopologyParam),
		TopologyPlugin:              optStr(cf.TopologyPlugin),
		TreeWidth:                   cf.TreeWidth,
		UnkillableProgram:           optStr(cf.UnkillableStepProgram),
		UnkillableTimeout:           uint16(cf.UnkillableStepTimeout),
		Version:                     msg.Str(Version),
		VSizeFactor:                 cf.VSizeFactor,
		WaitTime:                    uint16(cf.WaitTime),
		X11Params:                   optsStr(cf.X11Parameters),
	}
}

func defMemPerCPU(cf *conf.Config) uint64 {
	if cf.DefMemPerCPU != 0 {
		return uint64(cf.DefMemPerCPU) | memPerCPU
	}
	return uint64(cf.DefMemPerNode)
}

func maxMemPerCPU(cf *conf.Config) uint64 {
	if cf.MaxMemPerCPU != 0 {
		return uint64(cf.MaxMemPerCPU) | memPerCPU
	}
	return uint64(cf.MaxMemPerNode)
}

func srunPortLo(cf *conf.Config) uint16 {
	if cf.SrunPortRange.Count == 0 {
		return 0
	}
	return cf.SrunPortRange.First
}

func srunPortHi(cf *conf.Config) uint16 {
	if cf.SrunPortRange.Count == 0 {
		return 0
	}
	return cf.SrunPortRange.First + cf.SrunPortRange.Count - 1
}

// cpuFreqGovs reads CpuFreqGovernors into CPU_FREQ_* bits.
func cpuFreqGovs(l conf.List) uint32 {
	var v uint32
	for _, s := range l {
		switch strings.ToLower(s) {
		case "conservative":
			v |= 0x88000000
		case "ondemand":
			v |= 0x84000000
		case "performance":
			v |= 0x82000000
		case "powersave":
			v |= 0x81000000
		case "userspace":
			v |= 0x80800000
		case "schedutil":
			v |= 0x80400000
		}
	}
	return v
}
