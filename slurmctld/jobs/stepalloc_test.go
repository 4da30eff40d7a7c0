package jobs

import (
	"bytes"
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// allocCluster: n1 and n2 of 2 cores (1 thread) and 1000 MB each, cores
// and memory consumable (CR_Core_Memory).
func allocCluster() *Cluster {
	cl := &Cluster{Config: sched.DefaultConfig()}
	cl.Config.MemoryConsumable, cl.Config.CPUsConsumable = true, false
	for _, n := range []string{"n1", "n2"} {
		cl.Nodes = append(cl.Nodes, sched.Node{Name: n, Sockets: 1, CoresPerSocket: 2, ThreadsPerCore: 1,
			CPUs: 2, RealMemory: 1000, Weight: 1})
	}
	cl.Partitions = []sched.Partition{{Name: "debug", Default: true, Nodes: []int{0, 1}, MaxTime: sched.Infinite32,
		DefaultTime: sched.NoValue32, MaxNodes: sched.Infinite32, MaxCPUsPerNode: sched.Infinite32}}
	return cl
}

// allocJob starts a job of 2+2 CPUs and 300 MB a node on allocCluster.
func allocJob(t *testing.T) (*Manager, *Cluster, uint32) {
	t.Helper()
	m := newTestManager(nil)
	cl := allocCluster()
	d := batchDesc(alloc)
	d.NumTasks, d.MinNodes, d.PnMinMemory = 4, 2, 300
	id := mustSubmit(t, m, cl, d, alloc, 100)
	mustSchedule(t, m, cl, 101)
	j := m.Job(id)
	if !j.Running() || !slices.Equal(j.NodeCPUs, []uint32{2, 2}) || !slices.Equal(j.NodeMem, []uint64{300, 300}) {
		t.Fatalf("job state %#x CPUs %v memory %v", j.State, j.NodeCPUs, j.NodeMem)
	}
	return m, cl, id
}

var alloc = Caller{UID: 1000, GID: 1000}

// sreq is a step request as srun makes it: tasks, CPUs, minimum nodes,
// SSF_* flags, --mem (0: none), -w.
type sreq struct {
	tasks, cpus, nodes uint32
	flags              uint32
	mem                uint64
	nodelist           string
}

func (r sreq) msg(id uint32) *msg.StepCreateRequest {
	q := &msg.StepCreateRequest{UserID: alloc.UID, StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal},
		MinNodes: r.nodes, MaxNodes: r.nodes, Relative: NoVal16, NumTasks: r.tasks, CPUCount: r.cpus, Flags: r.flags, TaskDist: distUnknown,
		Host: msg.Str("login"), Port: 7000, SrunPID: 4242, PnMinMemory: NoVal64, ThreadsPerCore: NoVal16}
	if r.mem != 0 {
		q.PnMinMemory = r.mem
	}
	if r.nodelist != "" {
		q.NodeList = msg.Str(r.nodelist)
	}
	return q
}

