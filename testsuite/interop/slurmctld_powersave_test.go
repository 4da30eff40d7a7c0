package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// Power saving without cutting any power. The nodes' slurmds run under
// powerWrapper, which stands in for the node's power: SuspendProgram
// switches a node off (its slurmd is killed and not started again while
// dir/mode.<node> says "off"); ResumeProgram only records the request,
// and the test switches the node on when it wants it back: slurmd then
// starts with -b, reporting its start as the boot time, which is how the
// controller learns the node booted after the resume request.

// powerWrapper runs Debian's slurmd, recording its pid for
// SuspendProgram, and starts it again (3 s after the node is switched
// on, so that the boot time is safely after the request) whenever it
// died. SIGTERM (the harness stopping the node) ends both.
const powerWrapper = `#!/bin/bash
node=
prev=
for a in "$@"; do
	[ "$prev" = -N ] && node=$a
	prev=$a
done
pid=0
stopping=0
trap 'stopping=1; [ $pid -ne 0 ] && kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; exit 0' TERM INT
extra=
while :; do
	%[2]s "$@" $extra &
	pid=$!
	echo $pid > %[1]s/pid.$node
	wait $pid
	[ $stopping = 1 ] && exit 0
	pid=0
	while [ "$(cat %[1]s/mode.$node 2>/dev/null)" = off ]; do sleep 0.2; done
	[ $stopping = 1 ] && exit 0
	sleep 3
	extra=-b
done
`

// powerSuspend records its call and switches the nodes off.
const powerSuspend = `#!/bin/sh
echo "suspend $1 $(basename $0) argc=$# conf=${SLURM_CONF:+set}" >> %[1]s/power.log
for h in $(%[2]s show hostnames "$1"); do
	echo off > %[1]s/mode.$h
	kill -KILL "$(cat %[1]s/pid.$h)" 2>/dev/null
done
exit 0
`

// powerResume records its call and the resume file; the nodes stay off.
const powerResume = `#!/bin/sh
echo "resume $1 $(basename $0) argc=$# conf=${SLURM_CONF:+set}" >> %[1]s/power.log
[ -n "$SLURM_RESUME_FILE" ] && echo "json $(cat "$SLURM_RESUME_FILE")" >> %[1]s/power.log
exit 0
`

// powerFail records ResumeFailProgram's call.
const powerFail = `#!/bin/sh
echo "fail $1 $(basename $0) argc=$#" >> %[1]s/power.log
`

var powerStateRE = regexp.MustCompile(`(?m)^\s*State=(\S+)`)

// powerView is what the real commands say of the nodes: sinfo's state
// and reason, scontrol's State.
func powerView(c *ctldharness.Cluster) string {
	out, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%N %T %E")
	var b strings.Builder
	b.WriteString(sortedLines(out))
	for _, n := range []string{"n1", "n2", "n3"} {
		show, _, _ := c.Run("scontrol", "show", "node", n)
		if m := powerStateRE.FindStringSubmatch(show); m != nil {
			fmt.Fprintf(&b, "%s State=%s\n", n, m[1])
		}
	}
	return b.String()
}

// powerState is sinfo's state of one node ("idle~", "alloc#", ...).
func powerSinfo(c *ctldharness.Cluster, node string) string {
	o, _, _ := c.Run("sinfo", "-h", "-N", "-n", node, "-o", "%T")
	return strings.TrimSpace(o)
}

// powerLog is the programs' log, each call's hostlist expanded and the
// nodes gathered by program: which nodes were suspended, resumed and
// reported failed, not how the calls grouped them (that depends on the
// second each node registered in). The resume files' contents are kept
// as they are.
func powerLog(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "power.log"))
	nodes := map[string]map[string]int{}
	var other []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if f[0] == "json" {
			other = append(other, line)
			continue
		}
		other = append(other, f[0]+" "+strings.Join(f[2:], " "))
		names, err := expandSimple(f[1])
		if err != nil {
			other = append(other, "bad hostlist "+f[1])
		}
		if nodes[f[0]] == nil {
			nodes[f[0]] = map[string]int{}
		}
		for _, n := range names {
			nodes[f[0]][n]++
		}
	}
	var out []string
	for kind, m := range nodes {
		var list []string
		for n, k := range m {
			list = append(list, fmt.Sprintf("%s x%d", n, k))
		}
		sort.Strings(list)
		out = append(out, kind+": "+strings.Join(list, ", "))
	}
	sort.Strings(out)
	sort.Strings(other)
	// The same call line may come several times (one call per node, or
	// one for several): keep each distinct line once.
	var uniq []string
	for i, l := range other {
		if i == 0 || other[i-1] != l {
			uniq = append(uniq, l)
		}
	}
	return strings.Join(out, "\n") + "\n" + strings.Join(uniq, "\n") + "\n"
}

