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

// lateRefusalCases are submissions slurmctld refuses. Some it refuses
// before the job record exists (no id used), some in _job_create after it
// (the record is purged, the id is used up), and some in job_allocate's
// select test (the record stays, FAILED with reason BadConstraints, until
// MinJobAge). The key is the case name; "-J name" and the script are
// added to sbatch lines.
var lateRefusalCases = []struct {
	name string
	args []string
}{
	{"mem", []string{"sbatch", "--mem=5000"}},
	{"cpus", []string{"sbatch", "-c", "4"}},
	{"partition", []string{"sbatch", "-p", "nosuch"}},
	{"feature", []string{"sbatch", "-C", "nosuch"}},
	{"dependency", []string{"sbatch", "-d", "afterok:{next}"}},
	{"nodelist", []string{"sbatch", "-w", "n1", "--mem=2000"}},
	{"array", []string{"sbatch", "--array=1-3", "--mem=5000"}},
	{"salloc", []string{"salloc", "-J", "salloc", "--mem=5000", "true"}},
	{"srun", []string{"srun", "-J", "srun", "-c", "4", "true"}},
	{"srun-immediate", []string{"srun", "-J", "srun-immediate", "-I10", "--mem=5000", "true"}},
	{"het-batch", []string{"sbatch", "-J", "het-batch", "-o", "/dev/null", "-n1", ":", "-n1", "--mem=5000"}},
	{"het-salloc", []string{"salloc", "-J", "het-salloc", "-n1", ":", "-n1", "--mem=5000", "true"}},
}

// lateRefusalQueue lists every job whatever its state.
var lateRefusalQueue = []string{"squeue", "-h", "-t", "all", "-o", "%i %j %T %r %P %D"}

// lateRefusalJob keeps the lines of scontrol show job that do not depend
// on the clock or the machine.
var lateRefusalJob = regexp.MustCompile(`(?m)^\s*(JobId|UserId|Priority|JobState|Requeue|RunTime|SubmitTime|AccrueTime|StartTime|Partition|ReqNodeList|NumNodes|TRES|MinCPUsNode|Features|Command|StdOut)=.*$`)

var submitted = regexp.MustCompile(`Submitted batch job (\d+)`)

// lateRefusalCollect runs every case, then looks at the queue, the job
// just before a held probe job (the refused one, if it used an id), and
// the probe's id; at the end the controller is restarted (state kept)
// and the queue and sdiag's job counts are taken again.
func lateRefusalCollect(t *testing.T, c *ctldharness.Cluster, ctld string) map[string]string {
	out := map[string]string{}
	script := filepath.Join(c.Dir, "late.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntrue\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	next := 1
	for _, cs := range lateRefusalCases {
		var args []string
		for _, a := range cs.args {
			args = append(args, strings.ReplaceAll(a, "{next}", fmt.Sprint(next)))
		}
		if args[0] == "sbatch" {
			if strings.Contains(strings.Join(args, " "), " : ") {
				args = append(append([]string(nil), args...), script)
			} else {
				args = append([]string{"sbatch", "-J", cs.name, "-o", "/dev/null"}, args[1:]...)
				args = append(args, "--wrap", "true")
			}
		}
		out[cs.name] = ctldRun(c, args...)
		probe := ctldRun(c, "sbatch", "-H", "-J", "probe", "-o", "/dev/null", "--wrap", "true")
		out[cs.name+" | probe"] = probe
		m := submitted.FindStringSubmatch(probe)
		if m == nil {
			t.Errorf("%s: probe job refused: %s", cs.name, probe)
			continue
		}
		var id int
		fmt.Sscan(m[1], &id)
		next = id + 1
		job := ctldRun(c, "scontrol", "show", "job", fmt.Sprint(id-1))
		out[cs.name+" | job"] = strings.Join(lateRefusalJob.FindAllString(job, -1), "\n") + "\n"
		if !strings.Contains(job, "JobId=") {
			out[cs.name+" | job"] = job
		}
		out[cs.name+" | queue"] = sortedLines(ctldRun(c, lateRefusalQueue...))
		ctldRun(c, "scancel", m[1])
	}
	out["sdiag"] = sdiagJobCounts(c)
	c.StopCtld()
	c.StartCtld(ctld)
	out["restart | queue"] = sortedLines(ctldRun(c, lateRefusalQueue...))
	job := ctldRun(c, "scontrol", "show", "job", "1")
	out["restart | job 1"] = strings.Join(lateRefusalJob.FindAllString(job, -1), "\n") + "\n"
	return out
}

// sdiagJobCounts keeps sdiag's job counters. Jobs pending and running
// are a sample the controller takes every JOB_COUNT_INTERVAL (30 s), at
// an instant the test does not choose: left out (CI saw real's sample
// catch a probe job pending that ours' did not).
func sdiagJobCounts(c *ctldharness.Cluster) string {
	o := ctldRun(c, "sdiag")
	var lines []string
	for _, l := range strings.Split(o, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Jobs pending:") || strings.HasPrefix(l, "Jobs running:") {
			continue
		}
		if strings.HasPrefix(l, "Jobs ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestSlurmctldLateRefusal compares what real slurmctld and ours keep of
// a refused submission: the command's output, the queue (every state),
// the record of the refused job and the next job id, with real slurmd
// and real commands, and the records after a restart.
func TestSlurmctldLateRefusal(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, RealMemory: 1000,
		ExtraConf: []string{"SelectTypeParameters=CR_Core_Memory"}})
	c.Start(real, "-c", "-i")
	want := lateRefusalCollect(t, c, real)
	c.Stop()
	c.Start(ours, "-c")
	got := lateRefusalCollect(t, c, ours)
	c.Stop()
	submitChecksCompare(t, want, got)
	if testing.Verbose() {
		for _, cs := range lateRefusalCases {
			t.Logf("%s:\n%s%s%s", cs.name, ctldMasked(want[cs.name]), want[cs.name+" | job"], want[cs.name+" | queue"])
		}
		t.Logf("sdiag:\n%s", want["sdiag"])
	}
}
