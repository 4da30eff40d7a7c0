package jobs

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/gres"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// gresTestCluster: n1 with gpu:2 (device files, registered), 4 cores.
func gresTestCluster() *Cluster {
	cl := testCluster()
	cl.Nodes = cl.Nodes[:1]
	cl.Nodes[0].Gres = []sched.Gres{{Name: "gpu", Count: 2}}
	for i := range cl.Partitions {
		cl.Partitions[i].Nodes = []int{0}
	}
	cl.GresRecs = [][]gres.Record{{{Name: "gpu", Count: 2, HasFile: true}}}
	cl.Config.MemoryConsumable = false // CR_Core: jobs without --mem share the node
	return cl
}

func gresDesc(c Caller, tres string) *msg.JobDesc {
	d := batchDesc(c)
	d.TresPerNode = msg.Str(tres)
	return d
}

func TestGresIndicesByJob(t *testing.T) {
	cl := gresTestCluster()
	j := &MemJournal{}
	m := newTestManager(j)
	a := mustSubmit(t, m, cl, gresDesc(alice, "gres:gpu:1"), alice, t0)
	b := mustSubmit(t, m, cl, gresDesc(alice, "gres:gpu:1"), alice, t0)
	w := mustSubmit(t, m, cl, gresDesc(alice, "gres:gpu:1"), alice, t0)
	acts := mustSchedule(t, m, cl, t0+1)
	want := map[uint32][][]gres.Alloc{
		a: {{{Name: "gpu", Count: 1, Bits: true, Idx: []int{0}}}},
		b: {{{Name: "gpu", Count: 1, Bits: true, Idx: []int{1}}}},
		w: nil,
	}
	for id, g := range want {
		if d := cmp.Diff(g, m.Job(id).NodeGres); d != "" {
			t.Errorf("job %d NodeGres (-want +got):\n%s", id, d)
		}
	}
	if r := m.Job(w).Reason; r != ReasonResources {
		t.Errorf("third job reason %d, want Resources", r)
	}
	if got := m.GresUsed(cl); got[0] != "gpu:2" {
		t.Errorf("GresUsed %q", got[0])
	}
	ls := launches(acts)
	if len(ls) != 2 {
		t.Fatalf("%d launches", len(ls))
	}
	jg := ls[1].Msg.Cred.Body.JobGres
	wantRec := []jobcred.JobGres{{PluginID: 7696487, NodeCnt: 1, TotalGres: 1, HasCntNodeAlloc: true, CntNodeAlloc: []uint64{1},
		HasBitAlloc: true, BitAlloc: []*jobcred.Bitmap{jobcred.BitmapOf(2, 1)}}}
	if d := cmp.Diff(wantRec, jg, cmp.Comparer(func(x, y *jobcred.Bitmap) bool { return x.Equal(y) })); d != "" {
		t.Errorf("job_gres_list (-want +got):\n%s", d)
	}
	if got := gresDetail(m.Job(b)); len(got) != 1 || got[0].Value != "gpu:1(IDX:1)" {
		t.Errorf("gres detail %+v", got)
	}

	// A step takes a subset; a second step waits for the busy GPU.
	g, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 1, NumTasks: 1, TresPerNode: msg.Str("gres:gpu:1")}, alice, cl, t0+2)
	if err != nil {
		t.Fatal(err)
	}
	if sg := g.Body.StepGres; len(sg) != 1 || sg[0].CntNodeAlloc[0] != 1 || !sg[0].BitAlloc[0].Equal(jobcred.BitmapOf(2, 0)) {
		t.Errorf("step_gres_list %+v", sg)
	}
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 1, NumTasks: 1}, alice, cl, t0+2); code(err) != slurmerr.ESLURM_NODES_BUSY {
		t.Errorf("second step: %v, want busy", err)
	}
	if _, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: a, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 1, NumTasks: 1, TresPerNode: msg.Str("gres:gpu:2")}, alice, cl, t0+2); code(err) != slurmerr.ESLURM_INVALID_GRES {
		t.Errorf("step beyond the job: %v, want invalid GRES", err)
	}

	// Journal replay and snapshot keep the indices.
	if a, b := tableJSON(t, m), tableJSON(t, replay(t, j.Records)); a != b {
		t.Fatalf("replayed table differs:\n%s\n%s", a, b)
	}
	var buf bytes.Buffer
	if err := m.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	n := newTestManager(nil)
	if err := n.LoadSnapshot(1, &buf); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(m.Job(b).NodeGres, n.Job(b).NodeGres); d != "" {
		t.Errorf("snapshot NodeGres (-before +after):\n%s", d)
	}
	// Before the node registers again, the indices jobs hold say it has
	// device files.
	cl.GresRecs = nil
	if got := n.GresUsed(cl); got[0] != "gpu:2" {
		t.Errorf("GresUsed after restart %q", got[0])
	}

	// The first job ends: the waiting one gets its index.
	finishJob(t, m, cl, a, 0, t0+3)
	mustSchedule(t, m, cl, t0+4)
	if d := cmp.Diff([][]gres.Alloc{{{Name: "gpu", Count: 1, Bits: true, Idx: []int{0}}}}, m.Job(w).NodeGres); d != "" {
		t.Errorf("third job NodeGres (-want +got):\n%s", d)
	}
}

