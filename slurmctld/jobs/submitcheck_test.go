package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// checkCluster is testCluster with node features and partitions in the
// states and with the limits the submission checks look at. The
// expectations below were taken from real 22.05
// (testsuite/interop/slurmctld_submit_checks_test.go).
func checkCluster() *Cluster {
	cl := testCluster()
	cl.Nodes[1].AvailFeatures = []string{"fa", "fb"}
	base := cl.Partitions[0]
	base.Default = false
	add := func(name string, edit func(p *sched.Partition)) {
		p := base
		p.Name = name
		edit(&p)
		cl.Partitions = append(cl.Partitions, p)
	}
	add("drained", func(p *sched.Partition) { p.State, p.Alternate = sched.PartDrain, "debug" })
	add("inactive", func(p *sched.Partition) { p.State = sched.PartInactive })
	add("loop", func(p *sched.Partition) { p.State, p.Alternate = sched.PartDrain, "inactive" })
	add("down", func(p *sched.Partition) { p.State = sched.PartDown })
	add("acct", func(p *sched.Partition) { p.AllowAccounts = []string{"acct1"} })
	add("deny", func(p *sched.Partition) { p.DenyAccounts = []string{"bad"} })
	add("small", func(p *sched.Partition) { p.MaxCPUsPerNode, p.Nodes = 1, []int{1} })
	add("one", func(p *sched.Partition) { p.Nodes, p.MaxTime = []int{0}, 60 })
	add("noroot", func(p *sched.Partition) { p.DisableRootJobs = true })
	add("anode", func(p *sched.Partition) { p.AllocNodes = []string{"login[1-2]"} })
	return cl
}

