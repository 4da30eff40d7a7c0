package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// bindCluster is one node of 2 sockets x 4 cores with two GPUs, each
// bound by gres.conf's Cores= to the cores of one socket.
func bindCluster(t *testing.T) *ctldharness.Cluster {
	t.Helper()
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 8,
		ExtraConf: []string{"GresTypes=gpu"},
		NodeConf:  map[string]string{"*": "Sockets=2 CoresPerSocket=4 ThreadsPerCore=1 Gres=gpu:2"}})
	dev := filepath.Join(c.Dir, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := os.Symlink("/dev/null", filepath.Join(dev, fmt.Sprintf("nvidia%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf("Name=gpu File=%[1]s/nvidia0 Cores=0-3\nName=gpu File=%[1]s/nvidia1 Cores=4-7\n", dev)
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "gres.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSlurmctldGresCoreBinding: GPUs bound to a socket's cores (gres.conf
// Cores=) decide which cores a job asking for GPUs gets (cons_tres's
// first pass keeps only cores of sockets whose GPUs it needs), what a
// job larger than a socket gets without --gres-flags=enforce-binding and
// whether it runs with it, and --gres-flags=disable-binding; alone on
// the node and beside jobs holding cores or GPUs.
func TestSlurmctldGresCoreBinding(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := bindCluster(t)
	type step struct{ busy, job []string }
	cases := []step{
		{nil, []string{"--gres=gpu:1"}},
		{nil, []string{"--gres=gpu:1", "-n2"}},
		{nil, []string{"--gres=gpu:1", "-c6"}},
		{nil, []string{"--gres=gpu:1", "-c6", "--gres-flags=enforce-binding"}},
		{nil, []string{"--gres=gpu:1", "-c4", "--gres-flags=enforce-binding"}},
		{nil, []string{"--gres=gpu:1", "--gres-flags=disable-binding"}},
		{nil, []string{"--gres=gpu:2"}},
		{nil, []string{"--gres=gpu:2", "-n3"}},
		{nil, []string{"--gpus=1", "-n2"}},
		{nil, []string{"--gpus=1", "-c6"}},
		{nil, []string{"-n2", "--gpus-per-task=1"}},
		{nil, []string{"-n3", "--gpus-per-task=1"}},
		{nil, []string{"--gres=gpu:1", "--cpus-per-gpu=2"}},
		{nil, []string{"--gres=gpu:1", "-n2", "--ntasks-per-node=2"}},
		// Cores by block (-m *:block) or cyclically over the sockets.
		{nil, []string{"-n3"}},
		{nil, []string{"-n3", "-m", "block:block"}},
		{nil, []string{"-n3", "-m", "cyclic:cyclic"}},
		{nil, []string{"-n3", "-m", "plane=2"}},
		{nil, []string{"--gres=gpu:2", "-n3", "-m", "block:block"}},
		// Cores 0-2 taken: socket 1 has more free cores and a GPU.
		{[]string{"-n3"}, []string{"--gres=gpu:1"}},
		{[]string{"-n3"}, []string{"--gres=gpu:1", "-n2"}},
		{[]string{"-n3"}, []string{"--gres=gpu:2"}},
		{[]string{"-n3"}, []string{"--gres=gpu:1", "-c6"}},
		{[]string{"-n3"}, []string{"--gres=gpu:1", "--gres-flags=disable-binding"}},
		{[]string{"-n3"}, []string{"--gres=gpu:1", "-n4", "--gres-flags=enforce-binding"}},
		// GPU 0 taken: the next job gets GPU 1 and its socket's cores.
		{[]string{"--gres=gpu:1"}, []string{"--gres=gpu:1"}},
		{[]string{"--gres=gpu:1"}, []string{"--gres=gpu:1", "-n4"}},
		{[]string{"--gres=gpu:1"}, []string{"--gres=gpu:1", "-n6"}},
		{[]string{"--gres=gpu:1"}, []string{"--gres=gpu:1", "-n6", "--gres-flags=enforce-binding"}},
		{[]string{"--gres=gpu:1"}, []string{"--gpus=1", "-n2"}},
		{[]string{"--gres=gpu:1"}, []string{"--gres=gpu:2"}},
		// Socket 0's cores all taken, its GPU free.
		{[]string{"-n4"}, []string{"--gres=gpu:2"}},
		{[]string{"-n4"}, []string{"--gres=gpu:2", "--gres-flags=enforce-binding"}},
		{[]string{"-n4"}, []string{"--gres=gpu:1", "-n2"}},
		{[]string{"-n5"}, []string{"--gres=gpu:1", "-n3"}},
		{[]string{"-n5"}, []string{"--gres=gpu:2", "-n2", "--gres-flags=enforce-binding"}},
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) []string {
		var out []string
		spreadIdle(t, c)
		for _, tc := range cases {
			line := strings.Join(tc.job, " ")
			if tc.busy != nil {
				busy := ctldSbatch(t, c, append(append([]string{"-o", "/dev/null"}, tc.busy...), "--wrap", "sleep 300")...)
				if st := spreadSettle(t, c, busy); st != "RUNNING None" {
					t.Fatalf("busy job %d (%s): %q", busy, strings.Join(tc.busy, " "), st)
				}
				line = "[busy " + strings.Join(tc.busy, " ") + ": " + spreadJobLines(c, busy) + "] " + line
			}
			all := append(append([]string{"sbatch", "-o", "/dev/null"}, tc.job...), "--wrap", "sleep 300")
			o := ctldRun(c, all...)
			if m := submittedRE.FindStringSubmatch(o); m == nil {
				out = append(out, line+": "+o)
			} else {
				id, _ := strconv.ParseUint(m[1], 10, 32)
				st := spreadSettle(t, c, uint32(id))
				out = append(out, fmt.Sprintf("%s: %s | %s", line, st, spreadJobLines(c, uint32(id))))
			}
			spreadIdle(t, c)
		}
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
		t.Errorf("GRES core binding differs (-real +ours):\n%s\nours' log:\n%s", d, c.Logs())
	}
}
