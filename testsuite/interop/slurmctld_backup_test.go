package interop

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// backupCtls are the two controllers: each gets its host name in a UTS
// namespace, as two hosts would have, and its own loopback address.
var backupCtls = []ctldharness.Controller{{Host: "ctld1", Addr: "127.0.0.1"}, {Host: "ctld2", Addr: "127.0.0.2"}}

// backupPing is what real `scontrol ping` prints (as root) for the pair.
func backupPing(primaryUp, backupUp bool) string {
	st := func(up bool) string {
		if up {
			return "UP"
		}
		return "DOWN"
	}
	s := fmt.Sprintf("Slurmctld(primary) at ctld1 is %s\nSlurmctld(backup) at ctld2 is %s\n", st(primaryUp), st(backupUp))
	if !primaryUp || !backupUp {
		s += "*****************************************\n** RESTORE SLURMCTLD DAEMON TO SERVICE **\n*****************************************\n"
	}
	return s
}

// backupWaitPing waits (bounded) until real `scontrol ping` prints want.
func backupWaitPing(t *testing.T, c *ctldharness.Cluster, want string) {
	t.Helper()
	var last string
	if err := c.Poll(90*time.Second, func() bool {
		last, _, _ = c.Run("scontrol", "ping")
		return last == want
	}); err != nil {
		t.Fatalf("scontrol ping: %v\nlast:\n%s\nwant:\n%s\n%s", err, last, want, c.Logs())
	}
}

// backupWaitControl waits (bounded) until a controller serves the job
// table: real squeue succeeds.
func backupWaitControl(t *testing.T, c *ctldharness.Cluster) {
	t.Helper()
	if err := c.Poll(90*time.Second, func() bool {
		_, _, err := c.Run("squeue", "-h")
		return err == nil
	}); err != nil {
		t.Fatalf("no controller in control: %v\n%s", err, c.Logs())
	}
}

