package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
