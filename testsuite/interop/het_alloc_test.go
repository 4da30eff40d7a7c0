package interop

// Heterogeneous job allocations made by srun and salloc themselves
// ("srun a : b" and "salloc a : b" outside any allocation), ours against
// real 22.05's on the same private real cluster (real slurmctld, two real
// slurmd with 2 CPUs each).

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// hetAllocCases are the het allocations; every one is run by the real
// command and by ours.
func hetAllocCases(t *testing.T, work string) []srCase {
	env := crWrite(t, work, "het-env.sh", hetEnv)
	return []srCase{
		{name: "srun env", args: []string{"srun", "-N1", "sh", env, ":", "-N1", "sh", env}},
		{name: "srun hostname", args: []string{"srun", "-N1", "hostname", ":", "-N1", "hostname"}},
		{name: "srun label exit", args: []string{"sh", "-c", "srun -l -n1 echo a : -n2 sh -c 'echo b; exit 3'; echo rc=$?"}},
		{name: "srun first fails", args: []string{"srun", "-N1", "sh", "-c", "exit 2", ":", "-N1", "true"}},
		// Components writing one file append to it (_match_job_name).
		{name: "srun output file", args: []string{"sh", "-c", "echo old > het-out.txt; srun -N1 -o het-out.txt echo a : -N1 -o het-out.txt echo b; echo rc=$?; sort het-out.txt; rm -f het-out.txt"}},
		// Job names carry over from one component to the next.
		{name: "srun job name", args: []string{"srun", "-J", "foo", "-N1", "sh", "-c", "squeue -h -o %j", ":", "-N1", "true"}},
		{name: "srun program name", args: []string{"srun", "-N1", "echo", "x", ":", "-N1", "sh", "-c", "echo $SLURM_JOB_NAME; squeue -h -o %j"}},
		// A job's command is the program alone.
		{name: "srun job command", args: []string{"srun", "-N1", "sh", "-c", "squeue -h -o %o", ":", "-N1", "true"}},
		// --het-group=0,1 makes a het job; one group alone a plain job.
		{name: "srun het-group", args: []string{"srun", "-l", "--het-group=0,1", "sh", "-c", "echo $SLURM_HET_SIZE $SLURM_JOB_NUM_NODES $SLURM_PROCID"}},
		{name: "srun het-group one", args: []string{"srun", "--het-group=1", "sh", "-c", "echo $SLURM_HET_SIZE $SLURM_JOB_NUM_NODES; squeue -h -o %j"}},
		// --test-only is srun's global option, the last component's
		// (options carry over): each component is asked in turn.
		{name: "srun test-only", args: []string{"srun", "-n1", "true", ":", "--test-only", "-n1", "true"}},
		{name: "srun test-only first", args: []string{"srun", "--test-only", "-n1", "true", ":", "-N2", "true"}},
		{name: "srun test-only impossible", args: []string{"srun", "--test-only", "-N1", "true", ":", "-N3", "true"}},
		{name: "salloc env", args: []string{"salloc", "-Q", "-N1", ":", "-N1", "sh", env}},
		{name: "salloc tasks", args: []string{"salloc", "-Q", "-n2", ":", "-N1", "-n1", "sh", "-c", "env | grep -E '^SLURM_(NTASKS|NPROCS|TASKS_PER_NODE)' | sort"}},
		{name: "salloc srun het-group", args: []string{"salloc", "-Q", "-N1", ":", "-N1", "srun", "-l", "--het-group=0,1", "sh", "-c", "echo $SLURM_PROCID $SLURMD_NODENAME $SLURM_HET_SIZE"}},
		{name: "salloc job name", args: []string{"salloc", "-Q", "-J", "foo", "-N1", ":", "-N1", "sh", "-c", "env | grep JOB_NAME | sort; squeue -h -o %j"}},
		{name: "salloc exit code", args: []string{"salloc", "-N1", ":", "-N1", "sh", "-c", "exit 3"}},
	}
}

// hetAllocWant is what a case's output must hold, with the real
// commands and with ours, so that two runs that fail the same way do not
// pass.
var hetAllocWant = map[string][]string{
	"srun env":              {"0 SLURM_HET_SIZE=2", "1 SLURM_HET_SIZE=2", "1 SLURM_JOB_NODELIST_PACK_GROUP_1="},
	"srun label exit":       {"0: a", "1: b", "2: b", "rc=3"},
	"srun output file":      {"a\nb\nold\nrc=0"},
	"srun job name":         {"foo\nfoo"},
	"srun program name":     {"echo\necho\necho\nx"},
	"srun het-group":        {"0: 2 2 0", "1: 2 2 1"},
	"srun job command":      {"sh\ntrue"},
	"srun het-group one":    {"1\nsh"},
	"salloc env":            {"SLURM_JOB_NODELIST_HET_GROUP_1="},
	"salloc job name":       {"SLURM_JOB_NAME_HET_GROUP_1=foo", "foo\nfoo"},
	"salloc srun het-group": {"0: 0 ", "1: 1 "},
}

