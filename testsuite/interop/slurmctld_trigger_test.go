package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// triggerFixture is a directory nobody can use, holding a trigger
// program that appends its arguments and the uid it ran as to out.
type triggerFixture struct {
	dir, prog, out string
}

func newTriggerFixture(t *testing.T) triggerFixture {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctldh-trig-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	f := triggerFixture{dir: dir, prog: filepath.Join(dir, "trig.sh"), out: filepath.Join(dir, "out")}
	script := "#!/bin/sh\necho \"$* uid=$(id -u)\" >> " + f.out + "\n"
	if err := os.WriteFile(f.prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f.reset(t)
	return f
}

// reset empties the output file, which every trigger owner may append to.
func (f triggerFixture) reset(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(f.out, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f.out, 0o666); err != nil {
		t.Fatal(err)
	}
}

// lines are the program's output lines, sorted (one pass starts several
// programs at once).
func (f triggerFixture) lines() []string {
	b, _ := os.ReadFile(f.out)
	var l []string
	for _, s := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if s != "" {
			l = append(l, s)
		}
	}
	slices.Sort(l)
	return l
}

// waitLines waits (at most 60 s: a pass runs every 15 s) until the
// program has written n lines.
func (f triggerFixture) waitLines(t *testing.T, c *ctldharness.Cluster, n int) []string {
	t.Helper()
	if err := c.Poll(60*time.Second, func() bool { return len(f.lines()) >= n }); err != nil {
		t.Errorf("trigger programs wrote %q, want %d lines: %v", f.lines(), n, err)
	}
	// Let any program of the same pass finish writing.
	time.Sleep(time.Second)
	return f.lines()
}

// TestSlurmctldTriggerCommands compares strigger --set/--get/--clear
// under real slurmctld and ours: every resource type, offsets, the
// permanent flag, refusals (duplicate, unknown node or job, a program
// that cannot run, another user's trigger), then programs fired by a
// node going DOWN (one and a permanent trigger), the node update's
// reconfig event and a job's end, run as their owners (root and, with
// allow_user_triggers, nobody) with the node list or job id as last
// argument.
func TestSlurmctldTriggerCommands(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	f := newTriggerFixture(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{"SlurmctldParameters=allow_user_triggers"}})
	prog := func(word string) string { return "--program=" + f.prog + " " + word }
	steps := []adminStep{
		root("strigger", "--get"),
		root("strigger", "--set", "--node=n1", "--down", prog("down")),
		root("strigger", "--set", "--node=n1", "--down", prog("down")),
		root("strigger", "--set", "--node=n2", "--down", "--flags=perm", prog("permdown")),
		root("strigger", "--set", "--node=n9", "--down", prog("x")),
		root("strigger", "--set", "--jobid=999", "--fini", prog("x")),
		root("strigger", "--set", "--down", "--program=/nonexistent/prog"),
		root("strigger", "--set", "--down", "--program=/etc/passwd"),
		root("strigger", "--set", "--reconfig", "--offset=1", prog("reconfig")),
		root("strigger", "--set", "--node=n[1-2]", "--up", "--offset=-20", prog("up")),
		root("strigger", "--set", "--node=n2", "--idle", "--offset=30000", prog("idle")),
		root("strigger", "--set", "--node=n1", "--drained", prog("drained")),
		root("strigger", "--set", "--node=n1", "--fail", prog("fail")),
		root("strigger", "--set", "--primary_slurmctld_failure", prog("pfail")),
		root("strigger", "--set", "--backup_slurmctld_assumed_control", prog("bctl")),
		root("strigger", "--set", "--primary_slurmdbd_failure", prog("dbd")),
		root("strigger", "--set", "--primary_database_resumed_operation", prog("db")),
		root("strigger", "--set", "--burst_buffer", prog("bb")),
		nobody("strigger", "--set", "--node=n2", "--down", prog("nobodydown")),
		root("strigger", "--get"),
		nobody("strigger", "--get", "--down"),
		root("strigger", "--get", "--user=nobody"),
		root("strigger", "--get", "--id=3", "--noheader"),
		nobody("strigger", "--clear", "--id=1"),
		nobody("strigger", "--clear", "--user=root"),
		root("strigger", "--clear", "--id=99"),
		root("strigger", "--clear"),
		// Not the up and idle triggers: when they fire depends on when
		// the nodes answer a ping.
		root("strigger", "--clear", "--id=5"),
		root("strigger", "--clear", "--id=6"),
		root("strigger", "--get"),
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) string {
		f.reset(t)
		out := adminScenario(steps, []string{"Security violation, REQUEST_TRIGGER_SET", "trigger program /nonexistent/prog not found",
			"trigger program /etc/passwd not executable"})(t, c)
		// A job to end, with triggers on its end and time limit (which
		// its end time reaches as it ends).
		job := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "sleep 4")
		jid := strconv.FormatUint(uint64(job), 10)
		out += "fini: " + ctldRun(c, "strigger", "--set", "--jobid="+jid, "--fini", prog("fini"))
		out += "time: " + ctldRun(c, "strigger", "--set", "--jobid="+jid, "--time", "--offset=-5", prog("time"))
		f.waitLines(t, c, 2)
		// The node triggers fire, and the reconfig one (a node update).
		out += ctldRun(c, "scontrol", "update", "NodeName=n[1-2]", "State=DOWN", "Reason=trig")
		lines := f.waitLines(t, c, 6)
		// Both start from a clean state: the job ids are the same.
		out += "fired:\n" + strings.Join(lines, "\n") + "\n"
		out += "after:\n" + ctldRun(c, "strigger", "--get")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("strigger differs:\n--- real slurmctld\n%s--- ours\n%s", want, got)
	}
}

