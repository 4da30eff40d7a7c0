package interop

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// The job geometry corpus: the same sbatch command lines go to real
// slurmctld and ours, on three nodes of 4 CPUs (1 socket x 2 cores x 2
// threads, 1000 MB), and what the commands show of the job's shape is
// compared: node and CPU counts, tasks, memory, the nodes it got or the
// reason it waits. Every case runs alone on an empty cluster so that
// placement is comparable; the sequences share the cluster among a few
// jobs.

// geometryPartitions: debug is the cases' cluster, n4 only holds the
// sentinel job that tells a scheduling pass ran (see submitChecksCollect).
var geometryPartitions = []string{
	"PartitionName=debug Nodes=n[1-3] Default=YES MaxTime=INFINITE State=UP",
	"PartitionName=sentinel Nodes=n4 State=UP",
}

// geometryCases are sbatch options; the job name, output and script are
// added.
var geometryCases = [][]string{
	{"-n", "1"}, {"-n", "2"}, {"-n", "3"}, {"-n", "4"}, {"-n", "5"}, {"-n", "6"},
	{"-n", "7"}, {"-n", "8"}, {"-n", "9"}, {"-n", "10"}, {"-n", "11"}, {"-n", "12"},
	{"-n", "13"},
	{"-N", "1", "-n", "4"}, {"-N", "1", "-n", "5"}, {"-N", "2", "-n", "2"}, {"-N", "2", "-n", "8"},
	{"-N", "3", "-n", "3"}, {"-N", "3", "-n", "12"}, {"-N", "2"}, {"-N", "4"},
	{"-N", "2-3"}, {"-N", "2-3", "-n", "4"}, {"-N", "1-3", "-n", "5"},
	{"-c", "2"}, {"-c", "3"}, {"-c", "4"}, {"-c", "5"},
	{"-n", "2", "-c", "2"}, {"-n", "3", "-c", "2"}, {"-n", "4", "-c", "3"}, {"-n", "6", "-c", "2"},
	{"--ntasks-per-node=2", "-n", "6"}, {"--ntasks-per-node=4", "-N", "2"},
	{"--ntasks-per-node=1", "-n", "3"}, {"--ntasks-per-node=3"}, {"--ntasks-per-node=5"},
	{"--ntasks-per-core=1", "-n", "4"}, {"--ntasks-per-core=1", "-n", "6"}, {"--ntasks-per-core=2", "-n", "8"},
	{"--mem=500"}, {"--mem=1000"}, {"--mem=1001"}, {"--mem=600", "-n", "2"}, {"--mem=0"},
	{"--mem-per-cpu=250", "-n", "4"}, {"--mem-per-cpu=300", "-n", "4"}, {"--mem-per-cpu=1001"},
	{"--mem-per-cpu=500", "-n", "6"},
	{"--exclusive"}, {"--exclusive", "-n", "5"}, {"--exclusive", "-N", "2"},
	{"--threads-per-core=1", "-n", "4"}, {"--hint=nomultithread", "-n", "4"},
	{"-w", "n2"}, {"-w", "n2", "-n", "5"}, {"-w", "n1,n3", "-n", "2"}, {"-w", "n4"},
	{"-x", "n1"}, {"-x", "n1,n2", "-n", "5"}, {"-x", "n1", "-N", "3"},
	{"--spread-job", "-n", "3"}, {"-O", "-N", "1", "-n", "8"}, {"-O", "-n", "16"},
	{"-s", "-n", "4"}, {"--mincpus=3"}, {"--mincpus=3", "-n", "2"},
}

// geometrySequences are jobs submitted one after the other onto the
// same cluster.
var geometrySequences = [][][]string{
	{{"-n", "3"}, {"-n", "3"}, {"-n", "3"}, {"-n", "3"}},
	{{"-c", "3"}, {"-c", "3"}, {"-c", "3"}, {"-c", "3"}},
	{{"--mem=600"}, {"--mem=600"}, {"--mem=600", "-n", "1"}, {"--mem=600"}},
	{{"--exclusive", "-N", "2"}, {"-n", "4"}, {"-n", "8"}},
	{{"-n", "5"}, {"-N", "2", "-n", "2"}, {"-n", "1"}},
}

