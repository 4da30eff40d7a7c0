package conf

import (
	"fmt"
	"reflect"
	"strings"
)

// ShowConfigRuntimeKeys are the keys of `scontrol show config` whose value
// comes from the running controller or the machine, not from slurm.conf;
// ShowConfigValue does not render them. The value says why.
var ShowConfigRuntimeKeys = map[string]string{
	"BOOT_TIME":       "controller start time",
	"HASH_VAL":        "comparison of the client's and the controller's config hash",
	"MULTIPLE_SLURMD": "build option of the binaries (--enable-multiple-slurmd)",
	"NEXT_JOB_ID":     "job id counter of the running controller",
	"SLURM_CONF":      "path of the file the controller was started with",
	"SLURM_VERSION":   "version of the binaries",
	"PluginDir":       "default is the build's library directory",
	"SlurmUser":       "shows the uid looked up in the user database (name(uid))",
	"SlurmdUser":      "shows the uid looked up in the user database (name(uid))",
	"MaxNodeCount":    "the controller reports the size of its node table",
}

// ShowConfigValue renders the value of key the way `scontrol show config`
// (Slurm 22.05) prints it for this configuration: units ("30 sec",
// "0 min", "300 nodes/min"), Yes/No, "(null)" for unset strings,
// SlurmctldHost[i] as "host" or "host(addr)", and so on. ok is false for
// keys it cannot render faithfully from the configuration alone (see
// ShowConfigRuntimeKeys), for keys scontrol does not print for this
// configuration (the Priority* block with priority/basic, DefMemPerCPU
// when DefMemPerNode is in force...) and for unknown keys. Key lookup is
// case-insensitive.
func (c *Config) ShowConfigValue(key string) (string, bool) {
	if strings.HasPrefix(key, "SlurmctldHost[") && strings.HasSuffix(key, "]") {
		var i int
		if _, err := fmt.Sscanf(key, "SlurmctldHost[%d]", &i); err != nil || i < 0 || i >= len(c.SlurmctldHost) {
			return "", false
		}
		h := c.SlurmctldHost[i]
		if h.Addr != "" && h.Addr != h.Host {
			return h.Host + "(" + h.Addr + ")", true
		}
		return h.Host, true
	}
	for k := range ShowConfigRuntimeKeys {
		if strings.EqualFold(k, key) {
			return "", false
		}
	}
	k, ok := topKeyIndex[strings.ToLower(key)]
	if !ok {
		return c.showDerived(key)
	}
	if f, ok := showSpecial[k.Name]; ok {
		return f(c)
	}
	if strings.HasPrefix(k.Name, "Priority") && k.Name != "PriorityType" &&
		!strings.HasPrefix(k.Name, "PrioritySiteFactor") && k.Name != "PriorityParameters" &&
		c.PriorityType == "priority/basic" {
		return "", false // scontrol prints the Priority* block only for other plugins
	}
	if k.Obsolete && k.Name != "JobCredentialPrivateKey" && k.Name != "JobCredentialPublicCertificate" {
		return "", false // not printed
	}
	return showGeneric(reflect.ValueOf(c).Elem().Field(k.field))
}

// showDerived renders keys of scontrol's output that are not slurm.conf
// keys of their own.
func (c *Config) showDerived(key string) (string, bool) {
	switch strings.ToLower(key) {
	case "jobdefaults":
		var parts []string
		if c.DefCPUPerGPU != 0 {
			parts = append(parts, fmt.Sprintf("DefCpuPerGPU=%d", c.DefCPUPerGPU))
		}
		if c.DefMemPerGPU != 0 {
			parts = append(parts, fmt.Sprintf("DefMemPerGPU=%d", c.DefMemPerGPU))
		}
		return nullIfEmpty(strings.Join(parts, ",")), true
	}
	return "", false
}

func nullIfEmpty(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}

// showGeneric renders a field by its type.
func showGeneric(v reflect.Value) (string, bool) {
	switch x := v.Interface().(type) {
	case string:
		return nullIfEmpty(x), true
	case List:
		return nullIfEmpty(strings.Join(x, ",")), true
	case Options:
		return nullIfEmpty(x.String()), true
	case bool:
		return yesNo(x), true
	case Seconds:
		return fmt.Sprintf("%d sec", x), true
	case Minutes:
		if x == Infinite16 {
			return "UNLIMITED", true
		}
		return fmt.Sprintf("%d min", x), true
	case Microseconds:
		return fmt.Sprintf("%d usec", x), true
	case uint16, uint32, uint64:
		return fmt.Sprint(x), true
	}
	return "", false
}

