package jobs

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// cpuCluster: n[1-2] of 1 socket x 2 cores x 2 threads, CPUs consumable
// (CR_CPU) or cores (CR_Core), memory not.
func cpuCluster(crCPU bool) *Cluster {
	cl := &Cluster{Config: sched.DefaultConfig()}
	cl.Config.MemoryConsumable, cl.Config.CPUsConsumable = false, crCPU
	for _, n := range []string{"n1", "n2"} {
		cl.Nodes = append(cl.Nodes, sched.Node{Name: n, Sockets: 1, CoresPerSocket: 2, ThreadsPerCore: 2,
			CPUs: 4, RealMemory: 1000, Weight: 1})
	}
	cl.Partitions = []sched.Partition{{Name: "debug", Default: true, Nodes: []int{0, 1}, MaxTime: sched.Infinite32,
		DefaultTime: sched.NoValue32, MaxNodes: sched.Infinite32, MaxCPUsPerNode: sched.Infinite32}}
	return cl
}

// TestCRCPUJobAndSteps: under CR_CPU -n 5 gets 4+1 CPUs on 2+1 cores;
// the credential carries those CPUs and cores, a step's tasks are laid
// out over the CPUs (4+1, as _task_layout_block), and a step asking for
// more CPUs than the job has is refused as step_mgr does.
func TestCRCPUJobAndSteps(t *testing.T) {
	tests := []struct {
		name      string
		crCPU     bool
		cpus      []uint32
		cores     int // set bits of the job core bitmap
		layout    []int
		tooMany   uint32 // a step CPU count refused
		stepTasks uint32
	}{
		{name: "CR_CPU", crCPU: true, cpus: []uint32{4, 1}, cores: 3, layout: []int{4, 1}, tooMany: 6},
		{name: "CR_Core", crCPU: false, cpus: []uint32{4, 2}, cores: 3, layout: []int{3, 2}, tooMany: 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestManager(nil)
			cl := cpuCluster(tc.crCPU)
			alice := Caller{UID: 1000, GID: 1000}
			d := batchDesc(alice)
			d.NumTasks, d.MaxNodes = 5, 0
			id := mustSubmit(t, m, cl, d, alice, 100)
			ls := launches(mustSchedule(t, m, cl, 101))
			if len(ls) != 1 {
				t.Fatalf("%d launches", len(ls))
			}
			j := m.Job(id)
			if !slices.Equal(j.NodeCPUs, tc.cpus) {
				t.Fatalf("CPUs per node %v, want %v", j.NodeCPUs, tc.cpus)
			}
			body := ls[0].Msg.Cred.Body
			var credCPUs []uint32
			for _, g := range body.CPUGroups {
				for range g.Reps {
					credCPUs = append(credCPUs, uint32(g.CPUs))
				}
			}
			if !slices.Equal(credCPUs, tc.cpus) || body.JobCoreBitmap.Len() != 4 || body.JobCoreBitmap.Count() != tc.cores {
				t.Errorf("credential CPUs %v cores %d of %d", credCPUs, body.JobCoreBitmap.Count(), body.JobCoreBitmap.Len())
			}
			step := func(tasks, cpus uint32) (*StepGrant, error) {
				g, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
					MinNodes: 2, MaxNodes: 2, Relative: NoVal16, NumTasks: tasks, CPUCount: cpus, TaskDist: distUnknown, Host: msg.Str("login"), Port: 7000},
					alice, cl, 102)
				return g, err
			}
			g, err := step(5, 5)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, tids := range g.Resp.Layout.TIDs {
				got = append(got, len(tids))
			}
			if !slices.Equal(got, tc.layout) {
				t.Errorf("step layout %v, want %v", got, tc.layout)
			}
			// Once it ended (a step holding the job's CPUs makes any other
			// wait, ESLURM_NODES_BUSY, as _pick_step_nodes counts them).
			if _, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: g.Resp.JobStepID, StepHetComp: NoVal},
				RangeFirst: 0, RangeLast: 1}, alice, 103); err != nil {
				t.Fatal(err)
			}
			if _, err := step(2, tc.tooMany); code(err) != slurmerr.ESLURM_TOO_MANY_REQUESTED_CPUS {
				t.Errorf("step of %d CPUs: %v, want ESLURM_TOO_MANY_REQUESTED_CPUS", tc.tooMany, err)
			}
		})
	}
}

func TestBlockCounts(t *testing.T) {
	tests := []struct {
		name       string
		cpus       []uint32
		tasks, cpu uint32
		want       []uint32
	}{
		{"fills by CPUs", []uint32{4, 1}, 5, 5, []uint32{4, 1}},
		{"round by round", []uint32{4, 2}, 5, 5, []uint32{3, 2}},
		{"tasks of 2 CPUs", []uint32{4, 4}, 3, 6, []uint32{2, 1}},
		{"more tasks than CPUs spread", []uint32{2, 1}, 5, 5, []uint32{3, 2}},
		{"uneven CPUs per task count one", []uint32{4, 3, 3}, 4, 10, []uint32{2, 1, 1}},
	}
	m := newTestManager(nil)
	cl := cpuCluster(true)
	for _, tc := range tests {
		j := &Job{NodeCPUs: tc.cpus}
		var ranks []int
		for k := range tc.cpus {
			ranks = append(ranks, k)
			j.NodeIdx = append(j.NodeIdx, k%2)
		}
		got := m.blockCounts(j, cl, &msg.StepCreateRequest{TaskDist: distBlock, CPUCount: tc.cpu}, stepSpec{}, jobUse{}, ranks, tc.tasks)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
