package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// scontrol reboot without rebooting the machine. Real slurmd runs
// RebootProgram, which kills it (a power cut). A wrapper stands in for the node's power: it keeps the node "off" while
// the test says so, then starts slurmd again with -b, which makes slurmd
// report its start as the boot time (sysinfo's uptime counted from
// slurmd's start). That is how the controller learns the reboot
// happened: a registration whose boot time (now - uptime) is older than
// the reboot request is ignored, a newer one completes the reboot.

// rebootWrapper runs Debian's slurmd and, when it exits on its own (the
// reboot), waits while dir/mode.<node> says "off", then 3 s more (so the
// new boot time is safely after the request, uptime having 1 s
// resolution) and starts it again with -b. SIGTERM (the harness
// stopping the node) ends both.
const rebootWrapper = `#!/bin/bash
node=
prev=
for a in "$@"; do
	[ "$prev" = -N ] && node=$a
	prev=$a
done
export REBOOT_TEST_NODE=$node
pid=0
stopping=0
trap 'stopping=1; [ $pid -ne 0 ] && kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; exit 0' TERM INT
extra=
while :; do
	%[2]s "$@" $extra &
	pid=$!
	wait $pid
	[ $stopping = 1 ] && exit 0
	pid=0
	while [ "$(cat %[1]s/mode.$node 2>/dev/null)" = off ]; do sleep 0.2; done
	sleep 3
	extra=-b
done
`

// rebootProgram records which node was asked to reboot, and with what
// arguments (slurmd passes none without features), then cuts the power:
// the slurmd running it (found up the parent chain) is killed at once.
// (SlurmdParameters=shutdown_on_reboot is not used: real slurmd does not
// always get to its shutdown after a job just ended.)
const rebootProgram = `#!/bin/sh
echo "$REBOOT_TEST_NODE $*" >> %s/reboots
p=$PPID
while [ "$p" -gt 1 ] && [ "$(cat /proc/$p/comm)" != slurmd ]; do
	p=$(cut -d' ' -f4 /proc/$p/stat)
done
[ "$p" -gt 1 ] && kill -KILL "$p"
`

var (
	rebootBootRE   = regexp.MustCompile(`BootTime=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)`)
	rebootStateRE  = regexp.MustCompile(`(?m)^\s*State=(\S+)`)
	rebootNextRE   = regexp.MustCompile(`(?m)^\s*NextState=\S+`)
	rebootReasonRE = regexp.MustCompile(`(?m)^\s*Reason=.*$`)
	rebootStartRE  = regexp.MustCompile(`SlurmdStartTime=(\S+)`)
)

