// Package ctldharness runs a Slurm 22.05 cluster on loopback whose
// controller is any slurmctld binary (Debian's real one, or goslurm's built
// by the test) with Debian's real slurmd nodes (slurmd -N name, one Port
// per node) and a private munged, so one test can bring the same cluster up
// with either controller and compare what the real commands print.
//
// The configuration is written once and kept for every start, so both
// controllers see byte-identical slurm.conf files (same paths, same
// ports). State, spool and log directories are emptied between starts.
package ctldharness

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/testsuite/oracle"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// Options configure the cluster.
type Options struct {
	Nodes      int // n1..nN; 0 means 2
	CPUs       int // CPUs= per node; 0 means 2
	RealMemory int // MB per node; 0 means 1000
	// NodeRealMemory and NodeCPUs override RealMemory and CPUs for some
	// nodes.
	NodeRealMemory map[string]int
	NodeCPUs       map[string]int
	// NodeConf holds extra NodeName= parameters (e.g. "CoreSpecCount=1
	// MemSpecLimit=200"), by node name; the key "*" applies to every node.
	// A State= there replaces the default State=UNKNOWN.
	NodeConf map[string]string
	// NoConfigOverrides leaves SlurmdParameters=config_overrides out, so
	// registrations are checked against the configuration.
	NoConfigOverrides bool
	ExtraConf         []string // lines before the node lines
	Partitions        []string // PartitionName lines; nil means one "debug" with every node
	// OurSlurmd is the path of goslurm's slurmd (slurmstepd beside it):
	// the nodes named in OurNodes, or every node when OurNodes is empty,
	// run it instead of Debian's slurmd.
	OurSlurmd string
	OurNodes  []string
	// NotStarted names nodes that are configured but whose slurmd Start
	// does not launch (they stay unknown and not responding).
	NotStarted []string
	// Commands is a directory holding the client commands (sinfo,
	// scontrol, sbatch, ...) that Run and Start's readiness checks use;
	// "" means Debian's real ones.
	Commands string
	// Auth "slurm" replaces munge with goslurm's built-in auth/slurm and
	// cred/goslurm_hs256: a generated key, no munged, and Sackd (the path
	// of contrib/demo/sackd, built) serving tokens to the commands. Only
	// goslurm's daemons and commands speak it, so OurSlurmd must run
	// every node and Commands must be set.
	Auth  string
	Sackd string
	// LocalMunge gives goslurm's slurmctld the munge key
	// (GOSLURM_MUNGE_KEY): it then encodes and decodes MUNGE credentials
	// in process. Real daemons and commands ignore it.
	LocalMunge bool
}

// Cluster is the configuration, the munged and whatever daemons run now.
type Cluster struct {
	Dir      string
	Conf     string
	Munge    *mungetest.Daemon
	CtldPort int
	Nodes    []Node
	User     string

	tb    testing.TB
	opts  Options
	procs []*realslurm.Proc
	locks []io.Closer
}

// Node is one slurmd.
type Node struct {
	Name string
	Port int
}

// RealSbin returns the path of a real Slurm daemon, skipping the test
// when it is not installed (failing it under GOSLURM_REQUIRE_ORACLE=1).
func RealSbin(tb testing.TB, name string) string {
	tb.Helper()
	p, err := realslurm.FindSbin(name)
	if err != nil {
		oracle.Unavailable(tb, "real Slurm daemon "+name+" not found")
	}
	return p
}

