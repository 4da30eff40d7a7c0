package interop

// Command differentials against goslurm's slurmctld (issue 7 item 3, "and
// ours once it exists"): the real 22.05 command and ours run with the same
// arguments against OUR controller (Debian's slurmd as nodes), on the
// corpora the real-controller differentials use (squeueCorpus,
// sinfoCorpus, ctlCluster.readOnlyCorpus), plus a few srun/salloc lines.
// Both commands decode the same controller replies, so a difference is
// usually a reply of our controller that the real command reads
// differently from ours (or rejects).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
	"golang.org/x/sys/unix"
)

// goslurmDiff is the cluster and the two sets of commands.
type goslurmDiff struct {
	c    *ctldharness.Cluster
	dir  string // working directory of every command
	ours string // directory of our commands
}

// run runs one command (bin, shown as argv0) in the cluster's environment.
func (d *goslurmDiff) run(t *testing.T, bin, argv0 string, args, env []string, stdin string) queryResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Args = append([]string{argv0}, args...)
	cmd.Env = append(d.c.Env(), env...)
	cmd.Dir = d.dir
	cmd.Stdin = strings.NewReader(stdin)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return queryResult{so.String(), se.String(), code}
}

// diff runs one invocation with the real command, ours, and the real one
// again (up to a few times: time columns tick, and real sinfo orders equal
// lines racily); ours must equal one real result, with slurmd's load and
// free-memory samples masked. It returns "" or the difference.
func (d *goslurmDiff) diff(t *testing.T, name string, args, env []string, usage bool) string {
	t.Helper()
	real, err := oracle.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	norm := func(r queryResult) queryResult {
		if usage {
			r.stdout = ""
		}
		r.stdout = nodeSamples.ReplaceAllString(r.stdout, "$1=<x>")
		return r
	}
	r := norm(d.run(t, real, name, args, env, ""))
	ours := norm(d.run(t, filepath.Join(d.ours, name), name, args, env, ""))
	// Real sinfo builds its rows in a thread per partition (their order
	// varies), and -l prints the time: run both again, so that the two
	// can also fall in the same second.
	for try := 0; try < 15 && r != ours; try++ {
		r = norm(d.run(t, real, name, args, env, ""))
		if r != ours && try%2 == 1 {
			ours = norm(d.run(t, filepath.Join(d.ours, name), name, args, env, ""))
		}
	}
	if r == ours {
		return ""
	}
	inv := strings.TrimSpace(strings.Join(env, " ") + " " + name + " " + strings.Join(args, " "))
	return fmt.Sprintf("%s:\n--- real (exit %d)\n%s%s--- ours (exit %d)\n%s%s",
		inv, r.code, r.stdout, indentErr(r.stderr), ours.code, ours.stdout, indentErr(ours.stderr))
}

