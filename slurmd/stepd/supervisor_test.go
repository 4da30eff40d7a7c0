package stepd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// TestBatchRunsAsUser runs a batch script for nobody from a root
// supervisor: the script's ids, groups, working directory and environment
// are the job's, its output file is the user's, the batch script file is
// gone afterwards and slurmctld hears exit code 0.
func TestBatchRunsAsUser(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	req := r.launch(t, "#!/bin/sh\nid -u\nid -g\nid -G\npwd\necho \"job=$SLURM_JOB_ID user=$SLURM_JOB_USER env=$ENVIRONMENT\"\n", nil)
	r.start(t, req)
	got := r.ctld.wait(t)
	if got.JobID != req.JobID || got.JobRC != 0 || got.SlurmRC != 0 || got.UserID != r.uid || got.NodeName.Value != "n1" {
		t.Errorf("completion = %+v, want job %d rc 0 uid %d node n1", got, req.JobID, r.uid)
	}
	want := strings.Join([]string{u32(r.uid), u32(r.gid), u32(r.gid), r.work,
		"job=" + u32(req.JobID) + " user=nobody env=BATCH"}, "\n") + "\n"
	if out := r.output(t, req.JobID); out != want {
		t.Errorf("script output:\n%s\nwant:\n%s", out, want)
	}
	fi, err := os.Stat(filepath.Join(r.work, "slurm-"+u32(req.JobID)+".out"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != r.uid {
		t.Errorf("output file owned by uid %d, want %d (opened as the user)", st.Uid, r.uid)
	}
	if _, err := os.Stat(filepath.Join(r.spool, "job0"+u32(req.JobID))); !os.IsNotExist(err) {
		t.Errorf("batch dir left behind: %v", err)
	}
}

func TestBatchExitStatusIsRawWaitStatus(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	tests := []struct {
		script string
		want   uint32
	}{
		{"#!/bin/sh\nexit 3\n", 3 << 8},
		{"#!/bin/sh\nkill -USR1 $$\n", uint32(syscall.SIGUSR1)},
	}
	for _, tc := range tests {
		req := r.launch(t, tc.script, nil)
		r.start(t, req)
		if got := r.ctld.wait(t); got.JobRC != tc.want {
			t.Errorf("%q: job_rc = %d, want %d", tc.script, got.JobRC, tc.want)
		}
	}
}

// TestOutputOpenModesAndPatterns checks --open-mode and % expansion on the
// node: append keeps what was there, truncate does not; stderr goes to its
// own file when given.
func TestOutputOpenModesAndPatterns(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	for _, mode := range []uint8{1, 2} {
		name := filepath.Join(r.work, "o-"+u32(uint32(mode))+"-%u-%x.txt")
		path := filepath.Join(r.work, "o-"+u32(uint32(mode))+"-nobody-cap-batch.txt")
		if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chown(path, int(r.uid), int(r.gid))
		req := r.launch(t, "#!/bin/sh\necho new\necho err >&2\n", func(m *msg.BatchJobLaunch) {
			m.OpenMode = mode
			m.StdOut = msg.Str(name)
			m.StdErr = msg.Str(filepath.Join(r.work, "e-%j.txt"))
		})
		r.start(t, req)
		r.ctld.wait(t)
		b, _ := os.ReadFile(path)
		want := "new\n"
		if mode == 1 {
			want = "old\nnew\n"
		}
		if string(b) != want {
			t.Errorf("open mode %d: stdout %q, want %q", mode, b, want)
		}
		if e, _ := os.ReadFile(filepath.Join(r.work, "e-"+u32(req.JobID)+".txt")); string(e) != "err\n" {
			t.Errorf("stderr file %q, want %q", e, "err\n")
		}
	}
}

// TestOutputRefusesSymlink: an output path that is a symlink (here to a
// root-only file) is not followed; the job fails with exit code 1 and the
// target is untouched.
func TestOutputRefusesSymlink(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	target := filepath.Join(r.dir, "root-only")
	if err := os.WriteFile(target, []byte("secret\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(r.work, "evil.out")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	req := r.launch(t, "#!/bin/sh\necho pwned\n", func(m *msg.BatchJobLaunch) { m.StdOut = msg.Str(link) })
	r.start(t, req)
	got := r.ctld.wait(t)
	if got.JobRC != 1<<8 || got.SlurmRC != 0 {
		t.Errorf("completion = job_rc %d slurm_rc %d, want 256 and 0", got.JobRC, got.SlurmRC)
	}
	if b, _ := os.ReadFile(target); string(b) != "secret\n" {
		t.Errorf("symlink target changed to %q", b)
	}
}

// TestOutputNotWritableByUser: a path only root may write is refused
// because the file is opened as the user.
func TestOutputNotWritableByUser(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	req := r.launch(t, "#!/bin/sh\necho x\n", func(m *msg.BatchJobLaunch) {
		m.StdOut = msg.Str(filepath.Join(r.spool, "out-%j")) // spool: root's, 0755
	})
	r.start(t, req)
	if got := r.ctld.wait(t); got.JobRC != 1<<8 {
		t.Errorf("job_rc = %d, want 256", got.JobRC)
	}
	if _, err := os.Stat(filepath.Join(r.spool, "out-"+u32(req.JobID))); !os.IsNotExist(err) {
		t.Errorf("root-owned dir got the user's output file: %v", err)
	}
}

// TestPrologEpilogCleanEnv: Prolog and Epilog run as root, before and after
// the script, and see none of the job's environment.
func TestPrologEpilogCleanEnv(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	logf := filepath.Join(r.dir, "pe.log")
	script := "#!/bin/sh\n{ echo \"$SLURM_SCRIPT_CONTEXT uid=$(id -u) job=$SLURM_JOB_ID\"; env; } >> " + logf + "\n"
	pe := filepath.Join(r.dir, "pe.sh")
	if err := os.WriteFile(pe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.mgr.Config.Prolog, r.mgr.Config.Epilog = pe, pe
	r.mgr.Config.RunProlog, r.mgr.Config.RunEpilog = true, true
	req := r.launch(t, "#!/bin/sh\necho \"script secret=$GOSLURM_SECRET\" >> "+logf+"\n", func(m *msg.BatchJobLaunch) {
		m.Environment = append(m.Environment, msg.Str("GOSLURM_SECRET=hunter2"), msg.Str("LD_PRELOAD=/tmp/evil.so"))
	})
	os.WriteFile(logf, nil, 0o666)
	os.Chmod(logf, 0o666)
	r.start(t, req)
	if got := r.ctld.wait(t); got.JobRC != 0 || got.SlurmRC != 0 {
		t.Fatalf("completion %+v", got)
	}
	b, _ := os.ReadFile(logf)
	log := string(b)
	var order []string
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 && (f[0] == "prolog_slurmd" || f[0] == "epilog_slurmd" || f[0] == "script") {
			order = append(order, sc.Text())
		}
	}
	job := u32(req.JobID)
	want := []string{"prolog_slurmd uid=0 job=" + job, "script secret=hunter2", "epilog_slurmd uid=0 job=" + job}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("order = %q, want %q", order, want)
	}
	if strings.Count(log, "hunter2") != 1 || strings.Contains(log, "LD_PRELOAD") {
		t.Errorf("the job's environment reached prolog or epilog:\n%s", log)
	}
}

// TestSignalAndTerminateThroughSocket drives running steps through their
// spool sockets: a signal reaches the whole process group, a terminate
// kills, and the wait status says which.
func TestSignalAndTerminateThroughSocket(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	req := r.launch(t, "#!/bin/sh\nsleep 300 &\nwait\n", nil)
	r.start(t, req)
	ref := r.waitState(t, req.JobID, StateRunning)
	if ref.StepID != StepIDBatch || ref.UID != r.uid || ref.PID <= 0 {
		t.Errorf("running step = %+v", ref)
	}
	// Nothing but the program name in the supervisor's argv: the launch
	// request and node config came over a pipe.
	if cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ref.PID)); err != nil || string(cl) != stepdBin+"\x00" {
		t.Errorf("supervisor argv %q (%v)", cl, err)
	}
	if err := r.mgr.Signal(context.Background(), req.JobID, NoVal, int(syscall.SIGUSR2), 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := r.ctld.wait(t); got.JobRC != uint32(syscall.SIGUSR2) {
		t.Errorf("job_rc after SIGUSR2 = %d, want %d", got.JobRC, syscall.SIGUSR2)
	}

	req = r.launch(t, "#!/bin/sh\ntrap '' TERM\necho ready\nsleep 300\n", nil)
	r.start(t, req)
	r.waitOutput(t, req.JobID, "ready")
	if err := r.mgr.Kill(req.JobID); err != nil {
		t.Fatal(err)
	}
	if got := r.ctld.wait(t); got.JobRC != uint32(syscall.SIGKILL) {
		t.Errorf("job_rc after terminate = %d, want %d", got.JobRC, syscall.SIGKILL)
	}
	if err := r.mgr.Signal(context.Background(), req.JobID, NoVal, int(syscall.SIGTERM), 0, 0); err == nil {
		t.Error("signal to a finished job succeeded")
	}
}

// TestTimeLimit: the time-limit notice lands in the job's stderr, then
// SIGTERM; a script that ignores SIGTERM is SIGKILLed after KillWait.
func TestTimeLimit(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	req := r.launch(t, "#!/bin/sh\ntrap 'echo got-term; exit 7' TERM\necho ready\nsleep 300 &\nwait\n", nil)
	r.start(t, req)
	r.waitOutput(t, req.JobID, "ready")
	if err := r.mgr.TimeLimit(req.JobID); err != nil {
		t.Fatal(err)
	}
	if got := r.ctld.wait(t); got.JobRC != 7<<8 {
		t.Errorf("job_rc = %d, want %d", got.JobRC, 7<<8)
	}
	out := r.output(t, req.JobID)
	if !strings.Contains(out, "slurmstepd: error: *** JOB "+u32(req.JobID)+" ON n1 CANCELLED AT ") ||
		!strings.Contains(out, " DUE TO TIME LIMIT ***") || !strings.Contains(out, "got-term") {
		t.Errorf("output:\n%s", out)
	}

	req = r.launch(t, "#!/bin/sh\ntrap '' TERM\necho ready\nwhile :; do sleep 1; done\n", nil)
	r.start(t, req)
	r.waitOutput(t, req.JobID, "ready")
	if err := r.mgr.TimeLimit(req.JobID); err != nil {
		t.Fatal(err)
	}
	if got := r.ctld.wait(t); got.JobRC != uint32(syscall.SIGKILL) {
		t.Errorf("job_rc = %d, want SIGKILL", got.JobRC)
	}
}

// TestLaunchChecks: only root/SlurmUser may launch, and one batch step per
// job.
func TestLaunchChecks(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	req := r.launch(t, "#!/bin/sh\nsleep 300\n", nil)
	ctx := context.Background()
	if err := r.mgr.LaunchBatch(ctx, req, auth.Identity{UID: 4242}); !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURM_USER_ID_MISSING}) {
		t.Errorf("launch from an ordinary uid: %v", err)
	}
	r.start(t, req)
	if err := r.mgr.LaunchBatch(ctx, req, auth.Identity{UID: 0}); !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURM_DUPLICATE_JOB_ID}) {
		t.Errorf("second launch of the same job: %v", err)
	}
	r.mgr.Kill(req.JobID)
	r.ctld.wait(t)
}

