package interop

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

var noKillJobRE = regexp.MustCompile(`(JobState|Reason|NodeList|NumNodes|NumCPUs|NumTasks|CPUs/Task|BatchHost|ExitCode|TRES|AllocNode:Sid|MinCPUsNode|Features)=\S+`)

// TestSlurmctldNoKillNodeDown compares a batch job submitted with
// --no-kill whose second node goes DOWN (scontrol update state=down)
// while two steps run there: the job keeps running on its other nodes
// (kill_running_job_by_node_name's excise_node_from_job), the step of
// srun --no-kill loses only its tasks on the node, the other step is
// killed, and each srun is told of the failure (SRUN_NODE_FAIL).
func TestSlurmctldNoKillNodeDown(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Debug logs: the step kill on the DOWN node failed to end the
	// plain step twice in CI (about one run in fifteen, never on a
	// quiet machine); the logs of a failing run show where it stopped.
	c := ctldharness.New(t, ctldharness.Options{Nodes: 3, CPUs: 2,
		ExtraConf: []string{"SlurmctldDebug=debug2", "SlurmdDebug=debug3"}})
	script := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(script, fmt.Appendf(nil, `#!/bin/sh
srun --no-kill --overlap -N3 %[1]s/task.sh >%[1]s/nokill.out 2>%[1]s/nokill.err &
i=0; until [ $(ls %[1]s/ready-0-* 2>/dev/null | wc -l) -eq 3 ] || [ $i -ge 600 ]; do sleep 0.1; i=$((i+1)); done
srun --overlap -N2 -r1 %[1]s/task.sh >%[1]s/plain.out 2>%[1]s/plain.err &
wait
`, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	// A task's slurmstepd has connected srun's I/O before it starts the
	// task: the marker says srun knows the node.
	if err := os.WriteFile(filepath.Join(dir, "task.sh"), fmt.Appendf(nil, `#!/bin/sh
touch %[1]s/ready-$SLURM_STEP_ID-$SLURMD_NODENAME
exec sleep 300
`, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	steps := func(job uint32) string {
		out, _, _ := c.Run("squeue", "-h", "-s", "-j", fmt.Sprint(job), "-o", "%i %N")
		return out
	}
	// Whether srun reports the killed task of the failed node depends on
	// whether that node's exit message beats srun's own exit (srun has
	// counted the task as gone since SRUN_NODE_FAIL): left out, as is
	// the order of the rest.
	srunLines := func(s string) string {
		var keep []string
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			if !strings.HasPrefix(l, "srun: error: n2: task ") {
				keep = append(keep, l)
			}
		}
		slices.Sort(keep)
		return strings.Join(keep, "\n")
	}
	readErr := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		left, _ := filepath.Glob(filepath.Join(dir, "ready-*"))
		for _, f := range append(left, filepath.Join(dir, "nokill.err"), filepath.Join(dir, "plain.err")) {
			os.Remove(f)
		}
		job := ctldSbatch(t, c, "-D", dir, "-o", "/dev/null", "-k", "-N", "3", script)
		ctldWaitJob(t, c, job, 60*time.Second, "RUNNING")
		two := fmt.Sprintf("%[1]d.0 n[1-3]\n%[1]d.1 n[2-3]\n", job)
		ready := func() int {
			m, _ := filepath.Glob(filepath.Join(dir, "ready-*"))
			return len(m)
		}
		if err := c.Poll(60*time.Second, func() bool { return ready() == 5 && strings.Contains(steps(job), two) }); err != nil {
			t.Fatalf("steps %q, %d tasks, want both running with 5 tasks", steps(job), ready())
		}
		// The job as the update left it; its steps and nodes change
		// as the slurmds answer, so they are looked at once settled.
		lookJob := func(tag string) {
			show, _, _ := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(job))
			out[tag+": job"] = fmt.Sprintln(noKillJobRE.FindAllString(show, -1))
			out[tag+": resized"] = fmt.Sprint(strings.Contains(show, "ResizeTime="))
			out[tag+": squeue"] = ctldRun(c, "squeue", "-h", "-o", "%i %T %D %C %N")
		}
		look := func(tag string) {
			lookJob(tag)
			out[tag+": steps"] = steps(job)
			out[tag+": nodes"] = ctldNodeStates(c)
		}
		look("1 running")
		out["2 down: update"] = ctldRun(c, "scontrol", "update", "nodename=n2", "state=down", "reason=test")
		lookJob("2 down")
		// The plain srun ends: its step was killed on all its nodes.
		if err := c.Poll(60*time.Second, func() bool { return !strings.Contains(steps(job), fmt.Sprintf("%d.1 ", job)) }); err != nil {
			show, _, _ := c.Run("scontrol", "show", "step", fmt.Sprint(job))
			ps, _ := exec.Command("ps", "-eo", "pid,ppid,stat,lstart,args").Output()
			var procs []string
			for _, l := range strings.Split(string(ps), "\n") {
				if strings.Contains(l, "slurmstepd") || strings.Contains(l, "sleep 300") {
					procs = append(procs, l)
				}
			}
			t.Fatalf("steps %q, want step 1 gone\n%s\nprocesses:\n%s", steps(job), show, strings.Join(procs, "\n"))
		}
		if err := c.Poll(30*time.Second, func() bool { return strings.Contains(readErr("plain.err"), "\n") }); err != nil {
			t.Logf("plain srun wrote nothing")
		}
		// n2's slurmd answers the step kill: ReturnToService=2 brings
		// it back (node_did_resp).
		if err := c.Poll(30*time.Second, func() bool { return !strings.Contains(ctldNodeStates(c), "n2=down") }); err != nil {
			t.Logf("n2 still down")
		}
		look("3 step gone")
		// A new step from outside the job gets the nodes left.
		o, e, err := c.Run("srun", fmt.Sprintf("--jobid=%d", job), "--overlap", "-l", "hostname")
		out["3 new step"] = fmt.Sprintln(srunLines(o), srunLines(e), err)
		out["3 plain srun"] = srunLines(readErr("plain.err"))
		out["3 nokill srun"] = srunLines(readErr("nokill.err"))
		out["4 scancel"] = ctldRun(c, "scancel", fmt.Sprint(job))
		ctldWaitJob(t, c, job, 60*time.Second, "CANCELLED")
		look("4 cancelled")
		if err := c.Poll(60*time.Second, func() bool { return ctldNodeStates(c) == "n1=idle n2=idle n3=idle" }); err != nil {
			t.Fatalf("nodes %q after the job, want idle", ctldNodeStates(c))
		}
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	ctldCompareShown(t, want, got)
}

// TestSlurmctldNoKillSlurmdTimeout: a --no-kill job whose node stops
// answering goes on without it once SlurmdTimeout sets the node DOWN.
func TestSlurmctldNoKillSlurmdTimeout(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{"SlurmdTimeout=6"}})
	collect := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		defer c.StartNode("n2") // for the next controller
		job := ctldSbatch(t, c, "-D", dir, "-o", "/dev/null", "-k", "-N", "2", "--wrap", "sleep 300")
		ctldWaitJob(t, c, job, 60*time.Second, "RUNNING")
		c.StopNode("n2")
		if err := c.Poll(90*time.Second, func() bool { return strings.Contains(ctldNodeStates(c), "n2=down") }); err != nil {
			t.Fatalf("nodes %q, want n2 down", ctldNodeStates(c))
		}
		show, _, _ := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(job))
		out["job"] = fmt.Sprintln(noKillJobRE.FindAllString(show, -1))
		out["squeue"] = ctldRun(c, "squeue", "-h", "-o", "%i %T %D %C %N")
		out["nodes"] = ctldNodeStates(c)
		out["scancel"] = ctldRun(c, "scancel", fmt.Sprint(job))
		ctldWaitJob(t, c, job, 60*time.Second, "CANCELLED")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	ctldCompareShown(t, want, got)
}

