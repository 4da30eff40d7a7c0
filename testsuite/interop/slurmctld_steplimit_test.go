package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// stepLimitScript runs two steps: step 0 (limit 5 minutes) in the
// background, then step 1 with a one-minute limit, which times out;
// then step 0's limit is lowered to one minute, under the minute and
// more it has run, so it times out at the next check. The job itself
// has no limit and ends normally after both.
const stepLimitScript = `#!/bin/sh
srun -n1 --overlap -t 5 sleep 300 &
p0=$!
i=0
until scontrol show step "$SLURM_JOB_ID.0" 2>/dev/null | grep -q StepId=; do
	i=$((i+1))
	[ $i -gt 120 ] && { echo "step 0 never started"; exit 3; }
	sleep 0.5
done
squeue -h -s -j "$SLURM_JOB_ID" -o "%i %l" | grep '\.0 '
srun -n1 --overlap -t 1 sleep 300
echo "step 1 srun exit $?"
scontrol update StepId="$SLURM_JOB_ID.0" TimeLimit=1
echo "update exit $?"
wait $p0
echo "step 0 srun exit $?"
`

var exitCodeRE = regexp.MustCompile(`ExitCode=\S+`)

var stepLimitLineRE = regexp.MustCompile(`\*\*\* STEP (\S+) ON \S+ CANCELLED AT \S+ DUE TO TIME LIMIT \*\*\*`)

// TestSlurmctldStepLimit compares the enforcement of step time limits
// (check_job_step_time_limit) between Debian's slurmctld and ours, with
// Debian's slurmd, srun and scontrol: a step started with srun -t 1 and
// a step whose limit scontrol lowers below its run time are killed by
// their node (REQUEST_KILL_TIMELIMIT for the step), which srun's output
// shows; the job goes on and completes. Times are masked and the output
// lines sorted (srun and slurmstepd write them concurrently). Slurm
// checks every 30 s, so this takes about 3 minutes on the two
// controllers together.
func TestSlurmctldStepLimit(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2})
	script := filepath.Join(t.TempDir(), "steplimit.sh")
	if err := os.WriteFile(script, []byte(stepLimitScript), 0o755); err != nil {
		t.Fatal(err)
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := filepath.Join(t.TempDir(), "job.out")
		slurmdLog := filepath.Join(c.Dir, "log", "slurmd-n1.log")
		var logFrom int64
		if fi, err := os.Stat(slurmdLog); err == nil {
			logFrom = fi.Size()
		}
		began := time.Now()
		id := ctldSbatch(t, c, "-o", out, "-n", "2", script)
		ctldWaitJob(t, c, id, 60*time.Second, "RUNNING", "COMPLETED")
		// Up to 90 s for step 1 under Slurm's 30 s cadence, 30 s more for
		// step 0, each killed after SIGTERM: 240 s is generous.
		st := ctldWaitJob(t, c, id, 240*time.Second, "COMPLETED", "FAILED")
		t.Logf("job %d %s after %v", id, st, time.Since(began).Round(time.Second))
		job, _, _ := c.Run("scontrol", "show", "job", fmt.Sprint(id))
		text, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		// slurmstepd also writes "*** STEP ... DUE TO TIME LIMIT ***" to
		// the step's stderr, but that copy is lost now and then when the
		// tasks' output closes first (a loaded .ci/run missed step 0's
		// under ours while slurmd logged it): the steps killed for their
		// limit are read from slurmd's log, where it always is.
		var lines []string
		for _, l := range strings.Split(strings.TrimRight(ctldMasked(string(text)), "\n"), "\n") {
			if !stepLimitLineRE.MatchString(l) {
				lines = append(lines, l)
			}
		}
		sort.Strings(lines)
		var killed []string
		if b, err := os.ReadFile(slurmdLog); err == nil && int64(len(b)) >= logFrom {
			for _, m := range stepLimitLineRE.FindAllStringSubmatch(string(b[logFrom:]), -1) {
				killed = append(killed, m[1])
			}
		}
		sort.Strings(killed)
		return map[string]string{
			"job":    st + " " + strings.Join(exitCodeRE.FindAllString(job, -1), " ") + "\n",
			"output": strings.Join(lines, "\n") + "\n",
			"killed": strings.Join(killed, " ") + "\n",
		}
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	if testing.Verbose() {
		t.Logf("real slurmctld:\njob: %soutput:\n%s", want["job"], want["output"])
	}
	ctldCompare(t, want, got)
}
