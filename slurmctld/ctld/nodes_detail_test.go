package ctld

import (
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// tres_alloc_weighted is assoc_mgr_tres_weighted over the allocated CPUs
// and memory: the CPU count without TRESWeights, the weighted sum (or with
// PriorityFlags=MAX_TRES the maximum) with them.
func TestNodeAllocWeighted(t *testing.T) {
	tests := []struct {
		name    string
		weights string // the node line's TRESWeights=
		maxTRES bool
		cpus    uint16
		mem     uint64 // MB
		want    float64
	}{
		{"idle, no weights", "", false, 0, 0, 0},
		{"no weights", "", false, 2, 500, 2},
		{"cpu weight", "CPU=1.5", false, 2, 500, 3},
		{"cpu and mem per GB", "CPU=1,Mem=2G", false, 2, 1024, 4},
		{"max tres", "CPU=1,Mem=2G", true, 2, 2048, 4},
		{"max tres, cpu wins", "CPU=3,Mem=2G", true, 2, 1024, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := "ClusterName=t\nSlurmctldHost=localhost\nNodeName=n1 CPUs=4 RealMemory=4096"
			if tc.weights != "" {
				text += " TRESWeights=" + tc.weights
			}
			c, err := conf.Parse("slurm.conf", []byte(text+"\nPartitionName=p Nodes=n1\n"), conf.MapFS{})
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := newNodes(c, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := nodes[0]
			n.AllocCPUs, n.AllocMem = tc.cpus, tc.mem
			if got := n.allocWeighted(tc.maxTRES); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// gres_drain is "N/A" in detailed node records (22.05's
// gres_get_node_drain) and NULL otherwise; the weighted allocated TRES go
// into the select nodeinfo.
func TestNodeDetail(t *testing.T) {
	ctl, _ := newTestController(t, "")
	n := node(ctl, "n1")
	n.AllocCPUs = 2
	tests := []struct {
		name  string
		flags uint16
		drain msg.NullString
	}{
		{"plain", 0, msg.NullString{}},
		{"detail", msg.ShowDetail, msg.Str("N/A")},
		{"detail and all", msg.ShowDetail | 0x01, msg.Str("N/A")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := ctl.nodeRecord(n)
			ctl.nodeDetail(&rec, n, tc.flags)
			if rec.GresDrain != tc.drain {
				t.Fatalf("gres_drain %+v, want %+v", rec.GresDrain, tc.drain)
			}
			if rec.SelectNodeInfo.TresAllocWeighted != msg.PackDouble(2) {
				t.Fatalf("tres_alloc_weighted %v", rec.SelectNodeInfo.TresAllocWeighted)
			}
		})
	}
}
