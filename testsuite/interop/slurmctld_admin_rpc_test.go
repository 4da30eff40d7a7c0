package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// adminConfKeys are the scontrol show config lines the admin RPCs change.
var adminConfKeys = regexp.MustCompile(`(?m)^(SlurmctldDebug|DebugFlags|SlurmSchedLogFile|SlurmSchedLogLevel|TopologyPlugin) +=.*$`)

// schedLogTime is the time stamp of a scheduler log line.
var schedLogTime = regexp.MustCompile(`\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\]`)

// adminShowConf is what scontrol show config says of those keys.
func adminShowConf(c *ctldharness.Cluster) string {
	out, _, err := c.Run("scontrol", "show", "config")
	if err != nil {
		return "show config: " + err.Error() + "\n"
	}
	return strings.Join(adminConfKeys.FindAllString(out, -1), "\n") + "\n"
}

// adminStep is one command of an admin scenario: as root, or as nobody.
type adminStep struct {
	nobody bool
	args   []string
}

func adminRun(c *ctldharness.Cluster, s adminStep) string {
	if !s.nobody {
		return ctldRun(c, s.args...)
	}
	out, errOut, err := c.RunAs(65534, 65534, s.args[0], s.args[1:]...)
	var b strings.Builder
	b.WriteString(out)
	if errOut != "" {
		b.WriteString("--- stderr\n" + errOut)
	}
	if err != nil {
		b.WriteString("--- exit: " + err.Error() + "\n")
	}
	return b.String()
}

// adminScenario runs the steps, each followed by the config keys, and
// then reports which of the log lines the controller wrote.
func adminScenario(steps []adminStep, logLines []string) func(*testing.T, *ctldharness.Cluster) string {
	return func(t *testing.T, c *ctldharness.Cluster) string {
		var b strings.Builder
		fmt.Fprintf(&b, "== start\n%s", adminShowConf(c))
		for _, s := range steps {
			who := "root"
			if s.nobody {
				who = "nobody"
			}
			fmt.Fprintf(&b, "== %s: %s\n%s", who, strings.Join(s.args, " "), ctldMasked(adminRun(c, s)))
			fmt.Fprintf(&b, "%s", adminShowConf(c))
		}
		logs, err := os.ReadFile(filepath.Join(c.Dir, "log", "slurmctld.log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range logLines {
			fmt.Fprintf(&b, "log %q: %v\n", l, strings.Contains(string(logs), l))
		}
		return b.String()
	}
}

func root(args ...string) adminStep   { return adminStep{args: args} }
func nobody(args ...string) adminStep { return adminStep{nobody: true, args: args} }

// TestSlurmctldAdminRPCs compares real and our slurmctld on scontrol's
// setdebug, setdebugflags, schedloglevel, show topology/frontend/
// burstbuffer/bbstat/assoc_mgr, update FrontendName=, token, sshare and
// strigger, without topology.conf or a scheduler log.
func TestSlurmctldAdminRPCs(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2})
	steps := []adminStep{
		root("scontrol", "setdebug", "debug2"),
		root("scontrol", "setdebug", "3"),
		root("scontrol", "setdebug", "12"),
		root("scontrol", "setdebug", "9"),
		root("scontrol", "setdebug", "quiet"),
		root("scontrol", "setdebug", "info"),
		nobody("scontrol", "setdebug", "debug"),
		root("scontrol", "setdebugflags", "+Backfill"),
		root("scontrol", "setdebugflags", "+SelectType"),
		root("scontrol", "setdebugflags", "+prio"),
		root("scontrol", "setdebugflags", "+priority"),
		root("scontrol", "setdebugflags", "-Backfill"),
		root("scontrol", "setdebugflags", "+Backfill", "+Gres"),
		root("scontrol", "setdebugflags", "Backfill,SelectType"),
		root("scontrol", "setdebugflags", "+Bogus"),
		nobody("scontrol", "setdebugflags", "+Backfill"),
		root("scontrol", "setdebug", "debug"),
		root("scontrol", "reconfigure"),
		root("scontrol", "setdebugflags", "-SelectType"),
		root("scontrol", "setdebugflags", "-Priority"),
		root("scontrol", "schedloglevel", "1"),
		nobody("scontrol", "schedloglevel", "1"),
		root("scontrol", "show", "topology"),
		root("scontrol", "show", "frontend"),
		root("scontrol", "show", "burstbuffer"),
		root("scontrol", "show", "bbstat"),
		root("scontrol", "show", "dwstat"),
		root("scontrol", "show", "frontend", "n1"),
		root("scontrol", "show", "topology", "n1"),
		root("scontrol", "update", "FrontendName=n1", "State=DRAIN", "Reason=x"),
		nobody("scontrol", "update", "FrontendName=n1", "State=DRAIN", "Reason=x"),
		root("sshare"),
		root("sshare", "-a", "-l"),
		nobody("sshare", "-u", "root"),
		root("scontrol", "show", "assoc_mgr"),
		root("scontrol", "show", "assoc_mgr", "flags=users"),
		nobody("scontrol", "show", "assoc_mgr"),
		root("scontrol", "token"),
		nobody("scontrol", "token"),
		nobody("scontrol", "token", "username=root"),
		root("strigger", "--get"),
		nobody("strigger", "--get"),
		nobody("strigger", "--set", "--node", "--down", "--program=/bin/true"),
		root("strigger", "--clear", "--id=7"),
		root("strigger", "--clear", "--jobid=12"),
		nobody("strigger", "--clear", "--id=7"),
	}
	logLines := []string{
		"Set debug level to 'debug2'", "Set debug level to 'info'", "Set debug level to 'debug5'",
		"set debug level request from non-super user uid=65534",
		"Set DebugFlags to Backfill", "Set DebugFlags to Priority,SelectType", "Set DebugFlags to Backfill,Priority,SelectType", "Set DebugFlags to none",
		"set debug flags request from non-super user uid=65534",
		"set scheduler log level failed: no log file!",
		"set scheduler log level request from non-super user uid=65534",
		"Security violation, REQUEST_TRIGGER_SET RPC from uid=65534",
		"_slurm_rpc_update_front_end for n1: Invalid node name specified",
		"Security violation, UPDATE_FRONT_END RPC from uid=65534",
		"_slurm_rpc_update_front_end for n1: Invalid user id",
	}
	want, got := ctldOnBoth(t, c, real, ours, adminScenario(steps, logLines))
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("admin RPCs differ:\n--- real slurmctld\n%s--- ours\n%s", want, got)
	}
}

