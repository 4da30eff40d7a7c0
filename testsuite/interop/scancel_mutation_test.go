package interop

// Mutation corpora of scancel and scontrol (this file holds the harness
// and scancel's table; scontrol_mutation_test.go holds scontrol's). Each
// case makes its jobs with real sbatch, runs the real command and
// records what it printed and the jobs' state afterwards, cancels the
// jobs, makes the same jobs again and does the same with our command.
// The corpus runs on two clusters at once with byte-identical
// slurm.conf files, one under Debian's real slurmctld and one under
// ours; on each, ours must print what the real command prints and leave
// the same state. The real command's records on the two clusters are
// compared too: a difference there is one of our controller.

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
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

var (
	allocSid = regexp.MustCompile(`AllocNode:Sid=([^:\s]*):[0-9]+`)
	schedBy  = regexp.MustCompile(`\bScheduler=\S+`)
	splitOut = regexp.MustCompile(`<out>/[0-9]+\.out`)
)

// mutCase is one scenario: jobs made, optional preparation, then the
// compared invocations. In pre and ops, %N is the scenario's job name
// and %0..%9 the ids of its jobs.
type mutCase struct {
	jobs [][]string // sbatch arguments, one job each
	// running: job %0 runs before pre and ops (its node list is kept: every
	// running job here names its node).
	running bool
	pre     [][]string // real commands (name first) run before the ops
	ops     [][]string // arguments of the command under test, each compared
	stdin   string
	nobody  bool // the ops run as nobody (uid and gid 65534)
	// ctld names (a key of ctldDiffs) the open difference of our
	// slurmctld this case shows: its comparison between the controllers
	// is skipped, saying why, for as long as the difference is there.
	ctld string
}

func (mc mutCase) String() string {
	var ops []string
	for _, o := range mc.ops {
		ops = append(ops, strings.Join(o, " "))
	}
	s := strings.Join(ops, "; ")
	if mc.nobody {
		s = "as nobody: " + s
	}
	return s
}

// mutSide is what one command did in one case: each op's result and the
// jobs' settled state afterwards, ids and names masked.
type mutSide struct {
	res   []ctlResult
	state string
}

// mutRecord is one case on one cluster.
type mutRecord struct {
	ran        bool
	real, ours mutSide
}

// mutCluster is one of the two clusters with the commands to compare.
type mutCluster struct {
	label string
	c     *ctldharness.Cluster
	out   string            // the jobs' output directory (everyone may write)
	cmds  map[string]string // real commands
	ours  map[string]string // our scancel and scontrol
}

// mutOurCommands builds our scancel and scontrol into a directory every
// user can search (the nobody cases run them), removed when the test ends.
func mutOurCommands(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "goslurm-mutcmds-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", dir+"/",
		"github.com/goslurm/goslurm/commands/scancel", "github.com/goslurm/goslurm/commands/scontrol")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build scancel scontrol: %v\n%s", err, b)
	}
	return dir
}

// mutClusterOptions: the partitions of the read-only differentials; n2 is
// both in debug (running jobs use -w n2) and in the DOWN partition "down"
// where held and pending jobs stay.
func mutClusterOptions() ctldharness.Options {
	return ctldharness.Options{
		Nodes: 4, CPUs: 4,
		// batch_sched_delay=0: real slurmctld looks at a new or released
		// job at its next background pass instead of up to 3 s later.
		ExtraConf: []string{"Licenses=foo:4", "FirstJobId=1000", "SchedulerParameters=batch_sched_delay=0"},
		Partitions: []string{
			"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
			"PartitionName=long Nodes=n[3-4] MaxTime=2-00:00:00 DefaultTime=01:00:00 PriorityTier=2 MaxNodes=2",
			"PartitionName=tiny Nodes=n1 MaxTime=30 OverSubscribe=FORCE:2 AllowAccounts=root",
			"PartitionName=down Nodes=n2 State=DOWN Hidden=YES",
		},
	}
}

