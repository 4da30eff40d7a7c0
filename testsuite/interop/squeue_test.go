package interop

// Differential tests of squeue and sinfo (issue 7 item 3): one real Slurm
// 22.05 cluster in a known state; every invocation of the corpora runs the
// real command and ours with the same arguments and environment against
// the same controller, comparing stdout, stderr and exit code. The sinfo
// corpus is in sinfo_test.go.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/oracle"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// queryCluster is the shared cluster state of the query-command tests.
type queryCluster struct {
	// wall sums the process wall time of the first real run and of ours
	// per command, for the log.
	wallReal, wallOurs map[string]time.Duration
	// retries counts extra real runs (a time column ticked, or sinfo's
	// racy order of equal lines), for the log.
	retries map[string]int
	c       *realslurm.Cluster
	bins    map[string]string // our binaries
	real    map[string]string // the real binaries
	dir     string
}

// TestQueryCommandsDiff runs the squeue and sinfo corpora against one
// real cluster.
func TestQueryCommandsDiff(t *testing.T) {
	qc := startQueryCluster(t)
	t.Run("squeue", func(t *testing.T) {
		n, failures := qc.diffCorpus(t, "squeue", squeueCorpus())
		reportCorpus(t, "squeue", n, failures)
		t.Logf("squeue wall time over the corpus: real %v, ours %v; %d extra real runs",
			qc.wallReal["squeue"], qc.wallOurs["squeue"], qc.retries["squeue"])
	})
	t.Run("sinfo", func(t *testing.T) {
		n, failures := qc.diffCorpus(t, "sinfo", sinfoCorpus())
		reportCorpus(t, "sinfo", n, failures)
		t.Logf("sinfo wall time over the corpus: real %v, ours %v; %d extra real runs",
			qc.wallReal["sinfo"], qc.wallOurs["sinfo"], qc.retries["sinfo"])
	})
	t.Run("nocontroller", func(t *testing.T) {
		// The same configuration with the controller on a closed port.
		data, err := os.ReadFile(qc.c.Conf)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "SlurmctldPort=") {
				l = "SlurmctldPort=1"
			}
			lines = append(lines, l)
		}
		lines = append(lines, "MessageTimeout=2")
		conf := filepath.Join(qc.dir, "closed.conf")
		if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		var corpus []queryInvocation
		for _, a := range [][]string{{}, {"-j", "1"}, {"-u", "root"}, {"-s"}, {"-w", "n1"}} {
			corpus = append(corpus, queryInvocation{args: a, env: []string{"SLURM_CONF=" + conf}})
		}
		n, failures := qc.diffCorpus(t, "squeue", corpus)
		reportCorpus(t, "squeue (no controller)", n, failures)
		corpus = nil
		for _, a := range [][]string{{}, {"-n", "n1"}, {"-T"}} {
			corpus = append(corpus, queryInvocation{args: a, env: []string{"SLURM_CONF=" + conf}})
		}
		n, failures = qc.diffCorpus(t, "sinfo", corpus)
		reportCorpus(t, "sinfo (no controller)", n, failures)
	})
	t.Run("iterate", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args []string
		}{
			{"squeue", []string{"-i", "1", "-o", "%i %j %T %R"}},
			{"squeue", []string{"--iterate=1", "-t", "all", "-o", "%i %j %t %R"}},
			{"sinfo", []string{"-i", "1"}},
			{"sinfo", []string{"-i", "1", "-N", "-h"}},
		} {
			ours := qc.firstIteration(t, qc.bins[tc.name], nil, tc.args)
			// As in diffCorpus: real sinfo's order of equal lines is racy.
			var real string
			for try := 0; try < 15 && real != ours; try++ {
				real = qc.firstIteration(t, "stdbuf", []string{"-oL", qc.real[tc.name]}, tc.args)
			}
			if real != ours {
				t.Errorf("%s %q: first iteration differs\n--- real\n%s--- ours\n%s", tc.name, tc.args, real, ours)
			}
		}
	})
}