func TestSubmitChecks(t *testing.T) {
	const (
		notAvail   = slurmerr.ESLURM_PARTITION_NOT_AVAIL
		badFeature = slurmerr.ESLURM_INVALID_FEATURE
		nodeConfig = slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
		partConfig = slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE
	)
	for _, tc := range []struct {
		name  string
		edit  func(d *msg.JobDesc)
		enf   EnforcePartLimits
		want  int
		parts string // the job's partitions when accepted
		msg   string // text sent with the refusal
	}{
		{"drain uses alternate", func(d *msg.JobDesc) { d.Partition = msg.Str("drained") }, EnforceNo, 0, "debug", ""},
		{"inactive refused", func(d *msg.JobDesc) { d.Partition = msg.Str("inactive") }, EnforceNo, notAvail, "", ""},
		{"alternate not available", func(d *msg.JobDesc) { d.Partition = msg.Str("loop") }, EnforceNo, notAvail, "", ""},
		{"down accepted", func(d *msg.JobDesc) { d.Partition = msg.Str("down") }, EnforceAll, 0, "down", ""},
		{"unavailable dropped", func(d *msg.JobDesc) { d.Partition = msg.Str("inactive,one") }, EnforceNo, 0, "one", ""},
		{"none left", func(d *msg.JobDesc) { d.Partition = msg.Str("inactive,loop") }, EnforceNo, notAvail, "", ""},
		{"unknown feature", func(d *msg.JobDesc) { d.Features = msg.Str("nosuch") }, EnforceNo, badFeature, "", ""},
		{"one unknown in or", func(d *msg.JobDesc) { d.Features = msg.Str("fa|nosuch") }, EnforceNo, badFeature, "", ""},
		{"commas are and", func(d *msg.JobDesc) { d.Features = msg.Str("fa,fb") }, EnforceNo, 0, "debug", ""},
		{"count missing in brackets", func(d *msg.JobDesc) { d.Features = msg.Str("[fa*1&fb]") }, EnforceNo, badFeature, "", ""},
		{"counts in brackets", func(d *msg.JobDesc) { d.Features = msg.Str("[fa*1&fb*1]") }, EnforceNo, 0, "debug", ""},
		{"matching or", func(d *msg.JobDesc) { d.Features = msg.Str("[fa|fb]") }, EnforceNo, 0, "debug", ""},
		{"unbalanced parenthesis", func(d *msg.JobDesc) { d.Features = msg.Str("(fa") }, EnforceNo, badFeature, "", ""},
		{"memory over every node", func(d *msg.JobDesc) { d.PnMinMemory = 5000 }, EnforceNo, nodeConfig, "", "Memory specification can not be satisfied"},
		{"cpus over every node", func(d *msg.JobDesc) { d.PnMinCPUs = 17 }, EnforceNo, nodeConfig, "", "CPU count per node can not be satisfied"},
		{"node outside partition waits", func(d *msg.JobDesc) { d.Partition = msg.Str("one"); d.ReqNodes = msg.Str("n2") }, EnforceNo, nodeConfig, "", ""},
		{"required and excluded", func(d *msg.JobDesc) { d.ReqNodes = msg.Str("n1"); d.ExcNodes = msg.Str("n1") }, EnforceNo, slurmerr.ESLURM_INVALID_NODE_NAME, "", ""},
		{"time-min over MaxTime", func(d *msg.JobDesc) { d.Partition = msg.Str("one"); d.TimeMin = 120 }, EnforceNo, slurmerr.ESLURM_INVALID_TIME_MIN_LIMIT, "", ""},
		{"time-min over time limit", func(d *msg.JobDesc) { d.TimeLimit, d.TimeMin = 30, 40 }, EnforceNo, slurmerr.ESLURM_INVALID_TIME_MIN_LIMIT, "", ""},
		{"deadline passed", func(d *msg.JobDesc) { d.Deadline = t0 - 1 }, EnforceNo, slurmerr.ESLURM_INVALID_TIME_LIMIT, "", ""},
		{"too many cpus waits", func(d *msg.JobDesc) { d.Partition = msg.Str("small"); d.MinCPUs = 2 }, EnforceNo, 0, "small", ""},
		{"too many cpus enforced", func(d *msg.JobDesc) { d.Partition = msg.Str("small"); d.MinCPUs = 2 }, EnforceAll, slurmerr.ESLURM_TOO_MANY_REQUESTED_CPUS, "", ""},
		{"allow accounts waits", func(d *msg.JobDesc) { d.Partition = msg.Str("acct"); d.Account = msg.Str("acct1") }, EnforceNo, 0, "acct", ""},
		{"allow accounts enforced", func(d *msg.JobDesc) { d.Partition = msg.Str("acct"); d.Account = msg.Str("acct1") }, EnforceAll, slurmerr.ESLURM_INVALID_ACCOUNT, "", ""},
		{"deny accounts waits", func(d *msg.JobDesc) { d.Partition = msg.Str("deny"); d.Account = msg.Str("bad") }, EnforceNo, 0, "deny", ""},
		{"deny accounts enforced", func(d *msg.JobDesc) { d.Partition = msg.Str("deny"); d.Account = msg.Str("bad") }, EnforceAny, partConfig, "", ""},
		{"submit host not allowed", func(d *msg.JobDesc) { d.Partition = msg.Str("anode"); d.AllocNode = msg.Str("elsewhere") }, EnforceNo, slurmerr.ESLURM_ACCESS_DENIED, "", ""},
		{"submit host allowed", func(d *msg.JobDesc) { d.Partition = msg.Str("anode"); d.AllocNode = msg.Str("login2") }, EnforceNo, 0, "anode", ""},
		{"over MaxTime enforced any of two", func(d *msg.JobDesc) { d.Partition = msg.Str("one,debug"); d.TimeLimit = 120 }, EnforceAny, 0, "one,debug", ""},
		{"over MaxTime enforced all of two", func(d *msg.JobDesc) { d.Partition = msg.Str("one,debug"); d.TimeLimit = 120 }, EnforceAll, slurmerr.ESLURM_INVALID_TIME_LIMIT, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := checkCluster()
			m := newTestManager(nil)
			m.cfg.EnforcePartLimits = tc.enf
			d := batchDesc(alice)
			tc.edit(d)
			r, _, err := m.Submit(d, alice, cl, t0)
			if got := code(err); got != tc.want {
				t.Fatalf("code %d (%v), want %d", got, err, tc.want)
			}
			if got := UserMessage(err); got != tc.msg {
				t.Errorf("message %q, want %q", got, tc.msg)
			}
			if err != nil {
				return
			}
			j := m.jobs[r.JobID]
			if got := joinNames(j.Partitions); got != tc.parts {
				t.Errorf("partitions %q, want %q", got, tc.parts)
			}
		})
	}
}

func joinNames(l []string) string {
	s := ""
	for i, n := range l {
		if i > 0 {
			s += ","
		}
		s += n
	}
	return s
}