// goslurmDiffSetup builds the state of ctlCluster.setupCtl (less its
// reservations) with the real commands on our controller, returning the
// job ids by role. A refused step fails the test.
func goslurmDiffSetup(t *testing.T, c *ctldharness.Cluster, dir string) map[string]string {
	sh := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(oracle.Binary(t, name), args...)
		cmd.Env = c.Env()
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("setup: %q refused by our controller: %v\n%s", name+" "+strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	submit := func(args ...string) string {
		out := sh("sbatch", append([]string{"--parsable", "-o", "/dev/null"}, args...)...)
		return strings.TrimSpace(strings.Split(out, ";")[0])
	}
	sh("scontrol", "update", "NodeName=n1", "AvailableFeatures=fast,ib", "ActiveFeatures=fast,ib")
	sh("scontrol", "update", "NodeName=n2", "Weight=5", "Comment=spare node")
	ids := map[string]string{}
	ids["run"] = submit("-J", "runner", "-p", "debug", "-w", "n1", "-n", "2", "-t", "30", "--comment", "a comment", "--wrap", "sleep 600")
	ids["run2"] = submit("-J", "two", "-p", "debug", "-N", "2", "-n", "3", "--mem-per-cpu=100", "-w", "n[1-2]", "--wrap", "sleep 600")
	ids["susp"] = submit("-J", "suspended", "-p", "long", "-w", "n3", "--wrap", "sleep 600")
	ids["arun"] = submit("-J", "arrrun", "-a", "0-5%2", "-p", "tiny", "--wrap", "sleep 600")
	ids["held"] = submit("-J", "held", "--hold", "-p", "long", "-t", "2:00:00", "--mem", "100", "-o", "/tmp/out-%j.txt", "-e", "err-%x.txt", "--wrap", "true")
	ids["arr"] = submit("-J", "arr", "--hold", "-a", "1-5%2", "-t", "10", "--wrap", "true")
	ids["arr2"] = submit("-J", "arr2", "--hold", "-a", "0-20:4", "--wrap", "true")
	ids["opts"] = submit("-J", "opts", "--hold", "-N", "2-3", "-x", "n4", "-c", "2", "-L", "foo:1", "-C", "fast",
		"--mem-per-cpu=200", "-A", "acct1", "--nice=10", "-d", "afterok:1", "--mail-type=END,FAIL", "--mail-user=a@b",
		"--begin", "now+1hour", "--time-min", "5", "-t", "1-00:00:00", "-B", "1:2:1", "--wrap", "true")
	ids["nobody"] = submit("-J", "nobodyjob", "--uid", "nobody", "--hold", "-p", "debug,long", "--wrap", "true")
	ids["dead"] = submit("-J", "dead", "--hold", "--wrap", "true")
	sh("scancel", ids["dead"])
	for _, k := range []string{"run", "run2", "susp"} {
		id, _ := strconv.Atoi(ids[k])
		ctldWaitJob(t, c, uint32(id), 60*time.Second, "RUNNING")
	}
	sh("scontrol", "suspend", ids["susp"])
	sh("scontrol", "update", "NodeName=n4", "State=DRAIN", "Reason=maintenance test")
	// Let the scheduler settle pending reasons.
	time.Sleep(2 * time.Second)
	return ids
}

// TestGoslurmCommandDiff runs the squeue, sinfo, scontrol (read-only) and
// sbatch corpora, and a few srun/salloc lines, with the real command and
// ours against our controller.
func TestGoslurmCommandDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	for _, name := range []string{"squeue", "sinfo", "scontrol", "sbatch", "scancel", "srun", "salloc"} {
		if _, err := oracle.Find(name); err != nil {
			oracle.Unavailable(t, name+": "+err.Error())
		}
	}
	ctld := ctldBuildOurs(t)
	ours := goslurmBuildCommands(t, false)
	c := ctldharness.New(t, ctldharness.Options{
		Nodes: 4, CPUs: 4,
		ExtraConf: []string{"Licenses=foo:4", "FirstJobId=1000"},
		Partitions: []string{
			"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
			"PartitionName=long Nodes=n[3-4] MaxTime=2-00:00:00 DefaultTime=01:00:00 PriorityTier=2 MaxNodes=2",
			"PartitionName=tiny Nodes=n1 MaxTime=30 OverSubscribe=FORCE:2 AllowAccounts=root",
			"PartitionName=down Nodes=n2 State=DOWN Hidden=YES",
		},
	})
	c.Start(ctld, "-c")
	t.Cleanup(c.Stop)
	d := &goslurmDiff{c: c, dir: t.TempDir(), ours: ours}
	ids := goslurmDiffSetup(t, c, d.dir)

	report := func(t *testing.T, name string, n int, failures []string) {
		t.Helper()
		t.Logf("%s against our slurmctld: %d invocations, %d differ", name, n, len(failures))
		if dir := os.Getenv("GOSLURM_DIFF_DIR"); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, "ours-ctld-"+name+".diff"), []byte(strings.Join(failures, "\n")), 0o644)
		}
		for _, f := range failures {
			t.Errorf("%s", f)
		}
	}
	query := func(t *testing.T, name string, corpus []queryInvocation) {
		var failures []string
		for _, inv := range corpus {
			if f := d.diff(t, name, inv.args, inv.env, inv.usage); f != "" {
				failures = append(failures, f)
			}
		}
		report(t, name, len(corpus), failures)
	}
	t.Run("squeue", func(t *testing.T) { query(t, "squeue", squeueCorpus()) })
	t.Run("sinfo", func(t *testing.T) { query(t, "sinfo", sinfoCorpus()) })
	t.Run("scontrol", func(t *testing.T) {
		corpus := (&ctlCluster{}).readOnlyCorpus(ids)
		var failures []string
		for _, inv := range corpus {
			if f := d.diff(t, inv.cmd, inv.args, inv.env, inv.usageText()); f != "" {
				failures = append(failures, f)
			}
		}
		report(t, "scontrol", len(corpus), failures)
	})
	t.Run("srun", func(t *testing.T) {
		// The setup's jobs hold most CPUs; these fit in what is left.
		goslurmSrunDiff(t, d)
	})
	t.Run("sbatch", func(t *testing.T) { goslurmSbatchDiff(t, d) })
}

