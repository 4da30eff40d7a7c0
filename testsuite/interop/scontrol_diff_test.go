package interop

// Differential tests of scontrol and scancel: the real 22.05 command and
// ours run with the same arguments and environment against one real
// cluster, and stdout, stderr and exit code must be equal after masking
// what legitimately changes between the two runs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/oracle"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// ctlCluster is the cluster of the scontrol/scancel tests.
type ctlCluster struct {
	c    *realslurm.Cluster
	dir  string
	ours map[string]string
	real map[string]string
}

func startCtlCluster(t *testing.T) *ctlCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	for _, name := range []string{"scontrol", "scancel", "sbatch", "squeue"} {
		if _, err := oracle.Find(name); err != nil {
			oracle.Unavailable(t, name+": "+err.Error())
		}
	}
	cc := &ctlCluster{dir: t.TempDir(), ours: map[string]string{}, real: map[string]string{}}
	cc.c = realslurm.Start(t, realslurm.Options{
		Nodes: 4, CPUs: 4, RealMemory: 1000,
		ExtraConf: []string{
			"Licenses=foo:4",
			// Four-digit ids keep id masking from touching other numbers.
			"FirstJobId=1000",
			"PartitionName=long Nodes=n[3-4] MaxTime=2-00:00:00 DefaultTime=01:00:00 PriorityTier=2 MaxNodes=2",
			"PartitionName=tiny Nodes=n1 MaxTime=30 OverSubscribe=FORCE:2 AllowAccounts=root",
			"PartitionName=down Nodes=n2 State=DOWN Hidden=YES",
		},
	})
	for _, name := range []string{"scontrol", "scancel"} {
		out := filepath.Join(cc.dir, name)
		cmd := exec.Command("go", "build", "-o", out, "github.com/goslurm/goslurm/commands/"+name)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, b)
		}
		cc.ours[name] = out
		p, err := oracle.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		cc.real[name] = p
	}
	if p, err := oracle.Find("squeue"); err == nil {
		cc.real["squeue"] = p
	}
	return cc
}

// sh runs a real command and fails the test on error.
func (cc *ctlCluster) sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := cc.c.Command(ctx, name, args...)
	cmd.Dir = cc.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// submit runs real sbatch --parsable and returns the job id.
func (cc *ctlCluster) submit(t *testing.T, args ...string) string {
	t.Helper()
	out := cc.sh(t, "sbatch", append([]string{"--parsable", "-o", "/dev/null"}, args...)...)
	return strings.TrimSpace(strings.Split(out, ";")[0])
}

type ctlResult struct {
	stdout, stderr string
	code           int
}

func (cc *ctlCluster) exec(t *testing.T, bin, argv0 string, args, env []string, stdin string) ctlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Args = append([]string{argv0}, args...)
	cmd.Env = append(cc.c.Env(), env...)
	cmd.Dir = cc.dir
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
	return ctlResult{so.String(), se.String(), code}
}