// TestSubmitCheckReasons: what a queued job waits for right after
// submission, as real 22.05 shows it.
func TestSubmitCheckReasons(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(d *msg.JobDesc)
		want sched.Reason
		desc string
	}{
		{"over MaxTime", func(d *msg.JobDesc) { d.Partition = msg.Str("one"); d.TimeLimit = 120 }, sched.ReasonPartConfig, ""},
		{"more nodes than the partition", func(d *msg.JobDesc) { d.Partition = msg.Str("one"); d.MinNodes = 2 }, sched.ReasonPartConfig, ""},
		{"account not known", func(d *msg.JobDesc) { d.Partition = msg.Str("acct") }, sched.ReasonPartConfig,
			"Job's account not known, so it can't use this partition (acct allows acct1)"},
		{"partition down", func(d *msg.JobDesc) { d.Partition = msg.Str("down") }, sched.ReasonPartDown, ""},
		// select_nodes' reason in a partition that cannot take the job
		// stays when another one could.
		{"too many nodes in the first of two", func(d *msg.JobDesc) { d.Partition = msg.Str("short,debug"); d.MinNodes = 3 },
			sched.ReasonPartNodeLimit, ""},
		{"account not known in the first of two", func(d *msg.JobDesc) { d.Partition = msg.Str("acct,debug") }, sched.ReasonAccount,
			"Job's account not known, so it can't use this partition (acct allows acct1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := checkCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			tc.edit(d)
			r, _, err := m.Submit(d, alice, cl, t0)
			if err != nil {
				t.Fatal(err)
			}
			j := m.jobs[r.JobID]
			if sched.Reason(j.Reason) != tc.want || j.StateDesc != tc.desc {
				t.Errorf("reason %d %q, want %d %q", j.Reason, j.StateDesc, tc.want, tc.desc)
			}
		})
	}
}

// TestLateRejectUsesJobID: slurmctld refuses a bad constraint after
// creating the job record, so the next job's id skips one.
func TestLateRejectUsesJobID(t *testing.T) {
	cl := checkCluster()
	m := newTestManager(nil)
	first := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	d := batchDesc(alice)
	d.Features = msg.Str("nosuch")
	if _, _, err := m.Submit(d, alice, cl, t0); code(err) != slurmerr.ESLURM_INVALID_FEATURE {
		t.Fatal(err)
	}
	d = batchDesc(alice)
	d.Partition = msg.Str("inactive") // refused before the record exists
	if _, _, err := m.Submit(d, alice, cl, t0); code(err) != slurmerr.ESLURM_PARTITION_NOT_AVAIL {
		t.Fatal(err)
	}
	if next := mustSubmit(t, m, cl, batchDesc(alice), alice, t0); next != first+2 {
		t.Fatalf("next id %d, want %d", next, first+2)
	}
}

func TestParseFeatures(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		want []featTerm
	}{
		{"a", true, []featTerm{{name: "a"}}},
		{"a&b", true, []featTerm{{name: "a", op: featAnd}, {name: "b"}}},
		{"a|b", true, []featTerm{{name: "a", op: featOr}, {name: "b"}}},
		{"[a|b]", true, []featTerm{{name: "a", op: featXOr}, {name: "b"}}},
		{"[a*2&b*1]", true, []featTerm{{name: "a", count: 2, op: featXAnd}, {name: "b", count: 1}}},
		{"(a|b)&c", true, []featTerm{{name: "a", paren: 1, op: featOr}, {name: "b", op: featAnd}, {name: "c"}}},
		{"a*0", false, nil},
		{"(a*2)", false, nil},
		{"&a", false, nil},
		{"a&", true, []featTerm{{name: "a", op: featAnd}}}, // as build_feature_list: a trailing operator passes
		{"a||b", false, nil},
		{"[a", false, nil},
		{"a]", false, nil},
		{"[a][b]", false, nil},
		{"((a))", false, nil},
		{"(a", false, nil},
		{"", true, nil},
	} {
		got, ok := parseFeatures(tc.in)
		if ok != tc.ok {
			t.Errorf("%q: ok %v, want %v", tc.in, ok, tc.ok)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
				break
			}
		}
	}
}

