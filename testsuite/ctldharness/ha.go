package ctldharness

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// Controller is one SlurmctldHost entry of a cluster with backup
// controllers: a host name (which the controller's process gets as its
// own, in a UTS namespace) and the loopback address it listens on.
type Controller struct {
	Host string
	Addr string
}

// SetControllers replaces the configuration's SlurmctldHost=localhost with
// one SlurmctldHost line per controller, in order (the first is the
// primary). Call it after New and before StartHA.
func (c *Cluster) SetControllers(ctls []Controller) {
	c.tb.Helper()
	var lines []string
	for _, h := range ctls {
		lines = append(lines, "SlurmctldHost="+h.Host+"("+h.Addr+")")
	}
	text := strings.Replace(c.confText(), "SlurmctldHost=localhost\n", strings.Join(lines, "\n")+"\n", 1)
	if err := os.WriteFile(c.Conf, []byte(text), 0o644); err != nil {
		c.tb.Fatal(err)
	}
	// The controllers' private /etc/hosts: real slurmctld resolves its
	// SlurmctldHost name.
	hosts, _ := os.ReadFile("/etc/hosts")
	for _, h := range ctls {
		hosts = append(hosts, []byte(h.Addr+"\t"+h.Host+"\n")...)
	}
	if err := os.WriteFile(c.hostsFile(), hosts, 0o644); err != nil {
		c.tb.Fatal(err)
	}
}

func (c *Cluster) hostsFile() string { return filepath.Join(c.Dir, "etc", "hosts") }

// HAAvailable reports whether controllers can be given their own host
// names here (unshare(1) with UTS and mount namespaces, as root).
func HAAvailable() bool {
	if _, err := exec.LookPath("unshare"); err != nil {
		return false
	}
	return exec.Command("unshare", "--uts", "--mount", "true").Run() == nil
}

// StartController launches controller h with the binary ctld (args, then
// -D -f conf) as the host h.Host would run it: in its own UTS namespace
// named h.Host, with a private run directory (so each has its own
// SlurmctldPidFile), the controllers' names in its /etc/hosts, and its
// own log file, log/slurmctld-<host>.log. Its
// process is called "slurmctld-<host>". It does not wait for it.
func (c *Cluster) StartController(h Controller, ctld string, args ...string) {
	c.tb.Helper()
	run := filepath.Join(c.Dir, "run-"+h.Host)
	if err := os.MkdirAll(run, 0o755); err != nil {
		c.tb.Fatal(err)
	}
	script := `hostname "$1" && mount --bind "$2" "$3" && mount --bind "$4" /etc/hosts && shift 4 && exec "$@"`
	argv := []string{"--uts", "--mount", "sh", "-c", script, "sh", h.Host, run, filepath.Join(c.Dir, "run"), c.hostsFile(), ctld}
	argv = append(argv, args...)
	argv = append(argv, "-D", "-f", c.Conf, "-L", filepath.Join(c.Dir, "log", "slurmctld-"+h.Host+".log"))
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		c.tb.Fatal(err)
	}
	if _, err := c.launch("slurmctld-"+h.Host, unshare, argv...); err != nil {
		c.tb.Fatal(err)
	}
}

// StartHA empties the state, starts every controller (ctlds[i] is the
// binary of ctls[i]) and every node's slurmd, and waits until `scontrol
// ping` says the primary is UP and every node has registered.
func (c *Cluster) StartHA(ctls []Controller, ctlds []string, args ...string) {
	c.tb.Helper()
	if err := c.reset(); err != nil {
		c.tb.Fatal(err)
	}
	// The primary first, the backups once it answers: started together
	// on an empty StateSaveLocation, real slurmctld's backup may create
	// the clustername file while the primary reads it still empty, and
	// the primary then refuses to start ("read \"\" from the state
	// files").
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c.StartController(ctls[0], ctlds[0], args...)
	if err := c.poll(ctx, func() bool {
		out, _, _ := c.Run("scontrol", "ping")
		return strings.Contains(out, "Slurmctld(primary) at "+ctls[0].Host+" is UP")
	}); err != nil {
		c.tb.Fatalf("primary controller not answering scontrol ping: %v\n%s", err, c.Logs())
	}
	for i := 1; i < len(ctls); i++ {
		c.StartController(ctls[i], ctlds[i], args...)
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
	if err := c.poll(ctx, func() bool {
		out, _, err := c.Run("sinfo", "-h", "-N", "-o", "%N %T")
		if err != nil {
			return false
		}
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && !strings.HasPrefix(f[1], "unknown") && !strings.HasSuffix(f[1], "*") {
				n++
			}
		}
		return n == want
	}); err != nil {
		c.tb.Fatalf("nodes did not register: %v\n%s", err, c.Logs())
	}
}

// KillProc SIGKILLs the daemon called name (a crash) and forgets it.
func (c *Cluster) KillProc(name string) {
	for i, p := range c.procs {
		if p.Name() == name {
			p.Kill()
			c.procs = append(c.procs[:i], c.procs[i+1:]...)
			return
		}
	}
}

// StopProc stops the daemon called name (SIGTERM, SIGKILL after 10 s) and
// forgets it.
func (c *Cluster) StopProc(name string) {
	for i, p := range c.procs {
		if p.Name() == name {
			realslurm.StopProcs([]*realslurm.Proc{p})
			c.procs = append(c.procs[:i], c.procs[i+1:]...)
			return
		}
	}
}

// ForgetExited waits up to timeout for the daemon called name to exit by
// itself and forgets it; false if it is still running.
func (c *Cluster) ForgetExited(name string, timeout time.Duration) bool {
	for i, p := range c.procs {
		if p.Name() == name {
			select {
			case <-p.Done():
				c.procs = append(c.procs[:i], c.procs[i+1:]...)
				return true
			case <-time.After(timeout):
				return false
			}
		}
	}
	return false
}

// CheckRaces fails the test if a controller started by StartController
// (built with -race) reported a data race on its standard error.
func (c *Cluster) CheckRaces() {
	files, _ := filepath.Glob(filepath.Join(c.Dir, "log", "slurmctld-*.stdout"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "WARNING: DATA RACE") {
			c.tb.Errorf("data race in %s:\n%s", filepath.Base(f), b)
		}
	}
}