// BenchmarkGresUsed: GresUsed (run after every controller call when a
// node has GRES) over 1,000 gpu:4 nodes and 4,000 running 1-GPU jobs.
func BenchmarkGresUsed(b *testing.B) {
	cl := &Cluster{Config: sched.DefaultConfig()}
	m := newTestManager(nil)
	for i := range 1000 {
		cl.Nodes = append(cl.Nodes, sched.Node{Name: fmt.Sprintf("g%d", i), Sockets: 4, CoresPerSocket: 1, ThreadsPerCore: 1,
			CPUs: 4, RealMemory: 4096, Gres: []sched.Gres{{Name: "gpu", Count: 4}}})
		cl.GresRecs = append(cl.GresRecs, []gres.Record{{Name: "gpu", Count: 4, HasFile: true}})
		for k := range 4 {
			id := uint32(i*4 + k + 1)
			m.jobs[id] = &Job{ID: id, State: msg.JobRunning, Nodes: []string{cl.Nodes[i].Name}, NodeIdx: []int{i},
				NodeGres: [][]gres.Alloc{{{Name: "gpu", Count: 1, Bits: true, Idx: []int{k}}}}}
		}
	}
	b.ResetTimer()
	for range b.N {
		m.GresUsed(cl)
	}
}

// TestGresPerJob: --gpus=3 over two gpu:2 nodes holds 2+1 (the scheduler
// rounds up per node; the job gets what it asked for), and a step
// without GRES takes the job's count over its nodes.
func TestGresPerJob(t *testing.T) {
	cl := &Cluster{Config: gresTestCluster().Config, Partitions: testCluster().Partitions}
	for _, n := range []string{"n1", "n2"} {
		cl.Nodes = append(cl.Nodes, sched.Node{Name: n, Sockets: 4, CoresPerSocket: 1, ThreadsPerCore: 1, CPUs: 4,
			RealMemory: 4096, Weight: 1, Gres: []sched.Gres{{Name: "gpu", Count: 2}}})
		cl.GresRecs = append(cl.GresRecs, []gres.Record{{Name: "gpu", Count: 2, HasFile: true}})
	}
	for i := range cl.Partitions {
		cl.Partitions[i].Nodes = []int{0, 1}
	}
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.TresPerJob = msg.Str("gres:gpu:3")
	d.MinNodes, d.MaxNodes = 2, 2
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0+1)
	want := [][]gres.Alloc{{{Name: "gpu", Count: 2, Bits: true, Idx: []int{0, 1}}}, {{Name: "gpu", Count: 1, Bits: true, Idx: []int{0}}}}
	if d := cmp.Diff(want, m.Job(id).NodeGres); d != "" {
		t.Fatalf("NodeGres (-want +got):\n%s", d)
	}
	if got := gresTotal(m.Job(id)); got != "gpu:3" {
		t.Errorf("JOB_GRES %q", got)
	}
	g, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 2, NumTasks: 2}, alice, cl, t0+2)
	if err != nil {
		t.Fatal(err)
	}
	if sg := g.Body.StepGres; len(sg) != 1 || sg[0].TotalGres != 3 || sg[0].CntNodeAlloc[0] != 2 || sg[0].CntNodeAlloc[1] != 1 {
		t.Errorf("step_gres_list %+v", sg)
	}
}