func TestStepAllocation(t *testing.T) {
	tests := []struct {
		name   string
		before []sreq // steps running
		req    sreq
		code   int
		nodes  []string
		cpus   []uint32
		cores  [][]uint16
		mem    []uint64
	}{
		{name: "first step", req: sreq{tasks: 1, cpus: 1, nodes: 1},
			nodes: []string{"n1"}, cpus: []uint32{1}, cores: [][]uint16{{0}}, mem: []uint64{300}},
		{name: "a node no step runs on first", before: []sreq{{tasks: 1, cpus: 1, nodes: 1}}, req: sreq{tasks: 1, cpus: 1, nodes: 1},
			nodes: []string{"n2"}, cpus: []uint32{1}, cores: [][]uint16{{0}}, mem: []uint64{300}},
		{name: "the free core of a busy node", before: []sreq{{tasks: 1, cpus: 1, nodes: 1}}, req: sreq{tasks: 1, cpus: 1, nodes: 1, nodelist: "n1"},
			nodes: []string{"n1"}, cpus: []uint32{1}, cores: [][]uint16{{1}}, mem: []uint64{300}},
		{name: "job full", before: []sreq{{tasks: 4, cpus: 4, nodes: 2}}, req: sreq{tasks: 1, cpus: 1, nodes: 1},
			code: slurmerr.ESLURM_NODES_BUSY},
		{name: "requested node full", before: []sreq{{tasks: 2, cpus: 2, nodes: 1}}, req: sreq{tasks: 1, cpus: 1, nodes: 1, nodelist: "n1"},
			code: slurmerr.ESLURM_NODES_BUSY},
		{name: "two nodes wanted, one free", before: []sreq{{tasks: 2, cpus: 2, nodes: 1}}, req: sreq{tasks: 2, cpus: 2, nodes: 2},
			code: slurmerr.ESLURM_NODES_BUSY},
		{name: "the other node", before: []sreq{{tasks: 2, cpus: 2, nodes: 1}}, req: sreq{tasks: 2, cpus: 2, nodes: 1},
			nodes: []string{"n2"}, cpus: []uint32{2}, cores: [][]uint16{{0, 1}}, mem: []uint64{300}},
		{name: "overlap shares", before: []sreq{{tasks: 4, cpus: 4, nodes: 2}}, req: sreq{tasks: 1, cpus: 1, nodes: 1, flags: ssfOverlapForce},
			nodes: []string{"n1"}, cpus: []uint32{1}, cores: [][]uint16{{0}}, mem: []uint64{300}},
		{name: "overlap steps hold nothing", before: []sreq{{tasks: 4, cpus: 4, nodes: 2, flags: ssfOverlapForce}}, req: sreq{tasks: 2, cpus: 2, nodes: 1},
			nodes: []string{"n1"}, cpus: []uint32{2}, cores: [][]uint16{{0, 1}}, mem: []uint64{300}},
		{name: "whole skips a node in use", before: []sreq{{tasks: 1, cpus: 1, nodes: 1}}, req: sreq{tasks: 1, cpus: 1, nodes: 1, flags: ssfWhole},
			nodes: []string{"n2"}, cpus: []uint32{2}, cores: [][]uint16{{0, 1}}, mem: []uint64{300}},
		{name: "more CPUs than the job", req: sreq{tasks: 1, cpus: 5, nodes: 1}, code: slurmerr.ESLURM_TOO_MANY_REQUESTED_CPUS},
		{name: "node not in the job", req: sreq{tasks: 1, cpus: 1, nodes: 1, nodelist: "n9"}, code: slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE},
		{name: "memory beyond the job's", req: sreq{tasks: 1, cpus: 1, nodes: 1, mem: 400}, code: slurmerr.ESLURM_INVALID_TASK_MEMORY},
		{name: "memory asked for", req: sreq{tasks: 1, cpus: 1, nodes: 1, mem: 200},
			nodes: []string{"n1"}, cpus: []uint32{1}, cores: [][]uint16{{0}}, mem: []uint64{200}},
		{name: "memory per CPU", req: sreq{tasks: 2, cpus: 2, nodes: 1, mem: 100 | memPerCPU},
			nodes: []string{"n1"}, cpus: []uint32{2}, cores: [][]uint16{{0, 1}}, mem: []uint64{200}},
		{name: "memory left beside a step", before: []sreq{{tasks: 1, cpus: 1, nodes: 1, mem: 200}}, req: sreq{tasks: 1, cpus: 1, nodes: 1, mem: 100, nodelist: "n1"},
			nodes: []string{"n1"}, cpus: []uint32{1}, cores: [][]uint16{{1}}, mem: []uint64{100}},
		{name: "memory held by a step", before: []sreq{{tasks: 1, cpus: 1, nodes: 1, mem: 200}}, req: sreq{tasks: 1, cpus: 1, nodes: 1, mem: 200, nodelist: "n1"},
			code: slurmerr.ESLURM_NODES_BUSY},
		{name: "memory held, all nodes wanted", before: []sreq{{tasks: 1, cpus: 1, nodes: 1, mem: 200}}, req: sreq{tasks: 2, cpus: 2, nodes: 2, mem: 200},
			code: slurmerr.ESLURM_NODES_BUSY},
		{name: "overlap ignores held memory", before: []sreq{{tasks: 1, cpus: 1, nodes: 1, mem: 300}}, req: sreq{tasks: 1, cpus: 1, nodes: 1, mem: 300, nodelist: "n1", flags: ssfOverlapForce},
			nodes: []string{"n1"}, cpus: []uint32{1}, cores: [][]uint16{{0}}, mem: []uint64{300}},
		{name: "memory of no count is not held", before: []sreq{{tasks: 1, cpus: 1, nodes: 1}}, req: sreq{tasks: 1, cpus: 1, nodes: 1, mem: 300, nodelist: "n1"},
			nodes: []string{"n1"}, cpus: []uint32{1}, cores: [][]uint16{{1}}, mem: []uint64{300}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, cl, id := allocJob(t)
			for i, b := range tc.before {
				if _, _, err := m.CreateStep(b.msg(id), alloc, cl, 102); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
			}
			g, _, err := m.CreateStep(tc.req.msg(id), alloc, cl, 103)
			if code(err) != tc.code {
				t.Fatalf("got %v, want code %d", err, tc.code)
			}
			j := m.Job(id)
			if tc.code != 0 {
				if len(j.Steps) != len(tc.before) || j.NextStepID != uint32(len(tc.before)) {
					t.Errorf("%d steps, next id %d after a refusal", len(j.Steps), j.NextStepID)
				}
				return
			}
			st := j.Steps[len(j.Steps)-1]
			a := st.Alloc
			if !slices.Equal(st.Nodes, tc.nodes) || !slices.Equal(a.CPUs, tc.cpus) || !slices.Equal(a.Mem, tc.mem) ||
				!slices.EqualFunc(a.Cores, tc.cores, slices.Equal) {
				t.Errorf("nodes %v CPUs %v cores %v memory %v, want %v %v %v %v", st.Nodes, a.CPUs, a.Cores, a.Mem,
					tc.nodes, tc.cpus, tc.cores, tc.mem)
			}
			// The credential names the step's cores only, over the cores
			// of the job's nodes (n1 bits 0-1, n2 bits 2-3).
			bm := g.Body.StepCoreBitmap
			var bits []uint16
			for b := range bm.Len() {
				if bm.Test(b) {
					bits = append(bits, uint16(b))
				}
			}
			var want []uint16
			for i, n := range tc.nodes {
				off := uint16(2 * indexOf([]string{"n1", "n2"}, n))
				for _, c := range tc.cores[i] {
					want = append(want, off+c)
				}
			}
			if !slices.Equal(bits, want) {
				t.Errorf("step core bitmap bits %v, want %v", bits, want)
			}
		})
	}
}