// geometryJobFields are the fields of scontrol show job compared.
var geometryJobFields = []string{"JobState", "Reason", "NumNodes", "NumCPUs", "NumTasks", "CPUs/Task",
	"ReqB:S:C:T", "TRES", "Socks/Node", "NtasksPerN:B:S:C", "CoreSpec", "MinCPUsNode", "MinMemoryNode",
	"MinMemoryCPU", "MinTmpDiskNode", "OverSubscribe", "Contiguous", "NodeList", "ReqNodeList", "ExcNodeList"}

var geometryField = regexp.MustCompile(`(\S+?)=(\S*)`)

// geometryJob is the compared part of scontrol show job.
func geometryJob(c *ctldharness.Cluster, id string) string {
	out, errOut, err := c.Run("scontrol", "show", "job", id)
	if err != nil {
		return "scontrol: " + strings.TrimSpace(errOut) + "\n"
	}
	got := map[string]string{}
	for _, m := range geometryField.FindAllStringSubmatch(out, -1) {
		if _, ok := got[m[1]]; !ok {
			got[m[1]] = m[2]
		}
	}
	var b strings.Builder
	for _, k := range geometryJobFields {
		if v, ok := got[k]; ok {
			fmt.Fprintf(&b, "%s=%s ", k, v)
		}
	}
	return strings.TrimSpace(b.String()) + "\n"
}

var geometryJobID = regexp.MustCompile(`Submitted batch job (\d+)`)

// geometryWaitReason merges Priority and Resources, the reasons of a
// job of a sequence left waiting for the others: which one real
// slurmctld shows depends on its passes, not on the placement. A job is
// Resources when it was the first of its partition that did not fit in
// the last pass that looked at it, Priority when another had failed
// before it in that pass, and whether the passes ran before, between or
// after the submissions is timing (it went both ways in .ci/run).
func geometryWaitReason(s string) string {
	for _, r := range []string{"Priority", "Resources"} {
		s = strings.Replace(s, "PENDING "+r+" ", "PENDING Priority|Resources ", 1)
		s = strings.Replace(s, "Reason="+r+" ", "Reason=Priority|Resources ", 1)
	}
	return s
}

// geometryRun submits the jobs of one case (one or several), waits until
// a scheduling pass has seen them, records what shows and cancels them.
func geometryRun(t *testing.T, c *ctldharness.Cluster, key string, jobs [][]string, out map[string]string) {
	t.Helper()
	var names, ids []string
	for k, opts := range jobs {
		name := fmt.Sprintf("g%d", k)
		args := append([]string{"sbatch", "-J", name, "-o", "/dev/null"}, opts...)
		args = append(args, "--wrap", "sleep 300")
		o := ctldRun(c, args...)
		out[fmt.Sprintf("%s | %s sbatch", key, name)] = geometryJobID.ReplaceAllString(o, "Submitted batch job <id>")
		if m := geometryJobID.FindStringSubmatch(o); m != nil {
			names, ids = append(names, name), append(ids, m[1])
		}
	}
	if len(ids) > 0 {
		if o := ctldRun(c, "sbatch", "-J", "sentinel", "-p", "sentinel", "-n", "1", "-o", "/dev/null",
			"--wrap", "sleep 300"); !strings.Contains(o, "Submitted batch job") {
			t.Errorf("%s: sentinel job refused: %s", key, o)
		}
		// Settled: the sentinel runs (a pass has run after the jobs were
		// queued) and every job started or has a reason.
		err := c.Poll(60*time.Second, func() bool {
			o, _, err := c.Run("squeue", "-h", "-o", "%j %T %r")
			if err != nil {
				return false
			}
			passed, settled := false, 0
			for _, l := range strings.Split(o, "\n") {
				f := strings.Fields(l)
				switch {
				case len(f) < 3:
				case f[0] == "sentinel":
					passed = f[1] == "RUNNING"
				case f[1] == "RUNNING" || (f[1] == "PENDING" && f[2] != "None"):
					settled++
				}
			}
			return passed && settled == len(ids)
		})
		if err != nil {
			t.Logf("%s: the jobs did not settle: %v", key, err)
		}
		if len(ids) > 1 {
			// Backfill (bf_interval=1) may still start a job the main
			// pass left: wait until two looks a backfill cycle apart
			// agree.
			var last string
			stable := 0
			_ = c.Poll(60*time.Second, func() bool {
				o, _, err := c.Run("squeue", "-h", "-o", "%j %T %r %N")
				if err == nil && o == last {
					stable++
				} else {
					stable = 0
				}
				last = o
				if stable < 2 {
					time.Sleep(time.Second)
				}
				return stable >= 2
			})
		}
	}
	for k, id := range ids {
		q, _, _ := c.Run("squeue", "-h", "-j", id, "-o", "%T %r %D %C %N")
		job := geometryJob(c, id)
		if len(ids) > 1 {
			q, job = geometryWaitReason(q), geometryWaitReason(job)
		}
		out[fmt.Sprintf("%s | %s squeue", key, names[k])] = q
		out[fmt.Sprintf("%s | %s job", key, names[k])] = job
	}
	if len(ids) > 0 {
		ctldRun(c, "scancel", "-u", c.User)
		partSettled(t, c, partEmpty)
	}
}