// TestSlurmctldTriggerRecovery: our controller keeps its triggers across
// a restart (SIGKILL, then a start without -c), and they still fire.
func TestSlurmctldTriggerRecovery(t *testing.T) {
	c, ours := ctldJobsStart(t, ctldharness.Options{Nodes: 2})
	f := newTriggerFixture(t)
	job := strconv.FormatUint(uint64(ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "sleep 300")), 10)
	for _, a := range [][]string{
		{"strigger", "--set", "--jobid=" + job, "--fini", "--program=" + f.prog + " fini"},
		{"strigger", "--set", "--node=n1", "--down", "--program=" + f.prog + " down"},
		{"strigger", "--set", "--node=n2", "--drained", "--flags=perm", "--offset=2", "--program=" + f.prog + " drained"},
		{"strigger", "--set", "--primary_slurmdbd_failure", "--program=" + f.prog},
	} {
		if o := ctldRun(c, a...); o != "" {
			t.Fatalf("%v: %s", a, o)
		}
	}
	if o := ctldRun(c, "strigger", "--clear", "--id=4"); o != "" {
		t.Fatalf("clear: %s", o)
	}
	before := ctldRun(c, "strigger", "--get")
	c.KillCtld()
	c.StartCtld(ours)
	if after := ctldRun(c, "strigger", "--get"); after != before {
		t.Errorf("after restart:\n%s\nbefore:\n%s", after, before)
	}
	if o := ctldRun(c, "strigger", "--set", "--node=n2", "--down", "--program=/bin/true"); o != "" {
		t.Errorf("a trigger after restart: %s", o)
	}
	// As 22.05: the next id follows the highest recovered one.
	if o := ctldRun(c, "strigger", "--get", "--id=4", "--noheader"); !strings.HasPrefix(strings.TrimSpace(o), "4 ") {
		t.Errorf("ids after restart go on from the highest: %s", o)
	}
	ctldRun(c, "scontrol", "update", "NodeName=n1", "State=DOWN", "Reason=trig")
	ctldRun(c, "scontrol", "update", "NodeName=n2", "State=DRAIN", "Reason=trig")
	ctldRun(c, "scancel", job)
	got := f.waitLines(t, c, 3)
	want := []string{"down n1 uid=0", "drained n2 uid=0", "fini " + job + " uid=0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fired after restart: %q, want %q", got, want)
	}
}