// secs2time renders seconds as [D-]HH:MM:SS (Slurm's secs2time_str).
func secs2time(s uint64) string {
	if s == Infinite32 {
		return "UNLIMITED"
	}
	d, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}

// memLimit renders the DefMemPer*/MaxMemPer* pair scontrol shows: the
// per-CPU key when that one is in force, else the per-node key.
func memLimit(perCPU, perNode MB, wantCPU bool) (string, bool) {
	if perCPU != 0 {
		if !wantCPU {
			return "", false
		}
		return fmt.Sprint(uint64(perCPU)), true
	}
	if wantCPU {
		return "", false
	}
	if perNode == 0 || uint64(perNode) == Infinite64 {
		return "UNLIMITED", true
	}
	return fmt.Sprint(uint64(perNode)), true
}

func upperList(l List, empty string) string {
	if len(l) == 0 {
		return empty
	}
	return strings.ToUpper(strings.Join(l, ","))
}

var showSpecial = map[string]func(c *Config) (string, bool){
	"AccountingStorageEnforce": func(c *Config) (string, bool) {
		if len(c.AccountingStorageEnforce) == 0 {
			return "none", true
		}
		return "", false // accounting_enforce_string's order and aliases
	},
	"AccountingStoreFlags": func(c *Config) (string, bool) {
		return nullIfEmpty(strings.ToLower(strings.Join(c.AccountingStoreFlags, ","))), true
	},
	"CpuFreqDef": func(c *Config) (string, bool) {
		if c.CpuFreqDef == "" {
			return "Unknown", true
		}
		return "", false
	},
	"CpuFreqGovernors": func(c *Config) (string, bool) {
		if strings.EqualFold(strings.Join(c.CpuFreqGovernors, ","), "OnDemand,Performance,UserSpace") {
			return "OnDemand,Performance,UserSpace", true
		}
		return "", false
	},
	"DebugFlags": func(c *Config) (string, bool) {
		if len(c.DebugFlags) == 0 {
			return "(null)", true
		}
		return "", false // debug_flags2str's canonical order
	},
	"DefMemPerCPU":  func(c *Config) (string, bool) { return memLimit(c.DefMemPerCPU, c.DefMemPerNode, true) },
	"DefMemPerNode": func(c *Config) (string, bool) { return memLimit(c.DefMemPerCPU, c.DefMemPerNode, false) },
	"MaxMemPerCPU":  func(c *Config) (string, bool) { return memLimit(c.MaxMemPerCPU, c.MaxMemPerNode, true) },
	"MaxMemPerNode": func(c *Config) (string, bool) { return memLimit(c.MaxMemPerCPU, c.MaxMemPerNode, false) },
	"DefCPUPerGPU":  func(c *Config) (string, bool) { return "", false }, // shown in JobDefaults
	"DefMemPerGPU":  func(c *Config) (string, bool) { return "", false }, // shown in JobDefaults
	"EioTimeout":    func(c *Config) (string, bool) { return fmt.Sprint(uint32(c.EioTimeout)), true },
	"FairShareDampeningFactor": func(c *Config) (string, bool) {
		if c.PriorityType == "priority/basic" {
			return "", false
		}
		return fmt.Sprint(c.FairShareDampeningFactor), true
	},
	"HealthCheckNodeState": func(c *Config) (string, bool) {
		// health_check_node_state_str: CYCLE first, then ANY or the states.
		l := c.HealthCheckNodeState
		var out []string
		if l.Has("CYCLE") {
			out = append(out, "CYCLE")
		}
		for _, s := range l {
			switch strings.ToUpper(s) {
			case "CYCLE", "ANY", "IDLE", "ALLOC", "MIXED":
			default:
				return "", false
			}
		}
		if l.Has("ANY") || (l.Has("IDLE") && l.Has("ALLOC") && l.Has("MIXED")) || len(out) == len(l) {
			return strings.Join(append(out, "ANY"), ","), true
		}
		for _, s := range []string{"IDLE", "ALLOC", "MIXED"} {
			if l.Has(s) {
				out = append(out, s)
			}
		}
		return strings.Join(out, ","), true
	},
	"PrologEpilogTimeout": func(c *Config) (string, bool) { return fmt.Sprint(uint32(c.PrologEpilogTimeout)), true },
	// Not part of 22.05's config message: scontrol always shows (null).
	"PrioritySiteFactorPlugin": func(c *Config) (string, bool) { return "(null)", true },
	"PowerPlugin":              func(c *Config) (string, bool) { return c.PowerPlugin, true },
	"PreemptExemptTime": func(c *Config) (string, bool) {
		if uint64(c.PreemptExemptTime) == Infinite32 {
			return "NONE", true
		}
		return secs2time(uint64(c.PreemptExemptTime)), true
	},
	"PreemptMode": func(c *Config) (string, bool) { return upperList(c.PreemptMode, "OFF"), true },
	"PriorityCalcPeriod": func(c *Config) (string, bool) {
		return priorityOnly(c, secs2time(uint64(c.PriorityCalcPeriod)))
	},
	"PriorityDecayHalfLife": func(c *Config) (string, bool) {
		return priorityOnly(c, secs2time(uint64(c.PriorityDecayHalfLife)))
	},
	"PriorityMaxAge": func(c *Config) (string, bool) {
		return priorityOnly(c, secs2time(uint64(c.PriorityMaxAge)))
	},
	"PriorityFlags": func(c *Config) (string, bool) {
		return priorityOnly(c, upperList(c.PriorityFlags, ""))
	},
	"PriorityUsageResetPeriod": func(c *Config) (string, bool) {
		return priorityOnly(c, c.PriorityUsageResetPeriod)
	},
	"PrivateData": func(c *Config) (string, bool) {
		if len(c.PrivateData) == 0 {
			return "none", true
		}
		return "", false // private_data_string's canonical order
	},
	"PrologFlags": func(c *Config) (string, bool) {
		// prolog_flags2str prints the flags in its own fixed order.
		var out []string
		for _, f := range []string{"Alloc", "Contain", "DeferBatch", "NoHold", "Serial", "X11"} {
			if c.PrologFlags.Has(f) {
				out = append(out, f)
			}
		}
		return nullIfEmpty(strings.Join(out, ",")), true
	},
	"PropagateResourceLimits": func(c *Config) (string, bool) {
		if _, set := c.Set["PropagateResourceLimits"]; !set {
			if _, exc := c.Set["PropagateResourceLimitsExcept"]; !exc {
				return "ALL", true
			}
		}
		return nullIfEmpty(strings.Join(c.PropagateResourceLimits, ",")), true
	},
	"ReconfigFlags": func(c *Config) (string, bool) {
		if len(c.ReconfigFlags) == 0 {
			return "(null)", true
		}
		return "", false
	},
	"ResumeRate":  func(c *Config) (string, bool) { return fmt.Sprintf("%d nodes/min", c.ResumeRate), true },
	"SuspendRate": func(c *Config) (string, bool) { return fmt.Sprintf("%d nodes/min", c.SuspendRate), true },
	"SelectTypeParameters": func(c *Config) (string, bool) {
		if len(c.SelectTypeParameters) != 1 {
			// not printed when zero; several need select_type_param_string's order
			return "", false
		}
		return strings.ToUpper(strings.Join(c.SelectTypeParameters, ",")), true
	},
	"SlurmctldDebug":       func(c *Config) (string, bool) { return nullIfEmpty(c.SlurmctldDebug), true },
	"SlurmctldSyslogDebug": func(c *Config) (string, bool) { return nullIfEmpty(c.SlurmctldSyslogDebug), true },
	"SlurmdDebug":          func(c *Config) (string, bool) { return nullIfEmpty(c.SlurmdDebug), true },
	"SlurmdSyslogDebug":    func(c *Config) (string, bool) { return nullIfEmpty(c.SlurmdSyslogDebug), true },
	"SlurmctldPort": func(c *Config) (string, bool) {
		if c.SlurmctldPort.Count > 1 {
			return fmt.Sprintf("%d-%d", c.SlurmctldPort.First, uint32(c.SlurmctldPort.First)+uint32(c.SlurmctldPort.Count)-1), true
		}
		return fmt.Sprint(c.SlurmctldPort.First), true
	},
	"SrunPortRange": func(c *Config) (string, bool) {
		if c.SrunPortRange.Count == 0 {
			return "0-0", true
		}
		return fmt.Sprintf("%d-%d", c.SrunPortRange.First, uint32(c.SrunPortRange.First)+uint32(c.SrunPortRange.Count)-1), true
	},
	"SuspendTime": func(c *Config) (string, bool) {
		if uint64(c.SuspendTime) == Infinite32 {
			return "INFINITE", true
		}
		return fmt.Sprintf("%d sec", c.SuspendTime), true
	},
	"TaskPluginParam": func(c *Config) (string, bool) {
		if len(c.TaskPluginParam) == 0 {
			return "(null type)", true
		}
		return "", false
	},
	"VSizeFactor": func(c *Config) (string, bool) { return fmt.Sprintf("%d percent", c.VSizeFactor), true },
}

func priorityOnly(c *Config, v string) (string, bool) {
	if c.PriorityType == "priority/basic" {
		return "", false
	}
	return v, true
}