// TestStepAllocFreedAndWaitersWoken: a step refused for busy CPUs records
// its srun; when a step ends its CPUs are free again and the srun is told
// to try again (SRUN_STEP_SIGNAL for the pending step id, signal 0), once.
func TestStepAllocFreedAndWaitersWoken(t *testing.T) {
	m, cl, id := allocJob(t)
	full := sreq{tasks: 4, cpus: 4, nodes: 2}
	if _, _, err := m.CreateStep(full.msg(id), alloc, cl, 102); err != nil {
		t.Fatal(err)
	}
	one := sreq{tasks: 1, cpus: 1, nodes: 1}
	for range 2 { // the same srun asking twice is one waiter
		if _, _, err := m.CreateStep(one.msg(id), alloc, cl, 103); code(err) != slurmerr.ESLURM_NODES_BUSY {
			t.Fatalf("got %v, want ESLURM_NODES_BUSY", err)
		}
	}
	out, err := m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: 0, StepHetComp: NoVal}, RangeFirst: 0, RangeLast: 1}, alloc, 104)
	if err != nil {
		t.Fatal(err)
	}
	var wakes []SrunMessage
	for _, a := range out.Actions {
		if s, ok := a.(SrunMessage); ok {
			wakes = append(wakes, s)
		}
	}
	if len(wakes) != 1 || wakes[0].MsgType != msgtype.SRUN_STEP_SIGNAL || wakes[0].Host != "login" || wakes[0].Port != 7000 {
		t.Fatalf("wake-ups %+v", wakes)
	}
	if k := wakes[0].Msg.(*msg.JobStepKillRequest); k.StepID.StepID != pendingStepID || k.Signal != 0 {
		t.Errorf("wake-up body %+v", k)
	}
	if _, _, err := m.CreateStep(one.msg(id), alloc, cl, 105); err != nil {
		t.Fatalf("after the step ended: %v", err)
	}
	// The step just created ends: nobody is waiting any more.
	out, err = m.StepComplete(&msg.StepComplete{StepID: msg.StepID{JobID: id, StepID: 1, StepHetComp: NoVal}, RangeFirst: 0, RangeLast: 0}, alloc, 106)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range out.Actions {
		if _, ok := a.(SrunMessage); ok {
			t.Errorf("woke again: %+v", a)
		}
	}
}

