package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

var spreadJobLineRE = regexp.MustCompile(`(?m)^\s*(Nodes=\S+ CPU_IDs=\S+ Mem=\S+ GRES=\S*|NumNodes=\S+ NumCPUs=\S+ NumTasks=\S+ CPUs/Task=\S+|NodeList=\S+|TresPerJob=\S+|TresPerNode=\S+|JobState=\S+ Reason=\S+|JOB_GRES=\S*)`)

// spreadJobLines are the allocation lines of scontrol show job -d.
func spreadJobLines(c *ctldharness.Cluster, id uint32) string {
	out, _, _ := c.Run("scontrol", "show", "job", "-d", fmt.Sprint(id))
	var lines []string
	for _, m := range spreadJobLineRE.FindAllStringSubmatch(out, -1) {
		lines = append(lines, m[1])
	}
	return strings.Join(lines, " | ")
}

// spreadSettle waits until the job runs, or pends with a reason a
// scheduling pass gave it, and returns its state. Before the first pass
// looks at it a new job shows None under real slurmctld and Priority
// under ours; neither is an answer here, where the job is the only one
// pending (it never waits behind another for Priority).
func spreadSettle(t *testing.T, c *ctldharness.Cluster, id uint32) string {
	t.Helper()
	var st string
	_ = c.Poll(60*time.Second, func() bool {
		o, _, _ := c.Run("squeue", "-h", "-j", fmt.Sprint(id), "-o", "%T %r")
		st = strings.TrimSpace(o)
		return st == "RUNNING None" || (strings.HasPrefix(st, "PENDING ") && st != "PENDING None" && st != "PENDING Priority")
	})
	return st
}

// spreadIdle cancels every job and waits until both nodes are idle.
func spreadIdle(t *testing.T, c *ctldharness.Cluster) {
	t.Helper()
	c.Run("scancel", "-u", strconv.Itoa(os.Getuid()))
	if err := c.Poll(60*time.Second, func() bool {
		q, _, _ := c.Run("squeue", "-h")
		o, _, _ := c.Run("sinfo", "-h", "-o", "%T")
		return strings.TrimSpace(q) == "" && strings.TrimSpace(o) == "idle"
	}); err != nil {
		t.Errorf("nodes never idle: %v", err)
	}
}

