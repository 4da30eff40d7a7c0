package daemon

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// logScript writes a script appending "$SLURM_JOB_ID" to a log file, and
// returns the script and the log.
func logScript(t *testing.T, name, tail string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, name+".log")
	script := filepath.Join(dir, name)
	body := "#!/bin/sh\necho \"$SLURM_JOB_ID\" >> " + log + "\n" + tail
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, log
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// TestPrologEpilogOncePerJob: the daemon runs the Prolog on the first
// launch of a job on this node, whatever launches follow (batch, tasks,
// REQUEST_LAUNCH_PROLOG), and the Epilog once however many
// REQUEST_TERMINATE_JOB arrive.
func TestPrologEpilogOncePerJob(t *testing.T) {
	prolog, plog := logScript(t, "prolog", "")
	epilog, elog := logScript(t, "epilog", "")
	steps := &fakeSteps{}
	r := newRig(t, rigOpts{steps: steps, extra: "Prolog=" + prolog + "\nEpilog=" + epilog})

	// Batch launch: replied at once, Prolog, then the launch.
	if rc := r.rc(500, msgtype.REQUEST_BATCH_JOB_LAUNCH, batchReq(t, 90, r.now)); rc != 0 {
		t.Fatalf("batch: rc %d", rc)
	}
	waitUntil(t, func() bool { _, s := r.d.jobSteps(90); return len(s) == 1 })
	// Steps of the same job, then a second job launched by srun twice.
	for _, q := range []msg.LaunchTasksRequest{
		launchReq(cred(t, 90, 0, "n1", r.now, nil), 1000, "n1"),
		launchReq(cred(t, 90, 1, "n1", r.now, nil), 1000, "n1"),
		launchReq(cred(t, 91, 0, "n1", r.now, nil), 1000, "n1"),
		launchReq(cred(t, 91, 1, "n1", r.now, nil), 1000, "n1"),
	} {
		if rc := r.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, q); rc != 0 {
			t.Errorf("launch %v: rc %d", q.StepID, rc)
		}
	}
	// A late REQUEST_LAUNCH_PROLOG for a job whose Prolog already ran.
	pl := msg.PrologLaunch{JobID: 90, HetJobID: NoVal, UID: 1000, GID: 1000, Nodes: msg.Str("n1"), Cred: batchReq(t, 90, r.now).Cred}
	if rc := r.rc(500, msgtype.REQUEST_LAUNCH_PROLOG, pl); rc != 0 {
		t.Errorf("launch prolog: rc %d", rc)
	}
	r.ctld.waitFor(t, msgtype.REQUEST_COMPLETE_PROLOG)
	if got := readLines(t, plog); !slices.Equal(got, []string{"90", "91"}) {
		t.Errorf("Prolog runs %v, want once for 90 and once for 91", got)
	}
	for i := 0; i < 2; i++ {
		r.rc(500, msgtype.REQUEST_TERMINATE_JOB, killReq(90, r.now))
		r.ctld.waitFor(t, msgtype.MESSAGE_EPILOG_COMPLETE)
		// A termination under way only acknowledges a repeat.
		waitUntil(t, func() bool { r.d.mu.Lock(); defer r.d.mu.Unlock(); return !r.d.terminating[90] })
	}
	if got := readLines(t, elog); !slices.Equal(got, []string{"90"}) {
		t.Errorf("Epilog runs %v, want once for 90", got)
	}
}

// TestPrologFailureRefusesLaunch: a failing Prolog is ESLURMD_PROLOG_FAILED
// for srun and a requeue request for a batch job, and nothing is started.
func TestPrologFailureRefusesLaunch(t *testing.T) {
	prolog, _ := logScript(t, "prolog", "exit 1\n")
	steps := &fakeSteps{}
	r := newRig(t, rigOpts{steps: steps, extra: "Prolog=" + prolog})
	q := launchReq(cred(t, 95, 0, "n1", r.now, nil), 1000, "n1")
	if rc := r.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, q); rc != slurmerr.ESLURMD_PROLOG_FAILED {
		t.Errorf("tasks: rc %d, want ESLURMD_PROLOG_FAILED", rc)
	}
	if rc := r.rc(500, msgtype.REQUEST_BATCH_JOB_LAUNCH, batchReq(t, 96, r.now)); rc != 0 {
		t.Errorf("batch: rc %d (replied before the Prolog)", rc)
	}
	r.ctld.waitFor(t, msgtype.REQUEST_JOB_REQUEUE)
	steps.mu.Lock()
	defer steps.mu.Unlock()
	if len(steps.launched) != 0 {
		t.Errorf("launched %v after a failed Prolog", steps.launched)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