// TestSlurmctldBackup: two of our controllers share StateSaveLocation,
// with real slurmd nodes and real commands. The primary is killed with
// SIGKILL; the backup takes over within SlurmctldTimeout, every
// acknowledged job is there, the running ones finish and new ones run.
// The primary comes back and takes control back from the backup
// (REQUEST_CONTROL); then `scontrol takeover` hands it to the backup
// again.
func TestSlurmctldBackup(t *testing.T) {
	if !ctldharness.HAAvailable() {
		oracle.Unavailable(t, "unshare --uts --mount is not available")
	}
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, ExtraConf: []string{"SlurmctldTimeout=6"}})
	c.SetControllers(backupCtls)
	c.StartHA(backupCtls, []string{ours, ours}, "-c")
	t.Cleanup(c.Stop)
	defer c.CheckRaces()
	backupWaitPing(t, c, backupPing(true, true))

	// The backup in standby refuses the job RPCs as real does.
	out := ctldRun(c, "scontrol", "takeover", "5")
	if !strings.Contains(out, "invalid backup controller index (5)") {
		t.Errorf("scontrol takeover 5: %q", out)
	}

	outFile := filepath.Join(c.Dir, "bk-%j.out")
	var running, held []uint32
	for i := 0; i < 2; i++ {
		running = append(running, ctldSbatch(t, c, "-N1", "-o", outFile, "--wrap", "sleep 8; echo done $SLURM_JOB_ID"))
	}
	for i := 0; i < 3; i++ {
		held = append(held, ctldSbatch(t, c, "-H", "-o", "/dev/null", "--wrap", "true"))
	}
	for _, id := range running {
		ctldWaitJob(t, c, id, 30*time.Second, "RUNNING")
	}

	c.KillProc("slurmctld-ctld1")
	backupWaitControl(t, c)
	backupWaitPing(t, c, backupPing(false, true))
	for _, id := range append(append([]uint32{}, running...), held...) {
		if st := ctldJobState(c, id); st == "" {
			t.Errorf("job %d lost in the takeover", id)
		}
	}
	for _, id := range held {
		if st := ctldJobState(c, id); st != "PENDING" {
			t.Errorf("held job %d after the takeover: %s", id, st)
		}
	}
	for _, id := range running {
		ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
		ctldWaitFile(t, c, strings.Replace(outFile, "%j", fmt.Sprint(id), 1), fmt.Sprintf("done %d\n", id), 10*time.Second)
	}
	// The backup schedules: a new job runs to completion.
	id := ctldSbatch(t, c, "-N2", "-o", outFile, "--wrap", "echo done $SLURM_JOB_ID")
	ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
	held = append(held, ctldSbatch(t, c, "-H", "-o", "/dev/null", "--wrap", "true"))

	// The primary comes back: the backup gives control back.
	c.StartController(backupCtls[0], ours)
	backupWaitPing(t, c, backupPing(true, true))
	if err := c.Poll(90*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(c.Dir, "log", "slurmctld-ctld1.log"))
		return strings.Contains(string(b), "Running as primary controller")
	}); err != nil {
		t.Fatalf("primary did not take control back: %v\n%s", err, c.Logs())
	}
	backupWaitControl(t, c)
	for _, id := range held {
		if st := ctldJobState(c, id); st != "PENDING" {
			t.Errorf("held job %d after the primary came back: %s", id, st)
		}
	}
	id = ctldSbatch(t, c, "-N1", "-o", outFile, "--wrap", "echo done $SLURM_JOB_ID")
	ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")

	// scontrol takeover: the primary stops, the backup takes over at once.
	if out := ctldRun(c, "scontrol", "takeover"); out != "" {
		t.Errorf("scontrol takeover printed %q", out)
	}
	if !c.ForgetExited("slurmctld-ctld1", 60*time.Second) {
		t.Fatalf("primary still running after scontrol takeover\n%s", c.Logs())
	}
	backupWaitControl(t, c)
	backupWaitPing(t, c, backupPing(false, true))
	for _, id := range held {
		if st := ctldJobState(c, id); st != "PENDING" {
			t.Errorf("held job %d after scontrol takeover: %s", id, st)
		}
	}
	id = ctldSbatch(t, c, "-N1", "-o", outFile, "--wrap", "echo done $SLURM_JOB_ID")
	ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
}

// TestSlurmctldBackupDiff runs one failover story against a pair of real
// 22.05 controllers and a pair of ours, and compares what the real
// commands print at each step: `scontrol ping` with both up, after the
// primary was killed (once the backup is in control), after the primary
// came back and took control back, and `scontrol takeover`, which stops
// the primary.
func TestSlurmctldBackupDiff(t *testing.T) {
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
	var got [2][]string
	for i, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			bin := impl.bin()
			c := ctldharness.New(t, ctldharness.Options{Nodes: 1, ExtraConf: []string{"SlurmctldTimeout=6"}})
			c.SetControllers(backupCtls)
			c.StartHA(backupCtls, []string{bin, bin}, "-c")
			defer c.Stop()
			defer c.CheckRaces()
			step := func(s string) { got[i] = append(got[i], s) }
			// Real 22.05 writes job_state in the background: a job
			// submitted just before the kill may be lost there, so the
			// job is checked on ours only (acknowledged means on disk).
			checkJob := func(id uint32) {
				if impl.name == "ours" {
					if st := ctldJobState(c, id); st != "PENDING" {
						t.Errorf("held job %d: %q", id, st)
					}
				}
			}
			backupWaitPing(t, c, backupPing(true, true))
			step(ctldRun(c, "scontrol", "ping"))
			id := ctldSbatch(t, c, "-H", "-o", "/dev/null", "--wrap", "true")

			c.KillProc("slurmctld-ctld1")
			backupWaitControl(t, c)
			step(ctldRun(c, "scontrol", "ping"))
			checkJob(id)

			c.StartController(backupCtls[0], bin)
			backupWaitPing(t, c, backupPing(true, true))
			backupWaitControl(t, c)
			checkJob(id)

			step(ctldRun(c, "scontrol", "takeover"))
			if !c.ForgetExited("slurmctld-ctld1", 60*time.Second) {
				t.Fatalf("primary still running after scontrol takeover\n%s", c.Logs())
			}
			backupWaitControl(t, c)
			step(ctldRun(c, "scontrol", "ping"))
			checkJob(id)
		})
	}
	if t.Failed() {
		return
	}
	for k := range got[0] {
		if k >= len(got[1]) || got[0][k] != got[1][k] {
			t.Errorf("step %d: real printed\n%s\nours\n%s", k, got[0][k], got[1][k])
		}
	}
}

