package interop

// srun -K (kill-on-bad-exit) against our slurmctld with real slurmd: when
// a task fails, srun asks the controller to signal the step with
// SIG_TERM_KILL (991), which slurmctld passes on to the step's slurmd as
// REQUEST_SIGNAL_TASKS and slurmstepd turns into SIGCONT, SIGTERM and,
// after KillWait, SIGKILL. Each case runs with our srun under real
// slurmctld and slurmd, under our slurmctld with real slurmd, and under
// our slurmctld and slurmd; what srun prints and its exit status must be
// the same, and the surviving tasks must never reach their "survived".

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

func TestSrunKillOnBadExitOurCtld(t *testing.T) {
	realCtld := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	srunDir := srBuild(t)
	slurmd := buildSlurmd(t)
	// The failing task waits 2 s first: a task that fails at once may
	// end before the other tasks are launched on a loaded machine, and the
	// kill then finds nothing to kill there (real Slurm too: a .ci/run saw
	// a task survive under both controllers).
	cases := []srCase{
		{name: "task exits 3", args: []string{"srun", "-K", "-n2", "-l", "sh", "-c", "[ $SLURM_PROCID = 0 ] && { sleep 2; exit 3; }; sleep 20; echo survived"}},
		{name: "task killed", args: []string{"srun", "-K", "-n2", "-l", "sh", "-c", "[ $SLURM_PROCID = 1 ] && { sleep 2; kill -9 $$; }; sleep 20; echo survived"}},
		{name: "two nodes", args: []string{"srun", "-K", "-N2", "-n2", "-l", "sh", "-c", "[ $SLURM_PROCID = 1 ] && { sleep 2; exit 2; }; sleep 20; echo survived"}},
		{name: "all succeed", args: []string{"srun", "-K", "-n2", "-l", "sh", "-c", "echo ok"}},
	}
	// The reference is real slurmctld with real slurmd; then ours with
	// real slurmd, and ours with our slurmd (which must handle 991 too).
	setups := []struct {
		name, ctld string
		args       []string
		ourSlurmd  string
	}{
		{"real slurmctld", realCtld, []string{"-c", "-i"}, ""},
		{"our slurmctld", ours, []string{"-c"}, ""},
		{"our slurmctld and slurmd", ours, []string{"-c"}, slurmd},
	}
	var ref []srResult
	for _, su := range setups {
		// KillWait well above how long the cases take: the tasks must go
		// on SIGTERM, not on the SIGKILL that follows. proctrack/pgid
		// signals a task's shell and its sleep at once; linuxproc walks
		// /proc and once missed a task's shell on a loaded .ci/run (its
		// sleep got SIGTERM, the shell went on to "survived").
		c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2,
			ExtraConf: []string{"KillWait=30", "ProctrackType=proctrack/pgid"}, OurSlurmd: su.ourSlurmd})
		c.Start(su.ctld, su.args...)
		for i, cs := range cases {
			r := kbeRun(t, c, srunDir, cs)
			t.Logf("%s, %s: exit %d\nstdout:\n%s\nstderr:\n%s", su.name, cs.name, r.code, r.stdout, r.stderr)
			if strings.Contains(r.stdout, "survived") {
				t.Errorf("%s, %s: a task outlived the kill:\n%s", su.name, cs.name, r.stdout)
			}
			kbeSettle(t, c)
			r = crMask(r)
			if ref == nil || len(ref) <= i {
				ref = append(ref, r)
				continue
			}
			if r != ref[i] {
				t.Errorf("%s (%q):\nreal: exit %d\nstdout:\n%s\nstderr:\n%s\n%s: exit %d\nstdout:\n%s\nstderr:\n%s",
					cs.name, cs.args, ref[i].code, ref[i].stdout, ref[i].stderr, su.name, r.code, r.stdout, r.stderr)
			}
		}
		c.Stop()
	}
}

// kbeRun runs our srun with the cluster's configuration, bounded by 90 s
// (a kill that never comes would leave the tasks sleeping 20 s).
func kbeRun(t *testing.T, c *ctldharness.Cluster, srunDir string, cs srCase) srResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, srunDir+"/srun", cs.args[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(c.Env(), "LANG=C", "SHELL=/bin/sh")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: %v", cs.name, err)
		}
		code = ee.ExitCode()
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: srun did not end within 90 s\nstdout:\n%s\nstderr:\n%s", cs.name, out.String(), errb.String())
	}
	return srResult{stdout: srMask(out.String()), stderr: srMask(errb.String()), code: code}
}

// kbeSettle waits until the controller has no job left, so the next case
// finds both nodes idle.
func kbeSettle(t *testing.T, c *ctldharness.Cluster) {
	t.Helper()
	if err := c.Poll(60*time.Second, func() bool {
		out, _, err := c.Run("squeue", "-h", "-t", "all", "-o", "%T")
		if err != nil {
			return false
		}
		for _, l := range strings.Fields(out) {
			if l == "RUNNING" || l == "COMPLETING" || l == "PENDING" {
				return false
			}
		}
		out, _, err = c.Run("sinfo", "-h", "-o", "%t")
		return err == nil && strings.TrimSpace(out) == "idle"
	}); err != nil {
		t.Fatalf("jobs did not settle: %v\n%s", err, c.Logs())
	}
}
