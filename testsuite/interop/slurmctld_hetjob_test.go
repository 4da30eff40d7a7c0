package interop

// Heterogeneous jobs (sbatch with "#SBATCH hetjob" or ":" separators,
// salloc with ":"), real slurmctld against ours, driven by the real
// commands on real slurmd: ids, squeue and scontrol views, starting all
// components together, the batch script's environment on the leader's
// node, scancel of one component and of the whole job, the end of the
// batch script, refused submissions and a controller restart.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// hetClusterOptions: four 4-CPU nodes in one partition; backfill every
// second, as het jobs only start from a backfill pass under real Slurm.
func hetClusterOptions() ctldharness.Options {
	return ctldharness.Options{
		Nodes: 4, CPUs: 4,
		ExtraConf: []string{"FirstJobId=1000", "SchedulerParameters=batch_sched_delay=0,bf_interval=1"},
		Partitions: []string{
			"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
			"PartitionName=down Nodes=n2 State=DOWN Hidden=YES",
		},
	}
}

// hetScriptOnBoth is scriptOnBothCtlds on hetClusterOptions' cluster.
func hetScriptOnBoth(t *testing.T, script ctldScript) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts two Slurm clusters")
	}
	cmds := []string{"scontrol", "scancel", "sbatch", "squeue", "salloc", "srun"}
	for _, name := range cmds {
		if _, err := oracle.Find(name); err != nil {
			oracle.Unavailable(t, name+": "+err.Error())
		}
	}
	realCtld := ctldharness.RealSbin(t, "slurmctld")
	ourCtld := ctldBuildOurs(t)
	logs := map[string][]string{}
	var mu sync.Mutex
	t.Run("clusters", func(t *testing.T) {
		for _, side := range []struct {
			label, ctld  string
			first, again []string
		}{
			{"real slurmctld", realCtld, []string{"-c", "-i"}, []string{"-i"}},
			{"our slurmctld", ourCtld, []string{"-c"}, nil},
		} {
			t.Run(strings.ReplaceAll(side.label, " ", "_"), func(t *testing.T) {
				t.Parallel()
				c := ctldharness.New(t, hetClusterOptions())
				c.Start(side.ctld, side.first...)
				t.Cleanup(c.Stop)
				out := filepath.Join(c.Dir, "out")
				if err := os.Mkdir(out, 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(out, 0o1777); err != nil {
					t.Fatal(err)
				}
				m := &mutCluster{label: side.label, c: c, out: out, cmds: map[string]string{}}
				for _, name := range cmds {
					m.cmds[name] = oracle.Binary(t, name)
				}
				l := script(t, m, func() {
					c.StopCtld()
					c.StartCtld(side.ctld, side.again...)
				})
				mu.Lock()
				logs[side.label] = l
				mu.Unlock()
			})
		}
	})
	real, ours := logs["real slurmctld"], logs["our slurmctld"]
	t.Logf("on the real slurmctld:\n%s", strings.Join(real, "\n"))
	if len(real) == 0 || len(real) != len(ours) {
		t.Logf("on our slurmctld:\n%s", strings.Join(ours, "\n"))
		t.Fatalf("the clusters did not both run the whole script (%d | %d steps)", len(real), len(ours))
	}
	for i := range real {
		if real[i] != ours[i] {
			t.Errorf("real slurmctld | our slurmctld:\n%s\n---\n%s", real[i], ours[i])
		}
	}
}

// try runs a real command and returns what it printed and its exit code.
func (m *mutCluster) try(t *testing.T, name string, args ...string) string {
	t.Helper()
	r := m.exec(t, m.cmds[name], name, args, "", false)
	s := r.stdout
	if r.stderr != "" {
		s += "--- stderr\n" + r.stderr
	}
	if r.code != 0 {
		s += fmt.Sprintf("--- exit %d\n", r.code)
	}
	return s
}

