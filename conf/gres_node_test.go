package conf

import (
	"fmt"
	"strings"
	"testing"
)

// resolveText loads slurm.conf + gres.conf from text and resolves node.
func resolveText(t *testing.T, nodeLine, gres, node string, cpus *NodeCPUs) (*NodeGres, error) {
	t.Helper()
	fsys := MapFS{
		"/e/slurm.conf": "ClusterName=c\nSlurmctldHost=h\nGresTypes=gpu,mps\n" + nodeLine + "\nPartitionName=p Nodes=ALL\n",
		"/e/gres.conf":  gres,
	}
	c, err := Load(fsys, "/e/slurm.conf")
	if err != nil {
		t.Fatalf("slurm.conf: %v", err)
	}
	g, err := LoadGres(fsys, "/e/gres.conf", append(List{"gpu", "mps", "shard"}, c.GresTypes...))
	if err != nil {
		t.Fatalf("gres.conf: %v", err)
	}
	return g.ResolveNode(c, node, cpus)
}

// summary renders the records as name:type:count:file:cores[:cpus].
func summary(ng *NodeGres) string {
	var parts []string
	for _, r := range ng.Records {
		parts = append(parts, fmt.Sprintf("%s:%s:%d:%s:%v:%v", r.Name, r.Type, r.Count, r.File, r.CoreIDs, r.CPUIDs))
	}
	return strings.Join(parts, " ")
}

func TestResolveNode(t *testing.T) {
	tests := []struct {
		name, node, gres string
		cpus             *NodeCPUs
		want             string // summary, or the error text
		warn             string // substring of the warnings
	}{
		{name: "slurm.conf only: file-less gpu dropped, mps zero",
			node: "NodeName=n1 CPUs=4 Gres=gpu:2", gres: "",
			want: "mps::0::[]:[]"},
		{name: "untyped slurm.conf takes typed lines",
			node: "NodeName=n1 CPUs=4 Gres=gpu:2", gres: "Name=gpu Type=a File=/dev/g[0-1] Cores=1\n",
			want: "gpu::2:/dev/g[0-1]:[1]:[1] mps::0::[]:[]",
			// _compare_conf_counts matches types exactly, so slurmd warns
			// although the merge then takes the typed line.
			warn: "WARNING: A line in gres.conf for GRES gpu:a has 2 more configured than expected"},
		// As seen with slurmd -G: x truncated to 1 file, z ignored, y's
		// missing second GPU has no file and is dropped.
		{name: "truncate and warn",
			node: "NodeName=n1 CPUs=4 Gres=gpu:x:1,gpu:y:2",
			gres: "AutoDetect=off\nName=gpu Type=x File=/dev/tty[1-3] Cores=0 Links=-1,0,0\nName=gpu Type=y File=/dev/tty4 Cores=1\nName=gpu Type=z File=/dev/tty5\n",
			want: "gpu:x:1:/dev/tty1:[0]:[0] gpu:y:1:/dev/tty4:[1]:[1] mps::0::[]:[]",
			warn: "WARNING: A line in gres.conf for GRES gpu:x has 2 more configured than expected in slurm.conf. Ignoring extra GRES.|" +
				"WARNING: A line in gres.conf for GRES gpu:z has 1 more configured than expected in slurm.conf. Ignoring extra GRES."},
		{name: "mps count kept",
			node: "NodeName=n1 CPUs=4 Gres=gpu:1,mps:100", gres: "Name=gpu File=/dev/g0\nName=mps Count=100\n",
			want: "gpu::1:/dev/g0:[]:[] mps::100::[]:[]"},
		{name: "abstract cores map to all threads",
			node: "NodeName=n1 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2 Gres=gpu:1", gres: "Name=gpu File=/dev/g0 Cores=1-2\n",
			want: "gpu::1:/dev/g0:[1 2]:[2 3 4 5] mps::0::[]:[]"},
		{name: "block map",
			node: "NodeName=n1 Sockets=1 CoresPerSocket=2 ThreadsPerCore=2 Gres=gpu:1", gres: "Name=gpu File=/dev/g0 Cores=0\n",
			cpus: &NodeCPUs{CPUs: 4, Sockets: 1, CoresPerSocket: 2, ThreadsPerCore: 2, BlockMap: []int{0, 2, 1, 3}},
			want: "gpu::1:/dev/g0:[0]:[0 2] mps::0::[]:[]"},
		{name: "cores out of range in slurmd: logged, no set",
			node: "NodeName=n1 CPUs=4 Gres=gpu:1", gres: "Name=gpu File=/dev/g0 Cores=8-15\n",
			want: "gpu::1:/dev/g0:[]:[] mps::0::[]:[]", warn: "Invalid GRES data for gpu, Cores=8-15"},
		{name: "cores out of range on a cloud node",
			node: "NodeName=n1 CPUs=4 Gres=gpu:1", gres: "Name=gpu File=/dev/g0 Cores=8-15\n",
			cpus: &NodeCPUs{CPUs: 4, Mode: CoresCPUIDs},
			want: "Invalid GRES data for gpu, Cores=8-15 (only 4 CPUs are available)"},
		{name: "autodetect on a cloud node",
			node: "NodeName=n1 CPUs=4 Gres=gpu:1", gres: "AutoDetect=nvml\nName=gpu File=/dev/g0\n",
			cpus: &NodeCPUs{CPUs: 4, Mode: CoresCPUIDs},
			want: `Cannot use AutoDetect on cloud node "n1"`},
		{name: "mixed File",
			node: "NodeName=n1 CPUs=4 Gres=gpu:2", gres: "Name=gpu Type=a File=/dev/g0\nName=gpu Type=b\n",
			want: `gres.conf for gpu, some records have "File" specification while others do not`},
		{name: "mixed Type",
			node: "NodeName=n1 CPUs=4 Gres=gpu:2", gres: "Name=gpu Type=a File=/dev/g0\nName=gpu File=/dev/g1\n",
			want: `gres.conf for gpu, some records have "Type=" specification while others do not`},
		{name: "duplicate",
			node: "NodeName=n1 CPUs=4 Gres=mps:2,gpu:1", gres: "Name=mps Count=1\nName=mps Count=1\n",
			want: "gres.conf duplicate records for mps"},
		{name: "other nodes' lines do not count",
			node: "NodeName=n[1-2] CPUs=4 Gres=mps:2", gres: "NodeName=n1 Name=mps Count=1\nNodeName=n2 Name=mps Count=1\n",
			// the missing mps is a file-less record; the zero-count gpu
			// placeholder is file-less too and dropped like every such GPU.
			want: "mps::1::[]:[] mps::1::[]:[]"},
		{name: "Name lines are taken before NodeName lines",
			node: "NodeName=n1 CPUs=4 Gres=gpu:2", gres: "NodeName=n1 Name=gpu File=/dev/g1\nName=gpu File=/dev/g0\n",
			want: "gpu::1:/dev/g0:[]:[] gpu::1:/dev/g1:[]:[] mps::0::[]:[]"},
		{name: "typed and untyped in slurm.conf",
			node: "NodeName=n1 CPUs=4 Gres=gpu:a:1,gpu:1", gres: "",
			want: "_foreach_slurm_conf: Some gpu GRES in slurm.conf have a type while others do not (gres_ns->gres_cnt_config (2) > tmp_count (1))"},
		{name: "unknown node", node: "NodeName=n1 CPUs=4", gres: "", want: "Unable to determine this slurmd's NodeName"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := "n1"
			if tc.name == "unknown node" {
				node = "zz"
			}
			ng, err := resolveText(t, tc.node, tc.gres, node, tc.cpus)
			if err != nil {
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want %s", err, tc.want)
				}
				return
			}
			if got := summary(ng); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			var ws []string
			for _, w := range ng.Warnings {
				ws = append(ws, w.Msg)
			}
			all := strings.Join(ws, "|")
			if tc.warn == "" && len(ws) > 0 {
				t.Errorf("unexpected warnings %s", all)
			}
			for _, w := range strings.Split(tc.warn, "|") {
				if w != "" && !strings.Contains(all, w) {
					t.Errorf("warnings %q lack %q", all, w)
				}
			}
		})
	}
}

