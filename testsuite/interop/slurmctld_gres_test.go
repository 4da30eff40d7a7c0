package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// GRES by index under Debian's slurmctld and ours, with Debian's slurmd
// running the jobs: gres.conf's File= are symlinks to /dev/null, which
// slurmd accepts as character devices (TestSlurmdGresDeviceFiles), so
// the GPU environment slurmd exports comes only from the GRES records of
// the credentials the controller made.

// gresEnvScript prints the GPU variables of the batch step, of steps
// inside the allocation, then waits for its release file.
const gresEnvScript = `#!/bin/sh
# nosteps waits until the controller lists no step but the batch step: an
# srun ends before its step's completion reaches the controller, and a
# step asking for the GPUs in between would wait for the ended one.
nosteps() {
	i=0
	while squeue -h -s -j "$SLURM_JOB_ID" -o %i | grep -qv batch; do
		i=$((i+1))
		[ $i -gt 240 ] && { echo "steps never ended"; exit 3; }
		sleep 0.25
	done
}
echo "batch: $("$GPUENV")"
for opt in $STEPS; do
	nosteps
	if [ "$opt" = "-" ]; then
		echo "step (no --gres): $(srun -n1 "$GPUENV")"
	else
		echo "step $opt: $(srun -n1 "$opt" "$GPUENV")"
	fi
done
i=0
until [ -e "$RELEASE" ]; do
	i=$((i+1))
	[ $i -gt 600 ] && { echo "never released"; exit 3; }
	sleep 0.2
done
`

// gresEnvPrinter prints the GPU variables on one line.
const gresEnvPrinter = `#!/bin/sh
env | grep -E '^(CUDA_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|ROCR_VISIBLE_DEVICES|ZE_AFFINITY_MASK|SLURM_JOB_GPUS|SLURM_STEP_GPUS|SLURM_GPUS[A-Z_]*)=' | sort | tr '\n' ' '
`

