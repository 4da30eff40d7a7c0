package priority

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// oracleJob is one sbatch submission and what this package is given for it.
type oracleJob struct {
	args []string
	job  Job
	part string
}

// submitAndRead submits jobs (kept pending by --begin) to a real cluster
// and returns their priorities as squeue shows them, in order.
func submitAndRead(t *testing.T, c *realslurm.Cluster, jobs []oracleJob) []uint32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ids []string
	for _, j := range jobs {
		args := append([]string{"--parsable", "--begin=now+1hour", "-o", "/dev/null", "--wrap", "true"}, j.args...)
		out, err := c.Command(ctx, "sbatch", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("sbatch %v: %v: %s", j.args, err, out)
		}
		ids = append(ids, strings.TrimSpace(string(out)))
	}
	out, err := c.Command(ctx, "squeue", "-h", "-o", "%i %Q").Output()
	if err != nil {
		t.Fatalf("squeue: %v", err)
	}
	prio := map[string]uint32{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil {
			t.Fatalf("squeue line %q: %v", line, err)
		}
		prio[f[0]] = uint32(v)
	}
	res := make([]uint32, len(ids))
	for i, id := range ids {
		p, ok := prio[id]
		if !ok {
			t.Fatalf("job %s not in squeue output:\n%s", id, out)
		}
		res[i] = p
	}
	t.Logf("real slurmctld priorities: %v", res)
	return res
}

// TestOracleBasic checks priority/basic's numbering against real
// slurmctld: FIFO from 0xfffeffff, nice shifting only its own job.
func TestOracleBasic(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	c := realslurm.Start(t, realslurm.Options{Nodes: 1})
	jobs := []oracleJob{{args: nil}, {args: nil}, {args: []string{"--nice=100"}}, {args: nil}, {args: []string{"--nice=-5"}}, {args: nil}}
	got := submitAndRead(t, c, jobs)
	b := NewBasic()
	for i, j := range jobs {
		nice := int32(0)
		for _, a := range j.args {
			if v, ok := strings.CutPrefix(a, "--nice="); ok {
				n, _ := strconv.Atoi(v)
				nice = int32(n)
			}
		}
		if want := b.Assign(nice); got[i] != want {
			t.Errorf("job %d (%v): real priority %d, ours %d", i, j.args, got[i], want)
		}
	}
}

// TestOracleMultifactor checks the job size, partition and nice parts of
// priority/multifactor against real slurmctld. Without slurmdbd Slurm
// ignores the age and fair-share weights and has no QOS, so only those
// factors can be compared.
func TestOracleMultifactor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	for _, favorSmall := range []bool{false, true} {
		t.Run("favorSmall="+strconv.FormatBool(favorSmall), func(t *testing.T) {
			fs := "NO"
			if favorSmall {
				fs = "YES"
			}
			c := realslurm.Start(t, realslurm.Options{Nodes: 4, CPUs: 8, ExtraConf: []string{
				"PriorityType=priority/multifactor",
				"PriorityWeightJobSize=100000",
				"PriorityWeightPartition=50000",
				"PriorityFavorSmall=" + fs,
				"PartitionName=hi Nodes=ALL PriorityJobFactor=4 MaxTime=INFINITE State=UP",
			}})
			cfg := DefaultConfig()
			cfg.Plugin = PluginMultifactor
			cfg.WeightJobSize, cfg.WeightPartition, cfg.FavorSmall = 100000, 50000, favorSmall
			m := NewMultifactor(cfg, Cluster{Nodes: 4, CPUs: 32, MaxPartitionJobFactor: 4}, nil)
			parts := map[string]*Partition{"debug": {JobFactor: 1, MaxTime: Infinite}, "hi": {JobFactor: 4, MaxTime: Infinite}}
			jobs := []oracleJob{
				{[]string{"-p", "debug", "-N1", "-n1"}, Job{MinNodes: 1, CPUs: 1, TimeLimit: NoValue}, "debug"},
				{[]string{"-p", "debug", "-N2", "-n16"}, Job{MinNodes: 2, CPUs: 16, TimeLimit: NoValue}, "debug"},
				{[]string{"-p", "hi", "-N4", "-n32"}, Job{MinNodes: 4, CPUs: 32, TimeLimit: NoValue}, "hi"},
				{[]string{"-p", "hi", "-N1", "-n3", "--nice=1000"}, Job{MinNodes: 1, CPUs: 3, TimeLimit: NoValue, Nice: 1000}, "hi"},
				{[]string{"-p", "debug", "-N3", "-n5", "--nice=-77"}, Job{MinNodes: 3, CPUs: 5, TimeLimit: NoValue, Nice: -77}, "debug"},
			}
			got := submitAndRead(t, c, jobs)
			for i, j := range jobs {
				if want := m.Priority(&j.job, parts[j.part], 0); got[i] != want {
					f := m.Factors(&j.job, parts[j.part], 0)
					t.Errorf("job %d (%v): real priority %d, ours %d (factors %+v)", i, j.args, got[i], want, f)
				}
			}
		})
	}
}
