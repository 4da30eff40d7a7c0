// Package realslurm starts a real Slurm 22.05 cluster (Debian's slurmctld and
// slurmd) on loopback for one test: a private munged, one slurmctld -D and N
// slurmd -D -N nI, each on its own free port, with private state, spool, log
// and pid files and a generated slurm.conf. Everything is stopped (SIGTERM,
// then SIGKILL) and removed when the test ends; the daemons' logs are written
// to the test log when the test failed.
//
// Missing binaries skip the test, or fail it under GOSLURM_REQUIRE_ORACLE=1
// (see testsuite/oracle). The daemons run as the test's user and the
// configuration names it SlurmUser, so this works as root (the usual case in
// CI containers); as another user the daemons may refuse to start.
package realslurm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// Options configure a cluster. The zero value is one node, 2 CPUs, 60 s to
// become ready.
type Options struct {
	Nodes       int           // slurmd count, named n1..nN; 0 means 1
	CPUs        int           // CPUs= per node; 0 means 2 (config_overrides lets any value pass)
	RealMemory  int           // MB per node; 0 means 1000
	ClusterName string        // "" means "goslurmtest"
	Debug       string        // SlurmctldDebug/SlurmdDebug; "" means "info"
	ExtraConf   []string      // lines appended to slurm.conf before the node lines
	Timeout     time.Duration // bound on start-up (until every node is idle); 0 means 60 s
	// MungeKey, when set, is the key file the private munged uses (so a
	// second munged can share it); "" generates one.
	MungeKey string
	// External names nodes (of n1..nN) that are configured but not
	// started: the test runs its own slurmd for them (Cluster.Launch) with
	// the cluster's slurm.conf. Start waits only for the other nodes to
	// be idle.
	External []string
}

// Node is one slurmd.
type Node struct {
	Name string
	Port int
	// External: not started by Start (Options.External).
	External bool
}

// Cluster is a running real Slurm.
type Cluster struct {
	Dir      string // private directory holding etc/, state/, spool/, log/, run/
	Conf     string // slurm.conf path (SLURM_CONF)
	Name     string // ClusterName
	Munge    *mungetest.Daemon
	CtldHost string // SlurmctldHost as configured ("localhost")
	CtldPort int
	Nodes    []Node
	// SlurmUser is the configured SlurmUser's name and uid (the test's own
	// user).
	SlurmUser    string
	SlurmUserUID uint32
	// Startup is how long Start took, from launching slurmctld until every
	// node was idle (munged's start excluded).
	Startup time.Duration

	tb      testing.TB
	bins    map[string]string
	marker  string
	procs   []*Proc
	locks   []io.Closer
	stopped bool
}

// CtldAddr returns "host:port" of the controller.
func (c *Cluster) CtldAddr() string {
	return c.CtldHost + ":" + strconv.Itoa(c.CtldPort)
}

// Env returns the environment real client commands need: SLURM_CONF and a
// PATH.
func (c *Cluster) Env() []string {
	return []string{"SLURM_CONF=" + c.Conf, "PATH=/usr/bin:/bin:/usr/sbin:/sbin"}
}

