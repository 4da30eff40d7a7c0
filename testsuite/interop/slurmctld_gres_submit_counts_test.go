package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// TestSlurmctldGresSubmitCounts: a new job's GRES requests are checked
// after its partition has set the node counts (_valid_job_part, then
// gres_job_state_validate): --gpus=1 in a MinNodes=2 partition is refused
// ("Invalid generic resource"), --gpus=2 there takes two nodes.
func TestSlurmctldGresSubmitCounts(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 4,
		ExtraConf:  []string{"GresTypes=foo,gpu"},
		NodeConf:   map[string]string{"*": "Gres=foo:8,gpu:2"},
		Partitions: []string{"PartitionName=debug Nodes=ALL Default=YES", "PartitionName=min2 Nodes=ALL MinNodes=2"}})
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "gres.conf"), []byte("Name=foo Count=8\nName=gpu Count=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		for _, a := range [][]string{
			{"-p", "min2", "--gpus=1"},
			{"-p", "min2", "--gpus=2"},
			{"-p", "min2", "--gpus=4", "--gpus-per-node=1"},
		} {
			k := strings.Join(a, " ")
			o, e, err := c.Run("sbatch", append([]string{"-D", c.Dir, "-o", "/dev/null", "-H", "-J", "s"}, append(a, "--wrap", "true")...)...)
			m := submittedRE.FindStringSubmatch(o)
			if m == nil {
				out[k] = fmt.Sprintf("refused: %s%v\n", e, err)
				continue
			}
			s, _, _ := c.Run("scontrol", "show", "job", "-o", m[1])
			out[k] = strings.Join(gresUpdateRE.FindAllString(s, -1), " ") + "\n"
			ctldRun(c, "scancel", m[1])
		}
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}