// hetAllocWants is hetMask that also notes, per case and run, whether
// the output held what hetAllocWant asks; check then fails the cases whose
// last runs (the ones compared) did not.
type hetAllocWants struct {
	mu  sync.Mutex
	got map[string][]string // per case, per run: what was missing
}

func (h *hetAllocWants) mask(name string) func(srResult) srResult {
	return func(r srResult) srResult {
		var missing []string
		for _, w := range hetAllocWant[name] {
			if !strings.Contains(r.stdout, w) {
				missing = append(missing, fmt.Sprintf("%q in:\n%s\n%s", w, r.stdout, r.stderr))
			}
		}
		h.mu.Lock()
		if h.got == nil {
			h.got = map[string][]string{}
		}
		h.got[name] = append(h.got[name], strings.Join(missing, "\n"))
		h.mu.Unlock()
		return hetMask(r)
	}
}

func (h *hetAllocWants) check(t *testing.T) {
	t.Helper()
	for name, runs := range h.got {
		for _, m := range runs[max(len(runs)-2, 0):] {
			if m != "" {
				t.Errorf("%s: output lacks %s", name, m)
			}
		}
	}
}

// TestHetAlloc runs hetAllocCases with the real commands and with ours.
func TestHetAlloc(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	// Only the backfill scheduler starts a het job; a one-second cycle
	// (instead of 30) keeps each case from pending half a minute.
	c := realslurm.Start(t, realslurm.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})
	ours := srBuild(t)
	work := t.TempDir()
	var wants hetAllocWants
	defer wants.check(t)
	var cases []srCase
	for _, cs := range hetAllocCases(t, work) {
		if f := os.Getenv("GOSLURM_HET_CASE"); f == "" || strings.Contains(cs.name, f) {
			cs.mask = wants.mask(cs.name)
			cases = append(cases, cs)
		}
	}
	if os.Getenv("GOSLURM_HET_SHOW") != "" {
		for _, cs := range cases {
			for _, dir := range []string{t.TempDir(), ours} {
				crSettle(t, c)
				r := crMask(crRun(t, c, dir, work, cs))
				t.Logf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", cs.name, dir, r.code, r.stdout, r.stderr)
			}
		}
		return
	}
	failed := crCompare(t, c, ours, work, cases)
	t.Logf("het allocations: %d/%d invocations identical to real Slurm 22.05", len(cases)-failed, len(cases))
}

// TestHetAllocOurCtld runs hetAllocCases against our slurmctld (with real
// slurmd): the real commands and ours must again see the same.
func TestHetAllocOurCtld(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster")
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})
	c.Start(ctldBuildOurs(t))
	ours := srBuild(t)
	var wants hetAllocWants
	defer wants.check(t)
	realDir := t.TempDir()
	work := t.TempDir()
	cancel := func() { c.Run("scancel", "-u", "root") }
	settle := func() string {
		// Idle nodes and an empty queue; what is left after a minute is
		// cancelled and reported.
		idle := func() bool {
			n, _, err := c.Run("sinfo", "-h", "-o", "%t")
			q, _, qerr := c.Run("squeue", "-h")
			return err == nil && qerr == nil && strings.TrimSpace(n) == "idle" && strings.TrimSpace(q) == ""
		}
		if c.Poll(60*time.Second, idle) == nil {
			return ""
		}
		cancel()
		if c.Poll(60*time.Second, idle) != nil {
			t.Fatalf("cluster not idle after 120 s\n%s", c.Logs())
		}
		return "\nLEFT A JOB BEHIND"
	}
	run := func(dir string, cs srCase) srResult {
		settle()
		r := crMask(crRunConf(t, c.Conf, cancel, dir, work, cs))
		r.stderr += settle()
		return r
	}
	same := 0
	cases := hetAllocCases(t, work)
	for _, cs := range cases {
		if f := os.Getenv("GOSLURM_HET_CASE"); f != "" && !strings.Contains(cs.name, f) {
			continue
		}
		cs.mask = wants.mask(cs.name)
		rr, or := run(realDir, cs), run(ours, cs)
		if rr != or {
			// As crCompare: a difference counts when it comes back.
			t.Logf("%s differs, run again: real exit %d, ours exit %d", cs.name, rr.code, or.code)
			rr, or = run(realDir, cs), run(ours, cs)
		}
		if rr != or {
			t.Errorf("%s (%q):\nreal commands: exit %d\nstdout:\n%s\nstderr:\n%s\nours: exit %d\nstdout:\n%s\nstderr:\n%s",
				cs.name, cs.args, rr.code, rr.stdout, rr.stderr, or.code, or.stdout, or.stderr)
			continue
		}
		same++
	}
	t.Logf("het allocations on our slurmctld: %d/%d invocations identical with the real commands", same, len(cases))
}
