package sched

import "testing"

// TestLimitReasons: job_limits_check's reasons, in its order, and
// select_nodes' account lists for a job whose account is not known.
func TestLimitReasons(t *testing.T) {
	unknown := modify(func(j *Job) { j.AccountUnknown, j.Account = true, "acct1" })
	tests := []struct {
		name     string
		mod      func(*Snapshot)
		job      Job
		want     Reason
		wantDesc string
	}{
		{"more CPUs than the partition", nil, mkJob(1, tasks(5), modify(func(j *Job) { j.TotalCPUs = 33 })), ReasonPartConfig, ""},
		{"more CPUs than MaxCPUsPerNode allows", func(s *Snapshot) { s.Partitions[0].MaxCPUsPerNode = 1 },
			mkJob(1, cpt(2), modify(func(j *Job) { j.TotalCPUs = 5 })), ReasonPartConfig, ""},
		{"node count before time", func(s *Snapshot) { s.Partitions[0].MaxNodes, s.Partitions[0].MaxTime = 1, 30 },
			mkJob(1, nodesN(2, 2), limit(60)), ReasonPartNodeLimit, ""},
		{"explicit maximum above the partition's", func(s *Snapshot) { s.Partitions[0].MaxNodes = 2 },
			mkJob(1, nodesN(1, 3)), ReasonPartNodeLimit, ""},
		{"minimum below the partition's", func(s *Snapshot) { s.Partitions[0].MinNodes = 2 },
			mkJob(1, nodesN(1, 3)), ReasonPartNodeLimit, ""},
		{"down partition before its limits", func(s *Snapshot) { s.Partitions[0].State, s.Partitions[0].MaxTime = PartDown, 30 },
			mkJob(1, limit(60)), ReasonPartDown, ""},
		{"limits before account lists", func(s *Snapshot) { s.Partitions[0].AllowAccounts, s.Partitions[0].MaxTime = []string{"acct1"}, 30 },
			mkJob(1, limit(60), unknown), ReasonPartTimeLimit, ""},
		{"allow accounts, account not known", func(s *Snapshot) { s.Partitions[0].AllowAccounts = []string{"acct1", "acct2"} },
			mkJob(1, unknown), ReasonAccount, "Job's account not known, so it can't use this partition (batch allows acct1,acct2)"},
		{"allow accounts, account not listed", func(s *Snapshot) { s.Partitions[0].AllowAccounts = []string{"acct1"} },
			mkJob(1, modify(func(j *Job) { j.Account = "x" })), ReasonAccount,
			"Job's account not permitted to use this partition (batch allows acct1 not x)"},
		{"deny accounts", func(s *Snapshot) { s.Partitions[0].DenyAccounts = []string{"bad"} },
			mkJob(1, modify(func(j *Job) { j.Account = "bad" })), ReasonAccount,
			"Job's account not permitted to use this partition (batch denies bad including bad)"},
		{"deny accounts, account not known", func(s *Snapshot) { s.Partitions[0].DenyAccounts = []string{"bad"} },
			mkJob(1, modify(func(j *Job) { j.AccountUnknown, j.Account = true, "bad" })), ReasonNone, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, bf := range []bool{false, true} {
				s := snap(mkNodes(4, 8, 8000))
				s.Config.Backfill = bf
				if tc.mod != nil {
					tc.mod(s)
				}
				s.Pending = []Job{tc.job}
				p := Schedule(s)
				if tc.want == ReasonNone {
					mustStart(t, p, 1)
					continue
				}
				pd := mustPend(t, p, 1, tc.want)
				if pd.Desc != tc.wantDesc {
					t.Errorf("backfill %t: desc %q, want %q", bf, pd.Desc, tc.wantDesc)
				}
			}
		})
	}
}

// TestAccountDescFollowsReason: a job kept out of one partition by its
// account lists and waiting for resources in another shows Resources
// without the account text.
func TestAccountDescFollowsReason(t *testing.T) {
	s := snap(mkNodes(2, 8, 8000))
	s.Partitions = []Partition{mkPart("acct", []int{0}), mkPart("b", []int{1})}
	s.Partitions[0].AllowAccounts = []string{"acct1"}
	s.Running = []Allocation{running(99, 5000, 8, 1)}
	s.Pending = []Job{mkJob(1, parts("acct", "b"), modify(func(j *Job) { j.AccountUnknown = true }))}
	pd := mustPend(t, Schedule(s), 1, ReasonResources)
	if pd.Desc != "" {
		t.Fatalf("desc %q, want none", pd.Desc)
	}
}

// TestNodeRangeTakesFreeNodes: a -N min-max job gets as many nodes as
// are free up to its maximum (cons_tres asks for max_nodes), in the main
// pass and in backfill.
func TestNodeRangeTakesFreeNodes(t *testing.T) {
	tests := []struct {
		name    string
		busy    []int // nodes fully taken
		job     Job
		want    int // nodes
		wantCPU uint32
	}{
		{"all free", nil, mkJob(1, nodesN(1, 3)), 3, 3},
		{"fewer free than the maximum", []int{0, 2}, mkJob(1, nodesN(1, 3)), 2, 2},
		{"only the minimum free", []int{0, 1, 2}, mkJob(1, nodesN(1, 3)), 1, 1},
		{"task count bounds the nodes", nil, mkJob(1, nodesN(1, 3), tasks(2)), 2, 2},
		{"tasks spread over the nodes", nil, mkJob(1, nodesN(1, 2), tasks(3)), 2, 3},
		{"single count stays", nil, mkJob(1, nodesN(2, 2)), 2, 2},
		{"no range: the minimum", nil, mkJob(1, tasks(3)), 1, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, bf := range []bool{false, true} {
				s := snap(mkNodes(4, 8, 8000))
				for _, ni := range tc.busy {
					s.Running = append(s.Running, running(uint32(90+ni), 5000, 8, ni))
				}
				s.Pending = []Job{tc.job}
				var p *Plan
				if bf {
					p = Backfill(s)
				} else {
					p = MainPass(s)
				}
				st := mustStart(t, p, 1)
				var cpus uint32
				for _, na := range st.Alloc.Nodes {
					cpus += na.CPUs
				}
				if len(st.Alloc.Nodes) != tc.want || cpus != tc.wantCPU {
					t.Errorf("backfill %t: nodes %v cpus %d, want %d nodes %d cpus", bf, nodesOf(st), cpus, tc.want, tc.wantCPU)
				}
			}
		})
	}
}