func FuzzParseFeatures(f *testing.F) {
	for _, s := range []string{"a", "[a*2&b*1]", "(a|b)&c", "a*-1", "[a|b]"} {
		f.Add(s)
	}
	nodes := []sched.Node{{AvailFeatures: []string{"a", "b"}}}
	f.Fuzz(func(t *testing.T, s string) {
		parseFeatures(s)
		checkFeatures(s, nodes)
	})
}

// TestAllocateQueuedCode: the allocation reply of a job queued because it
// cannot run in its partition as configured carries job_allocate's code,
// which srun prints ("Requested partition configuration not available
// now") before it waits.
func TestAllocateQueuedCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(d *msg.JobDesc)
		want int
	}{
		{"more nodes than the partition", func(d *msg.JobDesc) { d.MinNodes = 9 }, slurmerr.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE},
		{"partition down", func(d *msg.JobDesc) { d.Partition = msg.Str("down") }, slurmerr.ESLURM_PARTITION_DOWN},
		{"runs", func(d *msg.JobDesc) {}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := checkCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.Script = msg.NullString{}
			tc.edit(d)
			a, _, err := m.Allocate(d, alice, cl, t0)
			if err != nil {
				t.Fatal(err)
			}
			if int(a.ErrorCode) != tc.want {
				t.Errorf("error code %d, want %d", a.ErrorCode, tc.want)
			}
		})
	}
}

// TestPendingNodeCount: the node count a pending job shows, as pack_job
// derives it (checked against real 22.05: -n 5 on 2-CPU nodes shows 3).
func TestPendingNodeCount(t *testing.T) {
	cl := checkCluster() // 16-CPU nodes, 16 cores each
	for _, tc := range []struct {
		name string
		edit func(j *Job)
		want uint32
	}{
		{"tasks over the biggest node", func(j *Job) { j.NumTasks = 33 }, 3},
		{"minimum nodes win", func(j *Job) { j.NumTasks, j.MinNodes = 2, 2 }, 2},
		{"no task count", func(j *Job) {}, 1},
		{"tasks per node", func(j *Job) { j.NumTasks, j.NTasksPerNode = 8, 2 }, 4},
		{"cpus per task", func(j *Job) { j.NumTasks, j.CPUsPerTask = 5, 8 }, 3},
		{"tasks per core", func(j *Job) { j.NumTasks, j.NTasksPerCore = 40, 2 }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &Job{MinNodes: 1, NumTasks: NoVal, CPUsPerTask: NoVal16, NTasksPerNode: NoVal16,
				NTasksPerCore: 0xffff, Partitions: []string{"debug"}}
			tc.edit(j)
			if got := newTestManager(nil).PendingNodeCount(j, cl); got != tc.want {
				t.Errorf("node count %d, want %d", got, tc.want)
			}
		})
	}
}

// TestSetPnMinCPUs: MinCPUsNode of a new job, as real 22.05 showed it in
// the geometry corpus (--ntasks-per-node=2 -n 6 shows 2, -c 3 shows 3).
func TestSetPnMinCPUs(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(j *Job)
		want uint16
	}{
		{"nothing asked", func(j *Job) {}, NoVal16},
		{"cpus per task", func(j *Job) { j.CPUsPerTask = 3 }, 3},
		{"tasks per node with -n", func(j *Job) { j.NTasksPerNode, j.NumTasks = 2, 6 }, 2},
		{"tasks per node alone", func(j *Job) { j.NTasksPerNode = 3 }, 3},
		{"tasks per node times cpus", func(j *Job) { j.NTasksPerNode, j.NumTasks, j.CPUsPerTask = 2, 4, 2 }, 4},
		{"overcommit", func(j *Job) { j.NTasksPerNode, j.NumTasks, j.Overcommit = 4, 8, 1 }, NoVal16},
		{"mincpus wins", func(j *Job) { j.PnMinCPUs, j.NTasksPerNode, j.NumTasks = 5, 2, 4 }, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &Job{MinNodes: 1, NumTasks: NoVal, CPUsPerTask: NoVal16, NTasksPerNode: NoVal16, PnMinCPUs: NoVal16}
			tc.edit(j)
			setPnMinCPUs(j)
			if j.PnMinCPUs != tc.want {
				t.Errorf("PnMinCPUs %d, want %d", j.PnMinCPUs, tc.want)
			}
		})
	}
}
