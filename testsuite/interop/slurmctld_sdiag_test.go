package interop

import (
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// sdiag against real slurmctld and ours after the same jobs: two that
// complete, one whose script fails, a two-task array, one cancelled while
// running, a held one cancelled while pending, and an srun; then sdiag as
// an ordinary user, sdiag -r as that user (refused) and as root, and sdiag
// after the reset.
//
// Compared exactly: the layout, the job counters (submitted, started,
// completed, canceled, failed), the DBD and agent queue sizes, the
// pending-RPC section, the reset's answers, the users the RPC statistics
// list, and the counts of the RPCs the commands and slurmd send a fixed
// number of times (sbatch's submits, scancel's kills, srun's allocation,
// step and release, slurmd's batch and step completions, sdiag's own
// requests).
//
// Masked, with the reason:
//   - times and dates, durations in microseconds, the clock latency: they
//     differ from run to run;
//   - the server and agent thread counts: they count what is in flight at
//     the instant (a ping agent, a connection being closed);
//   - the pending and running job counts: the controller takes them every
//     30 seconds, so they depend on where the test falls in that period;
//   - the cycle counts, depths and queue lengths of the main and backfill
//     schedulers, and the backfilled job counts: how many passes run and
//     which of the two starts a job depends on when each is triggered
//     (real slurmctld defers the main pass after a submit and runs
//     backfill every 30 s; ours runs a pass per submit), and the lines
//     printed only when a count is non-zero ("Mean ...", "Cycles per
//     minute" after a minute) go with them;
//   - the counts of the RPCs a command sends a variable number of times
//     (the harness's polling with scontrol, squeue and sinfo; pings,
//     registrations) and the per-user counts they add up to; also
//     MESSAGE_EPILOG_COMPLETE: slurmd sends it only for a job whose
//     terminate request found it still cleaning up, and otherwise answers
//     the request itself (real slurmctld counted 2 and 1 in two runs).
func TestSlurmctldSdiag(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2})
	const nobody = 65534
	as := func(uid uint32, args ...string) string {
		o, e, err := c.RunAs(uid, uid, args[0], args[1:]...)
		s := o
		if e != "" {
			s += "--- stderr\n" + e
		}
		if err != nil {
			s += "--- exit: " + err.Error() + "\n"
		}
		return s
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		null := filepath.Join(c.Dir, "out-%j-%a.txt")
		ok1 := ctldSbatch(t, c, "-o", null, "--wrap", "true")
		ok2 := ctldSbatch(t, c, "-o", null, "--wrap", "true")
		bad := ctldSbatch(t, c, "-o", null, "--wrap", "exit 3")
		arr := ctldSbatch(t, c, "-o", null, "--array=1-2", "--wrap", "true")
		ctldWaitJob(t, c, ok1, 60*time.Second, "COMPLETED")
		ctldWaitJob(t, c, ok2, 60*time.Second, "COMPLETED")
		ctldWaitJob(t, c, bad, 60*time.Second, "FAILED")
		for _, task := range []string{"_1", "_2"} {
			id := strconv.Itoa(int(arr)) + task
			if err := c.Poll(60*time.Second, func() bool {
				o, _, _ := c.Run("scontrol", "show", "job", "-o", id)
				return strings.Contains(o, "JobState=COMPLETED")
			}); err != nil {
				t.Fatalf("array task %s not COMPLETED: %v", id, err)
			}
		}
		long := ctldSbatch(t, c, "-o", null, "--wrap", "sleep 300")
		ctldWaitJob(t, c, long, 60*time.Second, "RUNNING")
		if o, e, err := c.Run("scancel", strconv.Itoa(int(long))); err != nil {
			t.Fatalf("scancel: %v %s%s", err, o, e)
		}
		ctldWaitJob(t, c, long, 60*time.Second, "CANCELLED")
		// A held job cancelled while pending; an srun job (its own
		// allocation, released with REQUEST_COMPLETE_JOB_ALLOCATION).
		held := ctldSbatch(t, c, "-H", "-o", null, "--wrap", "true")
		ctldWaitJob(t, c, held, 60*time.Second, "PENDING")
		if o, e, err := c.Run("scancel", strconv.Itoa(int(held))); err != nil {
			t.Fatalf("scancel: %v %s%s", err, o, e)
		}
		ctldWaitJob(t, c, held, 60*time.Second, "CANCELLED")
		if o, e, err := c.Run("srun", "-N1", "true"); err != nil {
			t.Fatalf("srun: %v %s%s", err, o, e)
		}
		if err := c.Poll(60*time.Second, func() bool {
			o, _, _ := c.Run("sinfo", "-h", "-o", "%T")
			return strings.TrimSpace(o) == "idle"
		}); err != nil {
			t.Fatalf("nodes not idle: %v", err)
		}
		out["1 sdiag"] = ctldRun(c, "sdiag")
		out["2 sdiag as nobody"] = as(nobody, "sdiag")
		out["3 sdiag -r as nobody"] = as(nobody, "sdiag", "-r")
		out["4 sdiag -r"] = ctldRun(c, "sdiag", "-r")
		out["5 sdiag after reset"] = ctldRun(c, "sdiag")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w, g := sdiagMasked(want[k]), sdiagMasked(got[k])
		if w != g {
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
		wr, gr := sdiagRPCCounts(want[k]), sdiagRPCCounts(got[k])
		for _, name := range sdiagFixedRPCs {
			if wr[name] != gr[name] {
				t.Errorf("%s: %s count %q, real slurmctld %q", k, name, gr[name], wr[name])
			}
		}
		if wu, gu := sdiagUsers(want[k]), sdiagUsers(got[k]); wu != gu {
			t.Errorf("%s: users %q, real slurmctld %q", k, gu, wu)
		}
		if testing.Verbose() {
			t.Logf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, want[k], got[k])
		}
	}
}

