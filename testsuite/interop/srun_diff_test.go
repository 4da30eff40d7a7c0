package interop

// goslurm's srun and salloc against the real 22.05 ones, on one private real
// cluster (real slurmctld and two real slurmd): for each invocation both
// commands run with the same input, and their stdout, stderr (job and step
// ids masked) and exit status must be the same. Lines are compared sorted,
// because tasks on different nodes write in no fixed order.

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/realslurm"
)

type srCase struct {
	name  string
	args  []string // argv[0] is srun or salloc, found in PATH
	stdin string
	mask  func(srResult) srResult // more masking, before crMask's
}

type srResult struct {
	stdout, stderr string
	code           int
}

func srBuild(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"srun", "salloc"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "github.com/goslurm/goslurm/commands/"+name)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, b)
		}
	}
	return dir
}

var (
	srIDs = regexp.MustCompile(`(job |Job |allocation |StepId=|STEP |JOB )[0-9]+`)
	// slurmstepd's "*** STEP 1.0 ON n1 CANCELLED AT <time> ***".
	srStamp = regexp.MustCompile(` AT [0-9T:-]+ \*\*\*`)
	// Timing-dependent lines: a job or step queued behind the last one's
	// clean-up, and salloc's racy note about an allocation it just
	// relinquished.
	srTiming = regexp.MustCompile(`queued and waiting for resources|has been allocated resources|has been revoked|step creation (temporarily|still) disabled|Step created for job`)
)

func srMask(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l == "" || srTiming.MatchString(l) {
			continue
		}
		l = srStamp.ReplaceAllString(l, " AT T ***")
		lines = append(lines, srIDs.ReplaceAllString(l, "${1}N"))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// srWaitIdle waits until no job is left and every node is idle, so each
// invocation starts from the same cluster state.
func srWaitIdle(t *testing.T, c *realslurm.Cluster) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		out, err := c.Command(context.Background(), "sinfo", "-h", "-o", "%t").Output()
		q, qerr := c.Command(context.Background(), "squeue", "-h").Output()
		if err == nil && qerr == nil && strings.TrimSpace(string(out)) == "idle" && len(bytes.TrimSpace(q)) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("cluster not idle after 60 s\n%s", c.Logs())
}

func srRun(t *testing.T, c *realslurm.Cluster, pathDir, dir string, cs srCase) srResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cs.args[0], cs.args[1:]...)
	cmd.Dir = dir
	home, _ := os.UserHomeDir()
	cmd.Env = []string{"SLURM_CONF=" + c.Conf, "PATH=" + pathDir + ":/usr/bin:/bin:/usr/sbin:/sbin",
		"HOME=" + home, "SHELL=/bin/sh", "LANG=C"}
	// exec looks argv[0] up in this process's PATH: resolve it ourselves.
	if p, err := lookIn(pathDir, cs.args[0]); err == nil {
		cmd.Path = p
	}
	cmd.Stdin = strings.NewReader(cs.stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", cs.name, err)
		}
		code = ee.ExitCode()
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: timed out\nstdout:\n%s\nstderr:\n%s", cs.name, out.String(), errb.String())
	}
	return srResult{stdout: srMask(out.String()), stderr: srMask(errb.String()), code: code}
}