// New writes the configuration and starts munged; no Slurm daemon runs yet.
func New(tb testing.TB, opts Options) *Cluster {
	tb.Helper()
	if opts.Nodes <= 0 {
		opts.Nodes = 2
	}
	if opts.CPUs <= 0 {
		opts.CPUs = 2
	}
	if opts.RealMemory <= 0 {
		opts.RealMemory = 1000
	}
	u, err := user.Current()
	if err != nil {
		tb.Fatal(err)
	}
	if u.Uid != "0" {
		oracle.Unavailable(tb, "ctldharness: real slurmd needs root")
	}
	if opts.Auth != "" && opts.Auth != "munge" {
		if opts.Auth != "slurm" || opts.Sackd == "" || opts.Commands == "" || opts.OurSlurmd == "" || len(opts.OurNodes) > 0 {
			tb.Fatalf("ctldharness: Auth=%q needs Auth=slurm, Sackd, Commands and OurSlurmd on every node", opts.Auth)
		}
	}
	var md *mungetest.Daemon
	if opts.Auth != "slurm" {
		md = mungetest.Start(tb, mungetest.Options{})
	}
	dir, err := os.MkdirTemp("", "ctldh-")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	c := &Cluster{Dir: dir, Munge: md, User: u.Username, tb: tb, opts: opts}
	tb.Cleanup(c.cleanup)
	ports, locks, err := realslurm.FreePorts(1 + opts.Nodes)
	c.locks = locks
	if err != nil {
		tb.Fatal(err)
	}
	c.CtldPort = ports[0]
	for i := 1; i <= opts.Nodes; i++ {
		c.Nodes = append(c.Nodes, Node{Name: "n" + strconv.Itoa(i), Port: ports[i]})
	}
	if err := c.reset(); err != nil {
		tb.Fatal(err)
	}
	c.Conf = filepath.Join(dir, "etc", "slurm.conf")
	if err := os.WriteFile(c.Conf, []byte(c.confText()), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "plugstack.conf"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	if opts.Auth == "slurm" {
		key := make([]byte, 1024)
		if _, err := crand.Read(key); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(c.keyPath(), key, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

func (c *Cluster) keyPath() string { return filepath.Join(c.Dir, "etc", "slurm.key") }

func (c *Cluster) sackSocket() string { return filepath.Join(c.Dir, "sack", "sack.socket") }

// ours reports whether node name runs goslurm's slurmd.
func (c *Cluster) ours(name string) bool {
	if c.opts.OurSlurmd == "" {
		return false
	}
	return len(c.opts.OurNodes) == 0 || slices.Contains(c.opts.OurNodes, name)
}

// slurmdBin is the slurmd binary of node name.
func (c *Cluster) slurmdBin(name string) string {
	if c.ours(name) {
		return c.opts.OurSlurmd
	}
	return RealSbin(c.tb, "slurmd")
}

// reset empties the per-run directories.
func (c *Cluster) reset() error {
	for _, sub := range []string{"state", "log", "run", "spool"} {
		p := filepath.Join(c.Dir, sub)
		if err := os.RemoveAll(p); err != nil {
			return err
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	for _, n := range c.Nodes {
		if err := os.MkdirAll(filepath.Join(c.Dir, "spool", n.Name), 0o755); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(c.Dir, "etc"), 0o755)
}

func (c *Cluster) confText() string {
	d := c.Dir
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("ClusterName=ctldh")
	p("SlurmctldHost=localhost")
	p("SlurmctldPort=%d", c.CtldPort)
	p("SlurmdPort=%d", c.Nodes[0].Port)
	p("SlurmUser=%s", c.User)
	p("SlurmdUser=%s", c.User)
	if c.opts.Auth == "slurm" {
		p("AuthType=auth/slurm")
		p("CredType=cred/goslurm_hs256")
		p("AuthInfo=key=%s,sack_socket=%s", c.keyPath(), c.sackSocket())
	} else {
		p("AuthType=auth/munge")
		p("AuthInfo=socket=%s", c.Munge.Socket)
		p("CredType=cred/munge")
	}
	p("StateSaveLocation=%s", filepath.Join(d, "state"))
	p("SlurmdSpoolDir=%s", filepath.Join(d, "spool", "%n"))
	p("SlurmctldPidFile=%s", filepath.Join(d, "run", "slurmctld.pid"))
	p("SlurmdPidFile=%s", filepath.Join(d, "run", "slurmd-%n.pid"))
	p("SlurmctldLogFile=%s", filepath.Join(d, "log", "slurmctld.log"))
	p("SlurmdLogFile=%s", filepath.Join(d, "log", "slurmd-%n.log"))
	p("SlurmctldDebug=info")
	p("SlurmdDebug=info")
	p("ProctrackType=proctrack/linuxproc")
	p("TaskPlugin=task/none")
	p("SelectType=select/cons_tres")
	p("SelectTypeParameters=CR_Core")
	p("SchedulerType=sched/backfill")
	p("CommunicationParameters=NoInAddrAny,NoCtldInAddrAny")
	p("MpiDefault=none")
	p("MailProg=/bin/true")
	p("ReturnToService=2")
	if !c.opts.NoConfigOverrides {
		p("SlurmdParameters=config_overrides")
	}
	p("JobAcctGatherType=jobacct_gather/none")
	p("AccountingStorageType=accounting_storage/none")
	p("JobCompType=jobcomp/none")
	p("PlugStackConfig=%s", filepath.Join(d, "etc", "plugstack.conf"))
	for _, l := range c.opts.ExtraConf {
		p("%s", l)
	}
	for _, n := range c.Nodes {
		mem := c.opts.RealMemory
		if m, ok := c.opts.NodeRealMemory[n.Name]; ok {
			mem = m
		}
		cpus := c.opts.CPUs
		if v, ok := c.opts.NodeCPUs[n.Name]; ok {
			cpus = v
		}
		extra := strings.TrimSpace(c.opts.NodeConf["*"] + " " + c.opts.NodeConf[n.Name])
		if !strings.Contains(strings.ToLower(extra), "state=") {
			// A State= in NodeConf (State=CLOUD) replaces the default.
			extra = strings.TrimSpace(extra + " State=UNKNOWN")
		}
		p("NodeName=%s NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d CPUs=%d RealMemory=%d %s",
			n.Name, n.Port, cpus, mem, extra)
	}
	if c.opts.Partitions == nil {
		p("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
	}
	for _, l := range c.opts.Partitions {
		p("%s", l)
	}
	return b.String()
}

// Start launches the controller ctld (with args, then -D -f conf) and every
// node's real slurmd, and waits until `scontrol ping` says UP and every
// node has registered (sinfo shows no node in an unknown or
// not-responding state).
func (c *Cluster) Start(ctld string, args ...string) {
	c.tb.Helper()
	if err := c.reset(); err != nil {
		c.tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if c.opts.Auth == "slurm" {
		if err := os.MkdirAll(filepath.Dir(c.sackSocket()), 0o755); err != nil {
			c.tb.Fatal(err)
		}
		if _, err := c.launch("sackd", c.opts.Sackd, "-D", "-f", c.Conf); err != nil {
			c.tb.Fatal(err)
		}
	}
	if _, err := c.launch("slurmctld", ctld, append(args, "-D", "-f", c.Conf)...); err != nil {
		c.tb.Fatal(err)
	}
	if err := c.poll(ctx, func() bool {
		out, _, err := c.Run("scontrol", "ping")
		return err == nil && strings.Contains(out, "is UP")
	}); err != nil {
		c.tb.Fatalf("controller not answering scontrol ping: %v\n%s", err, c.Logs())
	}
	want := 0
	for _, n := range c.Nodes {
		if slices.Contains(c.opts.NotStarted, n.Name) {
			continue
		}
		want++
		if _, err := c.launch("slurmd-"+n.Name, c.slurmdBin(n.Name), "-D", "-N", n.Name, "-f", c.Conf); err != nil {
			c.tb.Fatal(err)
		}
	}
	var last string
	if err := c.poll(ctx, func() bool {
		out, _, err := c.Run("sinfo", "-h", "-N", "-o", "%N %T")
		if err != nil {
			return false
		}
		last = out
		// A node in several partitions has a line in each.
		ok := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && !slices.Contains(c.opts.NotStarted, f[0]) &&
				!strings.HasPrefix(f[1], "unknown") && !strings.HasSuffix(f[1], "*") {
				ok[f[0]] = true
			}
		}
		return len(ok) == want
	}); err != nil {
		c.tb.Fatalf("nodes did not register (last sinfo: %q): %v\n%s", last, err, c.Logs())
	}
}

// Stop terminates every daemon (slurmds first) with SIGTERM, then SIGKILL
// after 10 s.
func (c *Cluster) Stop() {
	var ctld, rest []*realslurm.Proc
	for _, p := range c.procs {
		if p.Name() == "slurmctld" {
			ctld = append(ctld, p)
		} else {
			rest = append(rest, p)
		}
	}
	realslurm.StopProcs(rest)
	realslurm.StopProcs(ctld)
	c.procs = nil
	// A controller built with -race reports on its standard error.
	if b, err := os.ReadFile(filepath.Join(c.Dir, "log", "slurmctld.stdout")); err == nil && bytes.Contains(b, []byte("WARNING: DATA RACE")) {
		c.tb.Errorf("data race in slurmctld:\n%s", b)
	}
}

// StopNode terminates one node's slurmd.
func (c *Cluster) StopNode(name string) {
	for i, p := range c.procs {
		if p.Name() == "slurmd-"+name {
			realslurm.StopProcs([]*realslurm.Proc{p})
			c.procs = append(c.procs[:i], c.procs[i+1:]...)
			return
		}
	}
}

// StartNode launches one node's slurmd again (after StopNode): Debian's,
// or ours for a node in Options.OurNodes.
func (c *Cluster) StartNode(name string) {
	c.tb.Helper()
	if _, err := c.launch("slurmd-"+name, c.slurmdBin(name), "-D", "-N", name, "-f", c.Conf); err != nil {
		c.tb.Fatal(err)
	}
}

// Exited reports whether the daemon called name ("slurmctld",
// "slurmd-n1", ...) was started and has exited.
func (c *Cluster) Exited(name string) bool {
	for _, p := range c.procs {
		if p.Name() == name {
			select {
			case <-p.Done():
				return true
			default:
				return false
			}
		}
	}
	return false
}

// WaitExit waits up to timeout for the daemon called name to exit.
func (c *Cluster) WaitExit(name string, timeout time.Duration) bool {
	for _, p := range c.procs {
		if p.Name() == name {
			select {
			case <-p.Done():
				return true
			case <-time.After(timeout):
				return false
			}
		}
	}
	return false
}

// Ctld returns the running controller process (nil when none runs).
func (c *Cluster) Ctld() *os.Process {
	for _, p := range c.procs {
		if p.Name() == "slurmctld" {
			return p.Process()
		}
	}
	return nil
}

// CtldDone is closed when the controller exits.
func (c *Cluster) CtldDone() <-chan struct{} {
	for _, p := range c.procs {
		if p.Name() == "slurmctld" {
			return p.Done()
		}
	}
	ch := make(chan struct{})
	close(ch)
	return ch
}

func (c *Cluster) launch(name, bin string, args ...string) (*realslurm.Proc, error) {
	p, err := realslurm.StartProc(name, bin, args, c.Env(), c.Dir, filepath.Join(c.Dir, "log", name+".stdout"))
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// Env is the environment of the daemons and commands. Options.Commands
// comes first in PATH, so a command that runs another (salloc running a
// script that calls srun) finds the same kind.
func (c *Cluster) Env() []string {
	path := "/usr/bin:/bin:/usr/sbin:/sbin"
	if c.opts.Commands != "" {
		path = c.opts.Commands + ":" + path
	}
	env := []string{"SLURM_CONF=" + c.Conf, "PATH=" + path, "HOME=" + c.Dir}
	if c.opts.LocalMunge && c.Munge != nil {
		env = append(env, "GOSLURM_MUNGE_KEY="+c.Munge.KeyFile)
	}
	// The benchmark and test aids (GOSLURM_PERF_CPUPROFILE,
	// GOSLURM_VERIFY_NODE_USAGE, ...) reach our controller when the test
	// run sets them.
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GOSLURM_PERF_") || strings.HasPrefix(kv, "GOSLURM_VERIFY_") {
			env = append(env, kv)
		}
	}
	return env
}

// Run runs a client command (sinfo, scontrol, ...): Debian's real one, or
// the one in Options.Commands; it returns its standard output and error.
func (c *Cluster) Run(name string, args ...string) (string, string, error) {
	if c.opts.Commands != "" {
		return c.RunBin(filepath.Join(c.opts.Commands, name), args...)
	}
	return c.RunBin(oracle.Binary(c.tb, name), args...)
}

// RunBin runs the client command at path bin with the cluster's
// environment, in the cluster's directory, and returns its standard
// output and error.
func (c *Cluster) RunBin(bin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = c.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// RunAs runs a real client command as another user.
func (c *Cluster) RunAs(uid, gid uint32, name string, args ...string) (string, string, error) {
	bin := oracle.Binary(c.tb, name)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = c.Env()
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// Poll calls ready every 100 ms until it returns true or timeout passes.
func (c *Cluster) Poll(timeout time.Duration, ready func() bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.poll(ctx, ready)
}

func (c *Cluster) poll(ctx context.Context, ready func() bool) error {
	return realslurm.PollProcs(ctx, c.procs, ready)
}

// Logs returns every daemon log and output, each under a heading.
func (c *Cluster) Logs() string {
	return realslurm.LogFiles(filepath.Join(c.Dir, "log"))
}

func (c *Cluster) cleanup() {
	c.Stop()
	c.killStrays()
	if c.tb.Failed() || os.Getenv("GOSLURM_CTLDH_LOGS") == "1" {
		c.tb.Logf("ctldharness logs (%s):\n%s", c.Dir, c.Logs())
	}
	for _, l := range c.locks {
		_ = l.Close()
	}
	_ = os.RemoveAll(c.Dir)
}

// KillCtld kills the controller with SIGKILL (a crash: nothing is flushed
// or closed by it) and waits until it is gone. The slurmd nodes keep
// running.
func (c *Cluster) KillCtld() {
	for i, p := range c.procs {
		if p.Name() == "slurmctld" {
			p.Kill()
			c.procs = append(c.procs[:i], c.procs[i+1:]...)
			return
		}
	}
}

// StopCtld stops the controller alone (SIGTERM, SIGKILL after 10 s).
func (c *Cluster) StopCtld() {
	for i, p := range c.procs {
		if p.Name() == "slurmctld" {
			realslurm.StopProcs([]*realslurm.Proc{p})
			c.procs = append(c.procs[:i], c.procs[i+1:]...)
			return
		}
	}
}

// StartCtld launches the controller again (after KillCtld or StopCtld)
// with args, then -D -f conf, keeping the state, spool and log
// directories, and waits until `scontrol ping` says UP.
func (c *Cluster) StartCtld(ctld string, args ...string) {
	c.tb.Helper()
	if _, err := c.launch("slurmctld", ctld, append(args, "-D", "-f", c.Conf)...); err != nil {
		c.tb.Fatal(err)
	}
	if err := c.Poll(60*time.Second, func() bool {
		out, _, err := c.Run("scontrol", "ping")
		return err == nil && strings.Contains(out, "is UP")
	}); err != nil {
		c.tb.Fatalf("controller not answering scontrol ping: %v\n%s", err, c.Logs())
	}
}

// killStrays SIGKILLs what the daemons leave behind: Slurm's slurmstepd
// daemonizes out of slurmd's process group and, with its job's tasks,
// outlives slurmd. They all have the cluster's SLURM_CONF in their
// environment or a working directory in the cluster's.
func (c *Cluster) killStrays() {
	realslurm.KillStrays("SLURM_CONF="+c.Conf, c.Dir)
}
