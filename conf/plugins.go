package conf

import (
	"slices"
	"strings"
)

// Plugins that exist in Slurm 22.05 (src/plugins/<type>/<name>), for the
// keys whose plugin slurmctld loads at start-up. A name outside this table
// makes slurmctld die ("Can't find plugin for select/bluegene"); we reject
// it while parsing. Whether a plugin is implemented by goslurm is a
// separate question answered by the daemons.
var knownPlugins = map[string][]string{
	"AccountingStorageType":    {"accounting_storage/none", "accounting_storage/slurmdbd", "accounting_storage/mysql"},
	"AcctGatherEnergyType":     {"acct_gather_energy/gpu", "acct_gather_energy/ibmaem", "acct_gather_energy/ipmi", "acct_gather_energy/none", "acct_gather_energy/pm_counters", "acct_gather_energy/rapl", "acct_gather_energy/xcc"},
	"AcctGatherFilesystemType": {"acct_gather_filesystem/lustre", "acct_gather_filesystem/none"},
	"AcctGatherProfileType":    {"acct_gather_profile/hdf5", "acct_gather_profile/influxdb", "acct_gather_profile/none"},
	"AuthType":                 {"auth/jwt", "auth/munge", "auth/none"},
	"CoreSpecPlugin":           {"core_spec/cray_aries", "core_spec/none"},
	"CredType":                 {"cred/munge", "cred/none"},
	"ExtSensorsType":           {"ext_sensors/none", "ext_sensors/rrd"},
	"JobAcctGatherType":        {"jobacct_gather/cgroup", "jobacct_gather/linux", "jobacct_gather/none"},
	"JobCompType":              {"jobcomp/elasticsearch", "jobcomp/filetxt", "jobcomp/lua", "jobcomp/mysql", "jobcomp/none", "jobcomp/script"},
	"JobContainerType":         {"job_container/cncu", "job_container/none", "job_container/tmpfs"},
	"LaunchType":               {"launch/slurm"},
	"MCSPlugin":                {"mcs/account", "mcs/group", "mcs/none", "mcs/user"},
	"PreemptType":              {"preempt/none", "preempt/partition_prio", "preempt/qos"},
	"PriorityType":             {"priority/basic", "priority/multifactor"},
	"ProctrackType":            {"proctrack/cgroup", "proctrack/cray_aries", "proctrack/linuxproc", "proctrack/pgid"},
	"RoutePlugin":              {"route/default", "route/topology"},
	"SchedulerType":            {"sched/backfill", "sched/builtin"},
	"SelectType":               {"select/cons_res", "select/cons_tres", "select/cray_aries", "select/linear"},
	"SwitchType":               {"switch/cray_aries", "switch/hpe_slingshot", "switch/none"},
	"TopologyPlugin":           {"topology/3d_torus", "topology/hypercube", "topology/none", "topology/tree"},
}

// extensionPlugins are plugin names 22.05 does not have that goslurm's own
// daemons implement, so a goslurm-only cluster (make demo) can run without
// munged: auth/slurm is the built-in token auth, modelled on Slurm 23.11's
// plugin of that name, and cred/goslurm_hs256 signs step credentials with
// the same key. A real 22.05 daemon given such a slurm.conf still refuses it
// at start-up, which is the right outcome for a mixed cluster.
var extensionPlugins = map[string][]string{
	"AuthType": {"auth/slurm"},
	"CredType": {"cred/goslurm_hs256"},
}

// pluginKeyOrder fixes the order of the checks (map order is random).
var pluginKeyOrder = []string{
	"SelectType", "SwitchType", "AuthType", "CredType", "AccountingStorageType", "JobCompType",
	"SchedulerType", "PriorityType", "PreemptType", "TopologyPlugin", "RoutePlugin", "MCSPlugin",
	"JobAcctGatherType", "JobContainerType", "ProctrackType", "LaunchType", "CoreSpecPlugin",
	"ExtSensorsType", "AcctGatherEnergyType", "AcctGatherFilesystemType", "AcctGatherProfileType",
}

// checkPlugins rejects plugin names 22.05 does not have.
func (p *parser) checkPlugins() {
	v := fieldsByName(p.cfg)
	for _, key := range pluginKeyOrder {
		name := v[key]
		if name == "" {
			continue
		}
		found := false
		for _, k := range slices.Concat(knownPlugins[key], extensionPlugins[key]) {
			if strings.EqualFold(k, name) {
				found = true
				break
			}
		}
		if found {
			continue
		}
		typ, _, _ := strings.Cut(knownPlugins[key][0], "/")
		if key == "SelectType" || key == "SwitchType" {
			p.d.errorf(p.pos(key), "Can't find plugin for %s", name)
		} else {
			p.d.errorf(p.pos(key), "cannot find %s plugin for %s", typ, name)
		}
	}
}

// fieldsByName returns the string-valued plugin keys of c.
func fieldsByName(c *Config) map[string]string {
	return map[string]string{
		"AccountingStorageType": c.AccountingStorageType, "AcctGatherEnergyType": c.AcctGatherEnergyType,
		"AcctGatherFilesystemType": c.AcctGatherFilesystemType, "AcctGatherProfileType": c.AcctGatherProfileType,
		"AuthType": c.AuthType, "CoreSpecPlugin": c.CoreSpecPlugin, "CredType": c.CredType,
		"ExtSensorsType": c.ExtSensorsType, "JobAcctGatherType": c.JobAcctGatherType, "JobCompType": c.JobCompType,
		"JobContainerType": c.JobContainerType, "LaunchType": c.LaunchType, "MCSPlugin": c.MCSPlugin,
		"PreemptType": c.PreemptType, "PriorityType": c.PriorityType, "ProctrackType": c.ProctrackType,
		"RoutePlugin": c.RoutePlugin, "SchedulerType": c.SchedulerType, "SelectType": c.SelectType,
		"SwitchType": c.SwitchType, "TopologyPlugin": c.TopologyPlugin,
	}
}