// runMutationCorpus runs corpus (of command cmd) on a cluster under the
// real slurmctld and one under ours, side by side, and reports every
// difference.
func runMutationCorpus(t *testing.T, cmd string, corpus []mutCase) {
	if testing.Short() {
		t.Skip("starts two Slurm clusters")
	}
	for _, name := range []string{"scontrol", "scancel", "sbatch", "squeue", "sinfo"} {
		if _, err := oracle.Find(name); err != nil {
			oracle.Unavailable(t, name+": "+err.Error())
		}
	}
	realCtld := ctldharness.RealSbin(t, "slurmctld")
	ourCtld := ctldBuildOurs(t)
	ourDir := mutOurCommands(t)
	records := map[string][]mutRecord{}
	var mu sync.Mutex
	t.Run("clusters", func(t *testing.T) {
		for _, side := range []struct{ label, ctld string }{{"real slurmctld", realCtld}, {"our slurmctld", ourCtld}} {
			t.Run(strings.ReplaceAll(side.label, " ", "_"), func(t *testing.T) {
				t.Parallel()
				c := ctldharness.New(t, mutClusterOptions())
				if side.ctld == realCtld {
					c.Start(side.ctld, "-c", "-i")
				} else {
					c.Start(side.ctld, "-c")
				}
				t.Cleanup(c.Stop)
				out := filepath.Join(c.Dir, "out")
				if err := os.Mkdir(out, 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(out, 0o1777); err != nil {
					t.Fatal(err)
				}
				mc := &mutCluster{label: side.label, c: c, out: out, cmds: map[string]string{},
					ours: map[string]string{"scancel": filepath.Join(ourDir, "scancel"), "scontrol": filepath.Join(ourDir, "scontrol")}}
				for _, name := range []string{"scontrol", "scancel", "sbatch", "squeue"} {
					mc.cmds[name] = oracle.Binary(t, name)
				}
				recs := mc.run(t, cmd, corpus)
				mu.Lock()
				records[side.label] = recs
				mu.Unlock()
			})
		}
	})
	// Where the real command's results differ between the controllers,
	// our controller answered or acted differently from the real one.
	t.Run("controllers", func(t *testing.T) {
		real, ours := records["real slurmctld"], records["our slurmctld"]
		if len(real) != len(corpus) || len(ours) != len(corpus) {
			t.Skip("a cluster did not run the whole corpus (see above)")
		}
		n, open := 0, 0
		for k, mc := range corpus {
			t.Run(fmt.Sprintf("%03d %s", k, mc), func(t *testing.T) {
				if !real[k].ran || !ours[k].ran {
					t.Skip("not run on both controllers")
				}
				n++
				d := mutSideDiff(cmd, mc, "real slurmctld", real[k].real, "our slurmctld", ours[k].real)
				why, known := ctldDiffs[mc.ctld]
				switch {
				case mc.ctld != "" && !known:
					t.Errorf("no such entry in ctldDiffs: %q", mc.ctld)
				case d != "" && known:
					open++
					t.Skipf("open difference of our slurmctld (%s): %s\n%s", mc.ctld, why, d)
				case d != "":
					t.Errorf("real %s on the two controllers: %s", cmd, d)
				case known:
					t.Errorf("our slurmctld now agrees with the real one here: drop ctld %q from this case", mc.ctld)
				}
			})
		}
		t.Logf("%s: %d cases compared between the controllers, %d skipped for an open difference of ours", cmd, n, open)
	})
}

// ctldDiffs are the open differences of our slurmctld from the real one
// that the corpora show, with where the cause likely is. Each case that
// shows one names it (mutCase.ctld).
var ctldDiffs = map[string]string{}

// mutSideDiff compares two records of one case ("" when equal). Real
// scancel signals each job from a thread of its own, so its per-job
// messages may come in any order: stderr is compared as a set of lines
// when the order is all that differs.
func mutSideDiff(cmd string, mc mutCase, la string, a mutSide, lb string, b mutSide) string {
	var d strings.Builder
	for i := range mc.ops {
		ra, rb := a.res[i], b.res[i]
		if ra == rb || cmd == "scancel" && sameLines(ra, rb) {
			continue
		}
		fmt.Fprintf(&d, "\n%s %s:\n--- %s %s--- %s %s", cmd, strings.Join(mc.ops[i], " "), la, ra, lb, rb)
	}
	if a.state != b.state {
		fmt.Fprintf(&d, "\nstate after %s (%s | %s):\n%s", mc, la, lb, fieldDiff(a.state, b.state))
	}
	if d.Len() == 0 {
		return ""
	}
	return mc.String() + d.String()
}

// fieldDiff shows where two states differ: per record line, the fields
// whose values differ, or both lines whole when they do not split alike.
func fieldDiff(a, b string) string {
	la, lb := strings.Split(strings.TrimRight(a, "\n"), "\n"), strings.Split(strings.TrimRight(b, "\n"), "\n")
	if len(la) != len(lb) {
		return fmt.Sprintf("%d records | %d records\n%s\n---\n%s\n", len(la), len(lb), a, b)
	}
	var d strings.Builder
	for i := range la {
		if la[i] == lb[i] {
			continue
		}
		fa, fb := strings.Fields(la[i]), strings.Fields(lb[i])
		if len(fa) != len(fb) {
			fmt.Fprintf(&d, "%s\n---\n%s\n", la[i], lb[i])
			continue
		}
		fmt.Fprintf(&d, "record %d:", i)
		for k := range fa {
			if fa[k] != fb[k] {
				fmt.Fprintf(&d, " %s | %s;", fa[k], fb[k])
			}
		}
		d.WriteString("\n")
	}
	return d.String()
}

// run plays every case with the real command and ours and reports each
// case as a subtest.
func (m *mutCluster) run(t *testing.T, cmd string, corpus []mutCase) []mutRecord {
	recs := make([]mutRecord, len(corpus))
	differ := 0
	for k, mc := range corpus {
		t.Run(fmt.Sprintf("%03d %s", k, mc), func(t *testing.T) {
			rec := &recs[k]
			rec.real = m.side(t, cmd, mc, fmt.Sprintf("%s%dr", cmd[:2], k), m.cmds[cmd])
			rec.ours = m.side(t, cmd, mc, fmt.Sprintf("%s%do", cmd[:2], k), m.ours[cmd])
			rec.ran = true
			if d := mutSideDiff(cmd, mc, "real "+cmd, rec.real, "our "+cmd, rec.ours); d != "" {
				differ++
				t.Errorf("on the %s: %s", m.label, d)
			}
		})
	}
	t.Logf("%s on the %s: %d cases, %d differ", cmd, m.label, len(corpus), differ)
	return recs
}

// side plays one case with the command at bin: makes the jobs, prepares,
// runs the ops, records the settled state and cancels the jobs.
func (m *mutCluster) side(t *testing.T, cmd string, mc mutCase, name, bin string) mutSide {
	t.Helper()
	var ids []string
	for _, jb := range mc.jobs {
		out := m.mustRun(t, "sbatch", append([]string{"--parsable", "-o", m.out + "/%j.out"}, subst(jb, "", name)...)...)
		ids = append(ids, strings.TrimSpace(strings.Split(out, ";")[0]))
	}
	defer func() {
		if len(ids) > 0 {
			m.exec(t, m.cmds["scancel"], "scancel", ids, "", false)
		}
	}()
	if mc.running {
		m.waitRunning(t, ids[0])
	}
	pairs := []string{m.out, "<out>", name, "<N>"}
	for i, id := range ids {
		pairs = append(pairs, id, fmt.Sprintf("<J%d>", i))
	}
	mask := newMasker(pairs...)
	for _, p := range mc.pre {
		args := substIDs(p[1:], name, ids)
		if r := m.exec(t, m.cmds[p[0]], p[0], args, "", false); r.code != 0 {
			t.Logf("preparation %s %q: %s", p[0], args, r)
		}
	}
	if len(mc.pre) > 0 {
		m.settledState(t, ids, mask)
	}
	var s mutSide
	for _, op := range mc.ops {
		s.res = append(s.res, m.exec(t, bin, cmd, substIDs(op, name, ids), mc.stdin, mc.nobody).masked(mask))
	}
	s.state = m.settledState(t, ids, mask)
	return s
}

// exec runs one command (bin, shown as argv0) in the cluster's
// environment from "/", as root or as nobody.
func (m *mutCluster) exec(t *testing.T, bin, argv0 string, args []string, stdin string, nobody bool) ctlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Args = append([]string{argv0}, args...)
	cmd.Env = m.c.Env()
	cmd.Dir = "/"
	cmd.Stdin = strings.NewReader(stdin)
	if nobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
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

func (m *mutCluster) mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	r := m.exec(t, m.cmds[name], name, args, "", false)
	if r.code != 0 {
		t.Fatalf("%s %q: %s", name, args, r)
	}
	return r.stdout
}

