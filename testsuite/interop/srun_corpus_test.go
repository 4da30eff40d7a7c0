package interop

// A larger corpus of srun (and, in salloc_corpus_test.go, salloc)
// invocations as job scripts use them, each run with real 22.05 srun and
// with ours against the same private real cluster (real slurmctld, two
// real slurmd with 2 CPUs each): stdout, stderr and the exit status must be
// the same once job ids, times and ports are masked. One cluster serves the
// whole corpus so the run stays within a few minutes.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/testsuite/realslurm"
)

var crMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	// srun --test-only: "Job N to start at 2026-11-21T13:30:01 using ...".
	{regexp.MustCompile(`to start at [0-9T:-]+`), "to start at T"},
	// srun --wait: "First task exited 2s ago".
	{regexp.MustCompile(`exited [0-9]+s ago`), "exited Ns ago"},
	// Step ids inside a job ("StepId=N.0" is already masked to N.0).
	{regexp.MustCompile(`(jobid |JobId=|job_id=|SLURM_JOB_ID=|SLURM_JOBID=)[0-9]+`), "${1}N"},
	{regexp.MustCompile(`(SLURM_TASK_PID|SLURM_SRUN_COMM_PORT|SLURM_STEP_LAUNCHER_PORT|SLURM_STEP_RESV_PORTS|SLURM_JOB_START_TIME|SLURM_JOB_END_TIME)=[0-9-]+`), "${1}=X"},
}

func crMask(r srResult) srResult {
	f := func(s string) string {
		for _, m := range crMasks {
			s = m.re.ReplaceAllString(s, m.with)
		}
		lines := strings.Split(s, "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	return srResult{stdout: f(r.stdout), stderr: f(r.stderr), code: r.code}
}

// crCompare runs each case with the real commands and with ours and
// reports every difference; it returns how many cases differed.
func crCompare(t *testing.T, c *realslurm.Cluster, ours, work string, cases []srCase) int {
	t.Helper()
	realDir := t.TempDir() // empty: srun and salloc come from /usr/bin
	failed := 0
	pair := func(cs srCase) (rr, or srResult) {
		crSettle(t, c)
		rr = crMask(crRun(t, c, realDir, work, cs))
		if crSettle(t, c) != "" {
			rr.stderr += "\nLEFT A JOB BEHIND"
		}
		or = crMask(crRun(t, c, ours, work, cs))
		if crSettle(t, c) != "" {
			or.stderr += "\nLEFT A JOB BEHIND"
		}
		return rr, or
	}
	for _, cs := range cases {
		rr, or := pair(cs)
		if rr != or {
			// Cases that kill tasks race with the machine's load (a
			// loaded CI run once saw real's proctrack/linuxproc miss a
			// task's shell, which then printed "late"): a difference
			// counts when it comes back.
			t.Logf("%s differs, run again: real exit %d, ours exit %d", cs.name, rr.code, or.code)
			rr, or = pair(cs)
		}
		if rr != or {
			failed++
			t.Errorf("%s (%q):\nreal: exit %d\nstdout:\n%s\nstderr:\n%s\nours: exit %d\nstdout:\n%s\nstderr:\n%s",
				cs.name, cs.args, rr.code, rr.stdout, rr.stderr, or.code, or.stdout, or.stderr)
		}
	}
	return failed
}

// crRun is srRun with a shorter bound that does not end the corpus: a
// command still running after 45 s is killed with everything it started
// and its jobs cancelled, and the result says so.
func crRun(t *testing.T, c *realslurm.Cluster, pathDir, dir string, cs srCase) srResult {
	t.Helper()
	return crRunConf(t, c.Conf, func() { c.Command(context.Background(), "scancel", "-u", "root").Run() }, pathDir, dir, cs)
}

// crRunConf is crRun for the cluster of slurm.conf conf; cancel ends
// every job after a timeout.
func crRunConf(t *testing.T, conf string, cancel func(), pathDir, dir string, cs srCase) srResult {
	t.Helper()
	cmd := exec.Command(cs.args[0], cs.args[1:]...)
	cmd.Dir = dir
	home, _ := os.UserHomeDir()
	cmd.Env = []string{"SLURM_CONF=" + conf, "PATH=" + pathDir + ":/usr/bin:/bin:/usr/sbin:/sbin",
		"HOME=" + home, "SHELL=/bin/sh", "LANG=C"}
	if p, err := lookIn(pathDir, cs.args[0]); err == nil {
		cmd.Path = p
	}
	// A session of its own: salloc puts its command in another process
	// group, so only the session finds everything on a timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin = strings.NewReader(cs.stdin)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", cs.name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	timedOut := false
	select {
	case err = <-done:
	case <-time.After(45 * time.Second):
		timedOut = true
		crKillSession(cmd.Process.Pid)
		err = <-done
		cancel()
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: %v", cs.name, err)
		}
		code = ee.ExitCode()
	}
	r := srResult{stdout: srMask(out.String()), stderr: srMask(errb.String()), code: code}
	if timedOut {
		r.stderr += "\nTIMED OUT"
	}
	if cs.mask != nil {
		r = cs.mask(r)
	}
	return r
}

// crKillSession kills every process of the session sid (one this test
// started with Setsid), found through /proc.
func crKillSession(sid int) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: state ppid
		// pgrp session ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 3 && f[3] == strconv.Itoa(sid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// crSettle waits until the cluster is idle; a job still there after 60 s
// is cancelled (and named in the result) so one bad case does not end the
// corpus.
func crSettle(t *testing.T, c *realslurm.Cluster) string {
	t.Helper()
	for try := 0; try < 2; try++ {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			out, err := c.Command(context.Background(), "sinfo", "-h", "-o", "%t").Output()
			q, qerr := c.Command(context.Background(), "squeue", "-h").Output()
			if err == nil && qerr == nil && strings.TrimSpace(string(out)) == "idle" && len(bytes.TrimSpace(q)) == 0 {
				if try == 0 {
					return ""
				}
				return "cancelled"
			}
			time.Sleep(200 * time.Millisecond)
		}
		c.Command(context.Background(), "scancel", "-u", "root").Run()
	}
	t.Fatalf("cluster not idle after 120 s\n%s", c.Logs())
	return ""
}