// TestSlurmctldTriggerRestart compares the two across a restart: the
// triggers come back, and a starting primary fires the resumed control
// and resumed operation triggers (set after the first pass, whose
// all-nodes idle trigger shows it ran, so the first start does not
// fire them).
func TestSlurmctldTriggerRestart(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	f := newTriggerFixture(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2})
	prog := func(word string) string { return "--program=" + f.prog + " " + word }
	run := func(bin string, firstArgs ...string) string {
		f.reset(t)
		c.Start(bin, firstArgs...)
		defer c.Stop()
		var b strings.Builder
		step := func(args ...string) { fmt.Fprintf(&b, "== %s\n%s", strings.Join(args, " "), ctldRun(c, args...)) }
		step("strigger", "--set", "--idle", prog("idle"))
		f.waitLines(t, c, 1)
		step("strigger", "--set", "--primary_slurmctld_resumed_operation", prog("resop"))
		step("strigger", "--set", "--primary_slurmctld_resumed_control", "--flags=perm", prog("resctrl"))
		step("strigger", "--set", "--node=n1", "--down", "--offset=100", prog("down"))
		step("strigger", "--get")
		c.StopCtld()
		c.StartCtld(bin)
		step("strigger", "--get")
		fmt.Fprintf(&b, "fired:\n%s\n", strings.Join(f.waitLines(t, c, 3), "\n"))
		step("strigger", "--get")
		return b.String()
	}
	want := run(real, "-c", "-i")
	got := run(ours, "-c")
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("differs:\n--- real slurmctld\n%s--- ours\n%s", want, got)
	}
}

// TestSlurmctldTriggerBackup compares a pair of real controllers and a
// pair of ours: the backup that takes over from a killed primary fires
// the primary failure and backup in control triggers set on the primary,
// and the backup failure one (its ping of the dead primary fails).
func TestSlurmctldTriggerBackup(t *testing.T) {
	if !ctldharness.HAAvailable() {
		oracle.Unavailable(t, "unshare --uts --mount is not available")
	}
	impls := []struct {
		name string
		bin  func() string
	}{
		{"real", func() string { return ctldharness.RealSbin(t, "slurmctld") }},
		{"ours", func() string { return ctldBuildOurs(t) }},
	}
	var got [2]string
	f := newTriggerFixture(t)
	for i, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			bin := impl.bin()
			f.reset(t)
			c := ctldharness.New(t, ctldharness.Options{Nodes: 1, ExtraConf: []string{"SlurmctldTimeout=6"}})
			c.SetControllers(backupCtls)
			c.StartHA(backupCtls, []string{bin, bin}, "-c")
			defer c.Stop()
			defer c.CheckRaces()
			backupWaitPing(t, c, backupPing(true, true))
			var b strings.Builder
			step := func(args ...string) { fmt.Fprintf(&b, "== %s\n%s", strings.Join(args, " "), ctldRun(c, args...)) }
			step("strigger", "--set", "--primary_slurmctld_failure", "--program="+f.prog+" pfail")
			step("strigger", "--set", "--backup_slurmctld_assumed_control", "--program="+f.prog+" bctl")
			step("strigger", "--set", "--backup_slurmctld_failure", "--program="+f.prog+" bfail")
			// Real saves its state in the background: wait for the file.
			if err := c.Poll(60*time.Second, func() bool {
				for _, name := range []string{"trigger_state", "trigger_state.json"} {
					if data, _ := os.ReadFile(filepath.Join(c.Dir, "state", name)); strings.Contains(string(data), "bfail") {
						return true
					}
				}
				return false
			}); err != nil {
				t.Fatalf("trigger state not saved: %v", err)
			}
			c.KillProc("slurmctld-ctld1")
			backupWaitControl(t, c)
			// The backup in control pings the dead primary too: the
			// backup failure trigger fires as well, as in 22.05.
			fmt.Fprintf(&b, "fired:\n%s\n", strings.Join(f.waitLines(t, c, 3), "\n"))
			step("strigger", "--get")
			got[i] = b.String()
		})
	}
	if t.Failed() {
		return
	}
	t.Logf("real slurmctld:\n%s", got[0])
	if got[0] != got[1] {
		t.Errorf("differs:\n--- real slurmctld\n%s--- ours\n%s", got[0], got[1])
	}
}