// waitRunning polls (up to 60 s) until job id runs and its script has
// written "up" to its output: a signal sent while slurmstepd is still
// starting the task can be missed, and the job then ends with SIGKILL
// after KillWait instead of with the signal sent.
func (m *mutCluster) waitRunning(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := strings.TrimSpace(m.mustRun(t, "squeue", "-h", "-t", "all", "-j", id, "-o", "%T"))
		b, _ := os.ReadFile(filepath.Join(m.out, id+".out"))
		if out == "RUNNING" && strings.HasPrefix(string(b), "up\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %q, want RUNNING", id, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// jobsState is the real scontrol's one-line records of the jobs (every
// record of an array), masked.
func (m *mutCluster) jobsState(t *testing.T, ids []string, mask *masker) string {
	var b strings.Builder
	for _, id := range ids {
		r := m.exec(t, m.cmds["scontrol"], "scontrol", []string{"-o", "show", "job", id}, "", false)
		// The records split off an array come in the order of their
		// new ids, which is the order in which the controller got
		// the requests: real scancel sends them from parallel threads.
		lines := strings.Split(strings.TrimRight(maskState(mask.apply(r.stdout+r.stderr), true), "\n"), "\n")
		sort.Strings(lines)
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	// A split-off array task's output path has its own new id.
	s := splitOut.ReplaceAllString(b.String(), "<out>/<id>.out")
	// The session of the sbatch that made the job, and whether the main
	// scheduler or backfill started it, are no part of the comparison.
	s = allocSid.ReplaceAllString(s, "AllocNode:Sid=$1:<sid>")
	// Real 22.05's backfill sets the time limit of a job that has none, in
	// a partition without MaxTime, to a year (YEAR_MINUTES) once it has
	// evaluated it: whether it has yet is timing, not behaviour.
	s = strings.ReplaceAll(s, "TimeLimit=365-00:00:00", "TimeLimit=UNLIMITED")
	return schedBy.ReplaceAllString(s, "Scheduler=<s>")
}

// settledState is jobsState once every record is settled (see settled:
// nothing COMPLETING, no pending record the scheduler has not looked at)
// and two reads in a row agree (for 1.5 s when a job runs); bounded at
// 60 s, after which the last read is returned and the comparison shows it.
func (m *mutCluster) settledState(t *testing.T, ids []string, mask *masker) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	prev, since := "", time.Now()
	for {
		s := m.jobsState(t, ids, mask)
		ok := s == prev
		if !ok {
			prev, since = s, time.Now()
		}
		for _, line := range strings.Split(s, "\n") {
			ok = ok && settled(line+" ")
		}
		// A signalled job reads RUNNING until its node reports the end,
		// which takes longer than two reads on a loaded machine: a state
		// with a running job must hold for a while before it counts.
		if ok && strings.Contains(s, "JobState=RUNNING") {
			ok = time.Since(since) > 1500*time.Millisecond
		}
		if ok || time.Now().After(deadline) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestScancelMutations runs scancel's mutation corpus on the real and our
// controller.
func TestScancelMutations(t *testing.T) {
	runMutationCorpus(t, "scancel", scancelMutationCorpus())
}

func scancelMutationCorpus() []mutCase {
	held := []string{"--hold", "-p", "down", "-J", "%N", "-t", "30", "--wrap", "true"}
	pend := []string{"-p", "down", "-J", "%N", "-t", "30", "--wrap", "true"}
	run := []string{"-p", "debug", "-w", "n2", "-J", "%N", "-t", "30", "--wrap", "echo up; exec sleep 600"}
	arr := []string{"--hold", "-p", "down", "-J", "%N", "-a", "1-4", "--wrap", "true"}
	nobody := []string{"--uid", "nobody", "--hold", "-p", "down", "-J", "%N", "--wrap", "true"}
	nobodyRun := []string{"--uid", "nobody", "-p", "debug", "-w", "n2", "-J", "%N", "--wrap", "echo up; exec sleep 600"}
	acct := []string{"-A", "acctx", "--hold", "-p", "down", "-J", "%N", "--wrap", "true"}
	j := func(a ...[]string) [][]string { return a }
	op := func(a ...string) [][]string { return [][]string{a} }
	cancelled := [][]string{{"scancel", "%0"}}
	return []mutCase{
		// Ids and steps.
		{jobs: j(held), ops: op("%0")},
		{jobs: j(held), ops: op("-v", "%0")},
		{jobs: j(pend), ops: op("%0")},
		{jobs: j(held, pend), ops: op("%0", "%1")},
		{jobs: j(held, pend), ops: op("-v", "%0,%1")},
		{jobs: j(held), ops: op("%0", "%0")},
		{jobs: j(held), ops: op("-v", "%0", "999999")},
		{jobs: j(run), running: true, ops: op("%0")},
		{jobs: j(run), running: true, ops: op("-v", "%0")},
		{jobs: j(run), running: true, ops: op("-v", "%0.batch")},
		{jobs: j(run), running: true, ops: op("%0.0")},
		{jobs: j(run), running: true, ops: op("-v", "%0.0")},
		{jobs: j(held), ops: op("-v", "%0.0")},
		{jobs: j(held), ops: op("-v", "%0.batch")},
		{jobs: j(run, held), running: true, ops: op("-v", "%0", "%1")},
		// Array elements and ranges.
		{jobs: j(arr), ops: op("%0_2")},
		{jobs: j(arr), ops: op("-v", "%0_2")},
		{jobs: j(arr), ops: op("-v", "%0_[1-2]")},
		{jobs: j(arr), ops: op("-v", "%0_[1,3]")},
		{jobs: j(arr), ops: op("%0_[2-4]")},
		{jobs: j(arr), ops: op("-v", "%0_*")},
		{jobs: j(arr), ops: op("-v", "%0")},
		{jobs: j(arr), ops: op("%0_9")},
		{jobs: j(arr), ops: op("-v", "%0_9")},
		{jobs: j(arr), ops: op("-v", "%0_[3-9]")},
		{jobs: j(arr), ops: op("-v", "%0_1", "%0_4")},
		{jobs: j(arr), pre: [][]string{{"scontrol", "release", "%0_2"}}, ops: op("-v", "%0_2")},
		{jobs: j(arr), pre: [][]string{{"scancel", "%0_1"}}, ops: op("-v", "%0_1")},
		// Unknown ids and finished jobs.
		{ops: op("999999")},
		{ops: op("-v", "999999")},
		{ops: op("999999", "999998")},
		{ops: op("-v", "999999_3")},
		{ops: op("-v", "999999.0")},
		{ops: op("--signal=USR1", "999999")},
		{ops: op("-Q", "--signal=USR1", "999999")},
		{ops: op("-b", "-v", "999999")},
		{jobs: j(held), pre: cancelled, ops: op("%0")},
		{jobs: j(held), pre: cancelled, ops: op("-v", "%0")},
		{jobs: j(held), pre: cancelled, ops: op("-Q", "-v", "%0")},
		{jobs: j(held), pre: cancelled, ops: op("-s", "USR1", "%0")},
		{jobs: j(held), pre: cancelled, ops: op("-Q", "-s", "USR1", "%0")},
		{jobs: j(run), running: true, pre: cancelled, ops: op("-v", "%0")},
		{jobs: j(run), running: true, pre: cancelled, ops: op("-v", "%0.batch")},
		// Filters.
		{jobs: j(held, pend), ops: op("-n", "%N")},
		{jobs: j(held, pend), ops: op("-v", "--name=%N", "-t", "PENDING")},
		{jobs: j(run, held), running: true, ops: op("-v", "-n", "%N", "-t", "RUNNING")},
		{jobs: j(held), ops: op("-v", "-n", "%N", "-t", "RUNNING")},
		{jobs: j(held, pend), ops: op("-v", "-p", "down")},
		{jobs: j(run, held), running: true, ops: op("-v", "-p", "debug")},
		{jobs: j(held), ops: op("-v", "-p", "long", "-n", "%N")},
		{jobs: j(nobody, held), ops: op("-v", "-u", "nobody")},
		{jobs: j(nobody, held), ops: op("-v", "--user=root", "-n", "%N")},
		{jobs: j(acct, held), ops: op("-v", "-A", "acctx")},
		{jobs: j(run, held), running: true, ops: op("-v", "-w", "n2")},
		{jobs: j(run), running: true, ops: op("-v", "-w", "n3", "-n", "%N")},
		{jobs: j(run), running: true, ops: op("-v", "-t", "R", "-w", "n[1-2]")},
		{jobs: j(held), ops: op("-v", "-q", "normal", "-n", "%N")},
		{jobs: j(arr, held), ops: op("-v", "-n", "%N")},
		{jobs: j(held), ops: op("-v", "-n", "%N", "%0")},
		{jobs: j(held, held), ops: op("-v", "-n", "%N", "%1")},
		// Signals and kill flags.
		{jobs: j(run), running: true, ops: op("-v", "--signal=USR1", "%0")},
		{jobs: j(run), running: true, ops: op("-s", "CONT", "-b", "-v", "%0")},
		{jobs: j(run), running: true, ops: op("-s", "USR1", "-b", "%0")},
		{jobs: j(run), running: true, ops: op("-s", "TERM", "-f", "-v", "%0")},
		{jobs: j(run), running: true, ops: op("-b", "-v", "%0")},
		{jobs: j(run), running: true, ops: op("-H", "-v", "%0")},
		{jobs: j(run), running: true, ops: op("--ctld", "-v", "%0")},
		{jobs: j(run), running: true, ops: op("-s", "HUP", "-v", "%0.batch")},
		{jobs: j(held), ops: op("-s", "KILL", "-v", "%0")},
		{jobs: j(held), ops: op("-f", "-v", "%0")},
		{jobs: j(held), ops: op("-b", "-v", "%0")},
		// Interactive.
		{jobs: j(held, held), ops: op("-i", "-n", "%N"), stdin: "y\nn\n"},
		{jobs: j(held), ops: op("-i", "%0"), stdin: "x\nN\n"},
		{jobs: j(arr), ops: op("-i", "%0_[1-2]"), stdin: "y\ny\n"},
		// Quiet.
		{jobs: j(held), ops: op("-Q", "%0")},
		{jobs: j(run), running: true, ops: op("-Q", "-v", "%0")},
		// Other users' jobs, and one's own, as nobody.
		{jobs: j(held), nobody: true, ops: op("%0")},
		{jobs: j(held), nobody: true, ops: op("-v", "%0")},
		{jobs: j(run), running: true, nobody: true, ops: op("%0")},
		{jobs: j(run), running: true, nobody: true, ops: op("-v", "%0.0")},
		{jobs: j(held), nobody: true, ops: op("-v", "-n", "%N")},
		{jobs: j(held), nobody: true, ops: op("-v", "-u", "root", "-n", "%N")},
		{jobs: j(nobody, held), nobody: true, ops: op("-v", "%0", "%1")},
		{jobs: j(nobody, held), nobody: true, ops: op("-v", "-p", "down")},
		{jobs: j(nobodyRun), running: true, nobody: true, ops: op("-v", "%0")},
		{jobs: j(nobody), nobody: true, ops: op("--me", "-v", "-n", "%N")},
	}
}

// TestScancelWholeArray cancels two whole arrays on the real and on our
// controller and compares what the real commands show, before and after
// the controller restarts on its saved state: one array all pending (its
// meta record ends CANCELLED in place, ArrayTaskId=1-4), one with two
// tasks running (they are cancelled each in its record, the meta record
// with the pending rest). In between: the whole array again, a task of
// the cancelled range, and a running task by its own job id.
func TestScancelWholeArray(t *testing.T) {
	scriptOnBothCtlds(t, []string{"scontrol", "scancel", "sbatch", "squeue"}, func(t *testing.T, m *mutCluster, restart func()) []string {
		return m.wholeArray(t, restart)
	})
}

var restartFields = regexp.MustCompile(`\b(NumTasks|TRES)=\S*`)

// wholeArray plays TestScancelWholeArray's script on one cluster with the
// real commands; restart restarts the controller. It returns each step's
// masked record.
func (m *mutCluster) wholeArray(t *testing.T, restart func()) []string {
	name := "wa"
	pend := m.mustRun(t, "sbatch", "--parsable", "-o", m.out+"/%j.out", "--hold", "-p", "down", "-J", name,
		"-a", "1-4", "--wrap", "true")
	run := m.mustRun(t, "sbatch", "--parsable", "-o", m.out+"/%j.out", "-p", "debug", "-w", "n2", "-J", name,
		"-a", "1-4", "-c", "2", "--wrap", "echo up; exec sleep 600")
	ids := []string{strings.TrimSpace(pend), strings.TrimSpace(run)}
	defer m.exec(t, m.cmds["scancel"], "scancel", ids, "", false)
	// Two tasks of the second array run (n2 has CPUs for two).
	var tasks []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := m.mustRun(t, "squeue", "-h", "-r", "-t", "R", "-j", ids[1], "-o", "%A %K")
		tasks = strings.Fields(out)
		if len(tasks) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("running tasks of %s: %q, want two", ids[1], out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	first := tasks[0] // the job id of the running task with the lowest id
	if tasks[3] < tasks[1] {
		first = tasks[2]
	}
	mask := newMasker(m.out, "<out>", ids[0], "<J0>", ids[1], "<J1>", first, "<T>")
	var log []string
	step := func(what string, args ...string) {
		r := m.exec(t, m.cmds[args[0]], args[0], args[1:], "", false).masked(mask)
		if args[0] == "squeue" {
			// Records of equal rank come in the controller's list order:
			// real slurmctld lists a meta record after the tasks split
			// off it, ours by job id.
			lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
			sort.Strings(lines)
			r.stdout = strings.Join(lines, "\n") + "\n"
		}
		log = append(log, what+": "+args[0]+" "+mask.apply(strings.Join(args[1:], " "))+"\n"+
			maskState(r.String(), true))
	}
	state := func(what string, restarted bool) {
		s := m.settledState(t, ids, mask)
		if restarted {
			// Real slurmctld recovers an ended job's task count as 0 and
			// may rebuild its TRES without mem and node: no part of the
			// array's cancel.
			s = restartFields.ReplaceAllString(s, "$1=<r>")
		}
		log = append(log, what+":\n"+s)
		step(what, "squeue", "-h", "-t", "all", "-j", ids[0]+","+ids[1], "-o", "%i %T %r %Q")
		step(what, "squeue", "-h", "-r", "-t", "all", "-j", ids[0]+","+ids[1], "-o", "%i %T %r %Q")
	}
	step("whole pending array", "scancel", "-v", ids[0])
	step("again", "scancel", "-v", ids[0]+"_*")
	step("a task of the cancelled range", "scancel", "-v", ids[0]+"_2")
	step("a task of the cancelled range", "scontrol", "-o", "show", "job", ids[0]+"_2")
	step("a running task by its own id", "scancel", "-v", first)
	step("array with running tasks", "scancel", "-v", ids[1])
	state("after the cancels", false)
	restart()
	state("after a restart of the controller", true)
	return log
}

// TestCancelRPCsBetweenControllers sends the kill requests no real
// scancel makes quickly (a signal other than SIGKILL to a pending job
// makes scancel retry for 95 s) or at all (the batch step: scancel reads
// "ID.batch" as an invalid id) straight to the real and to our
// controller, and compares the return codes and the jobs' states after.
func TestCancelRPCsBetweenControllers(t *testing.T) {
	scriptOnBothCtlds(t, []string{"scontrol", "scancel", "sbatch", "squeue"}, func(t *testing.T, m *mutCluster, _ func()) []string {
		return m.cancelRPCs(t)
	})
}

// cancelRPCs plays TestCancelRPCsBetweenControllers' script on one
// cluster and returns each step's masked result.
func (m *mutCluster) cancelRPCs(t *testing.T) []string {
	slurmUser, err := user.Lookup(m.c.User)
	if err != nil {
		t.Fatal(err)
	}
	suid, _ := strconv.ParseUint(slurmUser.Uid, 10, 32)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := &ctldRPC{t: t, ctx: ctx, g: msg.Registry(), cl: &client.Client{
		Controllers:  []string{fmt.Sprintf("127.0.0.1:%d", m.c.CtldPort)},
		Auth:         &auth.Munge{Client: m.c.Munge.Client()},
		SlurmUserUID: uint32(suid),
		Sweeps:       2,
	}}
	sb := func(args ...string) string {
		o := m.mustRun(t, "sbatch", append([]string{"--parsable", "-o", m.out + "/%j.out", "-J", "rpc"}, args...)...)
		return strings.TrimSpace(strings.Split(o, ";")[0])
	}
	pend := sb("--hold", "-p", "down", "-t", "30", "--wrap", "true")
	arr := sb("--hold", "-p", "down", "-a", "1-4", "--wrap", "true")
	run := sb("-p", "debug", "-w", "n2", "-t", "30", "--wrap", "echo up; exec sleep 600")
	ids := []string{pend, arr, run}
	defer m.exec(t, m.cmds["scancel"], "scancel", ids, "", false)
	m.waitRunning(t, run)
	mask := newMasker(m.out, "<out>", pend, "<P>", arr, "<A>", run, "<R>")
	num := func(s string) uint32 {
		v, _ := strconv.ParseUint(s, 10, 32)
		return uint32(v)
	}
	var log []string
	send := func(what string, mt msgtype.Type, req msg.JobStepKillRequest) {
		err := p.cl.CallRC(ctx, mt, p.encode(mt, req))
		rc := "ok"
		if err != nil {
			rc = fmt.Sprintf("%d (%v)", slurmerr.Code(err), err)
		}
		log = append(log, what+": "+rc)
	}
	step := func(job string, stepID uint32, sig uint16) msg.JobStepKillRequest {
		return msg.JobStepKillRequest{StepID: msg.StepID{JobID: num(job), StepID: stepID, StepHetComp: pack.NoVal}, Signal: sig}
	}
	byStr := func(sjob string, sig uint16) msg.JobStepKillRequest {
		return msg.JobStepKillRequest{StepID: msg.StepID{JobID: pack.NoVal, StepID: pack.NoVal, StepHetComp: pack.NoVal},
			SJobID: msg.Str(sjob), Signal: sig}
	}
	usr1, kill := uint16(syscall.SIGUSR1), uint16(syscall.SIGKILL)
	send("pending job, USR1 by id", msgtype.REQUEST_CANCEL_JOB_STEP, step(pend, pack.NoVal, usr1))
	send("pending job, USR1 by id string", msgtype.REQUEST_KILL_JOB, byStr(pend, usr1))
	send("pending array, USR1", msgtype.REQUEST_KILL_JOB, byStr(arr, usr1))
	send("pending array task, USR1", msgtype.REQUEST_KILL_JOB, byStr(arr+"_2", usr1))
	send("pending job, batch step KILL", msgtype.REQUEST_CANCEL_JOB_STEP, step(pend, msg.StepIDBatch, kill))
	send("pending job, step 0 KILL", msgtype.REQUEST_CANCEL_JOB_STEP, step(pend, 0, kill))
	send("running job, step 5 KILL", msgtype.REQUEST_CANCEL_JOB_STEP, step(run, 5, kill))
	// SIGCONT leaves the script running (USR1 would end it).
	send("running job, batch step CONT", msgtype.REQUEST_CANCEL_JOB_STEP, step(run, msg.StepIDBatch, uint16(syscall.SIGCONT)))
	log = append(log, "after:\n"+m.settledState(t, ids, mask))
	send("running job, batch step KILL", msgtype.REQUEST_CANCEL_JOB_STEP, step(run, msg.StepIDBatch, kill))
	// The job ends when its batch script does; only its state matters.
	state := m.settledState(t, []string{run}, mask)
	var keep []string
	for _, f := range strings.Fields(state) {
		if strings.HasPrefix(f, "JobState=") || strings.HasPrefix(f, "Reason=") || strings.HasPrefix(f, "ExitCode=") {
			keep = append(keep, f)
		}
	}
	log = append(log, "batch step killed: "+strings.Join(keep, " "))
	return log
}
