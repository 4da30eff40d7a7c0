package interop

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// Job suspend and resume (scontrol suspend / resume), end to end: our
// controller orders the nodes (REQUEST_SUSPEND_INT), Debian's real slurmd
// or ours stops the job's processes, the real commands show the state.

// suspendScript counts to n, one step every 0.1 s, writing its pid once
// and the count each time; the count stops moving while the job is
// stopped.
func suspendScript(dir string, n int) string {
	return fmt.Sprintf("#!/bin/bash\necho $$ > %s/pid.$SLURM_JOB_ID\n"+
		"for i in $(seq 1 %d); do echo $i > %s/count.$SLURM_JOB_ID.tmp; mv %s/count.$SLURM_JOB_ID.tmp %s/count.$SLURM_JOB_ID; sleep 0.1; done\n",
		dir, n, dir, dir, dir)
}

func suspendReadInt(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return v
}

// procState is the state letter of /proc/pid/stat ("" when gone).
func suspendProcState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

func suspendST(c *ctldharness.Cluster, id uint32) string {
	o, _, _ := c.Run("squeue", "-h", "-j", strconv.Itoa(int(id)), "-o", "%t")
	return strings.TrimSpace(o)
}

// TestSlurmctldSuspendResume: a counting batch job is suspended (squeue
// ST S, JobState=SUSPENDED with a SuspendTime, the script's process
// stopped and its count frozen), resumed (it counts again) and ends
// COMPLETED; an ordinary user's suspend is refused with Slurm's message.
// Our controller with Debian's slurmd and with ours (process groups, and
// proctrack/cgroup's freezer), and Debian's controller with our slurmd:
// each side decodes the other's REQUEST_SUSPEND_INT.
func TestSlurmctldSuspendResume(t *testing.T) {
	ours := ctldBuildOurs(t)
	real := ctldharness.RealSbin(t, "slurmctld")
	ctldharness.RealSbin(t, "slurmd")
	for _, tc := range []struct {
		name, ctld, slurmd string
	}{
		{"our slurmctld, real slurmd", ours, "real"},
		{"our slurmctld, our slurmd", ours, "ours"},
		{"our slurmctld, our slurmd, cgroup", ours, "cgroup"},
		{"real slurmctld, our slurmd", real, "ours"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			opts := ctldharness.Options{Nodes: 1, CPUs: 1}
			if tc.slurmd != "real" {
				opts.OurSlurmd = buildSlurmd(t)
			}
			if tc.slurmd == "cgroup" {
				// The freezer stops the step; job ids apart from other
				// clusters' step cgroups on this host.
				opts.ExtraConf = []string{"ProctrackType=proctrack/cgroup",
					fmt.Sprintf("FirstJobId=%d", 100_000+rand.IntN(1_000_000)*10)}
			}
			c := ctldharness.New(t, opts)
			if tc.slurmd == "cgroup" {
				cg := "CgroupPlugin=autodetect\n"
				if err := os.WriteFile(filepath.Join(filepath.Dir(c.Conf), "cgroup.conf"), []byte(cg), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"-c"}
			if tc.ctld == real {
				args = append(args, "-i")
			}
			c.Start(tc.ctld, args...)
			t.Cleanup(c.Stop)
			checkSuspendResume(t, c)
		})
	}
}