// goslurmSrunDiff runs a few srun and salloc lines (a subset of
// TestSrunSallocAgainstRealSlurm's) with the real command and ours,
// comparing masked, sorted output and exit codes.
func goslurmSrunDiff(t *testing.T, d *goslurmDiff) {
	cases := []srCase{
		{name: "hostname", args: []string{"srun", "-w", "n3", "hostname"}},
		{name: "label", args: []string{"srun", "-w", "n3", "-n2", "--label", "echo", "hi"}},
		{name: "false", args: []string{"srun", "-w", "n3", "false"}},
		{name: "exit code max", args: []string{"srun", "-w", "n3", "-n2", "-l", "sh", "-c", "exit $((SLURM_PROCID + 5))"}},
		{name: "stdin", args: []string{"srun", "-w", "n3", "cat"}, stdin: "hello\nworld\n"},
		{name: "stderr", args: []string{"srun", "-w", "n3", "sh", "-c", "echo out; echo err >&2"}},
		{name: "step environment", args: []string{"srun", "-w", "n3", "-n2", "-l", "sh", "-c",
			"echo $SLURM_STEP_ID $SLURM_NNODES $SLURM_NTASKS $SLURM_STEP_NODELIST $SLURMD_NODENAME $SLURM_LOCALID $SLURM_JOB_NAME $SLURM_JOB_CPUS_PER_NODE"}},
		{name: "no such partition", args: []string{"srun", "-p", "nope", "true"}},
		{name: "salloc", args: []string{"salloc", "-w", "n3", "sh", "-c", "echo $SLURM_NNODES $SLURM_JOB_NODELIST $SLURM_JOB_NAME; exit 3"}},
		{name: "step in salloc", args: []string{"salloc", "-w", "n3", "srun", "-l", "hostname"}},
	}
	real := filepath.Dir(oracle.Binary(t, "srun"))
	run := func(dir string, cs srCase) srResult {
		bin := filepath.Join(dir, cs.args[0])
		r := d.run(t, bin, cs.args[0], cs.args[1:], []string{"PATH=" + dir + ":/usr/bin:/bin", "SHELL=/bin/sh", "LANG=C"}, cs.stdin)
		return srResult{stdout: srMask(r.stdout), stderr: srMask(r.stderr), code: r.code}
	}
	var failures []string
	for _, cs := range cases {
		rr := run(real, cs)
		or := run(d.ours, cs)
		if rr != or {
			failures = append(failures, fmt.Sprintf("%s (%q):\n--- real (exit %d)\n%s\n[stderr]\n%s\n--- ours (exit %d)\n%s\n[stderr]\n%s",
				cs.name, cs.args, rr.code, rr.stdout, rr.stderr, or.code, or.stdout, or.stderr))
		}
	}
	t.Logf("srun/salloc against our slurmctld: %d invocations, %d differ", len(cases), len(failures))
	for _, f := range failures {
		t.Errorf("%s", f)
	}
}

