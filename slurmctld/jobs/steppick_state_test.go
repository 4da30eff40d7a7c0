package jobs

import (
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// TestStepNodePickFeatures: srun -C takes only the job's nodes whose
// active features hold that one name (n1 fa, n2 fb, n3 fa and fb);
// none left makes the step wait, and a -w node without it is refused
// as _pick_step_nodes does (ESLURM_INVALID_TASK_MEMORY, no step holding
// it).
func TestStepNodePickFeatures(t *testing.T) {
	whole := ssfWhole
	tests := []struct {
		name  string
		feat  string
		req   preq
		code  int
		nodes []string
	}{
		{"fa -N1", "fa", preq{min: 1, tasks: 1, rel: -1, flags: whole}, 0, []string{"n1"}},
		{"fb -N1", "fb", preq{min: 1, tasks: 1, rel: -1, flags: whole}, 0, []string{"n2"}},
		{"fa -N2", "fa", preq{min: 2, tasks: 2, rel: -1, flags: whole}, 0, []string{"n1", "n3"}},
		{"fb -N2", "fb", preq{min: 2, tasks: 2, rel: -1, flags: whole}, 0, []string{"n2", "n3"}},
		{"fa on all 3 nodes waits", "fa", preq{min: 3, tasks: 3, rel: -1, flags: whole}, slurmerr.ESLURM_NODES_BUSY, nil},
		{"fa -N1-3 -n4", "fa", preq{min: 1, max: 3, tasks: 4, rel: -1, flags: whole}, 0, []string{"n1", "n3"}},
		{"a feature no node has", "fc", preq{min: 1, tasks: 1, rel: -1, flags: whole}, slurmerr.ESLURM_NODES_BUSY, nil},
		{"an AND of features matches none", "fa&fb", preq{min: 1, tasks: 1, rel: -1, flags: whole}, slurmerr.ESLURM_NODES_BUSY, nil},
		{"-w a node without it", "fa", preq{min: 1, tasks: 1, nodelist: "n2", rel: -1, flags: whole},
			slurmerr.ESLURM_INVALID_TASK_MEMORY, nil},
		{"-w a node with it", "fb", preq{min: 1, tasks: 1, nodelist: "n3", rel: -1, flags: whole}, 0, []string{"n3"}},
		{"fa -N1 -n3: too many CPUs", "fa", preq{min: 1, tasks: 3, rel: -1, flags: whole},
			slurmerr.ESLURM_TOO_MANY_REQUESTED_CPUS, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, cl, id := pickJob(t)
			for i, f := range [][]string{{"fa"}, {"fb"}, {"fa", "fb"}, {"fa"}} {
				cl.Nodes[i].Features = f
			}
			q := tc.req.msg(id)
			q.Features = msg.Str(tc.feat)
			_, _, err := m.CreateStep(q, alloc, cl, 103)
			if code(err) != tc.code {
				t.Fatalf("got %v, want code %d", err, tc.code)
			}
			if tc.code != 0 {
				return
			}
			j := m.Job(id)
			if st := j.Steps[len(j.Steps)-1]; !slices.Equal(st.Nodes, tc.nodes) {
				t.Errorf("nodes %v, want %v", st.Nodes, tc.nodes)
			}
		})
	}

	// The job's own constraint is no step constraint: every node stays.
	m, cl, id := pickJob(t)
	m.Job(id).Features = "fz"
	q := preq{min: 3, tasks: 3, rel: -1, flags: whole}.msg(id)
	q.Features = msg.Str("fz")
	if _, _, err := m.CreateStep(q, alloc, cl, 103); err != nil {
		t.Fatalf("the job's constraint: %v", err)
	}
}

// TestStepNodePickNodeState: a DOWN node of the job takes no step, and
// one the step cannot do without makes it wait unless every DOWN node
// is also NOT_RESPONDING (ESLURM_NODE_NOT_AVAIL); a NOT_RESPONDING,
// powered down or FUTURE node makes the job's first step wait, but
// not later ones.
func TestStepNodePickNodeState(t *testing.T) {
	whole := ssfWhole
	tests := []struct {
		name  string
		state sched.NodeState // of n2
		first bool            // no step ran before
		req   preq
		code  int
		nodes []string
	}{
		{"DOWN: -N2 skips it", sched.NodeDown, false, preq{min: 2, tasks: 2, rel: -1, flags: whole}, 0, []string{"n1", "n3"}},
		{"DOWN: -N3 waits", sched.NodeDown, false, preq{min: 3, tasks: 3, rel: -1, flags: whole}, slurmerr.ESLURM_NODES_BUSY, nil},
		{"DOWN: -w it", sched.NodeDown, false, preq{min: 1, tasks: 1, nodelist: "n2", rel: -1, flags: whole},
			slurmerr.ESLURM_INVALID_TASK_MEMORY, nil},
		// With n2 holding 1 CPU of the job (so a CPU count is no node
		// count): n1 and n3 are 4 CPUs of the 5 asked for.
		{"DOWN: CPUs short waits", sched.NodeDown, false, preq{min: 1, max: 3, tasks: 5, nodelist: "n1", rel: -1, flags: whole},
			slurmerr.ESLURM_NODES_BUSY, nil},
		{"DOWN and not responding: CPUs short", sched.NodeDown | sched.NodeNoRespond, false,
			preq{min: 1, max: 3, tasks: 5, nodelist: "n1", rel: -1, flags: whole}, slurmerr.ESLURM_NODE_NOT_AVAIL, nil},
		{"all up: CPUs enough", sched.NodeUp, false, preq{min: 1, max: 3, tasks: 5, nodelist: "n1", rel: -1, flags: whole},
			0, []string{"n1", "n2", "n3"}},
		{"drained: used", sched.NodeDrain, true, preq{min: 3, tasks: 3, rel: -1, flags: whole}, 0, []string{"n1", "n2", "n3"}},
		{"not responding: first step waits", sched.NodeNoRespond, true, preq{min: 1, tasks: 1, rel: -1, flags: whole},
			slurmerr.ESLURM_NODES_BUSY, nil},
		{"powered down: first step waits", sched.NodePoweredDown, true, preq{min: 1, tasks: 1, rel: -1, flags: whole},
			slurmerr.ESLURM_NODES_BUSY, nil},
		{"not responding: later step uses it", sched.NodeNoRespond, false, preq{min: 3, tasks: 3, rel: -1, flags: whole},
			0, []string{"n1", "n2", "n3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, cl, id := pickJob(t)
			if !tc.first {
				if _, _, err := m.CreateStep(preq{min: 1, tasks: 1, nodelist: "n1", rel: -1, flags: whole}.msg(id), alloc, cl, 102); err != nil {
					t.Fatal(err)
				}
				m.Job(id).Steps = nil // ended; the step id stays used
			}
			if tc.first != (m.Job(id).NextStepID == 0) {
				t.Fatalf("next step id %d", m.Job(id).NextStepID)
			}
			cl.Nodes[1].State = tc.state
			if tc.req.tasks == 5 {
				m.Job(id).NodeCPUs[1] = 1
			}
			_, _, err := m.CreateStep(tc.req.msg(id), alloc, cl, 103)
			if code(err) != tc.code {
				t.Fatalf("got %v, want code %d", err, tc.code)
			}
			if tc.code != 0 {
				return
			}
			j := m.Job(id)
			if st := j.Steps[len(j.Steps)-1]; !slices.Equal(st.Nodes, tc.nodes) {
				t.Errorf("nodes %v, want %v", st.Nodes, tc.nodes)
			}
		})
	}
}