// --- re-adoption ------------------------------------------------------------

const launcherEnv = "GOSLURM_STEPD_TEST_LAUNCHER"

// launcherMain plays a slurmd that launches one batch step and then hangs
// until it is killed. Its init message (config + request) comes on stdin in
// the supervisor's own format.
func launcherMain() int {
	cfg, _, body, err := readInit(os.Stdin)
	if err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		return 1
	}
	req := body.(msg.BatchJobLaunch)
	m := &Manager{Config: *cfg, StepdPath: os.Getenv(launcherEnv)}
	if err := m.LaunchBatch(context.Background(), &req, auth.Identity{}); err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString("launched\n")
	select {}
}

// TestReadoptionAfterSlurmdDies: the process that launched a step is
// SIGKILLed (with its whole process group); the step keeps running, a fresh
// Manager finds it through the spool socket, signals it, and the completion
// still reaches slurmctld.
func TestReadoptionAfterSlurmdDies(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	req := r.launch(t, "#!/bin/sh\ntrap 'echo adopted-term; exit 5' TERM\necho ready\nsleep 300 &\nwait\n", nil)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), launcherEnv+"="+stepdBin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := writeInit(stdin, &r.mgr.Config, msgtype.REQUEST_BATCH_JOB_LAUNCH, req); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "launched\n" {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		t.Fatalf("launcher: %q", line)
	}
	r.waitOutput(t, req.JobID, "ready")
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // slurmd and its process group die
	cmd.Wait()

	fresh := &Manager{Config: r.mgr.Config, StepdPath: stepdBin}
	var found bool
	for _, s := range fresh.Running() {
		found = found || (s.JobID == req.JobID && s.StepID == StepIDBatch && s.State == StateRunning)
	}
	if !found {
		t.Fatalf("restarted slurmd does not see job %d: %+v", req.JobID, fresh.Running())
	}
	if err := fresh.Signal(context.Background(), req.JobID, StepIDBatch, int(syscall.SIGTERM), 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := r.ctld.wait(t); got.JobID != req.JobID || got.JobRC != 5<<8 {
		t.Errorf("completion = %+v, want job %d rc %d", got, req.JobID, 5<<8)
	}
	if !strings.Contains(r.output(t, req.JobID), "adopted-term") {
		t.Errorf("output: %q", r.output(t, req.JobID))
	}
}

// TestTerminateIsGraceful: Terminate (slurmd's kill path) lets the job
// handle SIGTERM, and returns only when the job's processes are gone.
func TestTerminateIsGraceful(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	req := r.launch(t, "#!/bin/sh\ntrap 'echo bye; exit 3' TERM\necho ready\nsleep 300 &\nwait\n", nil)
	r.start(t, req)
	r.waitOutput(t, req.JobID, "ready")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.mgr.Terminate(ctx, req.JobID); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.mgr.Running() {
		if s.JobID == req.JobID && s.State < StateEnding {
			t.Errorf("job still running after Terminate: %+v", s)
		}
	}
	if got := r.ctld.wait(t); got.JobRC != 3<<8 {
		t.Errorf("job_rc = %d, want %d", got.JobRC, 3<<8)
	}
	if out := r.output(t, req.JobID); !strings.Contains(out, "CANCELLED AT") || !strings.Contains(out, "bye") {
		t.Errorf("output %q", out)
	}
	if err := r.mgr.Terminate(ctx, 999999); err != nil {
		t.Errorf("Terminate of a job with no steps: %v", err)
	}
}