// goslurmSbatchDiff submits every sbatch corpus line (held, so nothing
// runs) with the real sbatch and ours, each in a directory of its own,
// and compares what the commands print and the jobs our controller made
// of the two requests (real `scontrol -o show job`, ids, directories and
// times masked).
func goslurmSbatchDiff(t *testing.T, d *goslurmDiff) {
	real, ours := oracle.Binary(t, "sbatch"), filepath.Join(d.ours, "sbatch")
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"PATH=/usr/bin:/bin", "LANG=C", "USER=" + u.Username, "HOME=" + u.HomeDir, "FOO=foo", "BAR=bar"}
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	submit := func(bin string, cs sbCase, dir string) queryResult {
		t.Helper()
		files := map[string]string{"job.sh": sbScript, "envfile": "FROMFILE=1\nOTHER=2\n", "hosts.txt": "n1\nn2\n", "input": "in\n"}
		for k, v := range cs.files {
			files[k] = v
		}
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		args := []string{"--hold"}
		for _, a := range cs.argList() {
			args = append(args, strings.ReplaceAll(a, "@ABS@", dir))
		}
		env := append(append(d.c.Env(), base...), "PWD="+dir)
		for _, kv := range cs.env {
			env = append(env, strings.ReplaceAll(kv, "@ABS@", dir))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Args[0] = "sbatch"
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(cs.stdin)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		return queryResult{so.String(), se.String(), code}
	}
	testOnlyStart := regexp.MustCompile(`to start at [0-9T:-]+`)
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	// mask replaces the job id (and the ids after it, a heterogeneous
	// job's components) and the run's directory.
	mask := func(s, id, dir string) string {
		s = strings.ReplaceAll(s, dir, "<dir>")
		// Both sbatch commands run in this process's session; masked
		// before the ids, which it may be near.
		s = strings.ReplaceAll(s, fmt.Sprintf("AllocNode:Sid=localhost:%d ", sid), "AllocNode:Sid=localhost:<sid> ")
		if n, err := strconv.Atoi(id); err == nil {
			for k := 3; k >= 0; k-- {
				// Not \b: "slurm-12_3.out" has no word boundary
				// between the id and "_".
				s = regexp.MustCompile(`(^|\D)`+strconv.Itoa(n+k)+`(\D|$)`).ReplaceAllString(s, fmt.Sprintf("${1}<id+%d>${2}", k))
			}
		}
		s = stateTimes.ReplaceAllString(s, "$1=<time>")
		// --test-only's start time is the second each command ran in.
		s = testOnlyStart.ReplaceAllString(s, "to start at <time>")
		return statePrio.ReplaceAllString(s, "Priority=<p>")
	}
	show := func(id string) string {
		out, errOut, _ := d.c.Run("scontrol", "-o", "show", "job", id)
		return out + errOut
	}
	n := 0
	var failures []string
	for i, cs := range sbCorpus() {
		if slices.ContainsFunc(cs.argList(), func(a string) bool { return a == "-W" || strings.HasPrefix(a, "--wait") }) {
			continue // --wait would wait for a held job
		}
		n++
		rd, od := filepath.Join(root, fmt.Sprintf("r%03d", i)), filepath.Join(root, fmt.Sprintf("o%03d", i))
		rr, or := submit(real, cs, rd), submit(ours, cs, od)
		rid, oid := sbSubmittedID(rr.stdout), sbSubmittedID(or.stdout)
		rm := queryResult{mask(rr.stdout, rid, rd), mask(rr.stderr, rid, rd), rr.code}
		om := queryResult{mask(or.stdout, oid, od), mask(or.stderr, oid, od), or.code}
		if cs.verbose {
			rm.stderr, om.stderr = "", ""
		}
		what := cs.name + " (" + strings.Join(cs.argList(), " ") + ")"
		if rm != om {
			failures = append(failures, fmt.Sprintf("sbatch %s:\n--- real (exit %d)\n%s%s--- ours (exit %d)\n%s%s",
				what, rm.code, rm.stdout, indentErr(rm.stderr), om.code, om.stdout, indentErr(om.stderr)))
			continue
		}
		if rid == "" || oid == "" {
			continue
		}
		if rs, os := mask(show(rid), rid, rd), mask(show(oid), oid, od); rs != os {
			failures = append(failures, fmt.Sprintf("sbatch %s: jobs differ\n--- real's job\n%s--- our job\n%s", what, rs, os))
		}
	}
	if os.Getenv("GOSLURM_DIFF_DIR") != "" {
		_ = os.WriteFile(filepath.Join(os.Getenv("GOSLURM_DIFF_DIR"), "ours-ctld-sbatch.diff"), []byte(strings.Join(failures, "\n")), 0o644)
	}
	t.Logf("sbatch against our slurmctld: %d command lines, %d differ", n, len(failures))
	for _, f := range failures {
		t.Errorf("%s", f)
	}
}

var sbSubmittedRE = regexp.MustCompile(`(?m)^(?:Submitted batch job )?(\d+)(?:;\S*)?$`)

// sbSubmittedID is the job id sbatch printed ("" when none).
func sbSubmittedID(out string) string {
	if m := sbSubmittedRE.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}