// Start brings a cluster up and registers its teardown with tb.Cleanup.
// Ports clashing with another process make it retry with fresh ports (up to
// three attempts in all).
func Start(tb testing.TB, opts Options) *Cluster {
	tb.Helper()
	if opts.Nodes <= 0 {
		opts.Nodes = 1
	}
	if opts.CPUs <= 0 {
		opts.CPUs = 2
	}
	if opts.RealMemory <= 0 {
		opts.RealMemory = 1000
	}
	if opts.ClusterName == "" {
		opts.ClusterName = "goslurmtest"
	}
	if opts.Debug == "" {
		opts.Debug = "info"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	bins := map[string]string{}
	for _, name := range []string{"slurmctld", "slurmd"} {
		p, err := FindSbin(name)
		if err != nil {
			oracle.Unavailable(tb, err.Error())
		}
		bins[name] = p
	}
	for _, name := range []string{"scontrol", "sinfo"} {
		bins[name] = oracle.Binary(tb, name)
	}
	u, err := user.Current()
	if err != nil {
		tb.Fatal(err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)

	md := mungetest.Start(tb, mungetest.Options{KeyFile: opts.MungeKey})

	const attempts = 3
	for attempt := 1; ; attempt++ {
		c := &Cluster{
			Name: opts.ClusterName, Munge: md, CtldHost: "localhost",
			SlurmUser: u.Username, SlurmUserUID: uint32(uid),
			tb: tb, bins: bins,
		}
		err := c.start(opts)
		if err == nil {
			tb.Cleanup(c.cleanup)
			tb.Logf("realslurm: %d node(s) idle after %v (slurmctld %s, dir %s)",
				len(c.Nodes), c.Startup.Round(time.Millisecond), c.CtldAddr(), c.Dir)
			return c
		}
		logs := c.Logs()
		c.Stop()
		c.release()
		portClash := strings.Contains(logs, "Address already in use")
		if !portClash || attempt >= attempts {
			tb.Fatalf("realslurm: start-up failed (attempt %d): %v\n%s", attempt, err, logs)
		}
		tb.Logf("realslurm: port clash on attempt %d, retrying with fresh ports", attempt)
	}
}

// FindSbin returns the path of a real Slurm daemon: in the oracle
// directory (testsuite/oracle's DirEnv) when set, else in the usual sbin
// directories.
func FindSbin(name string) (string, error) {
	var dirs []string
	if d := os.Getenv(oracle.DirEnv); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range append(dirs, "/usr/sbin", "/usr/local/sbin", "/sbin") {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("real Slurm daemon %q not found (install Debian's %s 22.05 or set %s)", name, name, oracle.DirEnv)
}

func (c *Cluster) start(opts Options) error {
	// A short directory: slurmd and slurmstepd put unix sockets in the
	// spool directory, and sockaddr_un holds 108 bytes.
	dir, err := os.MkdirTemp("", "realslurm-")
	if err != nil {
		return err
	}
	c.Dir = dir
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	for _, sub := range []string{"etc", "state", "log", "run"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	c.marker = "GOSLURM_REALSLURM_ID=" + filepath.Base(dir)

	ports, locks, err := FreePorts(1 + opts.Nodes)
	c.locks = locks
	if err != nil {
		return err
	}
	c.CtldPort = ports[0]
	external := map[string]bool{}
	for _, name := range opts.External {
		external[name] = true
	}
	for i := 1; i <= opts.Nodes; i++ {
		n := Node{Name: "n" + strconv.Itoa(i), Port: ports[i]}
		n.External = external[n.Name]
		delete(external, n.Name)
		c.Nodes = append(c.Nodes, n)
		if err := os.MkdirAll(filepath.Join(dir, "spool", n.Name), 0o755); err != nil {
			return err
		}
	}
	for name := range external {
		return fmt.Errorf("realslurm: Options.External names %s, which is not one of n1..n%d", name, opts.Nodes)
	}
	c.Conf = filepath.Join(dir, "etc", "slurm.conf")
	if err := os.WriteFile(c.Conf, []byte(c.confText(opts)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "plugstack.conf"), nil, 0o644); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	t0 := time.Now()
	if _, err := c.launch("slurmctld", c.bins["slurmctld"], "-D", "-c", "-i", "-f", c.Conf); err != nil {
		return err
	}
	if err := c.poll(ctx, func() bool {
		out, err := c.run(ctx, "scontrol", "ping")
		return err == nil && strings.Contains(out, "is UP")
	}); err != nil {
		return fmt.Errorf("slurmctld not answering 'scontrol ping': %w", err)
	}
	started := 0
	for _, n := range c.Nodes {
		if n.External {
			continue
		}
		started++
		if _, err := c.launch("slurmd-"+n.Name, c.bins["slurmd"], "-D", "-N", n.Name, "-f", c.Conf); err != nil {
			return err
		}
	}
	var last string
	if err := c.poll(ctx, func() bool {
		out, err := c.run(ctx, "sinfo", "-h", "-N", "-o", "%N %T")
		if err != nil {
			return false
		}
		last = out
		idle := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[1] == "idle" && !c.external(f[0]) {
				idle[f[0]] = true
			}
		}
		return len(idle) == started
	}); err != nil {
		return fmt.Errorf("nodes not idle (last sinfo: %q): %w", last, err)
	}
	c.Startup = time.Since(t0)
	return nil
}

func (c *Cluster) confText(opts Options) string {
	d := c.Dir
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# generated by goslurm testsuite/realslurm")
	p("ClusterName=%s", opts.ClusterName)
	p("SlurmctldHost=%s", c.CtldHost)
	p("SlurmctldPort=%d", c.CtldPort)
	p("SlurmdPort=%d", c.Nodes[0].Port)
	p("SlurmUser=%s", c.SlurmUser)
	p("SlurmdUser=%s", c.SlurmUser)
	p("AuthType=auth/munge")
	p("AuthInfo=socket=%s", c.Munge.Socket)
	p("CredType=cred/munge")
	p("StateSaveLocation=%s", filepath.Join(d, "state"))
	p("SlurmdSpoolDir=%s", filepath.Join(d, "spool", "%n"))
	p("SlurmctldPidFile=%s", filepath.Join(d, "run", "slurmctld.pid"))
	p("SlurmdPidFile=%s", filepath.Join(d, "run", "slurmd-%n.pid"))
	p("SlurmctldLogFile=%s", filepath.Join(d, "log", "slurmctld.log"))
	p("SlurmdLogFile=%s", filepath.Join(d, "log", "slurmd-%n.log"))
	p("SlurmctldDebug=%s", opts.Debug)
	p("SlurmdDebug=%s", opts.Debug)
	p("ProctrackType=proctrack/linuxproc")
	p("TaskPlugin=task/none")
	p("SelectType=select/cons_tres")
	p("SelectTypeParameters=CR_Core")
	p("SchedulerType=sched/backfill")
	// Every listener binds the configured address (127.0.0.1), never
	// 0.0.0.0, so the cluster cannot clash with other tests' wildcard
	// listeners and is not reachable from outside.
	p("CommunicationParameters=NoInAddrAny,NoCtldInAddrAny")
	p("MpiDefault=none")
	p("MailProg=/bin/true")
	p("ReturnToService=2")
	p("SlurmdParameters=config_overrides")
	p("JobAcctGatherType=jobacct_gather/none")
	p("AccountingStorageType=accounting_storage/none")
	p("JobCompType=jobcomp/none")
	p("PlugStackConfig=%s", filepath.Join(d, "etc", "plugstack.conf"))
	for _, l := range opts.ExtraConf {
		p("%s", l)
	}
	for _, n := range c.Nodes {
		p("NodeName=%s NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d CPUs=%d RealMemory=%d State=UNKNOWN",
			n.Name, n.Port, opts.CPUs, opts.RealMemory)
	}
	p("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
	return b.String()
}

func (c *Cluster) external(name string) bool {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n.External
		}
	}
	return false
}

// Node returns the node called name (nil if there is none).
func (c *Cluster) Node(name string) *Node {
	for i := range c.Nodes {
		if c.Nodes[i].Name == name {
			return &c.Nodes[i]
		}
	}
	return nil
}

// Launch starts another daemon (our slurmd for an External node, say) the
// way Start starts the real ones: its own process group, the cluster's
// environment (SLURM_CONF) plus env, output in log/<name>.stdout (shown with
// the other logs when the test fails), stopped with the slurmds by Stop.
// The returned Proc tells when it exits.
func (c *Cluster) Launch(name, bin string, env []string, args ...string) (*Proc, error) {
	return c.launchEnv(name, bin, env, args...)
}

// launch starts a daemon in its own process group, its stdout and stderr
// going to log/<name>.stdout.
func (c *Cluster) launch(name, bin string, args ...string) (*Proc, error) {
	return c.launchEnv(name, bin, nil, args...)
}

func (c *Cluster) launchEnv(name, bin string, env []string, args ...string) (*Proc, error) {
	p, err := StartProc(name, bin, args, append(append(c.Env(), c.marker), env...),
		c.Dir, filepath.Join(c.Dir, "log", name+".stdout"))
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// run executes a real client command against the cluster and returns its
// standard output.
func (c *Cluster) run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bins[name], args...)
	cmd.Env = c.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %v: %w: %s", name, args, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Command returns an exec.Cmd running the real client command name (sinfo,
// scontrol, squeue, ...) against this cluster.
func (c *Cluster) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	p := c.bins[name]
	if p == "" {
		p = oracle.Binary(c.tb, name)
	}
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Env = c.Env()
	return cmd
}

// poll calls ready every 100 ms until it returns true, ctx ends, or any
// daemon exits.
func (c *Cluster) poll(ctx context.Context, ready func() bool) error {
	return PollProcs(ctx, c.procs, ready)
}

// Logs returns every daemon log and captured output, each under a heading.
func (c *Cluster) Logs() string {
	if c.Dir == "" {
		return ""
	}
	logs := LogFiles(filepath.Join(c.Dir, "log"))
	if conf, err := os.ReadFile(c.Conf); err == nil {
		logs += fmt.Sprintf("==== slurm.conf ====\n%s", conf)
	}
	return logs
}

// Log returns one daemon's log file ("slurmctld" or a node name).
func (c *Cluster) Log(daemon string) string {
	name := "slurmctld.log"
	if daemon != "slurmctld" {
		name = "slurmd-" + daemon + ".log"
	}
	b, _ := os.ReadFile(filepath.Join(c.Dir, "log", name))
	return string(b)
}

// Stop terminates the daemons: the slurmds first, then slurmctld, each
// process group with SIGTERM and, after 10 s, SIGKILL; then any slurmstepd
// these slurmds left behind. Safe to call more than once; munged is stopped
// by its own cleanup.
func (c *Cluster) Stop() {
	if c.stopped {
		return
	}
	c.stopped = true
	var ctld []*Proc
	var slurmds []*Proc
	for _, p := range c.procs {
		if p.name == "slurmctld" {
			ctld = append(ctld, p)
		} else {
			slurmds = append(slurmds, p)
		}
	}
	StopProcs(slurmds)
	StopProcs(ctld)
	c.killStrays()
}

// killStrays SIGKILLs processes that carry this cluster's marker in their
// environment (slurmstepd daemonizes out of slurmd's process group).
func (c *Cluster) killStrays() {
	if c.marker == "" {
		return
	}
	KillStrays(c.marker, "")
}

func (c *Cluster) release() {
	for _, l := range c.locks {
		_ = l.Close()
	}
	c.locks = nil
	if c.Dir != "" {
		_ = os.RemoveAll(c.Dir)
	}
}

func (c *Cluster) cleanup() {
	c.Stop()
	if c.tb.Failed() {
		c.tb.Logf("realslurm logs (%s):\n%s", c.Dir, c.Logs())
	}
	c.release()
}