// TestResolveNodeGPUCluster checks the gpu-cluster config against what
// slurmd -G printed (oracle-slurmd-G-*.txt): devices, Links per device,
// counts and core ranges.
func TestResolveNodeGPUCluster(t *testing.T) {
	dir := "testdata/configs/gpu-cluster/"
	c, err := Load(OSFS{}, dir+"slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	g, err := LoadGres(OSFS{}, dir+"gres.conf", c.GresTypes)
	if err != nil {
		t.Fatal(err)
	}
	ng, err := g.ResolveNode(c, "dgx01", nil)
	if err != nil {
		t.Fatal(err)
	}
	var devs []GresDevice
	for _, r := range ng.Records {
		if r.Name == "gpu" {
			devs = append(devs, r.Devices...)
			if r.CPUs != 256 || r.Type != "a100" {
				t.Errorf("%+v", r)
			}
		}
	}
	if len(devs) != 8 || devs[3].Path != "/dev/nvidia3" || devs[3].Index != 3 || len(devs[3].Links) != 8 || devs[4].Links != nil {
		t.Errorf("dgx01 devices: %+v", devs)
	}
	if r := ng.Records[0]; len(r.CoreIDs) != 64 || r.CoreIDs[63] != 63 || len(r.CPUIDs) != 128 {
		t.Errorf("dgx01 cores: %v cpus %v", r.CoreIDs, r.CPUIDs)
	}
	ng, err = g.ResolveNode(c, "inf003", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(ng); got != "gpu:t4:2:/dev/nvidia[0-1]:[]:[] mps::200::[]:[] shard::0::[]:[]" {
		t.Errorf("inf003: %s", got)
	}
	ng, err = g.ResolveNode(c, "hgx02", nil)
	if err != nil || len(ng.Records) != 6 || ng.Records[5].Name != "shard" || ng.Records[5].Count != 32 || ng.Records[4].Name != "mps" {
		t.Errorf("hgx02: %v %s", err, summary(ng))
	}
}