func checkSuspendResume(t *testing.T, c *ctldharness.Cluster) {
	dir := c.Dir
	script := filepath.Join(dir, "count.sh")
	if err := os.WriteFile(script, []byte(suspendScript(dir, 60)), 0o755); err != nil {
		t.Fatal(err)
	}
	id := ctldSbatch(t, c, "-o", "/dev/null", "-t", "5", script)
	sid := strconv.Itoa(int(id))
	countFile := filepath.Join(dir, "count."+sid)
	ctldWaitJob(t, c, id, 60*time.Second, "RUNNING")
	if err := c.Poll(60*time.Second, func() bool { return suspendReadInt(countFile) >= 2 }); err != nil {
		t.Fatalf("job %d does not count: %v", id, err)
	}
	pid := suspendReadInt(filepath.Join(dir, "pid."+sid))
	if pid <= 0 {
		t.Fatalf("no pid from job %d", id)
	}

	// An ordinary user may not suspend, whoever owns the job.
	o, e, err := c.RunAs(65534, 65534, "scontrol", "suspend", sid)
	if err == nil || o != "" || e != "Access/permission denied for job "+sid+"\n" {
		t.Errorf("nobody: scontrol suspend: %v %q %q", err, o, e)
	}

	if o, e, err := c.Run("scontrol", "suspend", sid); err != nil || o != "" || e != "" {
		t.Fatalf("scontrol suspend: %v %q %q", err, o, e)
	}
	if st := suspendST(c, id); st != "S" {
		t.Errorf("squeue ST after suspend: %q", st)
	}
	show, _, _ := c.Run("scontrol", "show", "job", sid)
	if !strings.Contains(show, "JobState=SUSPENDED ") || !regexp.MustCompile(`SuspendTime=\d{4}-`).MatchString(show) {
		t.Errorf("scontrol show job after suspend:\n%s", show)
	}
	// The script's process is stopped (SIGTSTP, then SIGSTOP) ...
	if err := c.Poll(60*time.Second, func() bool { return suspendProcState(pid) == "T" }); err != nil {
		t.Fatalf("process %d of job %d not stopped (state %q): %v", pid, id, suspendProcState(pid), err)
	}
	// ... and counts no more.
	frozen := suspendReadInt(countFile)
	time.Sleep(1500 * time.Millisecond)
	if n := suspendReadInt(countFile); n != frozen {
		t.Errorf("suspended job counted from %d to %d", frozen, n)
	}

	if o, e, err := c.Run("scontrol", "resume", sid); err != nil || o != "" || e != "" {
		t.Fatalf("scontrol resume: %v %q %q", err, o, e)
	}
	if st := suspendST(c, id); st != "R" {
		t.Errorf("squeue ST after resume: %q", st)
	}
	if err := c.Poll(60*time.Second, func() bool { return suspendReadInt(countFile) > frozen }); err != nil {
		t.Fatalf("resumed job %d does not count on from %d: %v", id, frozen, err)
	}
	ctldWaitJob(t, c, id, 90*time.Second, "COMPLETED")
	if n := suspendReadInt(countFile); n != 60 {
		t.Errorf("job ended at count %d, want 60", n)
	}

	// A suspended job that is cancelled goes, processes and all.
	id = ctldSbatch(t, c, "-o", "/dev/null", "-t", "5", script)
	sid = strconv.Itoa(int(id))
	ctldWaitJob(t, c, id, 60*time.Second, "RUNNING")
	if err := c.Poll(60*time.Second, func() bool { return suspendReadInt(filepath.Join(dir, "pid."+sid)) > 0 }); err != nil {
		t.Fatalf("job %d wrote no pid: %v", id, err)
	}
	pid = suspendReadInt(filepath.Join(dir, "pid."+sid))
	if o, e, err := c.Run("scontrol", "suspend", sid); err != nil {
		t.Fatalf("scontrol suspend: %v %q %q", err, o, e)
	}
	if err := c.Poll(60*time.Second, func() bool { return suspendProcState(pid) == "T" }); err != nil {
		t.Fatalf("process %d of job %d not stopped: %v", pid, id, err)
	}
	if o, e, err := c.Run("scancel", sid); err != nil {
		t.Fatalf("scancel: %v %q %q", err, o, e)
	}
	ctldWaitJob(t, c, id, 60*time.Second, "CANCELLED")
	if err := c.Poll(60*time.Second, func() bool { return suspendProcState(pid) == "" }); err != nil {
		t.Fatalf("process %d of the cancelled job %d still there (state %q)", pid, id, suspendProcState(pid))
	}
}

