package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// cloudResume starts the slurmd of each node it is asked to resume (as
// a cloud provider would boot an instance), in the background, recording
// its pid for cloudSuspend. -b reports the start as the boot time, after
// the resume request.
const cloudResume = `#!/bin/sh
echo "resume $1" >> %[1]s/power.log
for h in $(%[2]s show hostnames "$1"); do
	%[3]s -D -N "$h" -f "$SLURM_CONF" -b >> %[1]s/slurmd-$h.out 2>&1 &
	echo $! > %[1]s/pid.$h
done
exit 0
`

// cloudSuspend stops the slurmds it started, with SIGKILL: Debian's
// slurmctld runs the programs with SIGTERM blocked, which its slurmd
// inherits.
const cloudSuspend = `#!/bin/sh
echo "suspend $1" >> %[1]s/power.log
for h in $(%[2]s show hostnames "$1"); do
	kill -KILL "$(cat %[1]s/pid.$h)" 2>/dev/null
done
exit 0
`

// TestSlurmctldCloudNodes compares a State=CLOUD node between Debian's
// slurmctld and ours: it starts powered down and hidden from sinfo and
// scontrol (PrivateData has no cloud) unless asked for by name, shows up while a job resumes it
// through ResumeProgram (its slurmd only starts then), runs the job
// (whose script sees the node's address in SLURM_NODE_ALIASES), and
// stays up across a restart of the controller, and once idle for
// SuspendTime is suspended and hidden again.
func TestSlurmctldCloudNodes(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	slurmd := ctldharness.RealSbin(t, "slurmd")
	scontrol := oracle.Binary(t, "scontrol")
	dir, write := programDir(t, "cloud-")
	resume := filepath.Join(dir, "resume.sh")
	suspend := write("suspend.sh", fmt.Sprintf(cloudSuspend, dir, scontrol))
	c := ctldharness.New(t, ctldharness.Options{
		Nodes: 2, CPUs: 1,
		NodeConf:   map[string]string{"n2": "State=CLOUD"},
		NotStarted: []string{"n2"},
		ExtraConf: []string{
			"SuspendProgram=" + suspend,
			"ResumeProgram=" + resume,
			"SuspendTime=6",
			"SuspendTimeout=4",
			"ResumeTimeout=60",
			"SuspendExcNodes=n1",
			"SlurmctldParameters=power_save_interval=1",
		},
	})
	write("resume.sh", fmt.Sprintf(cloudResume, dir, scontrol, slurmd))
	view := func() string {
		var b strings.Builder
		out, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%N %T")
		b.WriteString(sortedLines(out))
		b.WriteString(ctldRun(c, "sinfo", "-h", "-o", "%P %a %D %T %N"))
		// One node by name goes through REQUEST_NODE_INFO_SINGLE, which
		// shows a powered-down CLOUD node.
		b.WriteString(ctldRun(c, "sinfo", "-h", "-N", "-n", "n2", "-o", "%N %T"))
		show, _, _ := c.Run("scontrol", "show", "node", "n2")
		if m := powerStateRE.FindStringSubmatch(show); m != nil {
			fmt.Fprintf(&b, "n2 State=%s\n", m[1])
		} else {
			b.WriteString(show)
		}
		return b.String()
	}
	hasN2 := func() bool {
		out, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%N")
		return strings.Contains(out, "n2")
	}
	collect := func(t *testing.T, c *ctldharness.Cluster, bin string, restartArgs []string) map[string]string {
		out := map[string]string{}
		// The harness does not know the slurmd ResumeProgram started:
		// it must not outlive the run (its port is the next run's).
		defer func() {
			if b, err := os.ReadFile(filepath.Join(dir, "pid.n2")); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				_ = os.Remove(filepath.Join(dir, "pid.n2"))
			}
		}()
		_ = os.Remove(filepath.Join(dir, "power.log"))
		_ = os.Remove(filepath.Join(dir, "slurmd-n2.out"))
		poll := func(what string, ok func() bool) {
			t.Helper()
			if err := c.Poll(120*time.Second, ok); err != nil {
				calls, _ := os.ReadFile(filepath.Join(dir, "power.log"))
				slurmdOut, _ := os.ReadFile(filepath.Join(dir, "slurmd-n2.out"))
				t.Fatalf("%s: %v\n%s\n%s\n%s", what, err, view(), calls, slurmdOut)
			}
		}
		out["1 start"] = view()
		out["1 start: scontrol show node"] = ctldRun(c, "scontrol", "show", "node", "n2")
		out["1 start: partition nodes"] = ctldRun(c, "scontrol", "-o", "show", "partition", "debug")

		aliases := filepath.Join(dir, "aliases")
		_ = os.Remove(aliases)
		job := ctldSbatch(t, c, "-w", "n2", "-o", "/dev/null", "--wrap", "echo \"$SLURM_NODE_ALIASES\" > "+aliases)
		out["2 job"] = ctldWaitJob(t, c, job, 60*time.Second, "CONFIGURING", "RUNNING")
		poll("n2 resumed", func() bool {
			b, _ := os.ReadFile(filepath.Join(dir, "power.log"))
			return strings.Contains(string(b), "resume n2")
		})
		poll("job completed", func() bool { return ctldJobState(c, job) == "COMPLETED" })
		out["3 job done"] = ctldJobFields(c, job)
		// The batch script learns the CLOUD node's address from the
		// job's alias list.
		b, _ := os.ReadFile(aliases)
		out["3 SLURM_NODE_ALIASES"] = string(b)
		poll("n2 idle", func() bool { return powerSinfo(c, "n2") == "idle" })
		out["3 n2 up"] = view()

		// A restart keeps the node up (its saved state, not slurm.conf's
		// powered down).
		c.StopCtld()
		c.StartCtld(bin, restartArgs...)
		out["3 n2 up after restart"] = view()

		poll("n2 hidden again", func() bool { return !hasN2() })
		out["4 suspended"] = view()
		b, _ = os.ReadFile(filepath.Join(dir, "power.log"))
		out["4 calls"] = string(b)
		slurmdOut, _ := os.ReadFile(filepath.Join(dir, "slurmd-n2.out"))
		t.Logf("program calls:\n%s\nn2's slurmd:\n%s", b, slurmdOut)
		return out
	}
	c.Start(real, "-c", "-i")
	want := collect(t, c, real, []string{"-i"})
	c.Stop()
	c.Start(ours, "-c")
	got := collect(t, c, ours, nil)
	c.Stop()
	if testing.Verbose() {
		for _, k := range []string{"1 start", "1 start: scontrol show node", "2 job", "3 SLURM_NODE_ALIASES", "3 n2 up", "3 n2 up after restart", "4 suspended"} {
			t.Logf("%s (real):\n%s", k, want[k])
		}
	}
	ctldCompare(t, want, got)
}