// TestStepWaitersWokenByCountAndAge: a step's end wakes eight waiting
// sruns, and any that has waited a minute.
func TestStepWaitersWokenByCountAndAge(t *testing.T) {
	j := &Job{ID: 5, State: msg.JobRunning}
	for i := range 10 {
		j.addWaiter(&msg.StepCreateRequest{Host: msg.Str("login"), Port: uint16(7000 + i), SrunPID: uint32(i)}, int64(100+i))
	}
	m := newTestManager(nil)
	if got := len(m.wakeWaiters(j, 150)); got != 8 || len(j.stepWaiters) != 2 {
		t.Errorf("woke %d, %d left; want 8, 2", got, len(j.stepWaiters))
	}
	// Ten more: the two left have waited 60 s by 168 and 169.
	for i := range 10 {
		j.addWaiter(&msg.StepCreateRequest{Host: msg.Str("login"), Port: uint16(8000 + i), SrunPID: uint32(100 + i)}, 160)
	}
	if got := len(m.wakeWaiters(j, 169)); got != 8 || len(j.stepWaiters) != 4 {
		t.Errorf("woke %d, %d left; want 8, 4", got, len(j.stepWaiters))
	}
	j.stepWaiters = j.stepWaiters[:0]
	for i := range 10 {
		j.addWaiter(&msg.StepCreateRequest{Host: msg.Str("login"), Port: uint16(7000 + i), SrunPID: uint32(i)}, 100)
	}
	if got := len(m.wakeWaiters(j, 160)); got != 10 {
		t.Errorf("woke %d of 10 that waited 60 s", got)
	}
}

// TestStepAllocKeptOverRestart: what running steps hold is saved with
// them, so that after a restart a new step still waits for it.
func TestStepAllocKeptOverRestart(t *testing.T) {
	m, cl, id := allocJob(t)
	if _, _, err := m.CreateStep(sreq{tasks: 4, cpus: 4, nodes: 2}.msg(id), alloc, cl, 102); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	n := newTestManager(nil)
	if err := n.LoadSnapshot(1, &buf); err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.CreateStep(sreq{tasks: 1, cpus: 1, nodes: 1}.msg(id), alloc, cl, 103); code(err) != slurmerr.ESLURM_NODES_BUSY {
		t.Fatalf("after restart: %v, want ESLURM_NODES_BUSY", err)
	}
}

// TestStepWithoutAllocHoldsItsNodes: a step with no recorded allocation
// (saved by an older goslurm, or re-synced from a node) holds its nodes:
// a new step there waits, --overlap still runs.
func TestStepWithoutAllocHoldsItsNodes(t *testing.T) {
	m, cl, id := allocJob(t)
	if _, _, err := m.CreateStep(sreq{tasks: 1, cpus: 1, nodes: 1, nodelist: "n1"}.msg(id), alloc, cl, 102); err != nil {
		t.Fatal(err)
	}
	m.Job(id).Steps[0].Alloc = nil
	if _, _, err := m.CreateStep(sreq{tasks: 1, cpus: 1, nodes: 1, nodelist: "n1"}.msg(id), alloc, cl, 103); code(err) != slurmerr.ESLURM_NODES_BUSY {
		t.Fatalf("beside a step without allocation: %v, want ESLURM_NODES_BUSY", err)
	}
	if _, _, err := m.CreateStep(sreq{tasks: 1, cpus: 1, nodes: 1, nodelist: "n1", flags: ssfOverlapForce}.msg(id), alloc, cl, 104); err != nil {
		t.Fatalf("--overlap: %v", err)
	}
}