// TestSlurmctldSuspendErrors compares what the real scontrol prints, and
// its exit status, for suspend and resume requests that fail (unknown
// job, pending job, not suspended, array task of a plain job, ordinary
// user) and that succeed, against real slurmctld and ours.
func TestSlurmctldSuspendErrors(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 1})
	asNobody := func(args ...string) string {
		o, e, err := c.RunAs(65534, 65534, args[0], args[1:]...)
		s := o
		if e != "" {
			s += "--- stderr\n" + e
		}
		if err != nil {
			s += "--- exit: " + err.Error() + "\n"
		}
		return s
	}
	run := func(bin string, args ...string) map[string]string {
		out := map[string]string{}
		c.Start(bin, args...)
		defer c.Stop()
		running := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "sleep 300")
		ctldWaitJob(t, c, running, 60*time.Second, "RUNNING")
		// Held: a suspended job's core is free for it, and when the
		// scheduler gets to it differs (real runs it from its background
		// loop, a moment after the suspend).
		pending := ctldSbatch(t, c, "-H", "-o", "/dev/null", "--wrap", "sleep 300")
		ctldWaitJob(t, c, pending, 30*time.Second, "PENDING")
		r, p := strconv.Itoa(int(running)), strconv.Itoa(int(pending))
		steps := []struct {
			name string
			args []string
		}{
			{"suspend unknown", []string{"scontrol", "suspend", "999"}},
			{"resume unknown", []string{"scontrol", "resume", "999"}},
			{"suspend pending", []string{"scontrol", "suspend", p}},
			{"resume running", []string{"scontrol", "resume", r}},
			{"suspend bad id", []string{"scontrol", "suspend", "abc"}},
			{"suspend task of a plain job", []string{"scontrol", "suspend", r + "_3"}},
			{"suspend", []string{"scontrol", "suspend", r}},
			{"squeue", []string{"squeue", "-o", "%i %t %T"}},
			{"suspend again", []string{"scontrol", "suspend", r}},
			{"resume", []string{"scontrol", "resume", r}},
			{"resume again", []string{"scontrol", "resume", r}},
			{"squeue after resume", []string{"squeue", "-o", "%i %t %T"}},
		}
		for _, s := range steps {
			out[s.name] = ctldRun(c, s.args...)
		}
		out["nobody: suspend running"] = asNobody("scontrol", "suspend", r)
		out["nobody: resume running"] = asNobody("scontrol", "resume", r)
		out["nobody: suspend unknown"] = asNobody("scontrol", "suspend", "999")
		// A suspended job is cancelled like a running one (its processes
		// get SIGCONT before SIGTERM).
		out["suspend before cancel"] = ctldRun(c, "scontrol", "suspend", r)
		out["cancel suspended"] = ctldRun(c, "scancel", r, p)
		ctldWaitJob(t, c, running, 60*time.Second, "CANCELLED")
		if err := c.Poll(60*time.Second, func() bool {
			o, _, _ := c.Run("sinfo", "-h", "-o", "%T")
			return strings.TrimSpace(o) == "idle"
		}); err != nil {
			t.Errorf("node not idle after the suspended job was cancelled: %v", err)
		}
		out["suspend finished"] = ctldRun(c, "scontrol", "suspend", r)
		return out
	}
	want := run(real, "-c", "-i")
	got := run(ours, "-c")
	ctldCompare(t, want, got)
}

var (
	suspendTimeRE = regexp.MustCompile(`SuspendTime=(\S+)`)
	endTimeRE     = regexp.MustCompile(`EndTime=(\S+)`)
	runTimeRE     = regexp.MustCompile(`RunTime=\S+`)
	nodeUsageRE   = regexp.MustCompile(`(State|CPUAlloc|AllocMem|AllocTRES)=\S*`)
)