// sdiagFixedRPCs are sent a fixed number of times by the sequence.
var sdiagFixedRPCs = []string{
	"REQUEST_SUBMIT_BATCH_JOB", "REQUEST_KILL_JOB", "REQUEST_COMPLETE_BATCH_SCRIPT",
	"REQUEST_STATS_INFO", "REQUEST_RESOURCE_ALLOCATION", "REQUEST_JOB_STEP_CREATE",
	"REQUEST_STEP_COMPLETE", "REQUEST_COMPLETE_JOB_ALLOCATION",
}

var sdiagRPCLine = regexp.MustCompile(`(?m)^\t(\w+)\s*\(\s*\d+\) count:(\d+)`)

// sdiagRPCCounts are the counts of the "by message type" section.
func sdiagRPCCounts(s string) map[string]string {
	i := strings.Index(s, "Remote Procedure Call statistics by message type")
	j := strings.Index(s, "Remote Procedure Call statistics by user")
	if i < 0 || j < i {
		return nil
	}
	m := map[string]string{}
	for _, x := range sdiagRPCLine.FindAllStringSubmatch(s[i:j], -1) {
		m[x[1]] = x[2]
	}
	return m
}

var sdiagUserLine = regexp.MustCompile(`(?m)^\t(\S+)\s+\(\s*(\d+)\) count:`)

// sdiagUsers lists the users of the "by user" section (names and uids).
func sdiagUsers(s string) string {
	i := strings.Index(s, "Remote Procedure Call statistics by user")
	if i < 0 {
		return ""
	}
	var us []string
	for _, x := range sdiagUserLine.FindAllStringSubmatch(s[i:], -1) {
		us = append(us, x[1]+"("+x[2]+")")
	}
	return strings.Join(us, " ")
}

var sdiagMasks = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?m)^(sdiag output at|Data since     ) .*$`), "$1 <time>"},
	{regexp.MustCompile(`(?m)^(Job states ts:  ).*$`), "$1<time>"},
	{regexp.MustCompile(`(?m)^(Server thread count|Agent count|Agent thread count|Jobs pending|Jobs running):(\s+)\d+$`), "$1:$2<n>"},
	{regexp.MustCompile(`(?m)^(Latency for 1000 calls to gettimeofday\(\): )\d+`), "$1<n>"},
	{regexp.MustCompile(`(?m)^Backfilling stats.*$`), "Backfilling stats"},
	{regexp.MustCompile(`(?m)^\t(Mean cycle|Mean depth cycle|Cycles per minute|Depth Mean|Depth Mean \(try depth\)|Queue length mean|Mean table size):.*\n`), ""},
	{regexp.MustCompile(`(?m)^\t(Last cycle|Max cycle|Total cycles|Last queue length|Last depth cycle|Last depth cycle \(try sched\)|Last table size|Total backfilled jobs \(since last slurm start\)|Total backfilled jobs \(since last stats cycle start\)):(\s*)\d+$`), "\t$1:$2<n>"},
	{regexp.MustCompile(`(?m)^\t(Last cycle when:) .*$`), "\t$1 <time>"},
	// The RPC tables: counts and times per type and user are compared
	// apart (sdiagRPCCounts) or not at all; which types appear depends
	// on the polling too.
	{regexp.MustCompile(`(?s)Remote Procedure Call statistics by message type\n.*?\n\n`), "Remote Procedure Call statistics by message type\n<types>\n\n"},
	{regexp.MustCompile(`(?s)Remote Procedure Call statistics by user\n.*?\n\n`), "Remote Procedure Call statistics by user\n<users>\n\n"},
}

func sdiagMasked(s string) string {
	for _, m := range sdiagMasks {
		s = m.re.ReplaceAllString(s, m.repl)
	}
	return s
}
