package conf

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// keyInfo describes one top-level slurm.conf key.
type keyInfo struct {
	Name     string // canonical spelling
	Kind     string // str list opts u16 u32 u64 bool tmin tsec special record
	Obsolete bool
	Default  string
	HasDef   bool
	field    int
}

var (
	topKeys     []*keyInfo          // in Config field order
	topKeyIndex map[string]*keyInfo // lower-case name -> key
)

func init() {
	t := reflect.TypeOf(Config{})
	topKeyIndex = make(map[string]*keyInfo)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("slurm")
		if !ok {
			continue
		}
		parts := strings.Split(tag, ",")
		k := &keyInfo{Name: parts[0], Kind: parts[1], field: i}
		if len(parts) > 2 && parts[2] == "obsolete" {
			k.Obsolete = true
		}
		k.Default, k.HasDef = f.Tag.Lookup("def")
		topKeys = append(topKeys, k)
		topKeyIndex[strings.ToLower(k.Name)] = k
	}
}

// KnownKeys returns the canonical names of every top-level slurm.conf key
// the parser accepts (226 for 22.05), sorted case-insensitively.
func KnownKeys() []string {
	out := make([]string, 0, len(topKeys))
	for _, k := range topKeys {
		out = append(out, k.Name)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i]) < strings.ToLower(out[j]) })
	return out
}

// ObsoleteKeys returns the keys 22.05 accepts only for compatibility.
func ObsoleteKeys() []string {
	var out []string
	for _, k := range topKeys {
		if k.Obsolete {
			out = append(out, k.Name)
		}
	}
	sort.Strings(out)
	return out
}

// checkScalar validates a value of a numeric/boolean kind at parse time,
// as Slurm's parser does (string kinds are interpreted later).
func checkScalar(key, kind, value string) error {
	var err error
	switch kind {
	case "u16":
		_, err = ParseUint16(key, value)
	case "u32":
		_, err = ParseUint32(key, value)
	case "u64":
		_, err = ParseUint64(key, value)
	case "bool":
		_, err = ParseBool(key, value)
	case "float":
		_, err = ParseFloat(key, value)
	}
	return err
}

// setField stores value into the Config field of key k. It returns an error
// in Slurm's wording when the value is unusable.
func (k *keyInfo) setField(cfg *Config, value string) error {
	fv := reflect.ValueOf(cfg).Elem().Field(k.field)
	switch k.Kind {
	case "str":
		fv.SetString(value)
	case "list":
		fv.Set(reflect.ValueOf(splitList(value)))
	case "opts":
		fv.Set(reflect.ValueOf(ParseOptions(value)))
	case "u16":
		v, err := ParseUint16(k.Name, value)
		if err != nil {
			return err
		}
		fv.SetUint(uint64(v))
	case "u32":
		v, err := ParseUint32(k.Name, value)
		if err != nil {
			return err
		}
		fv.SetUint(uint64(v))
	case "u64":
		v, err := ParseUint64(k.Name, value)
		if err != nil {
			return err
		}
		fv.SetUint(v)
	case "bool":
		v, err := ParseBool(k.Name, value)
		if err != nil {
			return err
		}
		fv.SetBool(v)
	case "tmin":
		m, ok := ParseTimeMins(value)
		if !ok || (k.Name == "PriorityCalcPeriod" && (m < 1 || m == TimeInfinite)) {
			//lint:ignore ST1005 Slurm's wording, which scripts and our tests match
			return fmt.Errorf("Bad value \"%s\" for %s", value, k.Name)
		}
		if m != TimeInfinite {
			m *= 60
		}
		fv.SetUint(uint64(m))
	case "tsec":
		s, ok := ParseTimeSecs(value)
		if !ok {
			return fmt.Errorf("%s=%s invalid", k.Name, value)
		}
		fv.SetUint(uint64(s))
	default:
		return fmt.Errorf("internal: key %s of kind %s has no setter", k.Name, k.Kind)
	}
	return nil
}

// recordKey describes one key inside a record line.
type recordKey struct {
	Name string
	Kind string
}

func recordTable(keys ...recordKey) map[string]recordKey {
	m := make(map[string]recordKey, len(keys))
	for _, k := range keys {
		m[strings.ToLower(k.Name)] = k
	}
	return m
}

var nodeKeys = recordTable(
	recordKey{"BcastAddr", "str"}, recordKey{"Boards", "u16"}, recordKey{"CoreSpecCount", "u16"},
	recordKey{"CoresPerSocket", "u16"}, recordKey{"CPUs", "u16"}, recordKey{"CPUSpecList", "str"},
	recordKey{"CpuBind", "str"}, recordKey{"Feature", "str"}, recordKey{"Features", "str"},
	recordKey{"Gres", "str"}, recordKey{"MemSpecLimit", "u64"}, recordKey{"NodeAddr", "str"},
	recordKey{"NodeHostname", "str"}, recordKey{"Port", "str"}, recordKey{"Procs", "u16"},
	recordKey{"RealMemory", "u64"}, recordKey{"Reason", "str"}, recordKey{"Sockets", "u16"},
	recordKey{"SocketsPerBoard", "u16"}, recordKey{"State", "str"}, recordKey{"ThreadsPerCore", "u16"},
	recordKey{"TmpDisk", "u32"}, recordKey{"TRESWeights", "str"}, recordKey{"Weight", "u32"},
)