// geometryVariantCases are, for a configuration that does not run the
// whole corpus, the cases of geometryCases (by index) and the sequences
// it runs: CR_Core differs from CR_Core_Memory, and CR_CPU_Memory from
// CR_CPU, only where memory is asked for or shared. Four whole corpora
// do not fit go test's default 10 minutes.
var geometryVariantCases = map[string][2][]int{
	"CR_Core":       {{0, 3, 25, 30, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49}, {2}},
	"CR_CPU_Memory": {{0, 2, 25, 30, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49}, {2}},
}

func geometryCollect(t *testing.T, c *ctldharness.Cluster, cases, seqs []int) map[string]string {
	out := map[string]string{}
	cfg, _, _ := c.Run("scontrol", "show", "config")
	for _, l := range strings.Split(cfg, "\n") {
		if strings.HasPrefix(l, "SelectTypeParameters") {
			out["config"] = l + "\n"
		}
	}
	for _, i := range cases {
		cs := geometryCases[i]
		geometryRun(t, c, fmt.Sprintf("c%02d %s", i, strings.Join(cs, " ")), [][]string{cs}, out)
	}
	for _, i := range seqs {
		seq := geometrySequences[i]
		var parts []string
		for _, cs := range seq {
			parts = append(parts, strings.Join(cs, " "))
		}
		geometryRun(t, c, fmt.Sprintf("s%02d %s", i, strings.Join(parts, " ; ")), seq, out)
	}
	return out
}

// geometryGaps are the differences of our slurmctld from the real one
// that are not fixed, keyed "<SelectTypeParameters> <record key>", with
// the reason. They are logged, not failed, unless
// GOSLURM_GEOMETRY_STRICT=1; an entry that no longer differs fails.
var geometryGaps = map[string]string{}

// geometryVariantGaps are differences of a whole configuration: with it
// every job shape record (squeue, scontrol show job, not sbatch's
// answer) that differs is logged, not failed.
var geometryVariantGaps = map[string]string{}

func geometryDiff(t *testing.T, params string) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 4, RealMemory: 1000,
		ExtraConf: []string{
			"SelectTypeParameters=" + params,
			// Backfill every second, so that a sequence settles soon.
			"SchedulerParameters=bf_interval=1",
			"NodeName=DEFAULT Sockets=1 CoresPerSocket=2 ThreadsPerCore=2",
		},
		Partitions: geometryPartitions})
	var cases, seqs []int
	if v, ok := geometryVariantCases[params]; ok {
		cases, seqs = v[0], v[1]
	} else {
		for i := range geometryCases {
			cases = append(cases, i)
		}
		for i := range geometrySequences {
			seqs = append(seqs, i)
		}
	}
	want, got := ctldOnBoth(t, c, real, ours, func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		return geometryCollect(t, c, cases, seqs)
	})

	strict := os.Getenv("GOSLURM_GEOMETRY_STRICT") == "1"
	same, open := 0, 0
	keys := slices.Sorted(maps.Keys(want))
	if dir := os.Getenv("GOSLURM_GEOMETRY_DUMP"); dir != "" {
		// Both sides' records, to read a run's differences at leisure.
		for side, m := range map[string]map[string]string{"real": want, "ours": got} {
			var b strings.Builder
			for _, k := range keys {
				fmt.Fprintf(&b, "== %s\n%s", k, ctldMasked(m[k]))
			}
			_ = os.WriteFile(filepath.Join(dir, params+"."+side), []byte(b.String()), 0o644)
		}
	}
	for _, k := range keys {
		w, g := ctldMasked(want[k]), ctldMasked(got[k])
		why, known := geometryGaps[params+" "+k]
		wide := false
		if vw, ok := geometryVariantGaps[params]; ok && !known && (strings.HasSuffix(k, " squeue") || strings.HasSuffix(k, " job")) {
			why, known, wide = vw, true, true
		}
		switch {
		case w == g && known && wide:
			same++
		case w == g && known:
			t.Errorf("%s: ours now agrees with real slurmctld: drop it from geometryGaps", k)
		case w == g:
			same++
		case known && !strict:
			open++
			t.Logf("known gap (%s) %s:\n--- real slurmctld\n%s--- ours\n%s", why, k, w, g)
		default:
			t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
		}
	}
	t.Logf("%s: %d records equal, %d known gaps, of %d", params, same, open, len(want))
}