// suspendUsage is what the real commands say of node n1's use: sinfo's
// state and CPU counts, and scontrol's State, CPUAlloc, AllocMem and
// AllocTRES.
func suspendUsage(c *ctldharness.Cluster) string {
	o, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%N %T %C")
	show, _, _ := c.Run("scontrol", "show", "node", "n1")
	return strings.TrimSpace(o) + " | " + strings.Join(nodeUsageRE.FindAllString(show, -1), " ") + "\n"
}

// TestSlurmctldSuspendReleasesCores: as real cons_tres, a job suspended by
// scontrol gives its cores back (the node reads idle, CPUAlloc 0) and a
// waiting job starts on them; resumed, the two share the core and the
// node counts it once. A suspended job that is cancelled ends at its
// suspend time. Real slurmctld and ours, same real commands and slurmd.
func TestSlurmctldSuspendReleasesCores(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 1})
	run := func(bin string, args ...string) map[string]string {
		out := map[string]string{}
		c.Start(bin, args...)
		defer c.Stop()
		a := ctldSbatch(t, c, "-o", "/dev/null", "--wrap", "sleep 300")
		ctldWaitJob(t, c, a, 60*time.Second, "RUNNING")
		b := ctldSbatch(t, c, "-H", "-o", "/dev/null", "--wrap", "sleep 300")
		sa, sb := strconv.Itoa(int(a)), strconv.Itoa(int(b))
		out["1 running"] = suspendUsage(c)
		out["2 suspend"] = ctldRun(c, "scontrol", "suspend", sa)
		out["3 suspended"] = suspendUsage(c) + ctldRun(c, "squeue", "-o", "%i %t %r")
		out["4 release"] = ctldRun(c, "scontrol", "release", sb)
		ctldWaitJob(t, c, b, 90*time.Second, "RUNNING")
		out["5 other job on the cores"] = suspendUsage(c) + ctldRun(c, "squeue", "-o", "%i %t %r")
		out["6 resume"] = ctldRun(c, "scontrol", "resume", sa)
		out["7 both running"] = suspendUsage(c) + ctldRun(c, "squeue", "-o", "%i %t %r")
		out["8 cancel other"] = ctldRun(c, "scancel", sb)
		ctldWaitJob(t, c, b, 60*time.Second, "CANCELLED")
		out["9 suspend again"] = ctldRun(c, "scontrol", "suspend", sa)
		time.Sleep(1100 * time.Millisecond) // the end time must not be now
		out["10 cancel suspended"] = ctldRun(c, "scancel", sa)
		ctldWaitJob(t, c, a, 60*time.Second, "CANCELLED")
		show, _, _ := c.Run("scontrol", "show", "job", sa)
		s, e := suspendTimeRE.FindStringSubmatch(show), endTimeRE.FindStringSubmatch(show)
		out["11 cancelled"] = fmt.Sprintf("EndTime is SuspendTime: %v\n", s != nil && e != nil && s[1] == e[1]) +
			runTimeRE.ReplaceAllString(strings.Join(regexp.MustCompile(`(JobState|Reason|RunTime)=\S+`).FindAllString(show, -1), " "), "RunTime=<t>") + "\n"
		if err := c.Poll(60*time.Second, func() bool {
			o, _, _ := c.Run("sinfo", "-h", "-o", "%T")
			return strings.TrimSpace(o) == "idle"
		}); err != nil {
			t.Errorf("node not idle at the end: %v", err)
		}
		out["12 idle"] = suspendUsage(c)
		return out
	}
	want := run(real, "-c", "-i")
	got := run(ours, "-c")
	if !strings.HasPrefix(want["11 cancelled"], "EndTime is SuspendTime: true") {
		t.Errorf("real slurmctld: the cancelled suspended job:\n%s", want["11 cancelled"])
	}
	ctldCompare(t, want, got)
}