// dateLine is print_date's "%a %b %d %T %Y".
var dateLine = regexp.MustCompile(`^[A-Z][a-z]{2} [A-Z][a-z]{2} [0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}$`)

// firstIteration runs an -i command for a little over one period and
// returns its first block (up to the first blank line), with the date
// line (which may tick between the two runs) replaced by a marker.
func (qc *queryCluster) firstIteration(t *testing.T, bin string, pre, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(pre, args...)...)
	cmd.Env = qc.c.Env()
	cmd.Dir = qc.dir
	out, _ := cmd.Output()
	block, _, found := strings.Cut(string(out), "\n\n")
	if !found {
		t.Fatalf("%s %q: no complete iteration in %q", bin, args, out)
	}
	lines := strings.Split(block, "\n")
	if dateLine.MatchString(lines[0]) {
		lines[0] = "<date>"
	}
	return strings.Join(lines, "\n") + "\n"
}

// startQueryCluster starts the cluster the squeue and sinfo corpora run
// against and builds our two commands.
func startQueryCluster(t *testing.T) *queryCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	for _, name := range []string{"squeue", "sinfo", "sbatch", "scontrol"} {
		if _, err := oracle.Find(name); err != nil {
			oracle.Unavailable(t, name+": "+err.Error())
		}
	}
	qc := &queryCluster{bins: map[string]string{}, real: map[string]string{}, dir: t.TempDir(),
		wallReal: map[string]time.Duration{}, wallOurs: map[string]time.Duration{}, retries: map[string]int{}}
	qc.c = realslurm.Start(t, realslurm.Options{
		Nodes: 6, CPUs: 4, RealMemory: 1000,
		// n6 is configured but never started: it stays UNKNOWN and not
		// responding ("unk*").
		External: []string{"n6"},
		ExtraConf: []string{
			"Licenses=foo:4,bar:2",
			"PartitionName=long Nodes=n[3-4] MaxTime=2-00:00:00 DefaultTime=01:00:00 PriorityTier=2 MaxNodes=2",
			"PartitionName=tiny Nodes=n1 MaxTime=30 State=UP OverSubscribe=FORCE:2",
			"PartitionName=hid Nodes=n2 Hidden=YES AllowGroups=root",
			"PartitionName=empty State=DOWN",
		},
	})
	qc.setup(t)
	return qc
}

// sh runs a real client command and fails the test on error.
func (qc *queryCluster) sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := qc.c.Command(ctx, name, args...)
	cmd.Dir = qc.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// setup builds the cluster state: features and weights, a drained node