// waitState polls squeue until job id is in state (a compact code).
func (cc *ctlCluster) waitState(t *testing.T, id, state string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := strings.TrimSpace(cc.sh(t, "squeue", "-h", "-t", "all", "-j", id, "-o", "%t"))
		if strings.Contains(out, state) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: state %q, want %s", id, out, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCtlClusterHold keeps a cluster up for manual exploration:
// GOSLURM_HOLD_CLUSTER=<seconds> go test -run TestCtlClusterHold; it
// writes an env file to source in $GOSLURM_HOLD_ENV.
func TestCtlClusterHold(t *testing.T) {
	secs := os.Getenv("GOSLURM_HOLD_CLUSTER")
	if secs == "" {
		t.Skip("manual exploration helper, not a check: set GOSLURM_HOLD_CLUSTER=<seconds> to keep a cluster up")
	}
	cc := startCtlCluster(t)
	var b strings.Builder
	for _, e := range cc.c.Env() {
		fmt.Fprintf(&b, "export %q\n", e)
	}
	if p := os.Getenv("GOSLURM_HOLD_ENV"); p != "" {
		_ = os.WriteFile(p, []byte(b.String()), 0o644)
	}
	var d time.Duration
	fmt.Sscanf(secs, "%d", &d)
	time.Sleep(d * time.Second)
}

// ctlInvocation is one corpus entry: the command (scontrol or scancel),
// its arguments and extra environment.
type ctlInvocation struct {
	cmd  string
	args []string
	env  []string
}

func (i ctlInvocation) String() string {
	s := i.cmd + " " + strings.Join(i.args, " ")
	if len(i.env) > 0 {
		s = strings.Join(i.env, " ") + " " + s
	}
	return s
}

// usageText reports invocations whose stdout is the help text: its
// wording is ours, so only stderr and the exit code are compared.
func (i ctlInvocation) usageText() bool {
	for _, a := range i.args {
		if a == "--help" || a == "-h" || a == "--usage" || a == "help" {
			return true
		}
	}
	return false
}

// diffReadOnly runs invocations that do not change the cluster. The
// real command runs before and after ours and ours must equal one of its
// results (RunTime, LastSchedEval and time stamps can tick between
// runs); only node CPULoad and FreeMem samples are ever masked.
func (cc *ctlCluster) diffReadOnly(t *testing.T, corpus []ctlInvocation) (int, []string) {
	var failures []string
	for _, inv := range corpus {
		r1 := cc.exec(t, cc.real[inv.cmd], inv.cmd, inv.args, inv.env, "")
		ours := cc.exec(t, cc.ours[inv.cmd], inv.cmd, inv.args, inv.env, "")
		if inv.usageText() {
			r1.stdout, ours.stdout = "", ""
		}
		if ours == r1 {
			continue
		}
		r2 := cc.exec(t, cc.real[inv.cmd], inv.cmd, inv.args, inv.env, "")
		if inv.usageText() {
			r2.stdout = ""
		}
		if ours == r2 {
			continue
		}
		// slurmd's periodic samples of CPU load and free memory may
		// change between the runs: the only masking here.
		if nodeSamples.ReplaceAllString(ours.stdout, "$1=<x>") == nodeSamples.ReplaceAllString(r2.stdout, "$1=<x>") &&
			ours.stderr == r2.stderr && ours.code == r2.code {
			continue
		}
		failures = append(failures, fmt.Sprintf("%s:\n--- real (exit %d)\n%s%s--- ours (exit %d)\n%s%s",
			inv, r2.code, r2.stdout, ctlIndent(r2.stderr), ours.code, ours.stdout, ctlIndent(ours.stderr)))
	}
	return len(corpus), failures
}

func ctlIndent(s string) string {
	if s == "" {
		return ""
	}
	return "[stderr]\n" + s
}

func ctlReport(t *testing.T, name string, n int, failures []string) {
	t.Helper()
	t.Logf("%s: %d invocations, %d differ", name, n, len(failures))
	if dir := os.Getenv("GOSLURM_DIFF_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name+".diff"), []byte(strings.Join(failures, "\n")), 0o644)
	}
	for _, f := range failures {
		t.Errorf("%s", f)
	}
}

// setupCtl builds the read-only state: node features, a drained and a
// down node, running jobs (one of them suspended), held pending jobs,
// arrays (held, and partly running) and jobs with many options set.
func (cc *ctlCluster) setupCtl(t *testing.T) map[string]string {
	cc.sh(t, "scontrol", "update", "NodeName=n1", "AvailableFeatures=fast,ib", "ActiveFeatures=fast,ib")
	cc.sh(t, "scontrol", "update", "NodeName=n2", "Weight=5", "Comment=spare node")
	ids := map[string]string{}
	ids["run"] = cc.submit(t, "-J", "runner", "-p", "debug", "-w", "n1", "-n", "2", "-t", "30", "--comment", "a comment", "--wrap", "sleep 600")
	ids["run2"] = cc.submit(t, "-J", "two", "-p", "debug", "-N", "2", "-n", "3", "--mem-per-cpu=100", "-w", "n[1-2]", "--wrap", "sleep 600")
	ids["susp"] = cc.submit(t, "-J", "suspended", "-p", "long", "-w", "n3", "--wrap", "sleep 600")
	ids["arun"] = cc.submit(t, "-J", "arrrun", "-a", "0-5%2", "-p", "tiny", "--wrap", "sleep 600")
	ids["held"] = cc.submit(t, "-J", "held", "--hold", "-p", "long", "-t", "2:00:00", "--mem", "100", "-o", "/tmp/out-%j.txt", "-e", "err-%x.txt", "--wrap", "true")
	ids["arr"] = cc.submit(t, "-J", "arr", "--hold", "-a", "1-5%2", "-t", "10", "--wrap", "true")
	ids["arr2"] = cc.submit(t, "-J", "arr2", "--hold", "-a", "0-20:4", "--wrap", "true")
	ids["opts"] = cc.submit(t, "-J", "opts", "--hold", "-N", "2-3", "-x", "n4", "-c", "2", "-L", "foo:1", "-C", "fast",
		"--mem-per-cpu=200", "-A", "acct1", "--nice=10", "-d", "afterok:1", "--mail-type=END,FAIL", "--mail-user=a@b",
		"--begin", "now+1hour", "--time-min", "5", "-t", "1-00:00:00", "-B", "1:2:1", "--wrap", "true")
	ids["nobody"] = cc.submit(t, "-J", "nobodyjob", "--uid", "nobody", "--hold", "-p", "debug,long", "--wrap", "true")
	ids["dead"] = cc.submit(t, "-J", "dead", "--hold", "--wrap", "true")
	cc.sh(t, "scancel", ids["dead"])
	cc.waitState(t, ids["run"], "R")
	cc.waitState(t, ids["run2"], "R")
	cc.waitState(t, ids["susp"], "R")
	cc.sh(t, "scontrol", "suspend", ids["susp"])
	cc.sh(t, "scontrol", "update", "NodeName=n4", "State=DRAIN", "Reason=maintenance test")
	cc.sh(t, "scontrol", "create", "reservation", "ReservationName=maint1", "StartTime=now+1day", "Duration=60",
		"Nodes=n3", "Users=root", "Flags=MAINT,IGNORE_JOBS")
	cc.sh(t, "scontrol", "create", "reservation", "ReservationName=lic2", "StartTime=now+2days", "Duration=1-00:00:00",
		"NodeCnt=1", "Accounts=root", "PartitionName=debug", "Licenses=foo:1", "Flags=PURGE_COMP=10:00")
	time.Sleep(2 * time.Second)
	return ids
}

func (cc *ctlCluster) readOnlyCorpus(ids map[string]string) []ctlInvocation {
	sc := func(args ...string) ctlInvocation { return ctlInvocation{cmd: "scontrol", args: args} }
	env := func(e string, args ...string) ctlInvocation {
		return ctlInvocation{cmd: "scontrol", args: args, env: []string{e}}
	}
	var c []ctlInvocation
	for _, flags := range [][]string{nil, {"-o"}, {"-d"}, {"-d", "-o"}, {"-a"}, {"--oneliner", "--details"}} {
		f := func(a ...string) []string { return append(append([]string{}, flags...), a...) }
		c = append(c, sc(f("show", "job")...), sc(f("show", "node")...), sc(f("show", "partition")...))
		for _, k := range []string{"run", "run2", "susp", "arun", "held", "arr", "arr2", "opts", "nobody", "dead"} {
			c = append(c, sc(f("show", "job", ids[k])...))
		}
		c = append(c, sc(f("show", "node", "n1")...), sc(f("show", "partition", "tiny")...))
	}
	a, ar := ids["arr"], ids["arun"]
	c = append(c,
		sc("show", "job", a+"_3"), sc("show", "job", a+"_9"), sc("show", "job", ar+"_0"), sc("show", "job", ar+"_4"),
		sc("show", "job", "999999"), sc("show", "job", "abc"), sc("show", "job", "12x"), sc("show", "job", ids["run"]+"+0"),
		sc("show", "job", ids["run"]+"+1"), sc("show", "jobid="+ids["held"]), sc("show", "jobs", ids["held"]),
		sc("sho", "j", ids["held"]), sc("SHOW", "JOB", ids["held"]), sc("-Q", "show", "job", "999999"),
		sc("-v", "show", "job", ids["held"]), sc("show", "job", ids["held"], "extra"),
		sc("show", "node", "n[2-4]"), sc("show", "node", "n9"), sc("show", "node", "n[1-"), sc("show", "nodes"),
		sc("show", "NodeName=n2"), sc("-Q", "show", "node", "nx"), sc("-v", "show", "node", "n1"), sc("-F", "show", "node"),
		sc("show", "partition", "long"), sc("show", "partition", "down"), sc("show", "partition", "nope"),
		sc("show", "PartitionName=debug"), sc("-Q", "show", "partition", "nope"), sc("-v", "show", "partition"),
		sc("show", "part", "debug"), sc("-a", "show", "partition", "down"),
		sc("ping"), sc("ping", "x"), sc("-o", "ping"), sc("version"), sc("-V"), sc("--version"), sc("-v", "version"),
		sc("show"), sc("show", "bogus"), sc("bogus"), sc("-z"), sc("--bogus"), sc("--h"), sc("-M"),
		sc("show", "hostnames", "n[1-3]"), sc("show", "hostlist", "n1,n2,n3"), sc("show", "hostlistsorted", "n3,n1"),
		sc("hold"), sc("hold", "999999"), sc("hold", "abc"), sc("release", "999999"), sc("uhold", "999999,999998"),
		sc("hold", "Name=nosuchname"), sc("release", "JobName=nosuchname"), sc("release", ids["run"]),
		sc("hold", ids["dead"]), sc("hold", ids["run"]),
		sc("suspend"), sc("suspend", "999999"), sc("suspend", ids["held"]), sc("resume", ids["held"]),
		sc("resume", "x"), sc("suspend", ids["susp"]), sc("resume", ids["run"]),
		sc("requeue"), sc("requeue", "999999"), sc("requeue", "abc"), sc("requeue", ids["nobody"]),
		sc("requeuehold", "999999"), sc("requeue", "Incomplete", "999999"), sc("requeue", "State=SpecialExit", "999999"),
		sc("update"), sc("update", "bogus=1"), sc("update", "JobId=999999", "TimeLimit=10"),
		sc("update", "JobId="+ids["held"], "Bogus=1"), sc("update", "JobId="+ids["held"]),
		sc("update", "JobId="+ids["held"], "TimeLimit=abc"), sc("update", "JobId="+ids["held"], "Priority=x"),
		sc("update", "JobId="+ids["held"], "Nice=9999999999"), sc("update", "JobId="+ids["held"], "NumCPUs=0"),
		sc("update", "JobId="+ids["held"], "NumNodes=a"), sc("update", "JobId="+ids["held"], "Requeue=x"),
		sc("update", "JobId="+ids["held"], "UserID=nosuchuser"), sc("update", "JobId="+ids["arr"], "TimeLimit+=5"),
		sc("update", "TimeLimit+=5", "JobId="+ids["held"]), sc("update", "JobId="+ids["held"], "Comment-=x"),
		sc("update", "JobId="+ids["held"], "AdminComment-=x"), sc("update", "JobName=nosuchname", "TimeLimit=5"),
		sc("update", "JobId=999999", "NumNodes=2"), sc("update", "JobId="+ids["arr"], "NumNodes=2"),
		sc("update", "JobId=abc", "TimeLimit=5"), sc("update", "JobId="+ids["held"], "TimeLimit"),
		sc("update", "NodeName=n1", "State=DRAIN"), sc("update", "NodeName=n1", "State=DOWN", "Reason="),
		sc("update", "NodeName=n1", "State=bogus"), sc("update", "NodeName=n1", "Bogus=1"),
		sc("update", "NodeName=n1"), sc("update", "NodeName=n1", "junk"), sc("update", "NodeName=n9", "State=RESUME"),
		sc("update", "NodeName=n1", "Weight=abc"), sc("update", "PartitionName=nope", "State=UP"),
		sc("update", "PartitionName=debug"), sc("update", "PartitionName=debug", "Bogus=1"),
		sc("update", "PartitionName=debug", "State=bogus"), sc("update", "PartitionName=debug", "MaxTime=abc"),
		sc("update", "PartitionName=debug", "Hidden=maybe"), sc("update", "PartitionName=debug", "OverSubscribe=x"),
		sc("update", "PartitionName=debug", "junk"), sc("update", "Nodes=n1", "State=UP"),
		sc("shutdown", "bogus"), sc("shutdown", "a", "b"),
		sc("show", "config"), sc("show", "conf"), sc("-o", "show", "config"), sc("show", "config", "x"),
		sc("show", "step"), sc("-o", "show", "step"), sc("show", "step", ids["run"]), sc("show", "step", ids["run"]+".batch"),
		sc("show", "step", ids["run"]+".0"), sc("show", "step", ids["arun"]+"_0"), sc("show", "step", ids["arun"]+"_9"),
		sc("show", "steps", "999999"), sc("-a", "show", "step"), sc("show", "step", ids["run2"]),
		sc("errnumstr", "2017"), sc("errnumstr", "0"), sc("errnumstr", "x"), sc("errnumstr"), sc("errnostr", "1"),
		sc("delete"), sc("delete", "x"), sc("delete", "a", "b", "c"), sc("delete", "bogus=1"),
		sc("delete", "PartitionName=nosuch"), sc("delete", "NodeName=n9"),
		sc("create"), sc("create", "foo=1"), sc("create", "PartitionName=default", "Nodes=n1"),
		sc("create", "PartitionName=zz", "Bogus=1"), sc("create", "PartitionName=debug"),
		sc("notify"), sc("notify", "1"), sc("notify", "x", "hi"), sc("notify", "999999", "hi"),
		sc("wait_job", ids["run"]), sc("wait_job", ids["held"]), sc("wait_job", ids["dead"]), sc("wait_job", "999999"),
		sc("wait_job", "x"), sc("wait_job"), sc("-Q", "wait_job", "999999"),
		sc("write"), sc("write", "bogus"), sc("write", "batch_script", ids["held"], "-"), sc("write", "batch", ids["run"], "-"),
		sc("write", "batch_script", "999999"), sc("write", "batch_script", ids["held"], "/nonexistent/x.sh"),
		sc("write", "batch_script", ids["held"], "a", "b"), sc("show", "daemons"), sc("show", "daemons", "x"),
		sc("setdebug"), sc("setdebug", "bogus"), sc("setdebug", "12"), sc("setdebug", "a", "b"), sc("-Q", "setdebug", "x"),
		sc("schedloglevel", "x"), sc("schedloglevel", "2"), sc("setdebugflags"), sc("setdebugflags", "Backfill"),
		sc("setdebugflags", "+Bogus"), sc("setdebugflags", "+a", "+b"), sc("fsdampeningfactor", "0"),
		sc("fsdampeningfactor", "x"),
		sc("show", "reservation"), sc("show", "res", "maint1"), sc("-o", "show", "reservation"), sc("show", "res", "nosuch"),
		sc("show", "ReservationName=lic2"), sc("-v", "show", "res"), sc("-Q", "show", "res", "nosuch"),
		sc("delete", "ReservationName=nosuch"), sc("show", "licenses"), sc("show", "lic", "foo"), sc("show", "lic", "nosuch"),
		sc("-o", "show", "licenses"),
		sc("show", "topology"), sc("show", "topology", "n1"), sc("show", "topo", "sw0"),
		sc("notify", ids["held"], "hi there"), sc("top"), sc("top", "1", "2"), sc("top", "999999"), sc("top", "jobid=x"),
		env("SLURM_TIME_FORMAT=%s", "show", "job", ids["held"]), env("SLURM_TIME_FORMAT=standard", "show", "node", "n1"),
		env("SLURM_BITSTR_LEN=3", "show", "job", ids["arr2"]), env("SCONTROL_ALL=1", "show", "partition"),
	)
	scancel := func(args ...string) ctlInvocation { return ctlInvocation{cmd: "scancel", args: args} }
	c = append(c,
		scancel(), scancel("999999"), scancel("-v", "999999"), scancel("-Q", "999999"), scancel("-s", "USR1", "999999"),
		scancel("999999_3"), scancel("999999.2"), scancel("-v", "999999.2"), scancel("abc"), scancel("12x"), scancel("0"),
		scancel("1_[2"), scancel("1_[1-3]x"), scancel("-s", "BOGUS", "1"), scancel("-s", "0", "1"), scancel("-t", "bogus"),
		scancel("-u", "nosuchuser"), scancel("--bogus"), scancel("-z"), scancel("-V"), scancel("--version"),
		scancel("--usage"), scancel("--help"), scancel("-n", "nosuchname"), scancel("-v", "-n", "nosuchname"),
		scancel("-v", "-n", "x", "-p", "y", "-q", "z", "-A", "acc", "-t", "PD", "-u", "root", "--wckey", "w", "-w", "n1", "-R", "r"),
		scancel("-p", "nosuchpart"), scancel("-w", "n9"), scancel("-t", "S", "-n", "nosuchname"),
		scancel(ids["dead"]), scancel("-v", ids["dead"]), scancel("-s", "TERM", ids["dead"]),
		scancel(ids["run"]+".7"), scancel("-v", ids["run"]+".7"), scancel(ids["held"]+".0"),
		scancel(ids["arr"]+"_9"), scancel("-b", "999999"), scancel("-f", "-v", "999999"), scancel("999999,999998"),
		scancel("--me", "-n", "nosuchname"), scancel("--sig=USR1", "-v", "999999"), scancel("-vvv", "999999"),
	)
	return c
}

// TestScontrolScancelDiff runs the read-only corpus and the paired
// mutation scenarios against one real cluster.
func TestScontrolScancelDiff(t *testing.T) {
	cc := startCtlCluster(t)
	ids := cc.setupCtl(t)
	t.Run("readonly", func(t *testing.T) {
		n, failures := cc.diffReadOnly(t, cc.readOnlyCorpus(ids))
		ctlReport(t, "scontrol-readonly", n, failures)
	})
	t.Run("mutations", func(t *testing.T) {
		n, failures := cc.diffMutations(t, ids)
		ctlReport(t, "scontrol-mutations", n, failures)
	})
	t.Run("scancel", func(t *testing.T) {
		n, failures := cc.diffScancel(t)
		ctlReport(t, "scancel", n, failures)
	})
}
