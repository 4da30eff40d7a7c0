package interop

// scontrol reboot and cancel_reboot, the real scontrol against ours, both
// talking to one real slurmctld. Every node is kept busy by a running
// job, so a requested reboot waits for the job and is never issued; and
// RebootProgram is /bin/true besides, so nothing could restart anything
// even if it were. Each case runs with the real scontrol, the nodes are
// put back as they were, then it runs with ours: the commands' output
// and exit status and the nodes' state afterwards must agree.

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
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

type rebootCLICase struct {
	name   string
	ops    [][]string // scontrol arguments, run in order
	nobody bool       // run them as nobody (uid 65534)
	// noProgram gives the commands a copy of slurm.conf without
	// RebootProgram (the controller keeps its own).
	noProgram bool
}

func rebootCLICases() []rebootCLICase {
	op := func(a ...string) []string { return a }
	return []rebootCLICase{
		{name: "asap_reason", ops: [][]string{op("reboot", "ASAP", "reason=firmware update", "n1")}},
		{name: "nextstate_down", ops: [][]string{op("reboot", "nextstate=down", "n1")}},
		{name: "nextstate_resume_all", ops: [][]string{op("reboot_nodes", "nextState=RES", "asap", "ALL")}},
		{name: "bad_nextstate", ops: [][]string{op("reboot", "nextstate=drain", "n1")}},
		{name: "missing_reason", ops: [][]string{op("reboot", "reason=", "n1")}},
		{name: "no_nodelist", ops: [][]string{op("reboot")}},
		{name: "asap_no_nodelist", ops: [][]string{op("reboot", "ASAP")}},
		{name: "too_many", ops: [][]string{op("reboot", "n1", "n2")}},
		{name: "unknown_node", ops: [][]string{op("reboot", "n9")}},
		{name: "cancel", ops: [][]string{op("reboot", "ASAP", "reason=x", "n1"), op("cancel_reboot", "n1")}},
		{name: "cancel_not_pending", ops: [][]string{op("cancel_reboot", "n2")}},
		{name: "cancel_no_arg", ops: [][]string{op("cancel_reboot")}},
		{name: "cancel_too_many", ops: [][]string{op("cancel_reboot", "n1", "n2")}},
		// Options are counted, not located: "ASAP" becomes the node list.
		{name: "option_after_nodes", ops: [][]string{op("reboot", "n1", "ASAP")}},
		{name: "abbrev_nextstate", ops: [][]string{op("reb", "NEXTSTATE=d", "Reason=r", "asap", "n2")}},
		{name: "quiet_bad_nextstate", ops: [][]string{op("-Q", "reboot", "nextstate=x", "n1")}},
		{name: "verbose_missing_reason", ops: [][]string{op("-v", "reboot", "reason=", "n1")}},
		{name: "quiet_unknown_node", ops: [][]string{op("-Q", "reboot", "n9")}},
		{name: "quiet_cancel_not_pending", ops: [][]string{op("-Q", "cancel_reboot", "n2")}},
		{name: "no_reboot_program", noProgram: true, ops: [][]string{op("reboot", "n1")}},
		{name: "no_reboot_program_quiet", noProgram: true, ops: [][]string{op("-Q", "reboot", "n1"), op("cancel_reboot", "n1")}},
		{name: "nobody_reboot", nobody: true, ops: [][]string{op("reboot", "ASAP", "n1")}},
		{name: "nobody_cancel", nobody: true, ops: [][]string{op("cancel_reboot", "n1")}},
	}
}

var (
	rebootCLIStateRE = regexp.MustCompile(`(?m)^\s*State=\S+`)
	rebootCLINextRE  = regexp.MustCompile(`(?m)^\s*NextState=\S+`)
)

type rebootCLI struct {
	c          *ctldharness.Cluster
	scontrol   string // the real one, for the views and resets
	sinfo      string
	noProgConf string // slurm.conf without RebootProgram
}

// exec runs bin (shown as scontrol) in the cluster's environment from
// "/", as root or as nobody, and renders stdout, stderr and the exit
// status.
func (r *rebootCLI) exec(t *testing.T, bin string, args []string, nobody, noProgram bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Args = append([]string{"scontrol"}, args...)
	cmd.Env = r.c.Env()
	if noProgram {
		// The last value wins in exec.Cmd's environment.
		cmd.Env = append(cmd.Env, "SLURM_CONF="+r.noProgConf)
	}
	cmd.Dir = "/"
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
	return fmt.Sprintf("$ scontrol %s\n--- stdout\n%s--- stderr\n%s--- exit %d\n", strings.Join(args, " "), so.String(), se.String(), code)
}