// backupStartPair starts the primary, then (once it answers) the backup,
// then the nodes, and waits until they registered and both controllers
// answer. Real 22.05 controllers started together race on the
// StateSaveLocation/clustername file (one may read it empty and exit with
// CLUSTER NAME MISMATCH); one after the other they do not. c must be new
// (its state empty).
func backupStartPair(t *testing.T, c *ctldharness.Cluster, bins [2]string) {
	t.Helper()
	c.StartController(backupCtls[0], bins[0], "-c")
	if err := c.Poll(60*time.Second, func() bool {
		out, _, _ := c.Run("scontrol", "ping")
		return strings.Contains(out, "Slurmctld(primary) at ctld1 is UP")
	}); err != nil {
		t.Fatalf("primary not answering scontrol ping: %v\n%s", err, c.Logs())
	}
	c.StartController(backupCtls[1], bins[1], "-c")
	for _, n := range c.Nodes {
		c.StartNode(n.Name)
	}
	partWaitRegistered(t, c)
	backupWaitPing(t, c, backupPing(true, true))
}

// backupPrimaryProgConf writes SlurmctldPrimaryOnProg and
// SlurmctldPrimaryOffProg scripts that append "on <host>" and "off <host>"
// (the controller's host name, from its UTS namespace) to events, and
// returns the slurm.conf lines naming them.
func backupPrimaryProgConf(t *testing.T) (lines []string, events string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	events = filepath.Join(dir, "events")
	for _, kind := range []string{"on", "off"} {
		p := filepath.Join(dir, kind+".sh")
		script := fmt.Sprintf("#!/bin/sh\necho \"%s $(hostname)\" >> %s\n", kind, events)
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"SlurmctldPrimaryOnProg=" + filepath.Join(dir, "on.sh"),
		"SlurmctldPrimaryOffProg=" + filepath.Join(dir, "off.sh")}, events
}

// backupWaitEvents waits (bounded) until the program runs recorded in
// events are want (in any order) and returns what they were.
func backupWaitEvents(t *testing.T, c *ctldharness.Cluster, events string, want ...string) string {
	t.Helper()
	slices.Sort(want)
	w := strings.Join(want, "\n")
	var got string
	_ = c.Poll(90*time.Second, func() bool {
		b, _ := os.ReadFile(events)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		slices.Sort(lines)
		got = strings.Join(lines, "\n")
		return got == w
	})
	if got != w {
		t.Errorf("SlurmctldPrimaryOn/OffProg runs:\n%s\nwant:\n%s", got, w)
	}
	return got
}