func crWrite(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// srunCorpus is the srun part of the corpus; work is the directory the
// commands run in.
func srunCorpus(t *testing.T, work string) []srCase {
	multi := crWrite(t, work, "multi.conf", "# comment\n0,2 echo even %t %o\n1 sh -c 'echo odd $SLURM_PROCID'\n*  echo any %t\n")
	multiStar := crWrite(t, work, "star.conf", "* echo star %t\n")
	multiShort := crWrite(t, work, "short.conf", "0 echo only zero\n")
	crWrite(t, work, "in.txt", "from file\n")
	crWrite(t, work, "in-0.txt", "input zero\n")
	crWrite(t, work, "in-1.txt", "input one\n")
	crWrite(t, work, "batch-env.sh", `#!/bin/sh
srun -l sh -c 'echo $SLURM_STEP_ID $SLURM_STEP_NUM_NODES $SLURM_STEP_NUM_TASKS $SLURM_STEP_NODELIST $SLURM_STEP_TASKS_PER_NODE $SLURM_NTASKS $SLURM_NNODES $SLURM_JOB_NUM_NODES $SLURM_CPUS_ON_NODE $SLURM_TASKS_PER_NODE $SLURM_NODEID $SLURM_LOCALID $SLURM_JOB_NAME'
srun -N1 -n1 sh -c 'echo second $SLURM_STEP_ID $SLURM_NTASKS $SLURM_STEP_NODELIST'
srun -N3 true; echo rc=$?
srun -n5 true; echo rc=$?
srun -n1 sh -c 'exit 6'; echo rc=$?
`)
	// Runs a batch job that uses our srun (PATH carries it to the job),
	// then shows its output.
	batch := func(opts, script string) []string {
		return []string{"sh", "-c", "rm -f slurm-b.out; sbatch -Q --wait -o slurm-b.out " + opts + " " + script +
			"; echo sbatch=$?; cat slurm-b.out; rm -f slurm-b.out"}
	}
	// Lists files a pattern made with the job id cut out, then removes them.
	show := `; for f in o-*; do printf '%s: ' "$(echo $f | sed 's/-[0-9][0-9]*-/-J-/')"; cat $f; done; rm -f o-*`
	return []srCase{
		// Task and node counts.
		{name: "n4 label", args: []string{"srun", "-n4", "-l", "sh", "-c", "echo $SLURM_NODEID $SLURM_LOCALID $SLURMD_NODENAME"}},
		{name: "N2 n4", args: []string{"srun", "-N2", "-n4", "-l", "sh", "-c", "echo $SLURM_NODEID $SLURM_LOCALID $SLURM_TASKS_PER_NODE"}},
		{name: "N1 n2", args: []string{"srun", "-N1", "-n2", "-l", "sh", "-c", "echo $SLURM_NNODES $SLURM_STEP_TASKS_PER_NODE"}},
		{name: "n2 c2", args: []string{"srun", "-n2", "-c2", "-l", "sh", "-c", "echo $SLURM_CPUS_PER_TASK $SLURMD_NODENAME $SLURM_JOB_CPUS_PER_NODE"}},
		{name: "c2 alone", args: []string{"srun", "-c2", "sh", "-c", "echo $SLURM_CPUS_PER_TASK $SLURM_NTASKS $SLURM_NNODES"}},
		{name: "ntasks-per-node N2", args: []string{"srun", "--ntasks-per-node=2", "-N2", "-l", "sh", "-c", "echo $SLURM_NTASKS $SLURM_TASKS_PER_NODE $SLURM_NTASKS_PER_NODE"}},
		{name: "ntasks-per-node n2", args: []string{"srun", "--ntasks-per-node=1", "-n2", "-l", "sh", "-c", "echo $SLURMD_NODENAME $SLURM_NNODES"}},
		{name: "N range", args: []string{"srun", "-N1-2", "-n3", "-l", "sh", "-c", "echo $SLURM_NNODES"}},
		{name: "N2 n1 warning", args: []string{"srun", "-N2", "-n1", "sh", "-c", "echo $SLURM_NNODES"}},
		{name: "distribution cyclic", args: []string{"srun", "-n4", "-m", "cyclic", "-l", "sh", "-c", "echo $SLURMD_NODENAME"}},
		{name: "distribution block n3", args: []string{"srun", "-n3", "-m", "block", "-l", "sh", "-c", "echo $SLURMD_NODENAME"}},
		{name: "overcommit", args: []string{"srun", "-O", "-N1", "-n4", "-l", "sh", "-c", "echo $SLURM_NTASKS"}},
		{name: "too many tasks", args: []string{"srun", "-I", "-n5", "true"}},
		{name: "too many nodes", args: []string{"srun", "-I", "-N3", "true"}},
		{name: "too many cpus per task", args: []string{"srun", "-c3", "true"}},
		{name: "too many tasks per node", args: []string{"srun", "--ntasks-per-node=3", "-N1", "true"}},
		{name: "n0", args: []string{"srun", "-n0", "true"}},
		{name: "n not a number", args: []string{"srun", "-n", "abc", "true"}},
		{name: "N0", args: []string{"srun", "-N0", "true"}},
		{name: "SLURM_NTASKS from environment", args: []string{"sh", "-c", "SLURM_NTASKS=2 srun -l sh -c 'echo $SLURM_NTASKS'"}},
		// Labels and buffering.
		{name: "label multi-line", args: []string{"srun", "-n2", "-l", "sh", "-c", "printf 'a\\nb\\n'"}},
		{name: "label split line", args: []string{"srun", "-l", "sh", "-c", "printf part; sleep 0.3; echo rest"}},
		{name: "unbuffered", args: []string{"srun", "-u", "sh", "-c", "printf a; sleep 0.3; printf 'b\\n'; echo err >&2"}},
		{name: "unbuffered label", args: []string{"srun", "-u", "-l", "-n2", "sh", "-c", "echo x$SLURM_PROCID"}},
		// Output, error and input patterns.
		{name: "output %j %t", args: []string{"sh", "-c", "srun -n2 -o 'o-%j-%t' sh -c 'echo out $SLURM_PROCID; echo err >&2'" + show}},
		{name: "output %N", args: []string{"sh", "-c", "srun -N2 -o 'o-%N-%t' sh -c 'echo $SLURMD_NODENAME'" + show}},
		{name: "output %n %t", args: []string{"sh", "-c", "srun -N2 -n3 -o 'o-%n-%t' sh -c 'echo $SLURM_PROCID'" + show}},
		{name: "output %s", args: []string{"sh", "-c", "srun -o 'o-%s' echo step" + show}},
		{name: "output %J", args: []string{"sh", "-c", "srun -o 'o-%J' echo jobstep; cat o-*.0 | wc -l; rm -f o-*"}},
		{name: "output %3t padded", args: []string{"sh", "-c", "srun -n2 -o 'o-%3t' sh -c 'echo $SLURM_PROCID'" + show}},
		{name: "output %x %u %%", args: []string{"sh", "-c", "srun -J nm -o 'o-%x-%%' sh -c 'echo named'" + show}},
		{name: "error pattern only", args: []string{"sh", "-c", "srun -n2 -e 'o-%t' sh -c 'echo out; echo err$SLURM_PROCID >&2'" + show}},
		{name: "output and error patterns", args: []string{"sh", "-c", "srun -n2 -o 'o-out-%t' -e 'o-err-%t' sh -c 'echo o$SLURM_PROCID; echo e$SLURM_PROCID >&2'" + show}},
		{name: "output one task", args: []string{"srun", "-n2", "-o", "1", "sh", "-c", "echo task $SLURM_PROCID"}},
		{name: "error one task", args: []string{"srun", "-n2", "-e", "0", "sh", "-c", "echo e$SLURM_PROCID >&2; echo o$SLURM_PROCID"}},
		{name: "output none", args: []string{"srun", "-o", "none", "-n2", "sh", "-c", "echo hidden; echo shown >&2"}},
		{name: "open-mode append", args: []string{"sh", "-c", "echo first > o-app; srun --open-mode=append -o o-app echo second; cat o-app; rm -f o-app"}},
		{name: "input file", args: []string{"srun", "-i", "in.txt", "cat"}},
		// Not "-i in-%t.txt": real srun 22.05 prints the tasks' output and
		// then never ends.
		{name: "input task 0", args: []string{"srun", "-n2", "-l", "--input=0", "cat"}, stdin: "to zero\n"},
		{name: "input all", args: []string{"srun", "-n2", "-l", "--input=all", "cat"}, stdin: "to all\n"},
		{name: "input missing file", args: []string{"srun", "-i", "nosuch.txt", "cat"}},
		{name: "input task out of range", args: []string{"srun", "-n2", "-i", "5", "cat"}, stdin: "x\n"},
		// --multi-prog.
		{name: "multi-prog lists and wildcard", args: []string{"srun", "-n4", "-l", "--multi-prog", multi}},
		{name: "multi-prog star", args: []string{"srun", "-n2", "-l", "--multi-prog", multiStar}},
		{name: "multi-prog missing task", args: []string{"srun", "-n2", "--multi-prog", multiShort}},
		{name: "multi-prog no file", args: []string{"srun", "-n2", "--multi-prog", "nosuch.conf"}},
		// --export.
		{name: "export NONE with names", args: []string{"sh", "-c", "FOO=1 BAR=2 srun --export=NONE,FOO sh -c 'echo ${FOO-u} ${BAR-u} ${PATH+path}'"}},
		{name: "export ALL", args: []string{"sh", "-c", "FOO=1 srun --export=ALL sh -c 'echo ${FOO-u}'"}},
		{name: "export only an assignment", args: []string{"sh", "-c", "FOO=1 srun --export=X=2 /bin/sh -c 'echo ${FOO-u} ${X-u} ${SLURM_NTASKS-u}'"}},
		{name: "SLURM_EXPORT_ENV", args: []string{"sh", "-c", "FOO=1 SLURM_EXPORT_ENV=NONE srun /bin/sh -c 'echo ${FOO-u}'"}},
		// Bad tasks, -K and --wait.
		{name: "exit code per task", args: []string{"srun", "-n2", "-l", "sh", "-c", "exit $SLURM_PROCID"}},
		{name: "one task killed", args: []string{"srun", "-N2", "sh", "-c", "[ $SLURM_NODEID = 1 ] && kill -9 $$; exit 0"}},
		{name: "segfault", args: []string{"srun", "sh", "-c", "kill -SEGV $$"}},
		{name: "interrupt signal", args: []string{"srun", "sh", "-c", "kill -INT $$"}},
		{name: "usr1", args: []string{"srun", "sh", "-c", "kill -USR1 $$"}},
		{name: "exit 255", args: []string{"srun", "sh", "-c", "exit 255"}},
		{name: "exit and kill mixed", args: []string{"srun", "-n2", "-l", "sh", "-c", "[ $SLURM_PROCID = 0 ] && exit 2; kill -9 $$"}},
		{name: "command not found", args: []string{"srun", "nosuchcommand"}},
		{name: "not executable", args: []string{"srun", "./in.txt"}},
		{name: "no command", args: []string{"srun"}},
		// The failing task waits 2 s so the other has started (see
		// TestSrunKillOnBadExitOurCtld).
		{name: "kill-on-bad-exit", args: []string{"srun", "-K", "-n2", "-l", "sh", "-c", "[ $SLURM_PROCID = 0 ] && { sleep 2; exit 3; }; sleep 20; echo survived"}},
		{name: "kill-on-bad-exit=0", args: []string{"srun", "--kill-on-bad-exit=0", "-n2", "-l", "sh", "-c", "[ $SLURM_PROCID = 0 ] && exit 3; sleep 0.5; echo survived"}},
		{name: "wait", args: []string{"srun", "-W", "1", "-n2", "-l", "sh", "-c", "[ $SLURM_PROCID = 0 ] && exit 0; sleep 30; echo late"}},
		{name: "wait long enough", args: []string{"srun", "--wait=30", "-n2", "-l", "sh", "-c", "[ $SLURM_PROCID = 0 ] && exit 0; sleep 0.5; echo ok"}},
		{name: "kill-on-bad-exit signal", args: []string{"srun", "-K", "-n2", "-l", "sh", "-c", "[ $SLURM_PROCID = 1 ] && { sleep 2; kill -9 $$; }; sleep 20; echo survived"}},
		{name: "per-node tasks not honoured", args: []string{"srun", "-N2", "-n4", "--ntasks-per-node=1", "-l", "sh", "-c", "echo $SLURM_NTASKS_PER_NODE $SLURM_STEP_TASKS_PER_NODE"}},
		{name: "per-node tasks, odd count", args: []string{"srun", "--ntasks-per-node=2", "-n3", "-l", "sh", "-c", "echo $SLURMD_NODENAME"}},
		{name: "disable-status", args: []string{"srun", "-X", "echo", "x"}},
		{name: "error none", args: []string{"srun", "-e", "none", "sh", "-c", "echo out; echo err >&2"}},
		{name: "append pattern", args: []string{"sh", "-c", "echo first > o-0; srun --open-mode=append -o 'o-%t' echo second; cat o-0; rm -f o-0"}},
		{name: "label stderr unbuffered", args: []string{"srun", "-l", "-u", "-n2", "sh", "-c", "echo e$SLURM_PROCID >&2"}},
		{name: "export NONE keeps SLURM_ variables", args: []string{"sh", "-c", "SLURM_MY_VAR=1 FOO=2 srun --export=NONE /bin/sh -c 'echo ${SLURM_MY_VAR-u} ${FOO-u}'"}},
		{name: "job name from environment", args: []string{"sh", "-c", "SLURM_JOB_NAME=fromenv srun sh -c 'echo $SLURM_JOB_NAME'"}},
		// --test-only, quiet, verbose.
		{name: "test-only", args: []string{"srun", "--test-only", "true"}},
		{name: "test-only N2", args: []string{"srun", "--test-only", "-N2", "-n3", "true"}},
		{name: "test-only impossible", args: []string{"srun", "--test-only", "-N3", "true"}},
		{name: "quiet failing task", args: []string{"srun", "-Q", "false"}},
		{name: "quiet impossible", args: []string{"srun", "-Q", "-N3", "true"}},
		{name: "quit-on-interrupt", args: []string{"srun", "-q", "echo", "q"}},
		{name: "verbose", args: []string{"srun", "-v", "true"}},
		{name: "verbose failing", args: []string{"srun", "-v", "-n2", "false"}},
		// Other options scripts use.
		{name: "chdir", args: []string{"srun", "-D", "/tmp", "pwd"}},
		{name: "chdir missing", args: []string{"srun", "-D", "/nonexistent/dir", "pwd"}},
		{name: "immediate", args: []string{"srun", "-I", "echo", "now"}},
		{name: "mem", args: []string{"srun", "--mem=100", "sh", "-c", "echo $SLURM_MEM_PER_NODE"}},
		{name: "mem-per-cpu", args: []string{"srun", "--mem-per-cpu=50", "-n2", "sh", "-c", "echo $SLURM_MEM_PER_CPU"}},
		{name: "time limit", args: []string{"srun", "-t", "1:00", "sh", "-c", "squeue -h -j $SLURM_JOB_ID -o %l"}},
		{name: "version", args: []string{"srun", "--version"}},
		{name: "usage", args: []string{"srun", "--usage"}},
		{name: "het-group outside a het job", args: []string{"srun", "--het-group=0", "true"}},
		// "srun a : b" outside an allocation (real allocates a het job)
		// is not in the corpus: goslurm's srun refuses it so far
		// (commands/srun TestOptionErrors).
		{name: "step environment names", args: []string{"sh", "-c", "srun -n2 -N2 env | sed -n 's/^\\(SLURM[A-Z_]*\\)=.*/\\1/p' | sort | uniq -c"}},
		{name: "step environment values", args: []string{"sh", "-c", "srun -N2 -n3 -c1 env | grep -E '^SLURM_(CPUS|TASKS|STEP|NTASKS|NNODES|NODELIST|JOB_NUM|JOB_CPUS|DISTRIBUTION|CPU_BIND|LAUNCH|SRUN|NPROCS|TOPOLOGY|GTIDS|PROCID|LOCALID|NODEID|UMASK|PRIO|WORKING|JOB_PART|JOB_NAME)' | sort"}},
		// Steps inside an allocation.
		{name: "step over the allocation's nodes", args: []string{"salloc", "-Q", "-N1", "srun", "-N2", "true"}},
		{name: "step over the allocation's tasks", args: []string{"salloc", "-Q", "-n2", "srun", "-n3", "true"}},
		{name: "step with fewer nodes", args: []string{"salloc", "-Q", "-N2", "srun", "-N1", "-l", "sh", "-c", "echo $SLURM_STEP_NUM_NODES $SLURM_NNODES $SLURM_JOB_NUM_NODES"}},
		{name: "step relative", args: []string{"salloc", "-Q", "-N2", "srun", "-N1", "-r1", "sh", "-c", "echo $SLURMD_NODENAME"}},
		{name: "step jobid", args: []string{"salloc", "-Q", "-N1", "sh", "-c", "srun --jobid=$SLURM_JOB_ID echo via-jobid"}},
		{name: "two steps at once", args: []string{"salloc", "-Q", "-n2", "sh", "-c", "srun -n1 --exact sh -c 'sleep 0.5; echo a' & srun -n1 --exact sh -c 'echo b'; wait"}},
		{name: "step on a named node", args: []string{"salloc", "-Q", "-N2", "srun", "-w", "n2", "sh", "-c", "echo $SLURMD_NODENAME $SLURM_STEP_NODELIST"}},
		{name: "step excluding all nodes", args: []string{"salloc", "-Q", "-N1", "srun", "-x", "n1", "true"}},
		{name: "step in a batch job", args: batch("-N2 -n4", "batch-env.sh")},
		{name: "batch step over nodes", args: batch("-N1", "--wrap='srun -N2 hostname; echo rc=$?'")},
		{name: "batch step exit", args: batch("-n2", "--wrap='srun -n2 -l sh -c \"exit \\$SLURM_PROCID\"'")},
	}
}

// TestSrunSallocCorpus runs srunCorpus and sallocCorpus on one cluster.
func TestSrunSallocCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	c := realslurm.Start(t, realslurm.Options{Nodes: 2, CPUs: 2})
	ours := srBuild(t)
	work := t.TempDir()
	t.Run("srun", func(t *testing.T) {
		cases := srunCorpus(t, work)
		failed := crCompare(t, c, ours, work, cases)
		t.Logf("srun: %d/%d invocations identical to real Slurm 22.05", len(cases)-failed, len(cases))
	})
	t.Run("salloc", func(t *testing.T) {
		cases := sallocCorpus(t, work)
		failed := crCompare(t, c, ours, work, cases)
		t.Logf("salloc: %d/%d invocations identical to real Slurm 22.05", len(cases)-failed, len(cases))
	})
	t.Run("terminal", func(t *testing.T) { sallocPTYCorpus(t, c, ours, work) })
}