// with a reason, running, pending, held and array jobs.
func (qc *queryCluster) setup(t *testing.T) {
	qc.sh(t, "scontrol", "update", "NodeName=n1", "AvailableFeatures=fast,ib", "ActiveFeatures=fast,ib")
	qc.sh(t, "scontrol", "update", "NodeName=n2", "AvailableFeatures=fast", "ActiveFeatures=fast", "Weight=5")
	qc.sh(t, "scontrol", "update", "NodeName=n4", "State=DRAIN", "Reason=maintenance test")
	sb := func(args ...string) {
		qc.sh(t, "sbatch", append([]string{"-o", "/dev/null"}, args...)...)
	}
	sb("-J", "runner", "-p", "debug", "-w", "n1", "-n", "2", "-t", "30", "--wrap", "sleep 600")
	sb("-J", "bigjob", "-p", "debug", "-w", "n2", "--exclusive", "-t", "1-00:00:00", "--wrap", "sleep 600")
	sb("-J", "longrun", "-p", "long", "-w", "n3", "-n", "1", "--comment", "a comment", "--wrap", "sleep 600")
	// In partition long nothing queued ahead blocks it.
	sb("-J", "quick", "-p", "long", "-w", "n3", "-n", "1", "--wrap", "true")
	// Pending on Resources (n1 is not shared across partitions).
	sb("-J", "arrrun", "-a", "0-3", "-p", "tiny", "-n", "1", "--wrap", "sleep 600")
	sb("-J", "waiter", "-p", "debug", "-N", "3", "--exclusive", "--wrap", "sleep 600")
	sb("-J", "held", "--hold", "-p", "long", "-t", "2:00:00", "--mem", "100", "--wrap", "true")
	sb("-J", "arr", "--hold", "-a", "1-5%2", "-t", "10", "--wrap", "true")
	sb("-J", "arr2", "--hold", "-a", "0-20:4", "--wrap", "true")
	sb("-J", "nobodyjob", "--uid", "nobody", "--hold", "-p", "debug,long", "--nice=10", "--wrap", "true")
	sb("-J", "dep", "--hold", "-d", "afterok:1", "-c", "2", "--qos=normal", "--wrap", "true")
	sb("-J", "a_very_long_job_name_indeed", "--hold", "-N", "2-3", "-x", "n4", "--wrap", "true")
	sb("-J", "lic", "--hold", "-L", "foo:1,bar:2", "-C", "fast", "--mem-per-cpu=200", "-A", "acct1", "--wrap", "true")
	sb("-J", "sct", "--hold", "-B", "1:2:1", "--uid", "daemon", "-t", "5", "--time-min", "2", "--wrap", "true")
	sb("-J", "later", "--begin", "now+1hour", "-p", "long", "--wrap", "true")
	sb("-J", "cancelme", "--hold", "--wrap", "true")
	sb("-J", "bigarr", "--hold", "-a", "1-100:2,150,160-170,999", "--wrap", "true")
	het := filepath.Join(qc.dir, "het.sh")
	if err := os.WriteFile(het, []byte("#!/bin/sh\n#SBATCH -J het -n 1\n#SBATCH hetjob\n#SBATCH -n 2 -p long\ntrue\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb("--hold", het)
	qc.sh(t, "scontrol", "update", "NodeName=n5", "State=DOWN", "Reason=node dead")
	// Wait until the three long jobs run and quick has completed.
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := qc.sh(t, "squeue", "-h", "-t", "R,CD", "-o", "%j")
		if strings.Count(out, "\n") >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs did not start: %s\n%s", out, qc.sh(t, "squeue"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	qc.sh(t, "scancel", "-n", "cancelme")
	qc.sh(t, "scontrol", "suspend", "3")
	// Let the scheduler settle pending reasons.
	time.Sleep(2 * time.Second)
}

// queryResult is one command run.
type queryResult struct {
	stdout, stderr string
	code           int
}

func (qc *queryCluster) run(t *testing.T, bin, argv0 string, args, env []string) queryResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Args = append([]string{argv0}, args...)
	cmd.Env = append(qc.c.Env(), env...)
	cmd.Dir = qc.dir
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

// queryInvocation is one corpus entry.
type queryInvocation struct {
	args []string
	env  []string
	// usage marks invocations that print the usage text: its wording is
	// ours, so their stdout is not compared (stderr and exit code are).
	usage bool
}

func (i queryInvocation) String() string {
	s := strings.Join(i.args, " ")
	if len(i.env) > 0 {
		s = strings.Join(i.env, " ") + " " + s
	}
	return s
}

// diffCorpus runs every queryInvocation with the real command and ours. Time
// columns can tick between the runs, so the real command runs before and
// after ours: ours must equal one of the two real results. It returns the
// number of invocations and the failures.
func (qc *queryCluster) diffCorpus(t *testing.T, name string, corpus []queryInvocation) (int, []string) {
	qc.build(t, name)
	var failures []string
	for _, inv := range corpus {
		t0 := time.Now()
		r1 := qc.run(t, qc.real[name], name, inv.args, inv.env)
		t1 := time.Now()
		ours := qc.run(t, qc.bins[name], name, inv.args, inv.env)
		qc.wallReal[name] += t1.Sub(t0)
		qc.wallOurs[name] += time.Since(t1)
		if inv.usage {
			r1.stdout, ours.stdout = "", ""
		}
		if ours == r1 {
			continue
		}
		// Real sinfo fills its line list from one thread per partition,
		// so lines that sort equal come out in a racy order: give the
		// real command a few more tries before calling it a difference.
		// The cluster may also have moved on after our run (a job
		// started, its last_update_time ticked): then run ours once more.
		var r2 queryResult
		matched := false
		for round := 0; round < 2 && !matched; round++ {
			if round > 0 {
				ours = qc.run(t, qc.bins[name], name, inv.args, inv.env)
				if inv.usage {
					ours.stdout = ""
				}
			}
			for try := 0; try < 15 && !matched; try++ {
				qc.retries[name]++
				r2 = qc.run(t, qc.real[name], name, inv.args, inv.env)
				if inv.usage {
					r2.stdout = ""
				}
				matched = ours == r2
			}
		}
		if matched {
			continue
		}
		failures = append(failures, fmt.Sprintf("%s %s:\n--- real (exit %d)\n%s%s--- ours (exit %d)\n%s%s",
			name, inv, r2.code, r2.stdout, indentErr(r2.stderr), ours.code, ours.stdout, indentErr(ours.stderr)))
	}
	return len(corpus), failures
}

func indentErr(s string) string {
	if s == "" {
		return ""
	}
	return "[stderr]\n" + s
}

func reportCorpus(t *testing.T, name string, n int, failures []string) {
	t.Helper()
	t.Logf("%s: %d invocations, %d differ", name, n, len(failures))
	if dir := os.Getenv("GOSLURM_DIFF_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name+".diff"), []byte(strings.Join(failures, "\n")), 0o644)
	}
	for _, f := range failures {
		t.Errorf("%s", f)
	}
}

// build compiles our command name and finds the real one.
func (qc *queryCluster) build(t *testing.T, name string) {
	t.Helper()
	out := filepath.Join(qc.dir, name)
	cmd := exec.Command("go", "build", "-o", out, "github.com/goslurm/goslurm/commands/"+name)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, b)
	}
	qc.bins[name] = out
	p, err := oracle.Find(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	qc.real[name] = p
}

// squeueCorpus lists the squeue invocations compared with the real one.
func squeueCorpus() []queryInvocation {
	var c []queryInvocation
	add := func(env []string, args ...string) { c = append(c, queryInvocation{args: args, env: env}) }
	// Defaults and the main options.
	for _, a := range [][]string{
		{}, {"-l"}, {"-h"}, {"--noheader"}, {"-a"}, {"--all"}, {"--hide"}, {"-r"}, {"--array"},
		{"-r", "-l"}, {"--array-unique"}, {"-P"}, {"--priority"}, {"--start"}, {"--start", "-l"},
		{"-t", "PD"}, {"-t", "R"}, {"-t", "all"}, {"-t", "pending,running"}, {"-t", "CD"},
		{"--states=R,PD"}, {"-t", "bogus"}, {"-t", "CG"}, {"-t", "COMPLETING"},
		{"-u", "root"}, {"-u", "nobody"}, {"-u", "root,nobody"}, {"-u", "0"}, {"--user=nobody"},
		{"-u", "nosuchuser"}, {"--me"},
		{"-p", "debug"}, {"-p", "long"}, {"-p", "debug,long"}, {"-p", "hid"}, {"-p", "nosuch"},
		{"--partitions=tiny"},
		{"-j", "1"}, {"-j", "2,3"}, {"-j1"}, {"--jobs=1,4"}, {"-j", "99999"}, {"-j", "6"},
		{"-j", "6_3"}, {"-j", "6_1,6_2"}, {"-j", "7_8"}, {"-j", "0"}, {"-j", "abc"}, {"--jobs"}, {"-j"},
		{"-n", "runner"}, {"-n", "runner,held"}, {"--name=arr"}, {"-n", "nosuch"},
		{"-w", "n1"}, {"-w", "n[1-2]"}, {"--nodelist=n3"}, {"-w", "n9"}, {"-w", "n[1-4]"},
		{"-A", "nosuch"}, {"-q", "normal"}, {"-L", "foo"}, {"-R", "resv"},
		{"-S", "i"}, {"-S", "-i"}, {"-S", "j"}, {"-S", "-j,i"}, {"-S", "P,i"}, {"-S", "t,-i"},
		{"-S", "u,i"}, {"-S", "U,i"}, {"-S", "D,i"}, {"-S", "l,i"}, {"-S", "V"}, {"-S", "-V"},
		{"-S", "S,i"}, {"-S", "-S,i"}, {"-S", "e,i"}, {"-S", "M,i"}, {"-S", "L,i"}, {"-S", "N,i"},
		{"-S", "C,i"}, {"-S", "m,i"}, {"-S", "p,i"}, {"-S", "Q"}, {"-S", "T,i"}, {"-S", "z,i"},
		{"-S", "q"}, {"-S", "cluster,i"}, {"-S", "b,i"}, {"-S", "c,f,i"}, {"-S", "B,i"}, {"-S", "v,i"},
		{"-S", "g,G,i"}, {"-S", "H,I,J,i"}, {"-S", "d,i"},
		{"-i"}, {"-i", "0"}, {"-i", "x"}, {"--bogus"}, {"-Z"}, {"-o"}, {"--format"},
		{"-o", "%i", "-O", "jobid"}, {"-O", "jobid", "-o", "%i"}, {"-l", "-o", "%i"},
		{"--noh"}, {"--nodes", "n1"}, {"--st"}, {"--s"}, {"-V"}, {"--version"}, {"--all=x"},
		{"-v"}, {"-hv"}, {"--noconvert", "-o", "%m %d"},
		{"-vv"}, {"-vvv"}, {"-v", "-w", "n1"}, {"-vv", "-w", "n1"}, {"-vv", "-j", "1"}, {"-v", "-j", "99999"},
		{"-vv", "-u", "root", "-n", "arr,held", "-t", "PD,R", "-p", "debug", "-L", "foo", "-j", "6,7_4"},
		{"-t", "S"}, {"-t", "CA"}, {"-t", "CD,CA"}, {"-t", "SUSPENDED"}, {"-t", "cancelled,completed"},
		{"-l", "-t", "all"}, {"-r", "-t", "all"}, {"-r", "-l", "-t", "all"}, {"--start", "-t", "all"},
		{"-j", "16"}, {"-j", "16_1"}, {"-j", "16_3"}, {"-j", "17"}, {"-j", "16_0,16_2"}, {"-r", "-j", "16"},
		{"-j", "6_1,6_4"}, {"-j", "6_1,7_4"}, {"-r", "-j", "6_2,6_5"}, {"-j", "6,16"}, {"--array-unique", "-j", "16"},
		{"-L", "foo"}, {"-L", "bar,foo"}, {"-L", "baz"}, {"-A", "acct1"}, {"-A", "ACCT1"}, {"-u", "daemon"},
		{"-u", "daemon,nobody"}, {"-q", "NORMAL"}, {"-n", "ARR"}, {"-w", "n5"}, {"-w", "n[1,3]", "-t", "all"},
		{"-P", "-p", "long"}, {"-P", "-S", "-p"}, {"-P", "-o", "%i %P %Q"}, {"-p", "long,debug", "-S", "P,-i"},
		{"-a", "-t", "all", "-S", "-e"}, {"-t", "all", "-S", "T,-V"}, {"-t", "all", "-o", "%i %T %r %R"},
		{"-M", "x"}, {"--clusters=x"}, {"-M", "all"}, {"-s"}, {"--federation"}, {"--local"}, {"--sib"},
		{"-h", "-o", "%i"}, {"-h", "-l"}, {"-h", "--start"}, {"-r", "--start"}, {"-S", "i", "-r"},
		{"-o", "%i %j", "-S", "j"}, {"-O", "jobid,state", "-t", "all"}, {"--format=%i", "--sort=-i"},
		{"-t", "all", "-o", "%.20i %.20K %.20F %A"}, {"-r", "-o", "%i %K %F %A"},
		{"--Format=jobarrayid:20,arraytaskid:10,arrayjobid:10"}, {"-n", "bigarr"}, {"-n", "bigarr", "-r"},
		{"-n", "bigarr", "-o", "%K|%.10K|%i"}, {"-j", "17_999"}, {"-j", "17_3,17_5"}, {"-n", "het"},
		{"-n", "het", "-O", "hetjobid,hetjoboffset,hetjobidset,jobid,jobarrayid"}, {"-j", "18"}, {"-j", "19"},
		{"-n", "het", "-S", "-i"}, {"-n", "het", "-o", "%i %A %F %K %P %D %C"}, {"-s", "-n", "het"}, {"-r", "-O", "jobarrayid:20,arraytaskid:10"},
	} {
		add(nil, a...)
	}
	for _, a := range [][]string{{"extra"}, {"-j", "1", "extra"}, {"-j", "1", "2"}, {"--usa"}, {"--usage"}, {"--help"}} {
		c = append(c, queryInvocation{args: a, usage: true})
	}
	// Every -o specifier, plain, right-justified, fixed width and
	// truncated, with literal text around.
	letters := "aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ"
	for _, l := range letters {
		s := string(l)
		add(nil, "-o", "%"+s)
		add(nil, "-o", "%.12"+s)
		add(nil, "-o", "%5"+s+"|")
		add(nil, "-t", "all", "-o", "%i %.3"+s+":%"+s)
	}
	add(nil, "-o", "%all")
	add(nil, "-r", "-o", "%all")
	add(nil, "-o", "%q%%%i")
	add(nil, "-o", "prefix %i suffix")
	add(nil, "-o", "no specifiers")
	add(nil, "-o", "%i %1 %!")
	add(nil, "-o", "%i%")
	add(nil, "-o", "")
	add(nil, "-o", "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R")
	add(nil, "-o", "%C %c")
	// Every -O name, with default, fixed and right widths and suffixes.
	names := strings.Fields(`Account AccrueTime admin_comment AllocNodes AllocSID ArrayJobID
	ArrayTaskID AssocID BatchFlag BatchHost BoardsPerNode BurstBuffer BurstBufferState Cluster
	ClusterFeature Command Comment Contiguous Container Cores CoreSpec cpus-per-task
	cpus-per-tres Deadline DelayBoot Dependency DerivedEC EligibleTime EndTime exit_code Feature
	GroupID GroupName HetJobID HetJobIDSet HetJobOffset JobArrayID JobID LastSchedEval Licenses
	MaxCPUs MaxNodes MCSLabel mem-per-tres MinCpus MinMemory MinTime MinTmpDisk Name Network Nice
	NodeList Nodes NTPerBoard NTPerCore NTPerNode NTPerSocket NumCPUs NumNodes NumTasks Origin
	OriginRaw OverSubscribe Partition PendingTime PreemptTime Prefer Priority PriorityLong Profile
	QOS Reason ReasonList Reboot ReqNodes ReqSwitch Requeue Reservation ResizeTime RestartCnt
	SchedNodes SCT SelectJobInfo SiblingsActive SiblingsActiveRaw SiblingsViable
	SiblingsViableRaw Sockets SPerBoard StartTime State StateCompact STDERR STDIN STDOUT
	SubmitTime system_comment Threads TimeLeft TimeLimit TimeUsed tres-alloc tres-bind tres-freq
	tres-per-job tres-per-node tres-per-socket tres-per-task UserID UserName Wait4Switch WCKey
	WorkDir gres shared tres cpuspertask numtask packjobid Bogus`)
	for _, n := range names {
		add(nil, "-O", n)
		add(nil, "-O", "jobid:6,"+n+":.10|")
		add(nil, "-t", "all", "-O", "JobID:.5 ,"+strings.ToLower(n)+":0")
	}
	add(nil, "-O", "jobid,name:3,state:.4,")
	add(nil, "-O", ",,jobid")
	add(nil, "-O", "jobid:")
	add(nil, "-O", "jobid:.")
	add(nil, "-O", "jobid:x")
	// Steps.
	for _, a := range [][]string{
		{"-s"}, {"--steps"}, {"-s", "-l"}, {"-s", "-h"}, {"-s", "-a"}, {"-s1.batch"}, {"--steps=1.batch,3.batch"},
		{"-s", "2.batch"}, {"-s", "1"}, {"-s", "x.y"}, {"-s", "0.1"}, {"-s", "-j", "1"}, {"-j", "-s"},
		{"-s", "-j", "1,2"}, {"-s", "-u", "nobody"}, {"-s", "-u", "root"}, {"-s", "-p", "long"}, {"-s", "-w", "n1"},
		{"-s", "-S", "-i"}, {"-s", "-S", "P,-i"}, {"-s", "-S", "u,N"}, {"-s", "-S", "S,l,U"}, {"-s", "-S", "b"},
		{"-s", "-S", "x"}, {"-s", "-v"}, {"-s", "-vv", "1.batch"}, {"-s", "-o", "%all"}, {"-s", "-o", "%i %Z"},
		{"-s", "--start"}, {"-s", "-t", "PD"}, {"-s", "-n", "x"},
	} {
		add(nil, a...)
	}
	for _, l := range "AbijlMNPSUuaZ" {
		add(nil, "-s", "-o", "%"+string(l))
		add(nil, "-s", "-o", "%.14"+string(l)+"|%3"+string(l))
	}
	for _, n := range strings.Fields(`cluster container numtasks gres stepid stepname timelimit timeused nodes
	partition starttime userid username arrayjobid arraytaskid jobid network numcpus cpufreq resvports
	stepstate cpus-per-tres mem-per-tres tres-bind tres-freq tres-per-job tres-per-step tres-per-node
	tres-per-socket tres-per-task containerx numtaskfoo bogus`) {
		add(nil, "-s", "-O", n)
		add(nil, "-s", "-O", "stepid:12,"+n+":.8|")
	}
	// Environment.
	add([]string{"SLURM_CLUSTERS=x"})
	add([]string{"SQUEUE_FORMAT=%i %j"})
	add([]string{"SQUEUE_FORMAT=%i %j"}, "-l")
	add([]string{"SQUEUE_FORMAT=%i %j"}, "-o", "%u")
	add([]string{"SQUEUE_FORMAT2=jobid:8,name:10"})
	add([]string{"SQUEUE_FORMAT2=jobid:8,name:10"}, "--start")
	add([]string{"SQUEUE_SORT=-i"})
	add([]string{"SQUEUE_SORT=-i"}, "-S", "i")
	add([]string{"SQUEUE_STATES=all"})
	add([]string{"SQUEUE_STATES=R"}, "-t", "PD")
	add([]string{"SQUEUE_USERS=nobody"})
	add([]string{"SQUEUE_PARTITION=long"})
	add([]string{"SQUEUE_NAMES=arr"})
	add([]string{"SQUEUE_ALL=1"})
	add([]string{"SQUEUE_ARRAY=1"})
	add([]string{"SQUEUE_ARRAY_UNIQUE="})
	add([]string{"SQUEUE_PRIORITY=1"})
	add([]string{"SQUEUE_ACCOUNT=x"})
	add([]string{"SLURM_TIME_FORMAT=relative"}, "-o", "%i %V %S")
	add([]string{"SLURM_TIME_FORMAT=%s"}, "-o", "%i %V")
	add([]string{"SLURM_TIME_FORMAT=standard"}, "-o", "%i %V")
	add([]string{"SLURM_BITSTR_LEN=5"})
	add([]string{"SLURM_BITSTR_LEN=20"}, "-n", "bigarr")
	add([]string{"SLURM_BITSTR_LEN=0"}, "-n", "bigarr")
	add([]string{"SLURM_BITSTR_LEN=-3"}, "-n", "bigarr")
	add([]string{"SLURM_BITSTR_LEN=5000"}, "-n", "bigarr")
	add([]string{"SLURM_BITSTR_LEN=0"}, "-o", "%i %K")
	add([]string{"TZ=UTC"}, "-o", "%i %V")
	return c
}