// expandSimple expands the hostlists the programs get here: "n1",
// "n[1-2]", "n[1,3]".
func expandSimple(h string) ([]string, error) {
	prefix, rest, ok := strings.Cut(h, "[")
	if !ok {
		return []string{h}, nil
	}
	rest = strings.TrimSuffix(rest, "]")
	var out []string
	for _, part := range strings.Split(rest, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			out = append(out, prefix+lo)
			continue
		}
		var a, b int
		if _, err := fmt.Sscan(lo, &a); err != nil {
			return nil, err
		}
		if _, err := fmt.Sscan(hi, &b); err != nil {
			return nil, err
		}
		for i := a; i <= b; i++ {
			out = append(out, fmt.Sprintf("%s%d", prefix, i))
		}
	}
	return out, nil
}

func powerMode(t *testing.T, dir, node, mode string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "mode."+node), []byte(mode), 0o644); err != nil {
		t.Fatal(err)
	}
}

// powerCluster is a three-node cluster (one CPU each) whose real
// slurmds run under powerWrapper, with the power programs above writing
// to dir/power.log; n3 is excluded from power saving.
func powerCluster(t *testing.T) (c *ctldharness.Cluster, dir string) {
	t.Helper()
	return powerClusterResume(t, 15)
}

// powerClusterResume is powerCluster with ResumeTimeout resumeTimeout.
func powerClusterResume(t *testing.T, resumeTimeout int) (c *ctldharness.Cluster, dir string) {
	t.Helper()
	slurmd := ctldharness.RealSbin(t, "slurmd")
	// Debian's scontrol: skipped, or failed under GOSLURM_REQUIRE_ORACLE=1.
	scontrol := oracle.Binary(t, "scontrol")
	dir, write := programDir(t, "powersave-")
	wrapper := write("slurmd-power", fmt.Sprintf(powerWrapper, dir, slurmd))
	suspend := write("suspend.sh", fmt.Sprintf(powerSuspend, dir, scontrol))
	resume := write("resume.sh", fmt.Sprintf(powerResume, dir))
	fail := write("resumefail.sh", fmt.Sprintf(powerFail, dir))
	c = ctldharness.New(t, ctldharness.Options{
		Nodes: 3, CPUs: 1, OurSlurmd: wrapper,
		ExtraConf: []string{
			"SuspendProgram=" + suspend,
			"ResumeProgram=" + resume,
			"ResumeFailProgram=" + fail,
			"SuspendTime=6",
			"SuspendTimeout=4",
			fmt.Sprintf("ResumeTimeout=%d", resumeTimeout),
			"SuspendExcNodes=n3",
			"SlurmctldParameters=power_save_interval=1",
		},
	})
	return c, dir
}

// powerRun starts the controller bin (args) on c with every node
// switched on and a fresh program log, runs steps, which records what
// it wants compared, and stops everything.
func powerRun(t *testing.T, c *ctldharness.Cluster, dir, bin string, args []string,
	steps func(record func(string, string), wait func(string, time.Duration, func() bool))) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = os.Remove(filepath.Join(dir, "power.log"))
	for _, n := range []string{"n1", "n2", "n3"} {
		powerMode(t, dir, n, "on")
	}
	c.Start(bin, args...)
	defer c.Stop()
	defer func() {
		for _, n := range []string{"n1", "n2", "n3"} {
			powerMode(t, dir, n, "on")
		}
	}()
	step := 0
	record := func(name, s string) {
		step++
		out[fmt.Sprintf("%02d %s", step, name)] = s
	}
	wait := func(what string, limit time.Duration, ok func() bool) {
		t.Helper()
		if err := c.Poll(limit, ok); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", what, err, powerView(c), powerLog(dir))
		}
	}
	steps(record, wait)
	return out
}