// TestSlurmctldBackupPrimaryProg runs one failover story against a pair of
// real 22.05 controllers and a pair of ours, recording when each runs
// SlurmctldPrimaryOnProg and SlurmctldPrimaryOffProg: the primary runs
// the on program at start and the backup the off program on entering
// standby; the backup taking over runs the on program; the primary coming
// back takes control back (the backup runs the off program, the primary
// the on program); `scontrol takeover` stops the primary (off) and the
// backup takes control (on).
func TestSlurmctldBackupPrimaryProg(t *testing.T) {
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
	var got [2][]string
	for i, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			bin := impl.bin()
			progs, events := backupPrimaryProgConf(t)
			c := ctldharness.New(t, ctldharness.Options{Nodes: 1, ExtraConf: append([]string{"SlurmctldTimeout=6"}, progs...)})
			c.SetControllers(backupCtls)
			defer c.Stop()
			defer c.CheckRaces()
			backupStartPair(t, c, [2]string{bin, bin})
			runs := []string{"on ctld1", "off ctld2"}
			got[i] = append(got[i], backupWaitEvents(t, c, events, runs...))

			c.KillProc("slurmctld-ctld1")
			backupWaitControl(t, c)
			runs = append(runs, "on ctld2")
			got[i] = append(got[i], backupWaitEvents(t, c, events, runs...))

			c.StartController(backupCtls[0], bin)
			backupWaitPing(t, c, backupPing(true, true))
			backupWaitControl(t, c)
			runs = append(runs, "off ctld2", "on ctld1")
			got[i] = append(got[i], backupWaitEvents(t, c, events, runs...))

			ctldRun(c, "scontrol", "takeover")
			if !c.ForgetExited("slurmctld-ctld1", 60*time.Second) {
				t.Fatalf("primary still running after scontrol takeover\n%s", c.Logs())
			}
			backupWaitControl(t, c)
			runs = append(runs, "off ctld1", "on ctld2")
			got[i] = append(got[i], backupWaitEvents(t, c, events, runs...))
		})
	}
	if t.Failed() {
		return
	}
	for k := range got[0] {
		if k >= len(got[1]) || got[0][k] != got[1][k] {
			t.Errorf("step %d: real ran\n%s\nours\n%s", k, got[0][k], got[1][k])
		}
	}
}

// backupHeartbeat reads StateSaveLocation/heartbeat as 22.05 lays it out:
// the write time and the writer's SlurmctldHost index, big-endian uint64
// each. ok is false while the file is missing or not 16 bytes.
func backupHeartbeat(c *ctldharness.Cluster) (at int64, index int, mode os.FileMode, ok bool) {
	p := filepath.Join(c.Dir, "state", "heartbeat")
	b, err := os.ReadFile(p)
	st, serr := os.Stat(p)
	if err != nil || serr != nil || len(b) != 16 {
		return 0, 0, 0, false
	}
	return int64(binary.BigEndian.Uint64(b[:8])), int(binary.BigEndian.Uint64(b[8:])), st.Mode().Perm(), true
}

// backupWaitHeartbeat waits (bounded) until the heartbeat file was
// written at or after since by controller index, and returns its mode.
func backupWaitHeartbeat(t *testing.T, c *ctldharness.Cluster, since int64, index int) os.FileMode {
	t.Helper()
	var at int64
	var idx int
	var mode os.FileMode
	var ok bool
	if err := c.Poll(90*time.Second, func() bool {
		at, idx, mode, ok = backupHeartbeat(c)
		return ok && at >= since && idx == index
	}); err != nil {
		t.Fatalf("heartbeat: written at %d by %d (file complete: %v), want at or after %d by %d: %v\n%s", at, idx, ok, since, index, err, c.Logs())
	}
	return mode
}

// TestSlurmctldBackupHeartbeat: the controller in control writes
// StateSaveLocation/heartbeat (16 bytes: time and SlurmctldHost index,
// big-endian; mode 0600) every SlurmctldTimeout/4: the primary with index
// 0, the backup with index 1 once it took over. Real 22.05 pairs and ours
// write the same file.
func TestSlurmctldBackupHeartbeat(t *testing.T) {
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
	var got [2][]string
	for i, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			bin := impl.bin()
			c := ctldharness.New(t, ctldharness.Options{Nodes: 1, ExtraConf: []string{"SlurmctldTimeout=6"}})
			c.SetControllers(backupCtls)
			defer c.Stop()
			defer c.CheckRaces()
			backupStartPair(t, c, [2]string{bin, bin})
			// Written again after this moment: it beats.
			mode := backupWaitHeartbeat(t, c, time.Now().Unix()+1, 0)
			got[i] = append(got[i], fmt.Sprintf("primary: mode %v", mode))

			c.KillProc("slurmctld-ctld1")
			backupWaitControl(t, c)
			mode = backupWaitHeartbeat(t, c, time.Now().Unix()+1, 1)
			got[i] = append(got[i], fmt.Sprintf("backup in control: mode %v", mode))
		})
	}
	if t.Failed() {
		return
	}
	for k := range got[0] {
		if k >= len(got[1]) || got[0][k] != got[1][k] {
			t.Errorf("step %d: real\n%s\nours\n%s", k, got[0][k], got[1][k])
		}
	}
}

