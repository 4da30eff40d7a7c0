package main

import (
	"testing"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/launch"
	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

func TestTasksPerNode(t *testing.T) {
	for _, c := range []struct {
		name   string
		cpus   []uint16
		reps   []uint32
		ntasks int
		cpt    int
		want   string
	}{
		{"one per cpu", []uint16{2}, []uint32{2}, 0, 0, "2(x2)"},
		{"cpus per task", []uint16{4}, []uint32{1}, 0, 2, "2"},
		{"block over nodes", []uint16{2}, []uint32{2}, 3, 0, "2,1"},
		{"one each", []uint16{2}, []uint32{3}, 3, 0, "1(x3)"},
		{"overcommitted", []uint16{1}, []uint32{2}, 3, 0, "2,1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := jobopt.NewOpts(jobopt.Salloc, &jobopt.Log{Prog: "salloc"})
			if c.ntasks > 0 {
				o.Ntasks, o.NtasksSet = c.ntasks, true
			}
			if c.cpt > 0 {
				o.CPUsPerTask, o.CPUsSet = c.cpt, true
			}
			a := &launch.Allocation{Allocation: msg.Allocation{CPUsPerNode: c.cpus, CPUCountReps: c.reps}}
			if got := tasksPerNode(a, o); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestHetJobEnv: a het job's command sees each component under its
// _PACK_GROUP_n and _HET_GROUP_n names, the leader's id as SLURM_JOB_ID,
// and the job-wide task count when every component has one.
func TestHetJobEnv(t *testing.T) {
	s := &salloc{io: &procIO{cwd: "/w"}, env: jobopt.NewEnv(nil)}
	conn := &slurmcli.Conn{Conf: &conf.Config{ClusterName: "c"}}
	opts := []*jobopt.Opts{jobopt.NewOpts(jobopt.Salloc, &jobopt.Log{}), jobopt.NewOpts(jobopt.Salloc, &jobopt.Log{})}
	opts[0].Ntasks, opts[0].NtasksSet = 2, true
	opts[1].Ntasks, opts[1].NtasksSet = 1, true
	opts[1].MinNodes = 2
	allocs := []*launch.Allocation{
		{Allocation: msg.Allocation{JobID: 7, NodeCnt: 1, NodeList: msg.Str("n1"), CPUsPerNode: []uint16{2}, CPUCountReps: []uint32{1}}},
		{Allocation: msg.Allocation{JobID: 8, NodeCnt: 2, NodeList: msg.Str("n[2-3]"), CPUsPerNode: []uint16{1}, CPUCountReps: []uint32{2}}},
	}
	env := jobopt.NewEnv(s.jobEnv(conn, opts, allocs))
	for k, want := range map[string]string{
		"SLURM_JOB_ID": "7", "SLURM_JOB_ID_HET_GROUP_1": "8", "SLURM_JOBID_PACK_GROUP_0": "7",
		"SLURM_HET_SIZE": "2", "SLURM_PACK_SIZE": "2",
		"SLURM_JOB_NODELIST_HET_GROUP_1": "n[2-3]", "SLURM_JOB_NUM_NODES_PACK_GROUP_1": "2",
		"SLURM_JOB_CPUS_PER_NODE_HET_GROUP_1": "1(x2)", "SLURM_NODE_ALIASES_HET_GROUP_0": "(null)",
		// A component gets at least a task per node it was granted.
		"SLURM_NTASKS_HET_GROUP_0": "2", "SLURM_NTASKS_HET_GROUP_1": "2", "SLURM_NTASKS": "4", "SLURM_NPROCS": "4",
		"SLURM_CLUSTER_NAME": "c", "SLURM_SUBMIT_DIR": "/w",
	} {
		if got, ok := env.Get(k); !ok || got != want {
			t.Errorf("%s = %q (set %v); want %q", k, got, ok, want)
		}
	}
	for _, k := range []string{"SLURM_JOBID", "SLURM_JOB_NODELIST", "SLURM_NNODES", "SLURM_JOB_ID_HET_GROUP_2"} {
		if v, ok := env.Get(k); ok {
			t.Errorf("%s = %q; want it unset in a het job", k, v)
		}
	}
}