// powerCompare logs real's steps in verbose runs and compares.
func powerCompare(t *testing.T, want, got map[string]string) {
	t.Helper()
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
	if len(got) != len(want) {
		t.Errorf("%d steps with ours, %d with real", len(got), len(want))
	}
}

// TestSlurmctldPowerSave compares, between Debian's slurmctld and ours,
// power saving as the real sinfo, scontrol and squeue show it, and the
// calls of SuspendProgram, ResumeProgram and ResumeFailProgram: idle
// nodes suspended after SuspendTime (n3 excluded by SuspendExcNodes),
// POWERING_DOWN then POWERED_DOWN after SuspendTimeout; a restart keeps
// them powered down; a batch job sent to a powered-down node waits
// CONFIGURING while the node powers up, then runs; a node not back within
// ResumeTimeout goes DOWN; scontrol's power_down and power_up.
func TestSlurmctldPowerSave(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c, dir := powerCluster(t)
	run := func(bin string, args, restartArgs []string) map[string]string {
		return powerRun(t, c, dir, bin, args, func(record func(string, string), wait func(string, time.Duration, func() bool)) {
			waitState := func(node, st string) {
				t.Helper()
				wait(node+" "+st, 90*time.Second, func() bool { return powerSinfo(c, node) == st })
			}
			// Idle nodes power down; n3 is excluded.
			waitState("n1", "idle~")
			waitState("n2", "idle~")
			record("suspended", powerView(c))
			record("suspend calls", powerLog(dir))

			// A restart keeps them powered down.
			c.StopCtld()
			c.StartCtld(bin, restartArgs...)
			waitState("n3", "idle")
			record("after restart", powerView(c))

			// A batch job sent to a powered-down node waits CONFIGURING
			// while the node powers up.
			job := ctldSbatch(t, c, "-w", "n1", "-o", "/dev/null", "--wrap", "true")
			ctldWaitJob(t, c, job, 60*time.Second, "CONFIGURING")
			wait("n1 powering up", 60*time.Second, func() bool { return strings.Contains(powerLog(dir), "resume: n1") })
			record("job configuring", powerView(c))
			record("job configuring squeue", ctldRun(c, "squeue", "-h", "-o", "%i %T %N %r"))
			record("resume calls", powerLog(dir))
			powerMode(t, dir, "n1", "on")
			ctldWaitJob(t, c, job, 120*time.Second, "COMPLETED")
			record("job done", powerView(c))
			// Idle again: powered down again.
			waitState("n1", "idle~")
			record("n1 suspended again", powerView(c))

			// power_up of a node that does not come back: DOWN after
			// ResumeTimeout, ResumeFailProgram.
			record("power_up n2", ctldRun(c, "scontrol", "update", "nodename=n2", "state=power_up"))
			wait("n2 timed out", 120*time.Second, func() bool {
				return strings.HasPrefix(powerSinfo(c, "n2"), "down")
			})
			record("n2 timed out", powerView(c))
			wait("ResumeFailProgram", 30*time.Second, func() bool { return strings.Contains(powerLog(dir), "fail: n2") })

			// power_up of a node that is up; power_down of the excluded
			// node, twice.
			record("power_up n3", ctldRun(c, "scontrol", "update", "nodename=n3", "state=power_up"))
			record("power_down n3", ctldRun(c, "scontrol", "update", "nodename=n3", "state=power_down"))
			record("power_down n3 again", ctldRun(c, "scontrol", "update", "nodename=n3", "state=power_down"))
			waitState("n3", "idle~")
			record("n3 powered down", powerView(c))
			record("calls", powerLog(dir))
		})
	}
	want := run(real, []string{"-c", "-i"}, []string{"-i"})
	got := run(ours, []string{"-c"}, nil)
	powerCompare(t, want, got)
}