// TestSlurmctldBackupHeartbeatMixed: mixed pairs, a real 22.05 primary
// with our backup and ours with a real backup (and a real pair, which
// shows what 22.05 does), read each other's heartbeat file.
//
// The primary is stopped (SIGSTOP: it accepts connections but answers
// nothing) while the file keeps being written, as by a primary cut off
// from the backup but not from the state: the backup stays in standby.
// The primary is resumed and writes the file again; stopped a second time
// with nothing else writing, the backup logs the time the primary last
// wrote (it parsed the primary's file) and takes over once that is
// SlurmctldTimeout old.
func TestSlurmctldBackupHeartbeatMixed(t *testing.T) {
	if !ctldharness.HAAvailable() {
		oracle.Unavailable(t, "unshare --uts --mount is not available")
	}
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	for _, pair := range []struct {
		name            string
		primary, backup string
	}{
		{"real primary, our backup", real, ours},
		{"our primary, real backup", ours, real},
		{"real pair", real, real},
	} {
		t.Run(strings.ReplaceAll(pair.name, " ", "_"), func(t *testing.T) {
			c := ctldharness.New(t, ctldharness.Options{Nodes: 1, ExtraConf: []string{"SlurmctldTimeout=6", "SlurmctldDebug=debug"}})
			c.SetControllers(backupCtls)
			defer c.Stop()
			defer c.CheckRaces()
			backupStartPair(t, c, [2]string{pair.primary, pair.backup})
			backupWaitHeartbeat(t, c, time.Now().Unix()+1, 0)
			backupHeartbeatMixed(t, c)
		})
	}
}

func backupHeartbeatMixed(t *testing.T, c *ctldharness.Cluster) {
	pidText, err := os.ReadFile(filepath.Join(c.Dir, "run-ctld1", "slurmctld.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()

	// The primary's heartbeat, kept fresh for four SlurmctldTimeouts.
	backupLog := filepath.Join(c.Dir, "log", "slurmctld-ctld2.log")
	const takeover = "taking over"
	for end := time.Now().Add(24 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], uint64(time.Now().Unix()))
		hb := filepath.Join(c.Dir, "state", "heartbeat")
		if err := os.WriteFile(hb+".new", b[:], 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(hb+".new", hb); err != nil {
			t.Fatal(err)
		}
		if l, _ := os.ReadFile(backupLog); strings.Contains(string(l), takeover) {
			t.Fatalf("the backup took over while the primary's heartbeat was fresh\n%s", c.Logs())
		}
	}
	// The primary resumes and writes the file itself again.
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	backupWaitHeartbeat(t, c, time.Now().Unix()+1, 0)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	at, idx, _, ok := backupHeartbeat(c)
	if !ok || idx != 0 {
		t.Fatalf("heartbeat after the second stop: %d from %d (complete %v)", at, idx, ok)
	}
	seen := fmt.Sprintf("last_heartbeat %d from server 0", at)
	var l []byte
	if err := c.Poll(90*time.Second, func() bool {
		l, _ = os.ReadFile(backupLog)
		return strings.Contains(string(l), seen) && strings.Contains(string(l), takeover)
	}); err != nil {
		t.Fatalf("the backup did not log %q and take over: %v\n%s", seen, err, c.Logs())
	}
	if strings.Index(string(l), seen) > strings.Index(string(l), takeover) {
		t.Errorf("the backup took over before reading the primary's heartbeat\n%s", l)
	}
}