// TestGresPerTask: --gpus-per-task asks for tasks x count GPUs over the
// job; its steps ask for their own tasks' worth (inherited or named).
func TestGresPerTask(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tasks    uint32
		perTask  string
		wantIdx  []int
		stepTres string // step's tres_per_task ("" = inherit the job's)
		stepN    uint32
		stepIdx  []int
		stepCode int
	}{
		{name: "two tasks", tasks: 2, perTask: "gres:gpu:1", wantIdx: []int{0, 1}, stepN: 1, stepIdx: []int{0}},
		{name: "one task two gpus", tasks: 1, perTask: "gres:gpu:2", wantIdx: []int{0, 1}, stepN: 1, stepIdx: []int{0, 1}},
		{name: "step names its own", tasks: 2, perTask: "gres:gpu:1", wantIdx: []int{0, 1},
			stepTres: "gres:gpu:1", stepN: 2, stepIdx: []int{0, 1}},
		{name: "step beyond the job", tasks: 1, perTask: "gres:gpu:1", wantIdx: []int{0},
			stepTres: "gres:gpu:1", stepN: 2, stepCode: slurmerr.ESLURM_INVALID_GRES},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := gresTestCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.NumTasks, d.TresPerTask = tc.tasks, msg.Str(tc.perTask)
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0+1)
			want := [][]gres.Alloc{{{Name: "gpu", Count: uint64(len(tc.wantIdx)), Bits: true, Idx: tc.wantIdx}}}
			if d := cmp.Diff(want, m.Job(id).NodeGres); d != "" {
				t.Fatalf("NodeGres (-want +got):\n%s", d)
			}
			if got := m.Info(m.Job(id), cl, 1, 0, t0+1).TresPerTask; got.Value != tc.perTask {
				t.Errorf("TresPerTask %q", got.Value)
			}
			req := &msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
				MinNodes: 1, NumTasks: tc.stepN}
			if tc.stepTres != "" {
				req.TresPerTask = msg.Str(tc.stepTres)
			}
			g, _, err := m.CreateStep(req, alice, cl, t0+2)
			if tc.stepCode != 0 {
				if code(err) != tc.stepCode {
					t.Fatalf("step: %v, want %d", err, tc.stepCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sg := g.Body.StepGres
			if len(sg) != 1 || !sg[0].BitAlloc[0].Equal(jobcred.BitmapOf(2, tc.stepIdx...)) {
				t.Errorf("step_gres_list %+v, want indices %v", sg, tc.stepIdx)
			}
		})
	}
}