// TestSlurmctldPowerSaveJobs compares what happens to jobs: one waiting
// for a node that misses ResumeTimeout is requeued; power_down_asap
// drains a busy node, powered down once its job ends; power_down_force
// requeues the job of a node and powers it down at once.
func TestSlurmctldPowerSaveJobs(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c, dir := powerCluster(t)
	run := func(bin string, args []string) map[string]string {
		return powerRun(t, c, dir, bin, args, func(record func(string, string), wait func(string, time.Duration, func() bool)) {
			waitState := func(node, st string) {
				t.Helper()
				wait(node+" "+st, 120*time.Second, func() bool { return powerSinfo(c, node) == st })
			}
			squeue := func() string { return ctldRun(c, "squeue", "-h", "-o", "%i %T %N %r") }
			waitState("n1", "idle~")
			waitState("n2", "idle~")

			// A job that may run anywhere goes to the node that is up.
			up := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "sleep 300")
			ctldWaitJob(t, c, up, 60*time.Second, "RUNNING")
			record("job on the node up", ctldRun(c, "squeue", "-h", "-o", "%i %T %N %r"))
			record("scancel up", ctldRun(c, "scancel", fmt.Sprint(up)))
			waitState("n3", "idle")

			// n2 does not come back: its job is requeued.
			a := ctldSbatch(t, c, "-w", "n2", "-o", "/dev/null", "--wrap", "sleep 300")
			ctldWaitJob(t, c, a, 60*time.Second, "CONFIGURING")
			wait("n2 timed out", 120*time.Second, func() bool { return strings.HasPrefix(powerSinfo(c, "n2"), "down") })
			ctldWaitJob(t, c, a, 60*time.Second, "PENDING")
			record("n2 timed out", powerView(c))
			// Without the reason, which real sets at its next scheduling
			// pass (None until then).
			record("n2 timed out squeue", ctldRun(c, "squeue", "-h", "-o", "%i %T %N"))
			record("scancel a", ctldRun(c, "scancel", fmt.Sprint(a)))

			// power_down_asap of a busy node.
			b := ctldSbatch(t, c, "-w", "n3", "-o", "/dev/null", "--wrap", "sleep 300")
			ctldWaitJob(t, c, b, 60*time.Second, "RUNNING")
			record("power_down_asap n3", ctldRun(c, "scontrol", "update", "nodename=n3", "state=power_down_asap"))
			record("n3 draining", powerView(c))
			record("scancel b", ctldRun(c, "scancel", fmt.Sprint(b)))
			waitState("n3", "idle~")
			record("n3 powered down", powerView(c))

			// power_down_force of a node running a job.
			d := ctldSbatch(t, c, "-w", "n1", "-o", "/dev/null", "--wrap", "sleep 300")
			ctldWaitJob(t, c, d, 60*time.Second, "CONFIGURING")
			powerMode(t, dir, "n1", "on")
			ctldWaitJob(t, c, d, 120*time.Second, "RUNNING")
			record("n1 running", powerView(c))
			record("power_down_force n1", ctldRun(c, "scontrol", "update", "nodename=n1", "state=power_down_force"))
			ctldWaitJob(t, c, d, 60*time.Second, "PENDING")
			record("forced squeue", squeue())
			record("scancel d", ctldRun(c, "scancel", fmt.Sprint(d)))
			waitState("n1", "idle~")
			record("n1 forced down", powerView(c))

			// srun on a powered-down node: the allocation is granted, the
			// step waits until the node is up.
			done := make(chan string, 1)
			go func() { done <- ctldRun(c, "srun", "-w", "n1", "-t", "1", "echo", "hello") }()
			wait("n1 resumed for srun", 60*time.Second, func() bool { return strings.Contains(powerLog(dir), "resume: n1 x2") })
			record("srun waiting", powerView(c))
			record("srun waiting squeue", ctldRun(c, "squeue", "-h", "-o", "%i %T %N"))
			powerMode(t, dir, "n1", "on")
			select {
			case out := <-done:
				record("srun", out)
			case <-time.After(180 * time.Second):
				t.Fatalf("srun did not end\n%s", powerView(c))
			}
			record("calls", powerLog(dir))
		})
	}
	want := run(real, []string{"-c", "-i"})
	got := run(ours, []string{"-c"})
	powerCompare(t, want, got)
}

// programDir makes a directory the SlurmUser can read (the power
// programs run as it), removed at the end of the test, and a writer of
// executable files in it.
func programDir(t *testing.T, prefix string) (string, func(name, text string) string) {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
}
