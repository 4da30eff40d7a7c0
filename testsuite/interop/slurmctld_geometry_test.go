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
		out[fmt.Sprintf("%s | %s squeue", key, names[k])] = q
		out[fmt.Sprintf("%s | %s job", key, names[k])] = geometryJob(c, id)
	}
	if len(ids) > 0 {
		ctldRun(c, "scancel", "-u", c.User)
		partSettled(t, c, partEmpty)
	}
}

// geometryCPUCases are the cases of geometryCases (by index) and the
// sequences run with CR_CPU too: those where counting CPUs instead of
// cores may show. The whole corpus twice does not fit go test's default
// 10 minutes.
var geometryCPUCases, geometryCPUSequences = []int{0, 1, 2, 4, 14, 15, 25, 30, 35, 36, 37, 40, 47, 48, 52, 59, 61, 63, 65}, []int{0, 1}

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
var geometryGaps = map[string]string{
	"CR_Core_Memory c30 -n 4 -c 3 | g0 job":    gapTaskCPUs,
	"CR_Core_Memory c30 -n 4 -c 3 | g0 squeue": gapTaskCPUs,
}

// gapTaskCPUs: cons_tres's _eval_nodes counts what is left to place in
// CPUs (tasks x CPUs per task), so a node's CPUs beyond its whole tasks
// (1 of 4 with -c 3) count towards the others: -n 4 -c 3 runs on three
// 4-CPU nodes. Our scheduler places whole tasks and finds the job can
// never run (BadConstraints); copying this needs a CPU-count mode in
// sched's capacity and distribution (select.go distribute).
const gapTaskCPUs = "cons_tres counts CPUs, not whole tasks, per node"

// geometryVariantGaps are differences of a whole configuration: with it
// every job shape record (squeue, scontrol show job, not sbatch's
// answer) that differs is logged, not failed.
var geometryVariantGaps = map[string]string{
	// CR_CPU allocates CPUs (threads) one by one; our scheduler always
	// allocates whole cores (-n 1 gets 2 CPUs on 2-thread cores). Doing
	// it needs CPU ids in the allocations (sched) and their mapping to
	// cores where the job's cores are packed: jobs/launch.go's credential
	// core bitmap, jobs/step.go, jobs/jobres.go.
	"CR_CPU": "CR_CPU allocates single CPUs; ours allocates whole cores",
}

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
	cases, seqs := geometryCPUCases, geometryCPUSequences
	if params != "CR_CPU" {
		cases, seqs = nil, nil
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
// ours with cores and memory consumable, and with CPUs consumable.
func TestSlurmctldGeometry(t *testing.T) {
	for _, params := range []string{"CR_Core_Memory", "CR_CPU"} {
		t.Run(params, func(t *testing.T) { geometryDiff(t, params) })
	}
}