// TestGresCPUsPerGPU: --cpus-per-gpu gives a node that many CPUs a GPU
// asked for on it; with --gpus-per-task it sets -c.
func TestGresCPUsPerGPU(t *testing.T) {
	for _, tc := range []struct {
		name             string
		perNode, perTask string
		cpusPerGPU       string
		wantCPUs         uint32
		wantCPT          uint16
	}{
		{name: "per node", perNode: "gres:gpu:1", cpusPerGPU: "gres:gpu:2", wantCPUs: 2, wantCPT: NoVal16},
		{name: "two per node", perNode: "gres:gpu:2", cpusPerGPU: "gres:gpu:2", wantCPUs: 4, wantCPT: NoVal16},
		{name: "per task", perTask: "gres:gpu:1", cpusPerGPU: "gres:gpu:2", wantCPUs: 2, wantCPT: 2},
		{name: "none", perNode: "gres:gpu:1", wantCPUs: 1, wantCPT: NoVal16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := gresTestCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.NumTasks, d.CPUsPerTask = 1, NoVal16
			if tc.perNode != "" {
				d.TresPerNode = msg.Str(tc.perNode)
			}
			if tc.perTask != "" {
				d.TresPerTask = msg.Str(tc.perTask)
			}
			if tc.cpusPerGPU != "" {
				d.CPUsPerTres = msg.Str(tc.cpusPerGPU)
			}
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0+1)
			j := m.Job(id)
			if len(j.NodeCPUs) != 1 || j.NodeCPUs[0] != tc.wantCPUs {
				t.Errorf("NodeCPUs %v, want [%d]", j.NodeCPUs, tc.wantCPUs)
			}
			if j.CPUsPerTask != tc.wantCPT {
				t.Errorf("CPUsPerTask %d, want %d", j.CPUsPerTask, tc.wantCPT)
			}
		})
	}
}

// TestGresMemPerGPU: with memory consumable, --mem-per-gpu without --mem
// gives a node that much memory a GPU asked for on it; --mem wins.
func TestGresMemPerGPU(t *testing.T) {
	for _, tc := range []struct {
		name    string
		memSet  bool
		wantMem uint64
	}{
		{name: "mem per gpu", wantMem: 200},
		{name: "mem given", memSet: true, wantMem: 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := gresTestCluster()
			cl.Config.MemoryConsumable = true
			m := newTestManager(nil)
			d := gresDesc(alice, "gres:gpu:2")
			d.MemPerTres = msg.Str("gres:gpu:100")
			if tc.memSet {
				d.PnMinMemory = 50
			}
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0+1)
			if j := m.Job(id); len(j.NodeMem) != 1 || j.NodeMem[0] != tc.wantMem {
				t.Errorf("NodeMem %v, want [%d]", j.NodeMem, tc.wantMem)
			}
		})
	}
}