// TestSlurmctldAdminTopology compares the two with TopologyPlugin=
// topology/tree, a topology.conf and a scheduler log file.
func TestSlurmctldAdminTopology(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir, err := os.MkdirTemp("", "ctldh-schedlog-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{
		"TopologyPlugin=topology/tree",
		"SlurmSchedLogFile=" + filepath.Join(dir, "sched.log"),
	}})
	topo := "# two leaves under one root\nSwitchName=s0 Nodes=n1 LinkSpeed=100\nSwitchName=s1 Nodes=n2\nSwitchName=top Switches=s[0-1]\n"
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "topology.conf"), []byte(topo), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []adminStep{
		root("scontrol", "show", "topology"),
		root("scontrol", "show", "topology", "n1"),
		root("scontrol", "show", "topology", "top"),
		nobody("scontrol", "show", "topology"),
		root("scontrol", "schedloglevel", "1"),
		root("scontrol", "schedloglevel", "0"),
		root("scontrol", "schedloglevel", "5"),
	}
	schedLog := filepath.Join(dir, "sched.log")
	collect := func(t *testing.T, c *ctldharness.Cluster) string {
		os.Remove(schedLog)
		out := adminScenario(steps, nil)(t, c)
		b, err := os.ReadFile(schedLog)
		if err != nil {
			return out + "sched.log: " + err.Error() + "\n"
		}
		return out + "sched.log:\n" + schedLogTime.ReplaceAllString(string(b), "[<time>]")
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real slurmctld:\n%s", want)
	if want != got {
		t.Errorf("topology differs:\n--- real slurmctld\n%s--- ours\n%s", want, got)
	}
}