// rebootView is what the real commands say of the nodes: sinfo's state
// and reason, scontrol's State, NextState (shown while a reboot is
// pending) and Reason lines of each node.
func rebootView(c *ctldharness.Cluster) string {
	var b strings.Builder
	o, e, err := c.Run("sinfo", "-h", "-N", "-o", "%N %T %E")
	b.WriteString(o + e)
	if err != nil {
		fmt.Fprintf(&b, "--- exit: %v\n", err)
	}
	for _, n := range c.Nodes {
		show, _, _ := c.Run("scontrol", "show", "node", n.Name)
		fmt.Fprintf(&b, "%s:", n.Name)
		if m := rebootStateRE.FindStringSubmatch(show); m != nil {
			// PLANNED comes and goes with backfill passes (set on the
			// idle nodes planned for a pending job, cleared at the next
			// pass), whose timing is not what this test compares.
			b.WriteString(" State=" + strings.ReplaceAll(m[1], "+PLANNED", ""))
		}
		for _, re := range []*regexp.Regexp{rebootNextRE, rebootReasonRE} {
			if m := re.FindString(show); m != "" {
				b.WriteString(" " + strings.TrimSpace(m))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func rebootShow(c *ctldharness.Cluster, node string) string {
	o, _, _ := c.Run("scontrol", "show", "node", node)
	return o
}

// slurmLocation is the time zone the real commands print times in: the
// system's (the cluster's environment has no TZ).
func slurmLocation() *time.Location {
	if os.Getenv("TZ") == "" {
		return time.Local
	}
	b, err := os.ReadFile("/etc/localtime")
	if err != nil {
		return time.UTC
	}
	loc, err := time.LoadLocationFromTZData("localtime", b)
	if err != nil {
		return time.UTC
	}
	return loc
}

// rebootSettleTime is how long after a node's boot the test waits before
// anything that makes the controller compare a registration's boot time
// with the node's last response (scontrol update state=resume of a DOWN
// node sets that to the current second and asks the node to register).
//
// slurmd -b reports its uptime in whole seconds of sysinfo's clock, and
// the controller takes the boot time as its own wall-clock second minus
// that uptime: the two clocks tick at different phases, so the boot time
// jitters by a second between registrations (more when a loaded machine
// delays a message across a second). A registration whose boot time is
// after the last response is taken as an unexpected reboot (the node is
// set DOWN "Node unexpectedly rebooted" with ReturnToService=1), in real
// slurmctld as in ours: resuming a node within a second or two of its
// boot races with that.
const rebootSettleTime = 5 * time.Second

// rebootSettle waits until the node's boot time, as the controller shows
// it, is rebootSettleTime in the past.
func rebootSettle(t *testing.T, c *ctldharness.Cluster, node string) {
	t.Helper()
	show := rebootShow(c, node)
	m := rebootBootRE.FindStringSubmatch(show)
	if m == nil {
		t.Fatalf("node %s: no boot time shown:\n%s", node, show)
	}
	boot, err := time.ParseInLocation("2006-01-02T15:04:05", m[1], slurmLocation())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Poll(60*time.Second+rebootSettleTime, func() bool {
		return !time.Now().Before(boot.Add(rebootSettleTime))
	}); err != nil {
		t.Fatalf("node %s booted at %s: clock not past it: %v", node, m[1], err)
	}
}

func rebootStart(c *ctldharness.Cluster, node string) string {
	m := rebootStartRE.FindStringSubmatch(rebootShow(c, node))
	if m == nil {
		return ""
	}
	return m[1]
}

// rebootCount is how many times RebootProgram ran for node.
func rebootCount(dir, node string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "reboots"))
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == node {
			n++
		}
	}
	return n
}

func rebootMode(t *testing.T, dir, node, mode string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "mode."+node), []byte(mode), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rebootCluster is a two-node cluster (one CPU each) whose real slurmds
// run under rebootWrapper, RebootProgram being rebootProgram, with dir
// the directory that records the reboots and holds the power switches.
func rebootCluster(t *testing.T, resumeTimeout int, extra ...string) (c *ctldharness.Cluster, dir string) {
	t.Helper()
	slurmd := ctldharness.RealSbin(t, "slurmd")
	dir, err := os.MkdirTemp("", "reboot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "slurmd-power")
	prog := filepath.Join(dir, "reboot.sh")
	if err := os.WriteFile(wrapper, []byte(fmt.Sprintf(rebootWrapper, dir, slurmd)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, []byte(fmt.Sprintf(rebootProgram, dir)), 0o755); err != nil {
		t.Fatal(err)
	}
	c = ctldharness.New(t, ctldharness.Options{
		Nodes: 2, CPUs: 1, OurSlurmd: wrapper,
		ExtraConf: append([]string{
			"RebootProgram=" + prog,
			fmt.Sprintf("ResumeTimeout=%d", resumeTimeout),
			// A node back from a timed-out reboot stays DOWN (2 would
			// return it on the next ping, at a time that differs).
			"ReturnToService=1",
		}, extra...),
	})
	return c, dir
}

// rebootLog prints what real slurmctld recorded, in verbose runs: the
// steps are easier to follow with it.
func rebootLog(t *testing.T, want map[string]string) {
	if !testing.Verbose() {
		return
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%s:\n%s", k, want[k])
	}
}

// TestSlurmctldReboot compares, between Debian's slurmctld and ours,
// what the real sinfo and scontrol show at each step of scontrol reboot
// and cancel_reboot: requested on a busy node (REBOOT_REQUESTED, then
// cancelled), ASAP (drained, issued once the job ends, the node off:
// DOWN+REBOOT_ISSUED, then back after its reboot), nextstate=down, a node
// that does not come back within ResumeTimeout ("reboot timed out"),
// and the refusals.
func TestSlurmctldReboot(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c, dir := rebootCluster(t, 15)

	run := func(bin string, args ...string) map[string]string {
		out := map[string]string{}
		_ = os.Remove(filepath.Join(dir, "reboots"))
		rebootMode(t, dir, "n1", "on")
		rebootMode(t, dir, "n2", "on")
		c.Start(bin, args...)
		defer c.Stop()
		step := 0
		record := func(name, s string) {
			step++
			out[fmt.Sprintf("%02d %s", step, name)] = s
		}
		wait := func(what string, limit time.Duration, ok func() bool) {
			t.Helper()
			if err := c.Poll(limit, ok); err != nil {
				t.Fatalf("%s: %v\n%s", what, err, rebootView(c))
			}
		}
		record("start", rebootView(c))

		// Refusals.
		record("reboot unknown node", ctldRun(c, "scontrol", "reboot", "nosuch"))
		o, e, err := c.RunAs(65534, 65534, "scontrol", "reboot", "n1")
		record("reboot by nobody", fmt.Sprintf("%s%s%v\n", o, e, err))
		record("cancel without a reboot", ctldRun(c, "scontrol", "cancel_reboot", "n2"))

		// A reboot of a busy node waits for it to be idle; cancelled.
		job := ctldSbatch(t, c, "-w", "n1", "-o", "/dev/null", "--wrap", "sleep 300")
		ctldWaitJob(t, c, job, 60*time.Second, "RUNNING")
		record("reboot busy node", ctldRun(c, "scontrol", "reboot", "n1"))
		record("requested on a busy node", rebootView(c))
		record("reboot again", ctldRun(c, "scontrol", "reboot", "nextstate=down", "reason=other", "n1"))
		record("after reboot again", rebootView(c))
		record("cancel", ctldRun(c, "scontrol", "cancel_reboot", "n1"))
		record("cancelled", rebootView(c))
		record("cancel again", ctldRun(c, "scontrol", "cancel_reboot", "n1"))

		// ASAP: drained at once, rebooted when the job ends; the node
		// stays off until the test powers it on.
		rebootMode(t, dir, "n1", "off")
		record("reboot ASAP", ctldRun(c, "scontrol", "reboot", "ASAP", "nextstate=resume", "reason=new kernel", "n1"))
		record("ASAP on a busy node", rebootView(c))
		record("scancel", ctldRun(c, "scancel", fmt.Sprint(job)))
		wait("n1 reboot issued", 60*time.Second, func() bool {
			return rebootCount(dir, "n1") == 1 && strings.Contains(rebootShow(c, "n1"), "reboot issued")
		})
		record("ASAP issued, node off", rebootView(c))
		record("cancel issued reboot", ctldRun(c, "scontrol", "cancel_reboot", "n1"))
		start := rebootStart(c, "n1")
		rebootMode(t, dir, "n1", "on")
		wait("n1 back after ASAP reboot", 60*time.Second, func() bool {
			s := rebootShow(c, "n1")
			return rebootStart(c, "n1") != start && strings.Contains(s, "State=IDLE ")
		})
		record("ASAP done", rebootView(c))

		// nextstate=down on an idle node: back DOWN, "reboot complete".
		// Not in the seconds n1 booted: a reboot issued then is taken as
		// done by the next ping reply (boot time not before the request),
		// in real slurmctld.
		rebootSettle(t, c, "n1")
		start = rebootStart(c, "n1")
		record("reboot nextstate=down", ctldRun(c, "scontrol", "reboot", "nextstate=down", "n1"))
		wait("n1 rebooted to DOWN", 60*time.Second, func() bool {
			return rebootStart(c, "n1") != start && strings.Contains(rebootShow(c, "n1"), "reboot complete")
		})
		record("nextstate=down done", rebootView(c))
		rebootSettle(t, c, "n1")
		record("resume n1", ctldRun(c, "scontrol", "update", "nodename=n1", "state=resume"))
		wait("n1 idle", 60*time.Second, func() bool { return strings.Contains(rebootShow(c, "n1"), "State=IDLE ") })

		// A node that does not come back within ResumeTimeout.
		rebootMode(t, dir, "n2", "off")
		record("reboot n2", ctldRun(c, "scontrol", "reboot", "n2"))
		wait("n2 reboot issued", 60*time.Second, func() bool {
			return rebootCount(dir, "n2") == 1 && strings.Contains(rebootShow(c, "n2"), "reboot issued")
		})
		record("n2 issued, node off", rebootView(c))
		wait("n2 reboot timed out", 90*time.Second, func() bool {
			return strings.Contains(rebootShow(c, "n2"), "reboot timed out")
		})
		// A ping may mark the silent node not responding meanwhile.
		record("n2 timed out", strings.ReplaceAll(rebootView(c), "down*", "down"))
		start = rebootStart(c, "n2")
		rebootMode(t, dir, "n2", "on")
		wait("n2 registered again", 60*time.Second, func() bool { return rebootStart(c, "n2") != start })
		record("n2 booted late", rebootView(c))
		rebootSettle(t, c, "n2")
		record("resume n2", ctldRun(c, "scontrol", "update", "nodename=n2", "state=resume"))
		wait("n2 idle", 60*time.Second, func() bool { return strings.Contains(rebootShow(c, "n2"), "State=IDLE ") })
		record("end", rebootView(c))
		return out
	}
	want := run(real, "-c", "-i")
	got := run(ours, "-c")
	for _, step := range []string{"requested on a busy node", "ASAP issued, node off", "n2 timed out"} {
		found := false
		for k := range want {
			found = found || strings.HasSuffix(k, " "+step)
		}
		if !found {
			t.Errorf("real slurmctld: no step %q", step)
		}
	}
	rebootLog(t, want)
	ctldCompare(t, want, got)
	if len(got) != len(want) {
		t.Errorf("%d steps with ours, %d with real", len(got), len(want))
	}
}

// rebootJobs is what squeue --json says of each pending or running job:
// its state, the reason it waits for (the reason, not the description
// Slurm may add to it) and its nodes.
func rebootJobs(t *testing.T, c *ctldharness.Cluster) string {
	t.Helper()
	js, _, err := c.Run("squeue", "--json")
	if err != nil {
		t.Fatalf("squeue --json: %v", err)
	}
	var doc struct {
		Jobs []struct {
			ID     int    `json:"job_id"`
			State  string `json:"job_state"`
			Reason string `json:"state_reason"`
			Nodes  string `json:"nodes"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("squeue --json: %v\n%s", err, js)
	}
	var b strings.Builder
	for _, j := range doc.Jobs {
		if j.State == "PENDING" || j.State == "RUNNING" {
			fmt.Fprintf(&b, "%d %s %s %s\n", j.ID, j.State, j.Reason, j.Nodes)
		}
	}
	return sortedLines(b.String())
}

// rebootRegistered waits until the node has registered with the
// controller now running (its boot time is not shown before).
func rebootRegistered(t *testing.T, c *ctldharness.Cluster, node string) {
	t.Helper()
	if err := c.Poll(60*time.Second, func() bool {
		return rebootBootRE.MatchString(rebootShow(c, node))
	}); err != nil {
		t.Fatalf("%s did not register: %v\n%s", node, err, rebootShow(c, node))
	}
}

// rebootUnping takes out NOT_RESPONDING: the controller pings a silent
// DOWN node every SlurmdTimeout/3, so whether it is marked yet is a
// matter of timing, in real slurmctld as in ours.
func rebootUnping(s string) string {
	return strings.NewReplacer("down* ", "down ", "+NOT_RESPONDING", "").Replace(s)
}

// TestSlurmctldRebootRestart compares, between Debian's slurmctld and
// ours, reboots that span a controller restart (the default start, then
// -R): node_state keeps the reboot flags, next state, reason and boot
// request time, so a reboot issued before the restart completes or times
// out after it (counted from the request), and one requested on a busy
// node is issued when its job ends and returns the node as its next state
// says. It also shows what a job waits for while a node it needs
// reboots: Resources with nextstate=resume (the node is counted as coming
// back, 22.05's rs_node_bitmap, then gets the job when it is back), an
// unavailable node without, until a restart builds rs_node_bitmap again
// from the next state's RESUME bit, which NO_VAL has too.
//
// Backfill runs every second, so the jobs' reasons settle at once and
// the nodes it plans for a pending job (PLANNED, which ours does not
// set) are clear again soon after the job is cancelled: the nodes are
// only looked at while no job is pending.
func TestSlurmctldRebootRestart(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	// Long enough for n2 to be back from the first reboot, and for the
	// second restart to be done before its time-out.
	c, dir := rebootCluster(t, 60, "SchedulerParameters=bf_interval=1")

	run := func(bin string, first, restart, full []string) map[string]string {
		out := map[string]string{}
		_ = os.Remove(filepath.Join(dir, "reboots"))
		rebootMode(t, dir, "n1", "on")
		rebootMode(t, dir, "n2", "on")
		c.Start(bin, first...)
		defer c.Stop()
		step := 0
		record := func(name, s string) {
			step++
			out[fmt.Sprintf("%02d %s", step, name)] = s
		}
		wait := func(what string, limit time.Duration, ok func() bool) {
			t.Helper()
			if err := c.Poll(limit, ok); err != nil {
				t.Fatalf("%s: %v\n%s%s", what, err, rebootView(c), rebootJobs(t, c))
			}
		}
		issued := func(node string, count int) {
			t.Helper()
			wait(node+" reboot issued", 60*time.Second, func() bool {
				return rebootCount(dir, node) == count && strings.Contains(rebootShow(c, node), "reboot issued")
			})
		}
		// waitReason waits until the job waits for reason, or until
		// limit passes (the record then shows what it waits for).
		waitReason := func(job uint32, reason string, limit time.Duration) {
			_ = c.Poll(limit, func() bool {
				return strings.Contains(rebootJobs(t, c), fmt.Sprintf("%d PENDING %s ", job, reason))
			})
		}
		// cancel cancels a pending job and waits until no node is
		// PLANNED for it any more.
		cancel := func(job uint32) {
			t.Helper()
			record(fmt.Sprintf("scancel %d", job), ctldRun(c, "scancel", fmt.Sprint(job)))
			wait("nodes no longer planned", 60*time.Second, func() bool {
				return !strings.Contains(rebootView(c), "PLANNED") && !strings.Contains(rebootView(c), "planned")
			})
		}

		// n2 reboots with nextstate=resume and stays off: a job that
		// needs it waits for Resources.
		rebootMode(t, dir, "n2", "off")
		record("reboot n2 nextstate=resume", ctldRun(c, "scontrol", "reboot", "nextstate=resume", "reason=maint", "n2"))
		issued("n2", 1)
		record("n2 issued", rebootView(c))
		a := ctldSbatch(t, c, "-w", "n2", "-o", "/dev/null", "--wrap", "sleep 300")
		waitReason(a, "Resources", 10*time.Second)
		record("job on n2 while it reboots", rebootJobs(t, c))
		cancel(a)

		// Default start: the reboot goes on; a job that needs both nodes
		// waits for Resources, and runs once n2 is back.
		c.StopCtld()
		c.StartCtld(bin, restart...)
		rebootRegistered(t, c, "n1")
		record("after restart", rebootView(c))
		b := ctldSbatch(t, c, "-N", "2", "-o", "/dev/null", "--wrap", "sleep 300")
		waitReason(b, "Resources", 10*time.Second)
		record("job on both nodes after restart", rebootJobs(t, c))
		rebootMode(t, dir, "n2", "on")
		ctldWaitJob(t, c, b, 90*time.Second, "RUNNING")
		record("n2 back", rebootView(c))
		record("job on both nodes after n2 is back", rebootJobs(t, c))
		record("scancel running", ctldRun(c, "scancel", fmt.Sprint(b)))
		wait("nodes idle", 60*time.Second, func() bool {
			o, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%T")
			return strings.TrimSpace(o) == "idle\nidle"
		})

		// -R: a reboot requested on a busy node (nextstate=down) and one
		// issued (n2 off again, no next state) are taken back.
		job := ctldSbatch(t, c, "-w", "n1", "-o", "/dev/null", "--wrap", "sleep 300")
		ctldWaitJob(t, c, job, 60*time.Second, "RUNNING")
		record("reboot busy n1", ctldRun(c, "scontrol", "reboot", "nextstate=down", "reason=fw", "n1"))
		rebootSettle(t, c, "n2")
		rebootMode(t, dir, "n2", "off")
		record("reboot n2", ctldRun(c, "scontrol", "reboot", "n2"))
		issued("n2", 2)
		record("before -R", rebootView(c))
		// Without nextstate=resume the node is not counted as coming
		// back: a job that needs it waits for an unavailable node...
		d := ctldSbatch(t, c, "-w", "n2", "-o", "/dev/null", "--wrap", "sleep 300")
		waitReason(d, "ReqNodeNotAvail", 10*time.Second)
		record("job on n2 while it reboots (no next state)", rebootJobs(t, c))
		c.StopCtld()
		c.StartCtld(bin, full...)
		rebootRegistered(t, c, "n1")
		// ... until the restart. (Real slurmctld looks at the job again
		// on the next scheduling event: a job update is one.)
		record("update the job", ctldRun(c, "scontrol", "update", fmt.Sprintf("jobid=%d", d), "comment=restarted"))
		waitReason(d, "Resources", 10*time.Second)
		record("job on n2 after -R", rebootJobs(t, c))
		cancel(d)
		record("after -R", rebootView(c))
		// Only a boot request time kept over the restart times it out.
		wait("n2 reboot timed out", 150*time.Second, func() bool {
			return strings.Contains(rebootShow(c, "n2"), "reboot timed out")
		})
		record("n2 timed out", rebootUnping(rebootView(c)))
		record("scancel n1's job", ctldRun(c, "scancel", fmt.Sprint(job)))
		issued("n1", 1)
		wait("n1 rebooted", 90*time.Second, func() bool {
			return strings.Contains(rebootShow(c, "n1"), "reboot complete")
		})
		record("n1 rebooted to DOWN", rebootUnping(rebootView(c)))
		return out
	}
	want := run(real, []string{"-c", "-i"}, nil, []string{"-R"})
	got := run(ours, []string{"-c"}, nil, []string{"-R"})
	rebootLog(t, want)
	ctldCompare(t, want, got)
	if len(got) != len(want) {
		t.Errorf("%d steps with ours, %d with real", len(got), len(want))
	}
}

var stepLimitRE = regexp.MustCompile(`(StepId|TimeLimit)=\S+`)

// TestSlurmctldStepUpdate compares scontrol update StepId=... TimeLimit=
// (REQUEST_UPDATE_JOB_STEP) between Debian's slurmctld and ours: one
// step, every step of a job, the step limits scontrol then shows, and
// the refusals (unknown step or job, pending job, another user).
func TestSlurmctldStepUpdate(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2})
	run := func(bin string, args ...string) map[string]string {
		out := map[string]string{}
		c.Start(bin, args...)
		defer c.Stop()
		a := ctldSbatch(t, c, "-o", "/dev/null", "-n", "1", "--wrap", "srun sleep 300")
		ctldWaitJob(t, c, a, 60*time.Second, "RUNNING")
		if err := c.Poll(60*time.Second, func() bool {
			o, _, _ := c.Run("scontrol", "show", "step", fmt.Sprintf("%d.0", a))
			return strings.Contains(o, "StepId=")
		}); err != nil {
			t.Fatalf("step %d.0 not running: %v", a, err)
		}
		b := ctldSbatch(t, c, "-H", "-o", "/dev/null", "--wrap", "sleep 300")
		ctldWaitJob(t, c, b, 30*time.Second, "PENDING")
		limit := func() string {
			o, e, _ := c.Run("scontrol", "show", "step", fmt.Sprintf("%d.0", a))
			return strings.Join(stepLimitRE.FindAllString(o, -1), " ") + "\n" + e
		}
		sa, sb := fmt.Sprint(a), fmt.Sprint(b)
		step := 0
		record := func(name, s string) {
			step++
			// Both controllers number the jobs from 1.
			out[fmt.Sprintf("%02d %s", step, name)] = s
		}
		record("initial", limit())
		for _, u := range []struct{ name, id, limit string }{
			{"one step", sa + ".0", "10"},
			{"zero", sa + ".0", "0"},
			{"every step", sa, "1:00:00"},
			{"unlimited", sa + ".0", "UNLIMITED"},
			{"unknown step", sa + ".7", "5"},
			{"unknown job", "999999.0", "5"},
			{"pending job", sb + ".0", "5"},
			{"pending job, every step", sb, "5"},
		} {
			record(u.name, ctldRun(c, "scontrol", "update", "StepId="+u.id, "TimeLimit="+u.limit))
			record(u.name+": shown", limit())
		}
		o, e, err := c.RunAs(65534, 65534, "scontrol", "update", "StepId="+sa+".0", "TimeLimit=3")
		record("nobody", fmt.Sprintf("%s%s%v\n", o, e, err))
		record("nobody: shown", limit())
		return out
	}
	want := run(real, "-c", "-i")
	got := run(ours, "-c")
	if testing.Verbose() {
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Logf("%s:\n%s", k, want[k])
		}
	}
	ctldCompare(t, want, got)
}
