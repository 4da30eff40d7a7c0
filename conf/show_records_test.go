package conf

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// showRecordField matches one Key=Value of scontrol's record output (values
// with blanks, such as Reason=, are cut at the blank; we do not compare those).
var showRecordField = regexp.MustCompile(`(\w+)=(\S*)`)

// readShowRecords splits `scontrol show partition|node` output into records
// keyed by the first field's value.
func readShowRecords(t *testing.T, file, first string) (order []string, recs map[string]map[string]string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	recs = map[string]map[string]string{}
	for _, block := range strings.Split(string(data), "\n\n") {
		m := showRecordField.FindAllStringSubmatch(block, -1)
		if len(m) == 0 || m[0][1] != first {
			continue
		}
		r := map[string]string{}
		for _, kv := range m {
			if _, dup := r[kv[1]]; !dup {
				r[kv[1]] = kv[2]
			}
		}
		order = append(order, m[0][2])
		recs[m[0][2]] = r
	}
	return order, recs
}

// partitionFields and nodeFields are the fields compared with real Slurm.
var (
	partitionFields = []string{"MaxTime", "DefaultTime", "Nodes", "TotalNodes", "MinNodes", "MaxNodes",
		"MaxCPUsPerNode", "State", "OverSubscribe", "PriorityTier", "PriorityJobFactor", "Default",
		"Hidden", "RootOnly", "ReqResv", "LLN", "ExclusiveUser", "GraceTime"}
	nodeFields = []string{"CPUTot", "Sockets", "Boards", "CoresPerSocket", "ThreadsPerCore", "RealMemory",
		"TmpDisk", "Weight", "AvailableFeatures", "ActiveFeatures", "Gres", "NodeAddr", "NodeHostName", "Port"}
)

// TestShowPartitionsMatchRealSlurm compares our partitions with the real
// controller's `scontrol show partition` for every config that has one.
func TestShowPartitionsMatchRealSlurm(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "configs", "*"))
	n := 0
	for _, dir := range dirs {
		oracle := filepath.Join(dir, "oracle-scontrol-show-partition.txt")
		if _, err := os.Stat(oracle); err != nil {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			order, recs := readShowRecords(t, oracle, "PartitionName")
			if len(order) == 0 {
				t.Skipf("%s holds no partition records", oracle)
			}
			n++
			c, err := Load(OSFS{}, filepath.ToSlash(filepath.Join(dir, "slurm.conf")))
			if err != nil {
				t.Fatal(err)
			}
			var ours []string
			for _, p := range c.Partitions {
				ours = append(ours, p.Name)
			}
			if strings.Join(ours, ",") != strings.Join(order, ",") {
				t.Errorf("partitions: ours %v, real %v", ours, order)
			}
			for _, p := range c.Partitions {
				want, ok := recs[p.Name]
				if !ok {
					continue
				}
				for _, f := range partitionFields {
					got, _ := c.ShowPartitionValue(p, f)
					if got != want[f] {
						t.Errorf("partition %s %s: ours %q, real %q", p.Name, f, got, want[f])
					}
				}
			}
		})
	}
	t.Logf("%d configs; fields compared: %s", n, strings.Join(partitionFields, " "))
}

// TestShowNodesMatchRealSlurm compares our nodes with the real controller's
// `scontrol show node` (recorded for configs with < 400 host names). Port is
// compared where scontrol prints it (it omits the default SlurmdPort).
func TestShowNodesMatchRealSlurm(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "configs", "*"))
	n := 0
	for _, dir := range dirs {
		oracle := filepath.Join(dir, "oracle-scontrol-show-node.txt")
		if _, err := os.Stat(oracle); err != nil {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			order, recs := readShowRecords(t, oracle, "NodeName")
			if len(order) == 0 {
				t.Skipf("%s holds no node records", oracle)
			}
			n++
			c, err := Load(OSFS{}, filepath.ToSlash(filepath.Join(dir, "slurm.conf")))
			if err != nil {
				t.Fatal(err)
			}
			// scontrol hides FUTURE and powered-down CLOUD nodes unless
			// --all is given.
			hidden := func(nd *Node) bool {
				st := strings.ToUpper(c.NodeLines[nd.Line].State)
				return strings.HasPrefix(st, "CLOUD") || strings.HasPrefix(st, "FUTURE")
			}
			shown := 0
			for i := range c.Nodes {
				if !hidden(&c.Nodes[i]) {
					shown++
				}
			}
			if len(order) != shown {
				t.Errorf("node count: ours %d (not CLOUD/FUTURE), real %d", shown, len(order))
			}
			for i := range c.Nodes {
				nd := &c.Nodes[i]
				if hidden(nd) {
					continue
				}
				want, ok := recs[nd.Name]
				if !ok {
					t.Errorf("node %s: not in real Slurm's table", nd.Name)
					continue
				}
				for _, f := range nodeFields {
					w, has := want[f]
					if !has && f == "Port" {
						w = ""
						if uint32(nd.Port) != c.SlurmdPort {
							t.Errorf("node %s Port: ours %d, real (default) %d", nd.Name, nd.Port, c.SlurmdPort)
						}
						continue
					}
					got, _ := c.ShowNodeValue(nd, f)
					if got != w {
						t.Errorf("node %s %s: ours %q, real %q", nd.Name, f, got, w)
					}
				}
			}
		})
	}
	t.Logf("%d configs; fields compared: %s", n, strings.Join(nodeFields, " "))
}