var partitionKeys = recordTable(
	recordKey{"AllocNodes", "str"}, recordKey{"AllowAccounts", "str"}, recordKey{"AllowGroups", "str"},
	recordKey{"AllowQos", "str"}, recordKey{"Alternate", "str"}, recordKey{"CpuBind", "str"},
	recordKey{"DefCPUPerGPU", "u64"}, recordKey{"DefMemPerCPU", "u64"}, recordKey{"DefMemPerGPU", "u64"},
	recordKey{"DefMemPerNode", "u64"}, recordKey{"Default", "bool"}, recordKey{"DefaultTime", "str"},
	recordKey{"DenyAccounts", "str"}, recordKey{"DenyQos", "str"}, recordKey{"DisableRootJobs", "bool"},
	recordKey{"ExclusiveUser", "bool"}, recordKey{"GraceTime", "u32"}, recordKey{"Hidden", "bool"},
	recordKey{"LLN", "bool"}, recordKey{"MaxCPUsPerNode", "u32"}, recordKey{"MaxMemPerCPU", "u64"},
	recordKey{"MaxMemPerNode", "u64"}, recordKey{"MaxTime", "str"}, recordKey{"MaxNodes", "u32"},
	recordKey{"MinNodes", "u32"}, recordKey{"Nodes", "str"}, recordKey{"OverSubscribe", "str"},
	recordKey{"OverTimeLimit", "str"}, recordKey{"PreemptMode", "str"}, recordKey{"Priority", "u16"},
	recordKey{"PriorityJobFactor", "u16"}, recordKey{"PriorityTier", "u16"}, recordKey{"QOS", "str"},
	recordKey{"RootOnly", "bool"}, recordKey{"ReqResv", "bool"}, recordKey{"ResumeTimeout", "u16"},
	recordKey{"SelectTypeParameters", "str"}, recordKey{"Shared", "str"}, recordKey{"State", "str"},
	recordKey{"SuspendTime", "str"}, recordKey{"SuspendTimeout", "u16"}, recordKey{"TRESBillingWeights", "str"},
)

var nodeSetKeys = recordTable(recordKey{"Feature", "str"}, recordKey{"Nodes", "str"})

var downNodesKeys = recordTable(recordKey{"Reason", "str"}, recordKey{"State", "str"})

var frontendKeys = recordTable(
	recordKey{"AllowGroups", "str"}, recordKey{"AllowUsers", "str"}, recordKey{"DenyGroups", "str"},
	recordKey{"DenyUsers", "str"}, recordKey{"FrontendAddr", "str"}, recordKey{"Port", "u16"},
	recordKey{"Reason", "str"}, recordKey{"State", "str"},
)

// slurmctldHostKeys is empty: SlurmctldHost takes no sub-keys.
var slurmctldHostKeys = recordTable()

// record is the table of one record line: canonical key -> value.
type record map[string]string

func (r record) get(key string) (string, bool) {
	if r == nil {
		return "", false
	}
	v, ok := r[key]
	return v, ok
}

// parseRecord reads pairs[1:] of a record line into a table. Like Slurm, it
// stops at the first unknown key or bad value (reporting it); whatever was
// read before is kept.
func (p *parser) parseRecord(l *Line, keys map[string]recordKey) record {
	r := record{}
	for i := 1; i < len(l.Pairs); i++ {
		pr := l.Pairs[i]
		k, ok := keys[strings.ToLower(pr.Key)]
		if !ok {
			p.d.errorf(l.Pos, "Parsing error at unrecognized key: %s", pr.Key)
			return r
		}
		if err := checkScalar(k.Name, k.Kind, pr.Value); err != nil {
			p.d.errorf(l.Pos, "%s", err)
			return r
		}
		if _, dup := r[k.Name]; dup {
			p.d.warnf(l.Pos, "%s 1 specified more than once, latest value used", k.Name)
		}
		r[k.Name] = pr.Value
	}
	if !onlySpace(l.Rest) {
		p.d.errorf(l.Pos, "Parse error in file %s line %d: \"%s\"", l.Pos.File, l.Pos.Line,
			strings.TrimRight(l.Rest, "\r\n"))
	}
	return r
}

// mergeDefault implements a DEFAULT line: keys of the new line win, keys
// only in the earlier default survive.
func mergeDefault(old, nw record) record {
	for k, v := range old {
		if _, ok := nw[k]; !ok {
			nw[k] = v
		}
	}
	return nw
}