// TestSlurmctldGeometry compares job shapes between real slurmctld and
// ours with cores and memory consumable, with CPUs consumable (a job gets
// the threads its tasks use, its cores are still taken whole), with cores
// alone and with CPUs and memory.
func TestSlurmctldGeometry(t *testing.T) {
	for _, params := range []string{"CR_Core_Memory", "CR_CPU", "CR_Core", "CR_CPU_Memory"} {
		t.Run(params, func(t *testing.T) { geometryDiff(t, params) })
	}
}

// geometryLaunchCases run tasks under a CPU count that CR_CPU makes
// differ from CR_Core: srun allocates and launches on real slurmd, so the
// allocation's CPUs per node, the step credential's cores and CPUs and
// what slurmd makes of them (SLURM_CPUS_ON_NODE, SLURM_JOB_CPUS_PER_NODE)
// are compared.
var geometryLaunchCases = [][]string{
	{"-n", "1"}, {"-n", "3"}, {"-n", "5"}, {"-c", "3"}, {"-N", "2", "-n", "2"}, {"-n", "4", "-c", "3"},
	{"--mincpus=3"}, {"--ntasks-per-core=1", "-n", "4"},
}

const geometryLaunchScript = `echo $SLURM_PROCID $SLURMD_NODENAME cpus_on_node=$SLURM_CPUS_ON_NODE job_cpus=$SLURM_JOB_CPUS_PER_NODE tasks=$SLURM_NTASKS`

// geometryLaunchCollect runs each case with srun, then as a batch job
// whose script runs srun, and returns what they printed, lines sorted.
func geometryLaunchCollect(t *testing.T, c *ctldharness.Cluster) map[string]string {
	out := map[string]string{}
	sorted := func(s string) string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		slices.Sort(l)
		return strings.Join(l, "\n") + "\n"
	}
	for _, cs := range geometryLaunchCases {
		args := append([]string{"srun"}, cs...)
		args = append(args, "sh", "-c", geometryLaunchScript)
		out["srun "+strings.Join(cs, " ")] = sorted(ctldRun(c, args...))
		partSettled(t, c, partEmpty)

		file := filepath.Join(c.Dir, "geometry-batch.out")
		_ = os.Remove(file)
		args = append([]string{"sbatch", "-o", file}, cs...)
		args = append(args, "--wrap", "srun sh -c '"+geometryLaunchScript+"'; echo batch cpus_on_node=$SLURM_CPUS_ON_NODE job_cpus=$SLURM_JOB_CPUS_PER_NODE")
		o := ctldRun(c, args...)
		if !strings.Contains(o, "Submitted batch job") {
			out["sbatch "+strings.Join(cs, " ")] = o
			continue
		}
		partSettled(t, c, partEmpty)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v", strings.Join(cs, " "), err)
		}
		out["sbatch "+strings.Join(cs, " ")] = sorted(string(b))
	}
	return out
}

// TestSlurmctldGeometryLaunch runs tasks under our slurmctld with real
// slurmd with CPUs and with cores consumable, and compares what the tasks
// see with real slurmctld's.
func TestSlurmctldGeometryLaunch(t *testing.T) {
	for _, params := range []string{"CR_CPU", "CR_Core_Memory"} {
		t.Run(params, func(t *testing.T) {
			real := ctldharness.RealSbin(t, "slurmctld")
			ours := ctldBuildOurs(t)
			c := ctldharness.New(t, ctldharness.Options{Nodes: 3, CPUs: 4, RealMemory: 1000,
				ExtraConf: []string{
					"SelectTypeParameters=" + params,
					"NodeName=DEFAULT Sockets=1 CoresPerSocket=2 ThreadsPerCore=2",
				}})
			want, got := ctldOnBoth(t, c, real, ours, geometryLaunchCollect)
			for _, k := range slices.Sorted(maps.Keys(want)) {
				if w, g := ctldMasked(want[k]), ctldMasked(got[k]); w != g {
					t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", k, w, g)
				}
			}
		})
	}
}
