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

var gresSubmitRE = regexp.MustCompile(`\b(NumNodes|NumTasks|TresPerJob|TresPerNode|MemPerTres)=\S*`)

// TestSlurmctldGresSubmitCounts: a new job's GRES requests are checked
// after its partition has set the node counts (_valid_job_part, then
// gres_job_state_validate): --gpus=1 in a MinNodes=2 partition is refused
// ("Invalid generic resource"), --gpus=2 there takes two nodes. GRES
// strings read as _get_next_gres reads them, at submission and in
// scontrol update: a zero count is left out before its name is looked
// at, an empty type or count is refused; --mem-per-gpu needs a gpu in
// the same request; a GRES with and without a type is
// ESLURM_INVALID_GRES_TYPE.
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
			{"--gres=bogus:0"},
			{"--gres=gpu:2,gpu:tesla:1"},
			{"-N2", "-n1", "--gpus-per-task=1"},
			{"-N1-2", "-n1", "--gpus-per-task=1"},
			{"--gres=foo:1kb"},
			{"--mem-per-gpu=100", "--gres=foo:1"},
			{"--mem-per-gpu=100", "--gpus-per-node=1"},
		} {
			k := strings.Join(a, " ")
			o, e, err := c.Run("sbatch", append([]string{"-D", c.Dir, "-o", "/dev/null", "-H", "-J", "s"}, append(a, "--wrap", "true")...)...)
			m := submittedRE.FindStringSubmatch(o)
			if m == nil {
				out[k] = fmt.Sprintf("refused: %s%v\n", e, err)
				continue
			}
			s, _, _ := c.Run("scontrol", "show", "job", "-o", m[1])
			out[k] = strings.Join(gresSubmitRE.FindAllString(s, -1), " ") + "\n"
			ctldRun(c, "scancel", m[1])
		}
		for _, up := range [][]string{
			{"TresPerNode=gres:foo:"},
			{"TresPerNode=gres:gpu:tesla:1"},
			{"TresPerNode=gres:foo::1"},
			{"TresPerNode=gres:bogus:0"},
			{"TresPerNode=gres/bogus:1"},
			{"MemPerTres=gres:gpu:100"},
			{"MemPerTres=gres:gpu:100", "TresPerNode=gres:gpu:1"},
		} {
			k := "update " + strings.Join(up, " ")
			id := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-H", "--gpus=1", "-J", "u", "--wrap", "true")
			o, e, err := c.Run("scontrol", append([]string{"update", fmt.Sprintf("jobid=%d", id)}, up...)...)
			s, _, _ := c.Run("scontrol", "show", "job", "-o", fmt.Sprint(id))
			out[k] = fmt.Sprintf("%s%s%v\n", o, e, err) + strings.Join(gresSubmitRE.FindAllString(s, -1), " ") + "\n"
			ctldRun(c, "scancel", fmt.Sprint(id))
		}
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, run)
	ctldCompare(t, want, got)
}
