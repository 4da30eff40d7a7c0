package sched

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/conf"
)

const testConf = `ClusterName=t
SlurmctldHost=ctl
SchedulerType=sched/backfill
SchedulerParameters=bf_window=120,bf_resolution=30,bf_max_job_test=50000,bf_continue,bf_busy_nodes,default_queue_depth=200,bf_job_part_count_reserve=10
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
GresTypes=gpu
NodeName=c[1-4] Sockets=2 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=16000 Feature=intel,ib Weight=10
NodeName=g[1-2] CPUs=16 RealMemory=64000 Gres=gpu:a100:4 Weight=20 State=DRAIN
DownNodes=c4 State=DOWN Reason=broken
PartitionName=batch Nodes=c[1-4] Default=YES MaxTime=2-00:00:00 DefaultTime=60 State=UP
PartitionName=gpu Nodes=g[1-2] MaxNodes=2 OverSubscribe=EXCLUSIVE AllowGroups=gpuusers PriorityTier=5
`

func TestFromConf(t *testing.T) {
	c, err := conf.Parse("slurm.conf", []byte(testConf), conf.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromConf(c, func(name string) (uint32, bool) {
		if name == "gpuusers" {
			return 4242, true
		}
		return 0, false
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.Config
	if !cfg.Backfill || cfg.WholeNodes || !cfg.MemoryConsumable || cfg.DefMemPerCPU != 256 {
		t.Errorf("config %+v", cfg)
	}
	bf := cfg.BF
	if bf.Window != 7200 || bf.Resolution != 30 || bf.MaxJobTest != 50000 || !bf.Continue || !bf.BusyNodes || cfg.DefaultQueueDepth != 200 || bf.JobPartCountReserve != 10 {
		t.Errorf("backfill config %+v", bf)
	}
	if len(s.Nodes) != 6 {
		t.Fatalf("%d nodes", len(s.Nodes))
	}
	c1 := s.Nodes[0]
	if c1.Name != "c1" || c1.Sockets != 2 || c1.CoresPerSocket != 4 || c1.ThreadsPerCore != 2 || c1.CPUs != 16 ||
		c1.RealMemory != 16000 || c1.Weight != 10 || !slices.Equal(c1.Features, []string{"intel", "ib"}) || !c1.State.Usable() {
		t.Errorf("c1 = %+v", c1)
	}
	if s.Nodes[3].State&NodeDown == 0 {
		t.Errorf("c4 state %v, want down", s.Nodes[3].State)
	}
	g1 := s.Nodes[4]
	if g1.State&NodeDrain == 0 || len(g1.Gres) != 1 || g1.Gres[0] != (Gres{Name: "gpu", Type: "a100", Count: 4}) {
		t.Errorf("g1 = %+v", g1)
	}
	if len(s.Partitions) != 2 {
		t.Fatalf("%d partitions", len(s.Partitions))
	}
	b, g := s.Partitions[0], s.Partitions[1]
	if !b.Default || b.MaxTime != 2880 || b.DefaultTime != 60 || !slices.Equal(b.Nodes, []int{0, 1, 2, 3}) {
		t.Errorf("batch = %+v", b)
	}
	if g.OverSubscribe != OverSubscribeExclusive || g.MaxNodes != 2 || g.PriorityTier != 5 ||
		!slices.Equal(g.AllowGIDs, []uint32{4242}) || !slices.Equal(g.Nodes, []int{4, 5}) {
		t.Errorf("gpu = %+v", g)
	}

	// The snapshot schedules: a 4-task job lands on c1 (c4 is down).
	s.Now = 100
	s.Pending = []Job{{JobID: 1, Priority: 1, NumTasks: 4, TimeLimit: 10}}
	p := Schedule(s)
	st := mustStart(t, p, 1)
	if st.Alloc.Nodes[0].Node != 0 || len(st.Alloc.Nodes[0].Cores) != 2 || st.Alloc.Nodes[0].MemoryMB != 4*256 {
		t.Errorf("start %+v", st.Alloc)
	}
	if st.Alloc.End != 100+600 {
		t.Errorf("end %d", st.Alloc.End)
	}
}

func TestParseSchedulerParametersErrors(t *testing.T) {
	cfg := DefaultConfig()
	if err := ParseSchedulerParameters(&cfg, conf.ParseOptions("bf_window=abc")); err == nil {
		t.Fatal("bf_window=abc accepted")
	}
	if err := ParseSchedulerParameters(&cfg, conf.ParseOptions("bf_max_job_test=0,batch_sched_delay=3")); err != nil {
		t.Fatal(err)
	}
	if cfg.BF.MaxJobTest != 0 {
		t.Fatalf("MaxJobTest %d", cfg.BF.MaxJobTest)
	}
}

func TestReasonNames(t *testing.T) {
	for r, want := range map[Reason]string{
		ReasonPriority: "Priority", ReasonResources: "Resources", ReasonPartNodeLimit: "PartitionNodeLimit",
		ReasonBadConstraints: "BadConstraints", ReasonReqNodeNotAvail: "ReqNodeNotAvail", Reason(999): "Unknown",
	} {
		if r.String() != want {
			t.Errorf("%d: %q, want %q", r, r.String(), want)
		}
	}
}

func TestSelectTypeParameters(t *testing.T) {
	tests := []struct {
		selType, params string
		mem, cpus       bool
	}{
		{"select/cons_tres", "CR_Core_Memory", true, false},
		{"select/cons_tres", "CR_Core", false, false},
		{"select/cons_tres", "CR_CPU", false, true},
		{"select/cons_tres", "CR_CPU_Memory", true, true},
		{"select/cons_res", "CR_CPU", false, true},
		{"select/linear", "CR_Memory", true, false},
	}
	for _, tc := range tests {
		text := "ClusterName=t\nSlurmctldHost=ctl\nSelectType=" + tc.selType + "\nSelectTypeParameters=" + tc.params +
			"\nNodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n"
		c, err := conf.Parse("slurm.conf", []byte(text), conf.MapFS{})
		if err != nil {
			t.Fatalf("%s: %v", tc.params, err)
		}
		cfg, err := ConfigFromConf(c)
		if err != nil {
			t.Fatalf("%s: %v", tc.params, err)
		}
		if cfg.MemoryConsumable != tc.mem || cfg.CPUsConsumable != tc.cpus {
			t.Errorf("%s %s: memory %t CPUs %t, want %t %t", tc.selType, tc.params,
				cfg.MemoryConsumable, cfg.CPUsConsumable, tc.mem, tc.cpus)
		}
	}
}