// TestSrunCorpusRequests checks the requests of command lines the corpus
// changed behaviour for, as TestSrunRequestsAgainstRealSlurm does.
func TestSrunCorpusRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	// Backfill every second: it alone starts the het jobs.
	c := realslurm.Start(t, realslurm.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{"SchedulerParameters=bf_interval=1"}})
	proxy := sbStartProxy(t, c.CtldAddr())
	confPath := sbProxyConf(t, c, proxy.port())
	ours := srBuild(t)
	work := t.TempDir()
	cases := [][]string{
		{"srun", "-N2", "-n1", "true"},
		{"srun", "-N2", "-n4", "--ntasks-per-node=1", "true"},
		{"srun", "-n2", "-c2", "true"},
		{"srun", "--test-only", "-n2", "true"},
		{"srun", "-W", "5", "true"},
		{"srun", "--het-group=0", "true"},
		{"salloc", "-N2", "--ntasks-per-node=2", "true"},
		{"salloc", "-N2", "srun", "-N1", "-r1", "true"},
		{"salloc", "-J", "x", "--begin=now", "-t", "3", "true"},
		// Het job allocations: REQUEST_HET_JOB_ALLOCATION's descriptors.
		{"srun", "-N1", "sh", "-c", "true", ":", "-n2", "true"},
		{"salloc", "-N1", ":", "-n2", "-J", "x", "true"},
	}
	failed := 0
	for _, args := range cases {
		srWaitIdle(t, c)
		rr := srRecord(t, proxy, confPath, "/usr/bin/"+args[0], work, args)
		srWaitIdle(t, c)
		or := srRecord(t, proxy, confPath, ours+"/"+args[0], work, args)
		var diffs []string
		if d := cmp.Diff(fmt.Sprint(rr.types), fmt.Sprint(or.types)); d != "" {
			diffs = append(diffs, "message sequence (-real +ours):\n"+d)
		}
		if d := cmp.Diff(rr.het, or.het); d != "" {
			diffs = append(diffs, "het job allocation request (-real +ours):\n"+d)
		}
		if d := cmp.Diff(rr.alloc, or.alloc); d != "" {
			diffs = append(diffs, "allocation request (-real +ours):\n"+d)
		}
		if d := cmp.Diff(rr.step, or.step); d != "" {
			diffs = append(diffs, "step create request (-real +ours):\n"+d)
		}
		if len(diffs) > 0 {
			failed++
			t.Errorf("%q:\n%s", args, strings.Join(diffs, "\n"))
		}
	}
	t.Logf("%d/%d command lines put the same requests on the wire as real Slurm 22.05", len(cases)-failed, len(cases))
}
