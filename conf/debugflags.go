package conf

import "strings"

// debugFlagBits are the DebugFlags names and their DEBUG_FLAG_* bits, in
// the order 22.05's debug_flags2str lists them (its canonical names).
var debugFlagBits = []struct {
	Name string
	Bit  uint
}{
	{"Accrue", 50}, {"JobAccountGather", 54}, {"Agent", 52}, {"Backfill", 12},
	{"BackfillMap", 27}, {"BurstBuffer", 40}, {"Cgroup", 55}, {"CpuFrequency", 41},
	{"CPU_Bind", 3}, {"Data", 8}, {"DB_Archive", 44}, {"DB_Assoc", 30}, {"DB_TRES", 45},
	{"DB_Event", 31}, {"DB_Job", 32}, {"DB_QOS", 33}, {"DB_Query", 34},
	{"DB_Reservation", 35}, {"DB_Resource", 36}, {"DB_Step", 37}, {"DB_Usage", 38},
	{"DB_WCKey", 39}, {"Dependency", 53}, {"Elasticsearch", 46}, {"Energy", 18},
	{"ExtSensors", 19}, {"Federation", 48}, {"FrontEnd", 15}, {"Gang", 13}, {"Gres", 6},
	{"Hetjob", 49}, {"Interconnect", 22}, {"JobContainer", 24}, {"NodeFeatures", 47},
	{"License", 20}, {"MPI", 7}, {"Network", 10}, {"NetworkRaw", 4}, {"NO_CONF_HASH", 5},
	{"Power", 42}, {"Priority", 11}, {"Profile", 21}, {"Protocol", 26}, {"Reservation", 14},
	{"Route", 29}, {"Script", 56}, {"SelectType", 0}, {"Steps", 1}, {"Switch", 17},
	{"TimeCray", 43}, {"TraceJobs", 28}, {"Triggers", 2}, {"WorkQueue", 9},
}

// debugFlagAliases are the other names debug_str2flags accepts.
var debugFlagAliases = map[string]string{
	"jag": "JobAccountGather", "net": "Network", "netraw": "NetworkRaw",
	"trigger": "Triggers", "powersave": "Power", "workq": "WorkQueue",
}

// DebugFlagMask converts DebugFlags names to DEBUG_FLAG_* bits (case-
// insensitive, with 22.05's aliases). Unknown names (validation reports
// them) and the removed "Task" set no bit.
func DebugFlagMask(names []string) uint64 {
	var m uint64
	for _, n := range names {
		if a, ok := debugFlagAliases[strings.ToLower(n)]; ok {
			n = a
		}
		for _, f := range debugFlagBits {
			if strings.EqualFold(f.Name, n) {
				m |= 1 << f.Bit
			}
		}
	}
	return m
}

// DebugFlagNames converts DEBUG_FLAG_* bits to their canonical names in
// debug_flags2str's order; bits without a name are dropped.
func DebugFlagNames(mask uint64) []string {
	var out []string
	for _, f := range debugFlagBits {
		if mask&(1<<f.Bit) != 0 {
			out = append(out, f.Name)
		}
	}
	return out
}