// gresCluster is a one-node cluster (4 CPUs, so the GPUs are what jobs
// wait for) with gres.conf written: gresConf's %s is the device
// directory.
func gresCluster(t *testing.T, nodeGres, gresConf string, extra ...string) *ctldharness.Cluster {
	t.Helper()
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 4,
		ExtraConf: append([]string{"GresTypes=gpu"}, extra...), NodeConf: map[string]string{"*": "Gres=" + nodeGres}})
	dev := filepath.Join(c.Dir, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := os.Symlink("/dev/null", filepath.Join(dev, fmt.Sprintf("nvidia%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "gres.conf"), []byte(fmt.Sprintf(gresConf, dev)), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

var gresJobLineRE = regexp.MustCompile(`(?m)^\s*(Nodes=\S+ CPU_IDs=\S+ Mem=\S+ GRES=\S*|NumNodes=\S+ NumCPUs=\S+ NumTasks=\S+ CPUs/Task=\S+|TresPerNode=\S+|TresPerTask=\S+|JobState=\S+ Reason=\S+|TRES=\S+|JOB_GRES=\S*)`)

// gresJobLines are the GRES lines of scontrol show job -d.
func gresJobLines(c *ctldharness.Cluster, id uint32) string {
	out, _, _ := c.Run("scontrol", "show", "job", "-d", fmt.Sprint(id))
	var lines []string
	for _, m := range gresJobLineRE.FindAllStringSubmatch(out, -1) {
		lines = append(lines, m[1])
	}
	return fmt.Sprintf("job %d: %s", id, strings.Join(lines, " | "))
}

var gresNodeLineRE = regexp.MustCompile(`(?m)^\s*(Gres=\S*|State=\S+|GresUsed=\S*|CfgTRES=\S+|AllocTRES=\S*)`)

func gresNodeLines(c *ctldharness.Cluster) string {
	out, _, _ := c.Run("scontrol", "show", "node", "-d", "n1")
	var lines []string
	for _, m := range gresNodeLineRE.FindAllStringSubmatch(out, -1) {
		lines = append(lines, m[1])
	}
	sinfo := ctldRun(c, "sinfo", "-h", "-N", "-O", "NodeList:6,Gres:20,GresUsed:40,StateLong:12")
	return "node: " + strings.Join(lines, " ") + "\nsinfo: " + sinfo
}

// gresSubmit submits the env script holding its GPUs until release
// exists, steps run inside it as STEPS lists.
func gresSubmit(t *testing.T, c *ctldharness.Cluster, dir, name, release, steps string, args ...string) uint32 {
	t.Helper()
	script := filepath.Join(dir, "gres.sh")
	printer := filepath.Join(dir, "gpuenv.sh")
	// Written once per directory: the jobs before this one may be running
	// the printer in their steps, and rewriting a file being executed
	// fails with ETXTBSY ("text file busy").
	for p, text := range map[string]string{script: gresEnvScript, printer: gresEnvPrinter} {
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	all := append([]string{"-o", filepath.Join(dir, name+".out"), "-J", name,
		"--export=ALL,GPUENV=" + printer + ",RELEASE=" + release + ",STEPS=" + steps}, args...)
	return ctldSbatch(t, c, append(all, script)...)
}

func gresReadOut(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	return name + ":\n" + ctldMasked(string(b))
}

// gresWaitRunning waits until the job runs and its output shows its
// batch line (the GPU variables are printed).
func gresWaitRunning(t *testing.T, c *ctldharness.Cluster, dir, name string, id uint32) {
	t.Helper()
	ctldWaitJob(t, c, id, 60*time.Second, "RUNNING")
	if err := c.Poll(60*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, name+".out"))
		return strings.Count(string(b), "\n") >= 1
	}); err != nil {
		t.Fatalf("job %d printed nothing: %v", id, err)
	}
}

// TestSlurmctldGresIndices: two 1-GPU jobs on a gpu:2 node get indices 0
// and 1 (batch environment, scontrol show job -d GRES=, GresUsed), a
// third waits for Resources while both run and gets a freed index after.
// No TRES line shows gres/gpu: 22.05 accepts AccountingStorageTRES=gres/gpu
// only with slurmdbd ("slurmdbd is required to run with TRES gres/gpu").
func TestSlurmctldGresIndices(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := gresCluster(t, "gpu:2", "Name=gpu File=%s/nvidia[0-1]\n")
	collect := func(t *testing.T, c *ctldharness.Cluster) []string {
		dir := t.TempDir()
		rel := filepath.Join(dir, "release")
		var out []string
		out = append(out, gresNodeLines(c))
		a := gresSubmit(t, c, dir, "a", rel+"-a", "", "--gres=gpu:1")
		gresWaitRunning(t, c, dir, "a", a)
		b := gresSubmit(t, c, dir, "b", rel+"-b", "", "--gres=gpu:1")
		gresWaitRunning(t, c, dir, "b", b)
		w := gresSubmit(t, c, dir, "w", rel+"-w", "", "--gres=gpu:1")
		// The job must wait for a GPU. Its reason becomes Resources once a
		// pass looked at it, which a loaded machine can delay past the
		// poll (real slurmctld in a CI run): then it must still pend.
		var st string
		if err := c.Poll(60*time.Second, func() bool {
			o, _, _ := c.Run("squeue", "-h", "-j", fmt.Sprint(w), "-o", "%T %r")
			st = strings.TrimSpace(o)
			return st == "PENDING Resources"
		}); err != nil && !strings.HasPrefix(st, "PENDING ") {
			t.Errorf("job %d is %q, want pending for Resources: %v", w, st, err)
		}
		out = append(out, gresJobLines(c, a), gresJobLines(c, b), gresJobLines(c, w), gresNodeLines(c))
		out = append(out, ctldRun(c, "squeue", "-h", "-o", "%i %j %T %r %b"))
		if err := os.WriteFile(rel+"-a", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ctldWaitJob(t, c, a, 60*time.Second, "COMPLETED")
		gresWaitRunning(t, c, dir, "w", w)
		out = append(out, gresJobLines(c, w), gresNodeLines(c))
		for _, f := range []string{"-b", "-w"} {
			if err := os.WriteFile(rel+f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctldWaitJob(t, c, b, 60*time.Second, "COMPLETED")
		ctldWaitJob(t, c, w, 60*time.Second, "COMPLETED")
		if err := c.Poll(60*time.Second, func() bool {
			o, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%T")
			return strings.TrimSpace(o) == "idle"
		}); err != nil {
			t.Errorf("node never idle: %v", err)
		}
		out = append(out, gresReadOut(t, dir, "a"), gresReadOut(t, dir, "b"), gresReadOut(t, dir, "w"), gresNodeLines(c))
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real:\n%s", strings.Join(want, "\n"))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GRES indices differ (-real +ours):\n%s\nours' log:\n%s", d, c.Logs())
	}
}

// TestSlurmctldGresSteps: srun steps inside a gpu:2 allocation: --gres
// takes a subset, a step without --gres gets the job's GRES (22.05's
// _copy_job_tres_to_step), --gres=none gets none; and a typed gres.conf
// (Type=, slurm.conf Gres=gpu:tesla:1,gpu:k80:1) with typed requests.
func TestSlurmctldGresSteps(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	for _, tc := range []struct {
		name, nodeGres, gresConf string
		jobs                     [][]string // name, steps, sbatch args
	}{
		{"untyped", "gpu:2", "Name=gpu File=%s/nvidia[0-1]\n", [][]string{
			{"two", "--gres=gpu:1 - --gres=none --gres=gpu:2", "--gres=gpu:2"},
			{"nogres", "-", ""},
		}},
		{"cores", "gpu:2", "Name=gpu File=%[1]s/nvidia0 Cores=0-1\nName=gpu File=%[1]s/nvidia1 Cores=2-3\n", [][]string{
			{"first", "-", "--gres=gpu:1"},
			{"second", "-", "--gres=gpu:1"},
		}},
		// --gpus-per-task: tasks x count GPUs (gres_per_job); its steps
		// inherit SLURM_GPUS_PER_TASK, so srun -n1 asks for one task's.
		{"pertask", "gpu:2", "Name=gpu File=%s/nvidia[0-1]\n", [][]string{
			{"two", "- --gpus-per-task=1", "-n2 --gpus-per-task=1"},
		}},
		{"pertask1", "gpu:2", "Name=gpu File=%s/nvidia[0-1]\n", [][]string{
			{"first", "-", "-n1 --gpus-per-task=1"},
			{"second", "-", "-n1 --gpus-per-task=1"},
		}},
		{"pernode", "gpu:2", "Name=gpu File=%s/nvidia[0-1]\n", [][]string{
			{"both", "- --gres=gpu:1", "--gpus-per-node=2"},
		}},
		// --cpus-per-gpu: a node's CPUs are at least that many a GPU;
		// with --gpus-per-task it sets -c.
		{"cpuspergpu", "gpu:2", "Name=gpu File=%s/nvidia[0-1]\n", [][]string{
			{"cpg", "-", "--gres=gpu:1 --cpus-per-gpu=2"},
		}},
		{"pertaskcpus", "gpu:2", "Name=gpu File=%s/nvidia[0-1]\n", [][]string{
			{"ptc", "-", "-n1 --gpus-per-task=1 --cpus-per-gpu=2"},
		}},
		// --mem-per-gpu (memory consumable: names starting "mem"): the
		// node's memory is that much a GPU; --mem wins.
		{"mempergpu", "gpu:2", "Name=gpu File=%s/nvidia[0-1]\n", [][]string{
			{"mpg", "-", "--gres=gpu:1 --mem-per-gpu=100"},
			{"mset", "-", "--gres=gpu:1 --mem=50"},
		}},
		{"typed", "gpu:tesla:1,gpu:k80:1", "Name=gpu Type=tesla File=%[1]s/nvidia0\nName=gpu Type=k80 File=%[1]s/nvidia1\n", [][]string{
			{"k80", "- --gres=gpu:k80:1", "--gres=gpu:k80:1"},
			{"any", "-", "--gres=gpu:1"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var extra []string
			if strings.HasPrefix(tc.name, "mem") {
				extra = []string{"SelectTypeParameters=CR_Core_Memory"}
			}
			c := gresCluster(t, tc.nodeGres, tc.gresConf, extra...)
			collect := func(t *testing.T, c *ctldharness.Cluster) []string {
				dir := t.TempDir()
				rel := filepath.Join(dir, "release")
				out := []string{gresNodeLines(c)}
				var ids []uint32
				for _, j := range tc.jobs {
					var args []string
					if j[2] != "" {
						args = strings.Fields(j[2])
					}
					id := gresSubmit(t, c, dir, j[0], rel, j[1], args...)
					ids = append(ids, id)
					gresWaitRunning(t, c, dir, j[0], id)
				}
				for _, id := range ids {
					out = append(out, gresJobLines(c, id))
				}
				out = append(out, gresNodeLines(c))
				// Every step printed before the release.
				for _, j := range tc.jobs {
					n := 1 + len(strings.Fields(j[1]))
					if err := c.Poll(60*time.Second, func() bool {
						b, _ := os.ReadFile(filepath.Join(dir, j[0]+".out"))
						return strings.Count(string(b), "\n") >= n
					}); err != nil {
						t.Errorf("%s: steps did not all print: %v", j[0], err)
					}
				}
				if err := os.WriteFile(rel, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				for i, id := range ids {
					ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED", "FAILED")
					out = append(out, gresReadOut(t, dir, tc.jobs[i][0]))
				}
				return out
			}
			want, got := ctldOnBoth(t, c, real, ours, collect)
			t.Logf("real:\n%s", strings.Join(want, "\n"))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("GRES steps differ (-real +ours):\n%s\nours' log:\n%s", d, c.Logs())
			}
		})
	}
}

// TestSlurmctldGresRestart: the controller restarts while two 1-GPU jobs
// run; afterwards scontrol shows the same indices, GresUsed is rebuilt,
// a third job still waits for a GPU and gets the one freed first.
func TestSlurmctldGresRestart(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := gresCluster(t, "gpu:2", "Name=gpu File=%s/nvidia[0-1]\n")
	run := func(bin string, first ...string) []string {
		c.Start(bin, first...)
		defer c.Stop()
		dir := t.TempDir()
		rel := filepath.Join(dir, "release")
		a := gresSubmit(t, c, dir, "a", rel+"-a", "", "--gres=gpu:1")
		gresWaitRunning(t, c, dir, "a", a)
		b := gresSubmit(t, c, dir, "b", rel+"-b", "", "--gres=gpu:1")
		gresWaitRunning(t, c, dir, "b", b)
		before := []string{gresJobLines(c, a), gresJobLines(c, b), gresNodeLines(c)}
		c.StopCtld()
		c.StartCtld(bin)
		if err := c.Poll(60*time.Second, func() bool {
			o, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%T")
			return strings.TrimSpace(o) == "mixed"
		}); err != nil {
			t.Errorf("node not back to mixed after the restart: %v", err)
		}
		after := []string{gresJobLines(c, a), gresJobLines(c, b), gresNodeLines(c)}
		if d := cmp.Diff(before, after); d != "" {
			t.Errorf("%s: the restart changed the GRES (-before +after):\n%s", bin, d)
		}
		w := gresSubmit(t, c, dir, "w", rel+"-w", "", "--gres=gpu:1")
		state := func() string {
			o, _, _ := c.Run("squeue", "-h", "-j", fmt.Sprint(w), "-o", "%T %r")
			return strings.TrimSpace(o)
		}
		// What counts is that w waits; its reason says a scheduling pass
		// saw it, which a loaded real slurmctld may not run within the
		// minute after a restart (seen in CI): then it must still be
		// pending.
		if err := c.Poll(60*time.Second, func() bool { return state() == "PENDING Resources" }); err != nil {
			if st := state(); strings.HasPrefix(st, "PENDING ") {
				t.Logf("%s: job %d pending, reason not yet Resources: %q", bin, w, st)
			} else {
				t.Errorf("%s: job %d not waiting for a GPU: %q", bin, w, st)
			}
		}
		if err := os.WriteFile(rel+"-b", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ctldWaitJob(t, c, b, 60*time.Second, "COMPLETED")
		gresWaitRunning(t, c, dir, "w", w)
		out := append(after, gresJobLines(c, w), gresNodeLines(c))
		for _, f := range []string{"-a", "-w"} {
			if err := os.WriteFile(rel+f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctldWaitJob(t, c, a, 60*time.Second, "COMPLETED")
		ctldWaitJob(t, c, w, 60*time.Second, "COMPLETED")
		return append(out, gresReadOut(t, dir, "a"), gresReadOut(t, dir, "b"), gresReadOut(t, dir, "w"))
	}
	want := run(real, "-c", "-i")
	got := run(ours, "-c")
	t.Logf("real:\n%s", strings.Join(want, "\n"))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GRES across a restart differ (-real +ours):\n%s\nours' log:\n%s", d, c.Logs())
	}
}

// TestSlurmctldGresPrologEpilog: the Prolog (PrologFlags=Alloc, from
// REQUEST_LAUNCH_PROLOG's job_gres_info) and the Epilog (from
// REQUEST_TERMINATE_JOB's) of two 1-GPU jobs see their GPUs.
func TestSlurmctldGresPrologEpilog(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	logs, err := os.MkdirTemp("", "gres-pe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(logs) })
	if err := os.Chmod(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, kind := range []string{"prolog", "epilog"} {
		p := filepath.Join(logs, kind+".sh")
		text := "#!/bin/sh\nenv | grep -E '^(CUDA_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|ROCR_VISIBLE_DEVICES|ZE_AFFINITY_MASK|SLURM_JOB_GPUS)=' | sort > " +
			filepath.Join(logs, "out", kind+"-$SLURM_JOB_ID") + ".tmp\nmv " + filepath.Join(logs, "out", kind+"-$SLURM_JOB_ID") + ".tmp " +
			filepath.Join(logs, "out", kind+"-$SLURM_JOB_ID") + "\nexit 0\n"
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		extra = append(extra, strings.ToUpper(kind[:1])+kind[1:]+"="+p)
	}
	extra = append(extra, "PrologFlags=Alloc")
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 4,
		ExtraConf: append([]string{"GresTypes=gpu"}, extra...), NodeConf: map[string]string{"*": "Gres=gpu:2"}})
	dev := filepath.Join(c.Dir, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := os.Symlink("/dev/null", filepath.Join(dev, fmt.Sprintf("nvidia%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "gres.conf"), []byte("Name=gpu File="+dev+"/nvidia[0-1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) []string {
		out := filepath.Join(logs, "out")
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		rel := filepath.Join(dir, "release")
		a := gresSubmit(t, c, dir, "a", rel, "", "--gres=gpu:1")
		gresWaitRunning(t, c, dir, "a", a)
		b := gresSubmit(t, c, dir, "b", rel, "", "--gres=gpu:1")
		gresWaitRunning(t, c, dir, "b", b)
		if err := os.WriteFile(rel, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		var res []string
		for _, id := range []uint32{a, b} {
			ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
			for _, kind := range []string{"prolog", "epilog"} {
				p := filepath.Join(out, fmt.Sprintf("%s-%d", kind, id))
				var got []byte
				if err := c.Poll(60*time.Second, func() bool {
					var err error
					got, err = os.ReadFile(p)
					return err == nil
				}); err != nil {
					t.Errorf("no %s output for job %d: %v", kind, id, err)
				}
				res = append(res, fmt.Sprintf("%s %d: %s", kind, id, strings.ReplaceAll(string(got), "\n", " ")))
			}
		}
		return res
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real:\n%s", strings.Join(want, "\n"))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("prolog/epilog GPU environment differs (-real +ours):\n%s\nours' log:\n%s", d, c.Logs())
	}
}

// TestSlurmctldGresRequests: what sbatch and srun print for GRES requests
// the node cannot satisfy, a GRES that does not exist, and a step asking
// for more than its job has; and a two-node job's GPUs on each node.
func TestSlurmctldGresRequests(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2,
		ExtraConf: []string{"GresTypes=gpu"}, NodeConf: map[string]string{"*": "Gres=gpu:tesla:2"}})
	dev := filepath.Join(c.Dir, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := os.Symlink("/dev/null", filepath.Join(dev, fmt.Sprintf("nvidia%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "gres.conf"), []byte("Name=gpu Type=tesla File="+dev+"/nvidia[0-1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) []string {
		var out []string
		for _, g := range []string{"gpu:3", "foo:1", "gpu:v100:1", "gpu:tesla:3"} {
			out = append(out, "sbatch --gres="+g+": "+ctldRun(c, "sbatch", "--gres="+g, "--wrap", "true"))
		}
		// Count combinations the controller refuses (_test_gres_cnt).
		for _, args := range [][]string{{"--gpus-per-task=1"}, {"--gpus-per-socket=1"}, {"--gpus=3", "--gpus-per-task=2"},
			{"-n1", "--gpus=2", "--gpus-per-task=1"}, {"--gpus-per-node=1", "--gpus-per-task=2", "-n1"}} {
			out = append(out, "sbatch "+strings.Join(args, " ")+": "+ctldRun(c, append([]string{"sbatch"}, append(args, "--wrap", "true")...)...))
		}
		dir := t.TempDir()
		printer := filepath.Join(dir, "gpuenv.sh")
		if err := os.WriteFile(printer, []byte(gresEnvPrinter), 0o755); err != nil {
			t.Fatal(err)
		}
		// srun -l lines arrive in either order.
		sorted := func(s string) string {
			lines := strings.Split(strings.TrimSpace(s), "\n")
			for i := range lines {
				lines[i] = strings.TrimSpace(lines[i])
			}
			slices.Sort(lines)
			return strings.Join(lines, "\n")
		}
		// Each job starts once the one before has left the nodes (its
		// epilog done): whether it must wait would be a race.
		idle := func() {
			if err := c.Poll(60*time.Second, func() bool {
				o, _, _ := c.Run("sinfo", "-h", "-o", "%T")
				return strings.TrimSpace(o) == "idle"
			}); err != nil {
				t.Errorf("nodes never idle: %v", err)
			}
		}
		idle()
		out = append(out, "srun -N2 --gres=gpu:1: "+sorted(ctldRun(c, "srun", "-N2", "--gres=gpu:1", "-l", "sh", "-c", printer+"; echo")))
		idle()
		out = append(out, "srun -N2 --gres=gpu:tesla:2: "+sorted(ctldRun(c, "srun", "-N2", "--gres=gpu:tesla:2", "-l", "sh", "-c", printer+"; echo")))
		idle()
		out = append(out, "srun --gpus-per-node=1: "+ctldRun(c, "srun", "-N1", "--gpus-per-node=1", "sh", "-c", printer+"; echo"))
		idle()
		out = append(out, "srun --gpus=1: "+ctldRun(c, "srun", "-N1", "--gpus=1", "sh", "-c", printer+"; echo"))
		idle()
		out = append(out, "srun -N2 --gpus=3: "+sorted(ctldRun(c, "srun", "-N2", "--gpus=3", "-l", "sh", "-c", printer+"; echo")))
		idle()
		out = append(out, "salloc -N2 --gpus=3: "+ctldRun(c, "salloc", "-N2", "--gpus=3", "sh", "-c",
			`scontrol show job -d $SLURM_JOB_ID | grep -oE '(JOB_)?GRES=[^ ]*|TresPerJob=[^ ]*'; srun -N1 --gpus=1 `+printer+`; echo; srun -N2 --gpus=4 true; srun -N2 --gpus=1 true; env -u SLURM_GPUS srun -N1 --gres=gpu:1 '`+printer+`'; echo`))
		idle()
		// --gpus-per-task: each node gets its tasks' GPUs.
		out = append(out, "srun -N2 -n2 --gpus-per-task=1: "+sorted(ctldRun(c, "srun", "-N2", "-n2", "--gpus-per-task=1", "-l", "sh", "-c", printer+"; echo")))
		idle()
		out = append(out, "srun -N2 -n3 --gpus-per-task=1: "+sorted(ctldRun(c, "srun", "-N2", "-n3", "--gpus-per-task=1", "-l", "sh", "-c", printer+"; echo")))
		idle()
		out = append(out, "srun --sockets-per-node=1 --gpus-per-socket=2: "+ctldRun(c, "srun", "-N1", "--sockets-per-node=1", "--gpus-per-socket=2", "sh", "-c", printer+"; echo"))
		idle()
		// --exclusive: the job has every GPU of its node; a step without
		// --gres none of them, one with --gres some.
		out = append(out, "srun --exclusive: "+ctldRun(c, "srun", "-N1", "--exclusive", "sh", "-c", printer+"; echo"))
		idle()
		out = append(out, "salloc --exclusive: "+ctldRun(c, "salloc", "-N1", "--exclusive", "sh", "-c",
			`scontrol show job -d $SLURM_JOB_ID | grep -o 'GRES=[^ ]*'; srun --gres=gpu:1 `+printer+`; echo; srun --gres=gpu:3 true`))
		idle()
		out = append(out, "step beyond the job: "+ctldRun(c, "salloc", "-N1", "--gres=gpu:1", "srun", "--gres=gpu:2", "true"))
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	mask := regexp.MustCompile(`(job|Job|allocation) \d+`)
	for i := range want {
		want[i] = mask.ReplaceAllString(ctldMasked(want[i]), "$1 <id>")
	}
	for i := range got {
		got[i] = mask.ReplaceAllString(ctldMasked(got[i]), "$1 <id>")
	}
	t.Logf("real:\n%s", strings.Join(want, "\n"))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GRES requests differ (-real +ours):\n%s\nours' log:\n%s", d, c.Logs())
	}
}

// TestSlurmctldGresRegistrationLow: a node whose gres.conf has fewer GPUs
// than slurm.conf's Gres= is set INVAL and drained with real's reason.
func TestSlurmctldGresRegistrationLow(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := gresCluster(t, "gpu:2", "Name=gpu File=%s/nvidia0\n")
	reasonRE := regexp.MustCompile(`(?m)^\s*(State=\S+|Reason=.*?) *\[|^\s*(State=\S+)`)
	collect := func(t *testing.T, c *ctldharness.Cluster) string {
		out, _, _ := c.Run("scontrol", "show", "node", "n1")
		var parts []string
		for _, m := range reasonRE.FindAllStringSubmatch(out, -1) {
			parts = append(parts, m[1]+m[2])
		}
		return strings.Join(parts, " | ") + "\n" + ctldRun(c, "sinfo", "-h", "-N", "-o", "%N %T %G %E")
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real:\n%s", want)
	if want != got {
		t.Errorf("registration with too few GPUs differs:\nreal:\n%s\nours:\n%s\nours' log:\n%s", want, got, c.Logs())
	}
}