// hetScript writes a batch script with the given #SBATCH lines and body.
func (m *mutCluster) hetScript(t *testing.T, name string, lines []string, body string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for _, l := range lines {
		b.WriteString("#SBATCH " + l + "\n")
	}
	b.WriteString(body)
	p := filepath.Join(m.out, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

var submittedID = regexp.MustCompile(`Submitted batch job (\d+)`)

// hetIDs returns the leader id of a submission's output and a masker for
// it and its next n-1 ids (<N>, <N+1>, ...).
func hetIDs(out string, n int, m *mutCluster) (string, *masker) {
	mm := submittedID.FindStringSubmatch(out)
	if mm == nil {
		return "", newMasker(m.out, "<out>")
	}
	id, _ := strconv.Atoi(mm[1])
	var pairs []string
	// Longest first: "1001" must not be masked inside "1001+1".
	for k := n - 1; k >= 0; k-- {
		pairs = append(pairs, strconv.Itoa(id+k), fmt.Sprintf("<N+%d>", k))
	}
	pairs = append(pairs, m.out, "<out>")
	return mm[1], newMasker(pairs...)
}

// hetEnv waits (up to 60 s) for the environment file the batch script
// writes and returns its SLURM_ lines that depend on the controller.
func (m *mutCluster) hetEnv(t *testing.T, file string) string {
	t.Helper()
	var b []byte
	_ = m.c.Poll(60*time.Second, func() bool {
		var err error
		b, err = os.ReadFile(filepath.Join(m.out, file))
		return err == nil && strings.HasSuffix(string(b), "END\n")
	})
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		// Paths and ports of the cluster, the slurmd's own view and
		// launch details that are the same under both controllers but
		// carry run-specific values.
		if strings.HasPrefix(l, "SLURM_") && !strings.Contains(l, "PORT") && !strings.HasPrefix(l, "SLURM_CONF=") &&
			!strings.HasPrefix(l, "SLURM_TASK_PID=") && !strings.HasPrefix(l, "SLURMD_") &&
			!strings.HasPrefix(l, "SLURM_WORKING_CLUSTER=") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n") + "\n"
}

const hetEnvBody = "env | sort > %s/%s.$SLURM_JOB_ID; echo END >> %s/%s.$SLURM_JOB_ID\n"

// TestSlurmctldHetJob: a batch het job from #SBATCH hetjob separators
// (two components on n1 and n2) and one from ":" on the command line,
// their records, the batch script's environment, scancel of one
// component then the whole job, the end of a batch script, refused
// submissions, salloc with two components and a restart of the
// controller with a pending and a running het job.
func TestSlurmctldHetJob(t *testing.T) {
	hetScriptOnBoth(t, func(t *testing.T, m *mutCluster, restart func()) []string {
		var log []string
		add := func(what, s string) { log = append(log, what+":\n"+s) }
		show := func(mask *masker, ids ...string) string {
			return m.settledState(t, ids, mask)
		}
		sq := func(mask *masker) string {
			return mask.apply(m.try(t, "squeue", "-a", "-o", "%i|%A|%j|%T|%r|%D|%C|%N|%P"))
		}

		// A: #SBATCH hetjob, running on n1 and n2.
		a := m.hetScript(t, "a.sh", []string{"-J hA -p debug -w n1 -n1 -t 30 -o " + m.out + "/%j.out", "hetjob", "-w n2 -n2 -t 20"},
			fmt.Sprintf(hetEnvBody, m.out, "envA", m.out, "envA")+"echo up > "+m.out+"/a.up\nexec sleep 600\n")
		out := m.try(t, "sbatch", a)
		aID, am := hetIDs(out, 2, m)
		add("sbatch hetjob", am.apply(out))
		if aID == "" {
			return log
		}
		add("environment of the batch script", am.apply(m.hetEnv(t, "envA."+aID)))
		add("running", show(am, aID))
		add("squeue", sq(am))
		n1, _ := strconv.Atoi(aID)
		add("scontrol show job of the second component", show(am, strconv.Itoa(n1+1)))

		// B: ":" on the command line, the batch script ends on its own
		// with exit code 3.
		b := m.hetScript(t, "b.sh", nil, fmt.Sprintf(hetEnvBody, m.out, "envB", m.out, "envB")+"exit 3\n")
		out = m.try(t, "sbatch", "-J", "hB", "-w", "n3", "-n1", "-o", m.out+"/%j.out", ":", "-w", "n4", "-n2", b)
		bID, bm := hetIDs(out, 2, m)
		add("sbatch with ':'", bm.apply(out))
		if bID != "" {
			m.hetEnv(t, "envB."+bID)
			add("batch script ended", show(bm, bID))
		}

		// C: held, pending over the restart.
		out = m.try(t, "sbatch", "-H", "-J", "hC", "-n1", "-o", m.out+"/%j.out", ":", "-n1", b)
		cID, cm := hetIDs(out, 2, m)
		add("sbatch -H with ':'", cm.apply(out))

		// Refused submissions, and one accepted although its second
		// component can never run (it waits with PartitionConfig).
		add("array in a het job", m.try(t, "sbatch", "-a", "1-2", "-n1", ":", "-n1", b))
		out = m.try(t, "sbatch", "-J", "hN", "-n1", ":", "-n100", b)
		nID, nm := hetIDs(out, 2, m)
		add("component that can never run", nm.apply(out))
		if nID != "" {
			// Where backfill plans the leader (SchedNodeList) is the
			// node selection's business, not the het job's.
			add("waiting", schedNodeList.ReplaceAllString(show(nm, nID), "SchedNodeList=<n>"))
			m.try(t, "scancel", nID)
		}
		add("second component in an unknown partition", m.try(t, "sbatch", "-n1", ":", "-p", "nosuch", "-n1", b))

		restart()
		add("after a restart", show(am, aID))
		if cID != "" {
			add("held after a restart", show(cm, cID))
			m.try(t, "scancel", cID)
		}

		// scancel of the second component, then of the leader.
		add("scancel <N+1>", am.apply(m.try(t, "scancel", strconv.Itoa(n1+1))))
		add("second component cancelled", show(am, aID))
		add("scancel <N>", am.apply(m.try(t, "scancel", aID)))
		add("all cancelled", show(am, aID))

		// salloc with two components.
		out = m.try(t, "salloc", "-J", "hS", "-w", "n1", "-n1", ":", "-w", "n2", "-n1",
			"sh", "-c", "env | grep -E '^SLURM_(JOB_ID|JOBID|HET_SIZE|JOB_NODELIST|NODELIST|JOB_NUM_NODES|NNODES|NTASKS|JOB_CPUS_PER_NODE|TASKS_PER_NODE|JOB_NAME|JOB_PARTITION)' | sort")
		// Whether salloc prints the revocation of its own release
		// depends on when the controller's message arrives.
		add("salloc", maskAllIDs(revoked.ReplaceAllString(out, "")))
		// Every record but hN's: real slurmctld shows the TRES of hN's
		// cancelled leader as "cpu=1,billing=1" (left by backfill's
		// limit test of the het job), which ours does not reproduce.
		var keep []string
		for _, l := range strings.Split(mAllJobs(t, m), "\n") {
			if !strings.Contains(l, " JobName=hN ") {
				keep = append(keep, l)
			}
		}
		add("every job at the end", maskAllIDs(newMasker(m.out, "<out>").apply(strings.Join(keep, "\n"))))
		return log
	})
}

var stepRetry = regexp.MustCompile(`(?m)^srun: (Job \S+ step creation temporarily disabled, retrying .*|Step created for job \S+)\n`)

var schedNodeList = regexp.MustCompile(`SchedNodeList=\S+`)

var revoked = regexp.MustCompile(`(?m)^salloc: Job allocation \d+ has been revoked\.\n`)

var anyJobID = regexp.MustCompile(`\b1[0-9]{3}\b`)

// maskAllIDs masks every job id (they start at 1000 and stay below 2000).
func maskAllIDs(s string) string { return anyJobID.ReplaceAllString(s, "<id>") }

// mAllJobs is every job record, masked, once none is completing (up to
// 60 s).
func mAllJobs(t *testing.T, m *mutCluster) string {
	t.Helper()
	var s string
	_ = m.c.Poll(60*time.Second, func() bool {
		r := m.exec(t, m.cmds["scontrol"], "scontrol", []string{"-o", "show", "job"}, "", false)
		s = maskState(r.stdout+r.stderr, true)
		for _, l := range strings.Split(s, "\n") {
			if !settled(l + " ") {
				return false
			}
		}
		return true
	})
	s = allocSid.ReplaceAllString(s, "AllocNode:Sid=$1:<sid>")
	return schedBy.ReplaceAllString(s, "Scheduler=<s>")
}

// TestSlurmctldHetJobSteps: scancel of a pending component (by its id and
// as "N+1"), then srun --het-group=0,1 inside a het batch job: one step
// over both components.
func TestSlurmctldHetJobSteps(t *testing.T) {
	hetScriptOnBoth(t, func(t *testing.T, m *mutCluster, restart func()) []string {
		var log []string
		add := func(what, s string) { log = append(log, what+":\n"+s) }

		b := m.hetScript(t, "b.sh", nil, "exit 0\n")
		out := m.try(t, "sbatch", "-H", "-J", "hH", "-n1", "-o", m.out+"/%j.out", ":", "-n1", b)
		hID, hm := hetIDs(out, 2, m)
		if hID == "" {
			add("sbatch -H", out)
			return log
		}
		n, _ := strconv.Atoi(hID)
		add("scancel of a pending component", hm.apply(m.try(t, "scancel", strconv.Itoa(n+1))))
		add("scancel <N>+1", hm.apply(m.try(t, "scancel", hID+"+1")))
		add("scancel <N>+5", hm.apply(m.try(t, "scancel", hID+"+5")))
		add("still pending", m.settledState(t, []string{hID}, hm))
		// scontrol update of one component, then release of the whole.
		add("update <N>+1", hm.apply(m.try(t, "scontrol", "update", "JobId="+hID+"+1", "TimeLimit=5")))
		add("release <N>", hm.apply(m.try(t, "scontrol", "release", hID)))
		add("released and ended", m.settledState(t, []string{hID}, hm))

		out = m.try(t, "sbatch", "-H", "-J", "hH", "-n1", "-o", m.out+"/%j.out", ":", "-n1", b)
		hID, hm = hetIDs(out, 2, m)
		add("scancel <N>+0", hm.apply(m.try(t, "scancel", hID+"+0")))
		add("cancelled", m.settledState(t, []string{hID}, hm))

		// More submissions: too many nodes and a bad constraint in the
		// second component, too many nodes in the first, the second in
		// a DOWN partition. (Too much memory in the second component,
		// --mem=5000, is refused under both controllers, but real
		// slurmctld keeps that component's FAILED record, which ours
		// does not make.)
		for _, args := range [][]string{
			{"-n1", ":", "-N5", b},
			{"-n1", ":", "-C", "nosuch", b},
			{"-N5", ":", "-n1", b},
			{"-n1", ":", "-p", "down", "-n1", b},
		} {
			out := m.try(t, "sbatch", append([]string{"-J", "hX"}, args...)...)
			add("sbatch "+strings.Join(args[:len(args)-1], " "), maskAllIDs(out))
		}
		add("records of the refused", maskAllIDs(newMasker(m.out, "<out>").apply(hetNamed(t, m, "hX"))))
		m.try(t, "scancel", "-n", "hX")

		s := m.hetScript(t, "s.sh", []string{"-J hS -w n1 -n1 -t 30 -o " + m.out + "/%j.out", "hetjob", "-w n2 -n2 -t 30"},
			"srun -n1 true\n"+
				"srun --het-group=0,1 sh -c 'echo $SLURM_HET_SIZE $SLURMD_NODENAME $SLURM_PROCID $SLURM_NTASKS $SLURM_STEP_NUM_NODES $SLURM_JOB_ID $SLURM_STEP_ID $SLURM_STEP_NODELIST' | sort\n"+
				"echo rc=$?\n"+
				"srun --het-group=1 sh -c 'echo $SLURM_JOB_ID $SLURM_STEP_ID $SLURM_STEP_NODELIST'\n")
		out = m.try(t, "sbatch", s)
		sID, sm := hetIDs(out, 2, m)
		add("sbatch", sm.apply(out))
		if sID == "" {
			return log
		}
		add("ended", m.settledState(t, []string{sID}, sm))
		b2, _ := os.ReadFile(filepath.Join(m.out, sID+".out"))
		// A step asked for while the previous one still holds its CPUs
		// waits: whether it has to is timing.
		add("output", stepRetry.ReplaceAllString(sm.apply(string(b2)), ""))
		return log
	})
}

// TestSlurmctldHetJobSrun: srun with ":" outside an allocation (a het
// allocation of its own, then one step over its components), and srun
// --het-group inside salloc's het allocation.
func TestSlurmctldHetJobSrun(t *testing.T) {
	hetScriptOnBoth(t, func(t *testing.T, m *mutCluster, restart func()) []string {
		var log []string
		add := func(what, s string) { log = append(log, what+":\n"+s) }
		echo := "echo $SLURM_HET_SIZE $SLURMD_NODENAME $SLURM_PROCID $SLURM_NTASKS $SLURM_STEP_ID $SLURM_STEP_NODELIST"
		out := m.try(t, "srun", "-J", "hR", "-w", "n1", "-n1", ":", "-w", "n2", "-n2", "sh", "-c", echo)
		add("srun with ':'", maskAllIDs(sortLines(out)))
		add("jobs after srun", maskAllIDs(newMasker(m.out, "<out>").apply(mAllJobs(t, m))))
		out = m.try(t, "salloc", "-J", "hQ", "-w", "n3", "-n1", ":", "-w", "n4", "-n1",
			"srun", "--het-group=0,1", "sh", "-c", echo)
		add("srun --het-group in salloc", maskAllIDs(revoked.ReplaceAllString(sortLines(out), "")))
		return log
	})
}

// sortLines sorts the lines of s (the tasks of a step print in any order).
func sortLines(s string) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	sort.Strings(l)
	return strings.Join(l, "\n") + "\n"
}

// TestSlurmctldHetJobControl: scontrol suspend, resume and requeue of a
// running het job, by its leader and by a component.
func TestSlurmctldHetJobControl(t *testing.T) {
	hetScriptOnBoth(t, func(t *testing.T, m *mutCluster, restart func()) []string {
		var log []string
		add := func(what, s string) { log = append(log, what+":\n"+s) }
		a := m.hetScript(t, "c.sh", []string{"-J hC -w n1 -n1 -t 30 -o " + m.out + "/%j.out", "hetjob", "-w n2 -n2 -t 30"},
			"echo up > "+m.out+"/c.$SLURM_JOB_ID.${SLURM_RESTART_COUNT:-0}\nexec sleep 600\n")
		out := m.try(t, "sbatch", a)
		id, mk := hetIDs(out, 2, m)
		if id == "" {
			add("sbatch", out)
			return log
		}
		n, _ := strconv.Atoi(id)
		comp := strconv.Itoa(n + 1)
		wait := func(file string) {
			_ = m.c.Poll(60*time.Second, func() bool {
				_, err := os.Stat(filepath.Join(m.out, file))
				return err == nil
			})
		}
		wait("c." + id + ".0")
		add("running", m.settledState(t, []string{id}, mk))
		add("suspend <N+1>", mk.apply(m.try(t, "scontrol", "suspend", comp)))
		add("suspend <N>", mk.apply(m.try(t, "scontrol", "suspend", id)))
		add("suspended", m.settledState(t, []string{id}, mk))
		add("resume <N>", mk.apply(m.try(t, "scontrol", "resume", id)))
		add("resumed", m.settledState(t, []string{id}, mk))
		add("requeue <N+1>", mk.apply(m.try(t, "scontrol", "requeue", comp)))
		add("requeue <N>", mk.apply(m.try(t, "scontrol", "requeue", id)))
		// Requeued, both wait for their begin time (now + 120 s).
		add("requeued", m.settledState(t, []string{id}, mk))
		add("scancel", mk.apply(m.try(t, "scancel", id)))
		add("cancelled", m.settledState(t, []string{id}, mk))
		return log
	})
}

// hetNamed is the settled records of the jobs named name.
func hetNamed(t *testing.T, m *mutCluster, name string) string {
	var keep []string
	for _, l := range strings.Split(mAllJobs(t, m), "\n") {
		if strings.Contains(l, " JobName="+name+" ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n") + "\n"
}
