package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// TestSlurmctldKill9SubmitStorm: our controller is killed with SIGKILL in
// the middle of a storm of real sbatch commands (200 from 4 goroutines)
// and started again; every job whose sbatch printed "Submitted batch job
// N" is still there, and no id was handed out twice.
func TestSlurmctldKill9SubmitStorm(t *testing.T) {
	c, ours := ctldJobsStart(t, ctldharness.Options{Nodes: 1})
	const total, workers = 200, 4
	var (
		mu    sync.Mutex
		acked []uint32
		fails []string
		count atomic.Int32
		wg    sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < total/workers; i++ {
				// Held, so the table only grows: what is there after the
				// crash is exactly what was acknowledged and kept.
				out, errOut, err := c.Run("sbatch", "-H", "-o", "/dev/null", "--wrap", "true")
				m := submittedRE.FindStringSubmatch(out)
				mu.Lock()
				if m != nil {
					id, _ := strconv.ParseUint(m[1], 10, 32)
					acked = append(acked, uint32(id))
				} else {
					fails = append(fails, fmt.Sprintf("%v: %s%s", err, out, errOut))
				}
				mu.Unlock()
				count.Add(1)
			}
		}()
	}
	// Kill at a quarter, half and three quarters of the storm.
	for _, at := range []int32{total / 4, total / 2, 3 * total / 4} {
		if err := c.Poll(60*time.Second, func() bool { return count.Load() >= at }); err != nil {
			t.Fatalf("storm stalled before %d: %v", at, err)
		}
		c.KillCtld()
		time.Sleep(300 * time.Millisecond)
		c.StartCtld(ours)
	}
	wg.Wait()
	seen := map[uint32]bool{}
	for _, id := range acked {
		if seen[id] {
			t.Errorf("job id %d acknowledged twice", id)
		}
		seen[id] = true
	}
	out, _, err := c.Run("squeue", "-h", "-o", "%i")
	if err != nil {
		t.Fatal(err)
	}
	have := map[uint32]bool{}
	for _, f := range strings.Fields(out) {
		id, _ := strconv.ParseUint(f, 10, 32)
		have[uint32(id)] = true
	}
	lost := 0
	for _, id := range acked {
		if !have[id] {
			lost++
			t.Errorf("acknowledged job %d lost", id)
		}
	}
	t.Logf("%d of %d sbatch acknowledged (%d failed while the controller was down), %d jobs after restart, %d lost",
		len(acked), total, len(fails), len(have), lost)
	for _, f := range fails {
		t.Logf("failed sbatch: %s", f)
	}
	if len(acked) < total/2 {
		t.Errorf("only %d of %d submissions acknowledged: %q", len(acked), total, fails)
	}
}

// TestSlurmctldRestartRunningJobs: jobs running on real slurmd keep
// running while our controller is killed and started again (default
// recovery), and complete normally afterwards.
func TestSlurmctldRestartRunningJobs(t *testing.T) {
	c, ours := ctldJobsStart(t, ctldharness.Options{Nodes: 2})
	var ids []uint32
	for i := 0; i < 2; i++ {
		ids = append(ids, ctldSbatch(t, c, "-N1", "-o", filepath.Join(c.Dir, "restart-%j.out"),
			"--wrap", "sleep 6; echo done $SLURM_JOB_ID"))
	}
	// A pending one too: it must still be there and run afterwards.
	ids = append(ids, ctldSbatch(t, c, "-N2", "-o", filepath.Join(c.Dir, "restart-%j.out"), "--wrap", "echo done $SLURM_JOB_ID"))
	for _, id := range ids[:2] {
		ctldWaitJob(t, c, id, 30*time.Second, "RUNNING")
	}
	c.KillCtld()
	c.StartCtld(ours)
	for _, id := range ids[:2] {
		if st := ctldJobState(c, id); st != "RUNNING" {
			t.Errorf("job %d after restart: %s", id, st)
		}
	}
	for _, id := range ids {
		ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
		ctldWaitFile(t, c, filepath.Join(c.Dir, fmt.Sprintf("restart-%d.out", id)), fmt.Sprintf("done %d\n", id), 10*time.Second)
	}
	// A clean stop (which snapshots) and a default start keep the
	// finished jobs; a start with -c forgets every job.
	c.StopCtld()
	c.StartCtld(ours)
	for _, id := range ids {
		if st := ctldJobState(c, id); st != "COMPLETED" {
			t.Errorf("job %d after a clean restart: %q", id, st)
		}
	}
	if n := len(ctldSnapshots(t, c)); n != 1 {
		t.Errorf("%d snapshots in StateSaveLocation after a clean stop, want 1", n)
	}
	c.StopCtld()
	c.StartCtld(ours, "-c")
	if out, _, _ := c.Run("squeue", "-h"); out != "" {
		t.Errorf("squeue after -c: %q", out)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "state")); err != nil {
		t.Error(err)
	}
}

func ctldSnapshots(t *testing.T, c *ctldharness.Cluster) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(c.Dir, "state", "snapshot-*.snap"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestSlurmctldRestartKeepsDrain: a drained node and its reason survive a
// crash of our controller (default recovery, as slurmctld keeps DOWN and
// DRAIN states), and -c forgets them.
func TestSlurmctldRestartKeepsDrain(t *testing.T) {
	c, ours := ctldJobsStart(t, ctldharness.Options{Nodes: 2})
	if out, errOut, err := c.Run("scontrol", "update", "nodename=n2", "state=drain", "reason=disk swap"); err != nil {
		t.Fatalf("drain: %v %s%s", err, out, errOut)
	}
	saved := filepath.Join(c.Dir, "state", "node_state.json")
	if err := c.Poll(10*time.Second, func() bool {
		b, _ := os.ReadFile(saved)
		return strings.Contains(string(b), "disk swap")
	}); err != nil {
		t.Fatalf("node state not saved: %v", err)
	}
	c.KillCtld()
	c.StartCtld(ours)
	var last string
	if err := c.Poll(30*time.Second, func() bool {
		o, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%N %T %E")
		last = o
		return o == "n1 idle none\nn2 drained disk swap\n"
	}); err != nil {
		t.Errorf("after restart: %q", last)
	}
	c.StopCtld()
	c.StartCtld(ours, "-c")
	if err := c.Poll(30*time.Second, func() bool {
		o, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%N %T %E")
		last = o
		return o == "n1 idle none\nn2 idle none\n"
	}); err != nil {
		t.Errorf("after -c: %q", last)
	}
}