func lookIn(dir, name string) (string, error) {
	for _, d := range []string{dir, "/usr/bin", "/bin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

func TestSrunSallocAgainstRealSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	c := realslurm.Start(t, realslurm.Options{Nodes: 2, CPUs: 2})
	ours := srBuild(t)
	realDir := t.TempDir() // nothing in it: srun and salloc come from /usr/bin
	work := t.TempDir()
	multi := filepath.Join(work, "multi.conf")
	if err := os.WriteFile(multi, []byte("0 echo zero %t\n1-2 echo rest %t %o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []srCase{
		{name: "hostname on two nodes", args: []string{"srun", "-N2", "hostname"}},
		{name: "label", args: []string{"srun", "-n4", "--label", "echo", "hi"}},
		{name: "false", args: []string{"srun", "false"}},
		{name: "exit code max", args: []string{"srun", "-n3", "-l", "sh", "-c", "exit $((SLURM_PROCID + 5))"}},
		{name: "killed by signal", args: []string{"srun", "-n2", "sh", "-c", "kill -9 $$"}},
		{name: "terminated", args: []string{"srun", "-N2", "sh", "-c", "kill -TERM $$"}},
		{name: "stdin to all tasks", args: []string{"srun", "-n2", "cat"}, stdin: "hello\nworld\n"},
		{name: "stdin to one task", args: []string{"srun", "-n2", "-l", "--input=1", "cat"}, stdin: "only one\n"},
		{name: "stderr", args: []string{"srun", "-N2", "sh", "-c", "echo out; echo err >&2"}},
		{name: "step environment", args: []string{"srun", "-N2", "-n3", "-l", "sh", "-c",
			"echo $SLURM_STEP_ID $SLURM_NNODES $SLURM_NTASKS $SLURM_STEP_TASKS_PER_NODE $SLURM_STEP_NODELIST $SLURMD_NODENAME $SLURM_LOCALID $SLURM_NODEID $SLURM_JOB_NAME $SLURM_JOB_CPUS_PER_NODE $SLURM_TASKS_PER_NODE"}},
		{name: "job name and partition", args: []string{"srun", "-J", "myname", "-p", "debug", "-t", "5", "sh", "-c", "echo $SLURM_JOB_NAME $SLURM_JOB_PARTITION"}},
		{name: "multi-prog", args: []string{"srun", "-n3", "-l", "--multi-prog", multi}},
		{name: "nodelist", args: []string{"srun", "-w", "n2", "sh", "-c", "echo $SLURMD_NODENAME"}},
		{name: "exclude", args: []string{"srun", "-x", "n1", "sh", "-c", "echo $SLURMD_NODENAME"}},
		{name: "unlabelled partial line", args: []string{"srun", "-l", "printf", "no newline"}},
		{name: "export NONE", args: []string{"sh", "-c", "FOO=bar srun --export=NONE /bin/sh -c 'echo ${FOO-unset} ${HOME-nohome}'"}},
		{name: "export list", args: []string{"sh", "-c", "FOO=bar srun --export=FOO,X=1 /bin/sh -c 'echo ${FOO-unset} ${X-unset} ${HOME-nohome}'"}},
		{name: "export ALL plus", args: []string{"sh", "-c", "FOO=bar srun --export=ALL,X=1 sh -c 'echo ${FOO-unset} ${X-unset}'"}},
		{name: "output per task", args: []string{"sh", "-c",
			"srun -n2 -o out-%t.txt sh -c 'echo o$SLURM_PROCID; echo e$SLURM_PROCID >&2' && cat out-0.txt out-1.txt && rm out-0.txt out-1.txt"}},
		{name: "output and error files", args: []string{"sh", "-c",
			"srun -N2 -o out.txt -e err.txt sh -c 'echo o; echo e >&2' && cat out.txt err.txt && rm out.txt err.txt"}},
		{name: "input none", args: []string{"srun", "-i", "none", "cat"}, stdin: "not read\n"},
		{name: "bad option", args: []string{"srun", "--bogus", "true"}},
		{name: "no such partition", args: []string{"srun", "-p", "nope", "true"}},
		{name: "salloc runs a command", args: []string{"salloc", "-N1", "sh", "-c",
			"echo $SLURM_NNODES $SLURM_JOB_NODELIST $SLURM_TASKS_PER_NODE $SLURM_JOB_NAME $SLURM_JOB_CPUS_PER_NODE; exit 3"}},
		{name: "salloc -n", args: []string{"salloc", "-n3", "sh", "-c", "echo $SLURM_NTASKS $SLURM_TASKS_PER_NODE $SLURM_NNODES"}},
		{name: "step inside salloc", args: []string{"salloc", "-N2", "srun", "-l", "hostname"}},
		{name: "two steps inside salloc", args: []string{"salloc", "-N2", "sh", "-c",
			"srun -N1 sh -c 'echo $SLURM_STEP_ID'; srun sh -c 'echo $SLURM_STEP_ID $SLURM_NNODES'; srun false"}},
	}
	failed := 0
	for _, cs := range cases {
		srWaitIdle(t, c)
		rr := srRun(t, c, realDir, work, cs)
		srWaitIdle(t, c)
		or := srRun(t, c, ours, work, cs)
		if rr != or {
			failed++
			t.Errorf("%s (%q):\nreal: exit %d\nstdout:\n%s\nstderr:\n%s\nours: exit %d\nstdout:\n%s\nstderr:\n%s",
				cs.name, cs.args, rr.code, rr.stdout, rr.stderr, or.code, or.stdout, or.stderr)
		}
	}
	t.Logf("%d/%d srun/salloc invocations identical to real Slurm 22.05", len(cases)-failed, len(cases))
}

// srInterrupt runs a one-task step that prints "ready" and sleeps, then
// plays a user at the terminal: one Ctrl-C (srun prints the task states),
// then two within a second (srun kills the step).
func srInterrupt(t *testing.T, c *realslurm.Cluster, pathDir, dir string) srResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	p, err := lookIn(pathDir, "srun")
	if err != nil {
		t.Fatal(err)
	}
	// The pause before "ready" lets the launch report reach srun first, so
	// the status shows the task running rather than not yet reported; the
	// task ignores SIGINT, so it is the abort that ends it (otherwise the
	// forwarded Ctrl-C and the abort race, in real srun too).
	cmd := exec.CommandContext(ctx, p, "-l", "sh", "-c", "trap '' INT; sleep 1; echo ready; exec sleep 60")
	cmd.Dir = dir
	cmd.Env = []string{"SLURM_CONF=" + c.Conf, "PATH=/usr/bin:/bin", "LANG=C"}
	var errb syncBuffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	buf := make([]byte, 64)
	for !strings.Contains(stdout.String(), "ready\n") {
		n, err := out.Read(buf)
		stdout.Write(buf[:n])
		if err != nil {
			t.Fatalf("srun ended before its task was ready: %v\n%s", err, errb.String())
		}
	}
	// One Ctrl-C: srun prints the task states.
	cmd.Process.Signal(os.Interrupt)
	for !strings.Contains(errb.String(), "task 0: ") && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	// A second one soon after aborts the step. Should the machine be so
	// slow that srun took it for a first one again, press again.
	for sent := 1; ctx.Err() == nil; {
		cmd.Process.Signal(os.Interrupt)
		sent++
		for ctx.Err() == nil {
			e := errb.String()
			if strings.Contains(e, "forcing job termination") {
				break
			}
			if strings.Count(e, "interrupt (one more") == sent {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if strings.Contains(errb.String(), "forcing job termination") {
			break
		}
	}
	rest, _ := io.ReadAll(out)
	stdout.Write(rest)
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if ctx.Err() != nil {
		t.Fatalf("srun did not end after Ctrl-C twice\n%s", errb.String())
	}
	return srResult{stdout: srMask(stdout.String()), stderr: srMask(errb.String()), code: code}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestSrunCtrlCAgainstRealSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	c := realslurm.Start(t, realslurm.Options{Nodes: 1, CPUs: 2})
	ours := srBuild(t)
	work := t.TempDir()
	srWaitIdle(t, c)
	rr := srInterrupt(t, c, "/usr/bin", work)
	srWaitIdle(t, c)
	or := srInterrupt(t, c, ours, work)
	t.Logf("real srun after Ctrl-C: exit %d\n%s", rr.code, rr.stderr)
	if rr != or {
		t.Errorf("Ctrl-C:\nreal: exit %d\nstdout:\n%s\nstderr:\n%s\nours: exit %d\nstdout:\n%s\nstderr:\n%s",
			rr.code, rr.stdout, rr.stderr, or.code, or.stdout, or.stderr)
	}
}