// TestGresCountsValid: the GRES count combinations a submission is
// refused for (_test_gres_cnt), and --gpus-per-socket's per-node count.
func TestGresCountsValid(t *testing.T) {
	for _, tc := range []struct {
		name                             string
		perJob, perNode, perSock, perTsk string
		tasks                            uint32
		sockets                          uint16
		ok                               bool
		wantIdx                          []int
	}{
		{name: "per task with -n", perTsk: "gres:gpu:1", tasks: 2, sockets: NoVal16, ok: true, wantIdx: []int{0, 1}},
		{name: "per task without -n", perTsk: "gres:gpu:1", tasks: NoVal, sockets: NoVal16},
		{name: "per task with --gpus", perJob: "gres:gpu:2", perTsk: "gres:gpu:1", tasks: NoVal, sockets: NoVal16, ok: true, wantIdx: []int{0, 1}},
		{name: "--gpus not a multiple", perJob: "gres:gpu:3", perTsk: "gres:gpu:2", tasks: NoVal, sockets: NoVal16},
		{name: "--gpus and -n disagree", perJob: "gres:gpu:2", perTsk: "gres:gpu:1", tasks: 1, sockets: NoVal16},
		{name: "per task above per node", perNode: "gres:gpu:1", perTsk: "gres:gpu:2", tasks: 1, sockets: NoVal16},
		{name: "per socket without sockets", perSock: "gres:gpu:1", tasks: NoVal, sockets: NoVal16},
		{name: "per socket", perSock: "gres:gpu:1", tasks: NoVal, sockets: 2, ok: true, wantIdx: []int{0, 1}},
		{name: "per node not a multiple of per socket", perNode: "gres:gpu:1", perSock: "gres:gpu:2", tasks: NoVal, sockets: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := gresTestCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.NumTasks, d.SocketsPerNode = tc.tasks, tc.sockets
			for _, f := range []struct {
				v  string
				to *msg.NullString
			}{{tc.perJob, &d.TresPerJob}, {tc.perNode, &d.TresPerNode}, {tc.perSock, &d.TresPerSocket}, {tc.perTsk, &d.TresPerTask}} {
				if f.v != "" {
					*f.to = msg.Str(f.v)
				}
			}
			r, _, err := m.Submit(d, alice, cl, t0)
			if !tc.ok {
				if code(err) != slurmerr.ESLURM_INVALID_GRES {
					t.Fatalf("submit: %v, want invalid GRES", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mustSchedule(t, m, cl, t0+1)
			want := [][]gres.Alloc{{{Name: "gpu", Count: uint64(len(tc.wantIdx)), Bits: true, Idx: tc.wantIdx}}}
			if d := cmp.Diff(want, m.Job(r.JobID).NodeGres); d != "" {
				t.Errorf("NodeGres (-want +got):\n%s", d)
			}
		})
	}
}

// TestGresPerSocketStep: an srun step asking --gpus-per-socket gets them
// times its job's --sockets-per-node on each node.
func TestGresPerSocketStep(t *testing.T) {
	cl := gresTestCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.SocketsPerNode, d.TresPerSocket = 1, msg.Str("gres:gpu:2")
	id := mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0+1)
	g, _, err := m.CreateStep(&msg.StepCreateRequest{UserID: alice.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: 1, NumTasks: 1, TresPerSocket: msg.Str("gres:gpu:2")}, alice, cl, t0+2)
	if err != nil {
		t.Fatal(err)
	}
	if sg := g.Body.StepGres; len(sg) != 1 || !sg[0].BitAlloc[0].Equal(jobcred.BitmapOf(2, 0, 1)) {
		t.Errorf("step_gres_list %+v", sg)
	}
}

// TestGresPerTaskOverflow: a per-task count whose product with the task
// count passes 2^64 does not wrap to "no GPUs" (the job would run with
// none); real slurmctld refuses it at submission because no node holds
// that many per task.
func TestGresPerTaskOverflow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tres  string
		tasks uint32
	}{
		{"2^63 per task, 2 tasks", "gres:gpu:9223372036854775808", 2},
		{"2^62 per task, 4 tasks", "gres:gpu:4611686018427387904", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := gresTestCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.NumTasks = tc.tasks
			d.TresPerTask = msg.Str(tc.tres)
			_, _, err := m.Submit(d, alice, cl, t0)
			if code(err) != slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE {
				t.Fatalf("submit: %v, want %q", err, slurmerr.Message(slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE))
			}
		})
	}
}

// -m's socket part decides the scheduler's core distribution flags:
// block over the sockets (or plane) syncs cores by block, cyclic or
// fcyclic keeps them cyclic even under CR_Core_Default_Dist_Block.
func TestSchedCoreDistFlags(t *testing.T) {
	for _, tc := range []struct {
		dist          uint32
		block, cyclic bool
	}{
		{0, false, false},
		{0x0001, false, false}, // cyclic (node level only)
		{0x0002, false, false}, // block
		{0x0004, true, false},  // plane
		{0x0021, true, false},  // cyclic:block
		{0x0022, true, false},  // block:block
		{0x0011, false, true},  // cyclic:cyclic
		{0x0012, false, true},  // block:cyclic
		{0x0032, false, true},  // block:fcyclic
		{0x0312, false, true},  // block:cyclic:fcyclic (core part ignored)
	} {
		var sj sched.Job
		setSchedGres(&sj, &Job{TaskDist: tc.dist})
		if sj.CoreBlock != tc.block || sj.CoreCyclic != tc.cyclic {
			t.Errorf("task_dist %#x: CoreBlock %v CoreCyclic %v, want %v %v", tc.dist, sj.CoreBlock, sj.CoreCyclic, tc.block, tc.cyclic)
		}
	}
}