// view is sinfo's node, state and reason list plus each node's State
// and NextState lines from the real scontrol.
func (r *rebootCLI) view() string {
	var b strings.Builder
	o, e, err := r.c.RunBin(r.sinfo, "-h", "-N", "-o", "%N %T %E")
	b.WriteString(o + e)
	if err != nil {
		fmt.Fprintf(&b, "--- sinfo: %v\n", err)
	}
	for _, n := range r.c.Nodes {
		show, _, _ := r.c.RunBin(r.scontrol, "show", "node", n.Name)
		fmt.Fprintf(&b, "%s:", n.Name)
		for _, re := range []*regexp.Regexp{rebootCLIStateRE, rebootCLINextRE} {
			if m := re.FindString(show); m != "" {
				b.WriteString(" " + strings.TrimSpace(m))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// reset cancels any pending reboot and resumes the nodes, then waits (up
// to 60 s) until they look as they did before the first case.
func (r *rebootCLI) reset(t *testing.T, baseline string) {
	t.Helper()
	r.c.RunBin(r.scontrol, "cancel_reboot", "n[1-2]")
	r.c.RunBin(r.scontrol, "update", "nodename=n[1-2]", "state=resume")
	var last string
	if err := r.c.Poll(60*time.Second, func() bool { last = r.view(); return last == baseline }); err != nil {
		t.Fatalf("nodes not back to\n%s\nafter 60 s: %v; last:\n%s", baseline, err, last)
	}
}

// TestScontrolRebootCLI compares the real scontrol and ours on reboot
// and cancel_reboot against a real slurmctld.
func TestScontrolRebootCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	for _, name := range []string{"scontrol", "sinfo", "sbatch", "squeue"} {
		if _, err := oracle.Find(name); err != nil {
			oracle.Unavailable(t, name+": "+err.Error())
		}
	}
	// Our scontrol in a directory nobody can reach.
	dir, err := os.MkdirTemp("", "goslurm-rebootcli-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(dir, "scontrol")
	if b, err := exec.Command("go", "build", "-o", ours, "github.com/goslurm/goslurm/commands/scontrol").CombinedOutput(); err != nil {
		t.Fatalf("build scontrol: %v\n%s", err, b)
	}
	real := oracle.Binary(t, "scontrol")

	c := ctldharness.New(t, ctldharness.Options{
		Nodes: 2, CPUs: 2,
		// /bin/true: even a reboot that were issued would do nothing.
		ExtraConf: []string{"RebootProgram=/bin/true", "FirstJobId=1000", "SchedulerParameters=batch_sched_delay=0"},
	})
	c.Start(ctldharness.RealSbin(t, "slurmctld"), "-c", "-i")
	t.Cleanup(c.Stop)
	r := &rebootCLI{c: c, scontrol: real, sinfo: oracle.Binary(t, "sinfo"), noProgConf: filepath.Join(dir, "slurm.conf")}
	confText, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	noProg := regexp.MustCompile(`(?m)^RebootProgram=.*\n`).ReplaceAll(confText, nil)
	if bytes.Equal(noProg, confText) {
		t.Fatalf("no RebootProgram line in %s", c.Conf)
	}
	if err := os.WriteFile(r.noProgConf, noProg, 0o644); err != nil {
		t.Fatal(err)
	}

	// One job holds both nodes for the whole test: no reboot asked for
	// here can start while it runs.
	o, e, err := c.Run("sbatch", "--parsable", "--exclusive", "-N", "2", "-w", "n[1-2]", "-o", "/dev/null", "-t", "30", "--wrap", "exec sleep 600")
	if err != nil {
		t.Fatalf("sbatch: %v\n%s%s", err, o, e)
	}
	job := strings.TrimSpace(o)
	t.Cleanup(func() { c.Run("scancel", job) })
	if err := c.Poll(60*time.Second, func() bool {
		st, _, _ := c.Run("squeue", "-h", "-j", job, "-o", "%T")
		return strings.TrimSpace(st) == "RUNNING"
	}); err != nil {
		t.Fatalf("job %s not running after 60 s: %v\n%s", job, err, c.Logs())
	}
	baseline := r.view()
	if strings.Contains(baseline, "REBOOT") || !strings.Contains(baseline, "n1 allocated") {
		t.Fatalf("unexpected starting state:\n%s", baseline)
	}

	for _, tc := range rebootCLICases() {
		t.Run(tc.name, func(t *testing.T) {
			side := func(bin string) string {
				r.reset(t, baseline)
				var b strings.Builder
				for _, args := range tc.ops {
					b.WriteString(r.exec(t, bin, args, tc.nobody, tc.noProgram))
				}
				b.WriteString("--- nodes\n" + r.view())
				return b.String()
			}
			want := side(real)
			got := side(ours)
			if got != want {
				t.Errorf("real scontrol:\n%s\nour scontrol:\n%s", want, got)
			}
			t.Logf("%s", want)
		})
	}
	r.reset(t, baseline)
}