// spreadCluster is two 4-CPU nodes with gpus GPUs each, as files.
func spreadCluster(t *testing.T, gpus int) *ctldharness.Cluster {
	t.Helper()
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 4,
		ExtraConf: []string{"GresTypes=gpu"}, NodeConf: map[string]string{"*": fmt.Sprintf("Gres=gpu:%d", gpus)}})
	dev := filepath.Join(c.Dir, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range gpus {
		if err := os.Symlink("/dev/null", filepath.Join(dev, fmt.Sprintf("nvidia%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf("Name=gpu File=%s/nvidia[0-%d]\n", dev, gpus-1)
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "gres.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSlurmctldGresSpread: --gpus=N over the job (tres_per_job) on two
// gpu:2 nodes: cons_tres adds nodes until their free GPUs reach N, and
// gives each node what is left but one for each node after it (2+1 for
// --gpus=3), with and without -N, -n, -c and --ntasks-per-node, and with
// one GPU of n1 busy (where --gpus-per-task jobs skip a node its free
// GPUs serve no task of), with required nodes (-w) and with n1 weighted
// above n2. Counts no node set can meet are refused or pend.
func TestSlurmctldGresSpread(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := spreadCluster(t, 2)
	cases := [][]string{
		{"--gpus=4"}, {"--gpus=3"}, {"--gpus=2"}, {"--gpus=1"},
		{"--gpus=3", "-N2"}, {"--gpus=2", "-N2"}, {"--gpus=4", "-N2"}, {"--gpus=3", "-N1-2"},
		{"--gpus=4", "-n2"}, {"--gpus=3", "-n3"}, {"--gpus=2", "-n5"}, {"--gpus=4", "--ntasks-per-node=1"},
		{"-c3"}, {"-c3", "--gres=gpu:1"}, {"--gpus=1", "-c3"}, {"--gpus=3", "-c3"}, {"--gpus=2", "-n2", "-c2"}, {"--gpus=4", "-n8"},
		{"--gpus=4", "-N1"}, {"--gpus=5"}, {"--gpus=1", "-N2"},
		// --gpus-per-task with -n is a count over the job too (_test_gres_cnt).
		{"-n3", "--gpus-per-task=1"}, {"-n2", "--gpus-per-task=2"}, {"-n4", "--gpus-per-task=1"},
		// Task layout over -N2 (and so the per-task GPUs each node gets).
		{"-N2", "-n3", "--gpus-per-task=1"}, {"-N2", "-n4", "--gpus-per-task=1"}, {"-N2", "-n4"}, {"-N2", "-n3"},
		{"-N2", "-n3", "--gpus-per-task=1", "-c1"}, {"-N2", "-n5"}, {"-N2", "-n2", "--gpus-per-task=2"},
		// Required nodes (-w): the GPUs over the job start from them.
		{"--gpus=2", "-w", "n2"}, {"--gpus=3", "-w", "n2"}, {"--gpus=1", "-w", "n1,n2"}, {"--gpus=4", "-w", "n1"},
		{"--gpus=3", "-w", "n1", "-N1"}, {"--gpus=2", "-w", "n2", "-n5"}, {"-w", "n2", "-n3", "--gpus-per-task=1"},
	}
	// With n1 weighted above n2 (scontrol update Weight=), n2 is taken
	// first.
	weighted := [][]string{
		{"--gpus=1"}, {"--gpus=2"}, {"--gpus=3"}, {"--gpus=2", "-n5"}, {"-n3", "--gpus-per-task=1"}, {"--gpus=3", "-w", "n1"},
		// The same without GPUs (the general placement).
		{"-n5"}, {"-n3", "-c2"}, {"-n5", "--gres=gpu:1"},
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) []string {
		var out []string
		run := func(args ...string) {
			all := append(append([]string{"sbatch", "-o", "/dev/null"}, args...), "--wrap", "sleep 300")
			o := ctldRun(c, all...)
			m := submittedRE.FindStringSubmatch(o)
			if m == nil {
				out = append(out, strings.Join(args, " ")+": "+o)
				return
			}
			id, _ := strconv.ParseUint(m[1], 10, 32)
			st := spreadSettle(t, c, uint32(id))
			out = append(out, fmt.Sprintf("%s: %s | %s", strings.Join(args, " "), st, spreadJobLines(c, uint32(id))))
		}
		spreadIdle(t, c)
		for _, args := range cases {
			run(args...)
			spreadIdle(t, c)
		}
		// One GPU of n1 busy: the job takes what is free, in node order.
		// With --gpus-per-task a node whose free GPUs serve no task is
		// not used: -w n1 with 2 a task cannot run there now.
		for _, args := range [][]string{{"--gpus=3"}, {"--gpus=2"}, {"--gpus=3", "-N2"},
			{"-w", "n1", "-n1", "--gpus-per-task=2"}, {"-n3", "--gpus-per-task=1"}, {"-N2", "-n2", "--gpus-per-task=1"}} {
			busy := ctldSbatch(t, c, "-o", "/dev/null", "-w", "n1", "--gres=gpu:1", "--wrap", "sleep 300")
			if st := spreadSettle(t, c, busy); st != "RUNNING None" {
				t.Fatalf("busy job %d: %q", busy, st)
			}
			run(args...)
			spreadIdle(t, c)
		}
		out = append(out, "weight: "+ctldRun(c, "scontrol", "update", "NodeName=n1", "Weight=10"))
		for _, args := range weighted {
			run(args...)
			spreadIdle(t, c)
		}
		out = append(out, "weight: "+ctldRun(c, "scontrol", "update", "NodeName=n1", "Weight=1"))
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	mask := regexp.MustCompile(`(job|Job|allocation) \d+`)
	for i := range want {
		want[i] = mask.ReplaceAllString(ctldMasked(want[i]), "$1 <id>")
	}
	for i := range got {
		got[i] = mask.ReplaceAllString(ctldMasked(got[i]), "$1 <id>")
	}
	t.Logf("real:\n%s", strings.Join(want, "\n"))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("--gpus spread differs (-real +ours):\n%s\nours' log:\n%s", d, c.Logs())
	}
}

// TestSlurmctldGresTaskLayout: with 4 GPUs a node, GPUs do not cap the
// tasks a node takes, so --gpus-per-task GPUs follow cons_tres's task
// layout over the CPUs _cpus_to_use leaves each node (3+1 for -N2 -n4:
// all but one CPU a later node needs go to the first).
func TestSlurmctldGresTaskLayout(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := spreadCluster(t, 4)
	cases := [][]string{
		{"-N2", "-n4", "--gpus-per-task=1"}, {"-N2", "-n3", "--gpus-per-task=1"}, {"-N2", "-n4"}, {"-N2", "-n3"},
		{"-N2", "-n2", "--gpus-per-task=2"}, {"-N2", "-n6", "--gpus-per-task=1"}, {"-n5", "--gpus-per-task=1"},
		{"-N2", "-n4", "--gpus=4"}, {"-N2", "-n4", "--gres=gpu:2"},
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) []string {
		var out []string
		spreadIdle(t, c)
		for _, args := range cases {
			all := append(append([]string{"sbatch", "-o", "/dev/null"}, args...), "--wrap", "sleep 300")
			o := ctldRun(c, all...)
			if m := submittedRE.FindStringSubmatch(o); m == nil {
				out = append(out, strings.Join(args, " ")+": "+o)
			} else {
				id, _ := strconv.ParseUint(m[1], 10, 32)
				st := spreadSettle(t, c, uint32(id))
				out = append(out, fmt.Sprintf("%s: %s | %s", strings.Join(args, " "), st, spreadJobLines(c, uint32(id))))
			}
			spreadIdle(t, c)
		}
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	mask := regexp.MustCompile(`(job|Job|allocation) \d+`)
	for i := range want {
		want[i] = mask.ReplaceAllString(ctldMasked(want[i]), "$1 <id>")
	}
	for i := range got {
		got[i] = mask.ReplaceAllString(ctldMasked(got[i]), "$1 <id>")
	}
	t.Logf("real:\n%s", strings.Join(want, "\n"))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("task layout differs (-real +ours):\n%s\nours' log:\n%s", d, c.Logs())
	}
}
