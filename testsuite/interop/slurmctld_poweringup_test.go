package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

var startTimeRE = regexp.MustCompile(`StartTime=(\S+)`)

// ctldStartTime is the StartTime scontrol shows for the job.
func ctldStartTime(c *ctldharness.Cluster, id uint32) string {
	out, _, _ := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(id))
	if m := startTimeRE.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// TestSlurmctldPowerSavePoweringUp compares what happens to a batch job
// placed on a node that is already POWERING_UP (scontrol power_up, its
// ResumeProgram called, the node not back yet). Real 22.05 treats it as
// a job on a powered-down node: reboot_job_nodes sets POWER_UP_NODE for
// nodes in booting_node_bitmap too, so the job is CONFIGURING, its script
// waits for the node, and its start time is reset once the node is up.
func TestSlurmctldPowerSavePoweringUp(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	// A longer ResumeTimeout than the other power tests: the node must
	// not time out while the job is looked at.
	c, dir := powerClusterResume(t, 60)
	out := filepath.Join(dir, "job.out")
	run := func(bin string, args []string) map[string]string {
		return powerRun(t, c, dir, bin, args, func(record func(string, string), wait func(string, time.Duration, func() bool)) {
			waitState := func(node, st string) {
				t.Helper()
				wait(node+" "+st, 120*time.Second, func() bool { return powerSinfo(c, node) == st })
			}
			_ = os.Remove(out)
			waitState("n1", "idle~")
			waitState("n2", "idle~")

			record("power_up n1", ctldRun(c, "scontrol", "update", "nodename=n1", "state=power_up"))
			wait("n1 resume", 60*time.Second, func() bool { return strings.Contains(powerLog(dir), "resume: n1") })
			waitState("n1", "idle#")
			record("n1 powering up", powerView(c))

			job := ctldSbatch(t, c, "-w", "n1", "-o", out, "--wrap", "echo ran")
			state := ctldWaitJob(t, c, job, 60*time.Second, "RUNNING", "CONFIGURING")
			record("job state", state)
			record("job squeue", ctldRun(c, "squeue", "-h", "-o", "%i %T %N %r"))
			record("job fields", ctldJobFields(c, job))
			record("node view", powerView(c))
			start := ctldStartTime(c, job)
			_, err := os.Stat(out)
			record("script ran before the node is up", fmt.Sprint(err == nil))

			powerMode(t, dir, "n1", "on")
			ctldWaitJob(t, c, job, 120*time.Second, "COMPLETED")
			ctldWaitFile(t, c, out, "ran\n", 30*time.Second)
			record("job done", ctldJobFields(c, job))
			record("start time kept", fmt.Sprint(start != "" && ctldStartTime(c, job) == start))
			record("calls", powerLog(dir))
		})
	}
	want := run(real, []string{"-c", "-i"})
	got := run(ours, []string{"-c"})
	powerCompare(t, want, got)
}