// TestSlurmctldNoKillBatchHostDown: a --no-kill batch job whose batch
// host (n1) goes DOWN loses it as any other node: the batch step is one
// of the steps on the node, killed there (kill_step_on_node), so the
// script ends and with it the job: FAILED, on n2 alone.
func TestSlurmctldNoKillBatchHostDown(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2})
	collect := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		job := ctldSbatch(t, c, "-D", dir, "-o", "/dev/null", "-k", "-N", "2", "--wrap", "srun --no-kill --overlap -N2 sleep 300")
		ctldWaitJob(t, c, job, 60*time.Second, "RUNNING")
		if err := c.Poll(60*time.Second, func() bool {
			s, _, _ := c.Run("squeue", "-h", "-s", "-j", fmt.Sprint(job), "-o", "%i")
			return strings.Contains(s, fmt.Sprintf("%d.0", job))
		}); err != nil {
			t.Fatalf("job %d: step 0 never started", job)
		}
		out["1 down: update"] = ctldRun(c, "scontrol", "update", "nodename=n1", "state=down", "reason=test")
		end := ctldWaitJob(t, c, job, 60*time.Second, "COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL")
		out["2 ended: state"] = end
		show, _, _ := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(job))
		// The SIGKILL reaches the script's shell and its srun in either
		// order: the shell killed (ExitCode 0:9, shown with Reason
		// JobLaunchFailure) or the shell exiting 137 after its srun.
		// Real slurmctld shows both from run to run.
		killed := strings.NewReplacer("Reason=JobLaunchFailure ExitCode=0:9", "<killed>",
			"Reason=NonZeroExitCode ExitCode=137:0", "<killed>")
		out["2 ended: job"] = killed.Replace(fmt.Sprintln(noKillJobRE.FindAllString(show, -1)))
		if err := c.Poll(60*time.Second, func() bool {
			s := ctldNodeStates(c)
			return !strings.Contains(s, "n2=alloc") && !strings.Contains(s, "n2=mix") && !strings.Contains(s, "compl")
		}); err != nil {
			t.Logf("nodes %q", ctldNodeStates(c))
		}
		out["3 nodes"] = ctldNodeStates(c)
		ctldRun(c, "scontrol", "update", "nodename=n1", "state=resume")
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	ctldCompareShown(t, want, got)
}
