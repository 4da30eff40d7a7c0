package daemon

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/jobcred"
)

// TestPackGresInfoMatchesRealSlurmd compares the registration GRES blob
// with what a real 22.05.8 slurmd sent for the same slurm.conf Gres= and
// gres.conf (recorded by running /usr/sbin/slurmd -D against a goslurm
// controller stub; the device files were character devices in a temporary
// directory, here /dev/fake).
func TestPackGresInfoMatchesRealSlurmd(t *testing.T) {
	tests := []struct {
		name, types, gres, gresConf, want string
	}{
		{"gpu from slurm.conf only is dropped", "gpu", "gpu:2", "",
			"26000000"},
		{"typed gpu with cores", "gpu", "gpu:tesla:2", "Name=gpu Type=tesla File=/dev/fake/nvidia[0-1] Cores=0-1\n",
			"26000001438a34d4000000000000000200000004000009e60075706700000004302d3100000000000000000467707500000000067465736c610000000000"},
		{"gpu with files", "gpu", "gpu:2", "Name=gpu File=/dev/fake/nvidia[0-1]\n",
			"26000001438a34d4000000000000000200000004000009e200757067000000000000000000000004677075000000000000000000"},
		{"count-only gres from slurm.conf", "foo", "foo:3", "",
			"26000001438a34d400000000000000030000000400000008006f6f66000000000000000000000004666f6f000000000000000000"},
		{"explicit env flag", "gpu", "gpu:2", "Name=gpu File=/dev/fake/nvidia[0-1] Flags=nvidia_gpu_env\n",
			"26000001438a34d40000000000000002000000040000002200757067000000000000000000000004677075000000000000000000"},
		{"several lines, links, a plugin-less gres", "gpu,foo", "gpu:2,foo:5",
			"Name=gpu File=/dev/fake/nvidia0 Cores=1\nName=gpu File=/dev/fake/nvidia1 Cores=0 Links=0,-1\nName=foo Count=5\n",
			"26000003438a34d4000000000000000100000004000009e2007570670000000231000000000000000004677075000000000000000000438a34d4000000000000000100000004000009e20075706700000002300000000005302c2d310000000004677075000000000000000000438a34d400000000000000050000000400000000006f6f66000000000000000000000004666f6f000000000000000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := "ClusterName=g\nSlurmctldHost=localhost\nGresTypes=" + tc.types +
				"\nSlurmdParameters=config_overrides\nNodeName=n1 NodeHostname=localhost CPUs=4 RealMemory=1000 Gres=" + tc.gres +
				"\nPartitionName=p Nodes=ALL\n"
			fs := conf.MapFS{"/etc/slurm/slurm.conf": text, "/etc/slurm/gres.conf": tc.gresConf}
			c, err := conf.Load(fs, "/etc/slurm/slurm.conf")
			if err != nil {
				t.Fatal(err)
			}
			g, err := conf.LoadGres(fs, "/etc/slurm/gres.conf", c.GresTypes)
			if err != nil {
				t.Fatal(err)
			}
			ng, err := g.ResolveNode(c, "n1", nil)
			if err != nil {
				t.Fatal(err)
			}
			got := hex.EncodeToString(PackGresInfo(ng.Records))
			if got != tc.want {
				t.Errorf("ours %s\nreal %s", got, tc.want)
				for _, r := range ng.Records {
					t.Logf("record %+v", *r)
				}
			}
		})
	}
	if jobcred.GresPluginID("gpu") != 0x757067 || !strings.Contains(hex.EncodeToString(PackGresInfo(nil)), "26000000") {
		t.Error("GresID or empty blob")
	}
}
