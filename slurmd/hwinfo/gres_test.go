package hwinfo

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"golang.org/x/sys/unix"
)

// fakeDevs is an injected stat: path -> (mode type, major, minor); a path
// listed in late appears after that many failed looks.
type fakeDevs struct {
	files map[string][3]uint32
	late  map[string]int
	looks map[string]int
}

func (f *fakeDevs) stat(path string, st *unix.Stat_t) error {
	if f.looks == nil {
		f.looks = map[string]int{}
	}
	f.looks[path]++
	if n, ok := f.late[path]; ok && f.looks[path] <= n {
		return unix.ENOENT
	}
	d, ok := f.files[path]
	if !ok {
		return unix.ENOENT
	}
	*st = unix.Stat_t{Mode: d[0], Rdev: unix.Mkdev(d[1], d[2])}
	return nil
}

func chr(major, minor uint32) [3]uint32 { return [3]uint32{unix.S_IFCHR | 0o666, major, minor} }

func loadGresText(t *testing.T, nodeLine, gres string, devs *fakeDevs, sleeps *int) (*Gres, error) {
	t.Helper()
	fsys := conf.MapFS{
		"/e/slurm.conf": "ClusterName=c\nSlurmctldHost=h\nGresTypes=gpu,nic,mps\n" + nodeLine + "\nPartitionName=p Nodes=ALL\n",
		"/e/gres.conf":  gres,
	}
	c, err := conf.Load(fsys, "/e/slurm.conf")
	if err != nil {
		t.Fatalf("slurm.conf: %v", err)
	}
	g, err := conf.LoadGres(fsys, "/e/gres.conf", c.GresTypes)
	if err != nil {
		t.Fatalf("gres.conf: %v", err)
	}
	top := &Topology{Layout: Layout{CPUs: 4, Boards: 1, Sockets: 1, CoresPerSocket: 4, ThreadsPerCore: 1}, BlockMap: seq(4)}
	cpus := top.NodeCPUs(top.Layout, 4)
	return LoadGres(c, g, "n1", &cpus, GresOptions{Stat: devs.stat, Sleep: func(d time.Duration) {
		if d != time.Second {
			t.Errorf("sleep %v", d)
		}
		*sleeps++
	}})
}

func devSummary(ds []Device) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%s#%d/%d:%s=%s", d.Name, d.Index, d.DevNum, d.Path, d))
	}
	return strings.Join(parts, " ")
}

func msgSummary(ms []Message) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, m.Level+": "+m.Text)
	}
	return strings.Join(parts, "|")
}

func TestLoadGres(t *testing.T) {
	std := map[string][3]uint32{
		"/dev/nvidia0": chr(195, 0), "/dev/nvidia1": chr(195, 1), "/dev/nvidia2": chr(195, 2),
		"/dev/nvme0n1": {unix.S_IFBLK | 0o660, 259, 0},
		"/dev/ctl":     chr(10, 7),
		"/dev/plain":   {unix.S_IFREG | 0o644, 0, 0},
		"/dev/mlx5_1":  chr(231, 1),
	}
	tests := []struct {
		name, node, gres string
		late             map[string]int
		devs, msgs       string
		sleeps           int
		err              string
	}{
		{name: "gpus with files",
			node: "NodeName=n1 CPUs=4 Gres=gpu:2", gres: "Name=gpu File=/dev/nvidia[0-1]\n",
			devs: "gpu#0/0:/dev/nvidia0=c 195:0 rwm gpu#1/1:/dev/nvidia1=c 195:1 rwm"},
		{name: "count cut by slurm.conf: files past it are waited for but not loaded",
			node: "NodeName=n1 CPUs=4 Gres=gpu:1", gres: "Name=gpu File=/dev/nvidia[0-2]\n",
			devs: "gpu#0/0:/dev/nvidia0=c 195:0 rwm"},
		{name: "not a device: logged and left out, index kept",
			node: "NodeName=n1 CPUs=4 Gres=gpu:2", gres: "Name=gpu File=/dev/plain,/dev/nvidia1\n",
			devs: "gpu#1/1:/dev/nvidia1=c 195:1 rwm",
			msgs: "error: /dev/plain is not a valid character or block device, fix your gres.conf"},
		{name: "block device, and a file without a number numbered after the highest",
			node: "NodeName=n1 CPUs=4 Gres=gpu:3", gres: "Name=gpu File=/dev/ctl\nName=gpu File=/dev/nvme0n1\nName=gpu File=/dev/nvidia2\n",
			devs: "gpu#0/3:/dev/ctl=c 10:7 rwm gpu#1/1:/dev/nvme0n1=b 259:0 rwm gpu#2/2:/dev/nvidia2=c 195:2 rwm"},
		{name: "MultipleFiles is one index",
			node: "NodeName=n1 CPUs=4 Gres=gpu:2", gres: "Name=gpu MultipleFiles=/dev/nvidia[0-1]\nName=gpu File=/dev/nvidia2\n",
			devs: "gpu#0/0:/dev/nvidia0=c 195:0 rwm gpu#0/1:/dev/nvidia1=c 195:1 rwm gpu#1/2:/dev/nvidia2=c 195:2 rwm"},
		{name: "nic devices too",
			node: "NodeName=n1 CPUs=4 Gres=nic:1", gres: "Name=nic File=/dev/mlx5_1\n",
			devs: "nic#0/1:/dev/mlx5_1=c 231:1 rwm"},
		{name: "file that appears while slurmd waits",
			node: "NodeName=n1 CPUs=4 Gres=gpu:1", gres: "Name=gpu File=/dev/nvidia0\n",
			late: map[string]int{"/dev/nvidia0": 3}, sleeps: 3,
			devs: "gpu#0/0:/dev/nvidia0=c 195:0 rwm",
			msgs: "error: Waiting for gres.conf file /dev/nvidia0|info: gres.conf file /dev/nvidia0 now exists"},
		{name: "missing file is fatal after 20 looks",
			node: "NodeName=n1 CPUs=4 Gres=gpu:1", gres: "Name=gpu File=/dev/nvidia9\n",
			sleeps: 19,
			msgs:   "error: Waiting for gres.conf file /dev/nvidia9",
			err:    "can't stat gres.conf file /dev/nvidia9: No such file or directory"},
		{name: "duplicate device file",
			node: "NodeName=n1 CPUs=4 Gres=gpu:2", gres: "Name=gpu File=/dev/nvidia0\nName=gpu File=/dev/nvidia0\n",
			devs: "gpu#0/0:/dev/nvidia0=c 195:0 rwm gpu#1/0:/dev/nvidia0=c 195:0 rwm",
			msgs: "error: gpu duplicate device file name (/dev/nvidia0)",
			err:  "gres/gpu failed to load configuration"},
		{name: "AutoDetect refused",
			node: "NodeName=n1 CPUs=4 Gres=gpu:1", gres: "AutoDetect=nvml\nName=gpu File=/dev/nvidia0\n",
			err: "AutoDetect is not supported"},
		{name: "AutoDetect=off is fine",
			node: "NodeName=n1 CPUs=4 Gres=gpu:1", gres: "AutoDetect=off\nName=gpu File=/dev/nvidia0\n",
			devs: "gpu#0/0:/dev/nvidia0=c 195:0 rwm"},
		{name: "conf error passes through",
			node: "NodeName=n1 CPUs=4 Gres=gpu:2", gres: "Name=gpu File=/dev/nvidia0\nName=gpu\n",
			err: "some records have \"File\" specification while others do not"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			devs := &fakeDevs{files: std, late: tc.late}
			sleeps := 0
			g, err := loadGresText(t, tc.node, tc.gres, devs, &sleeps)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				if !errors.Is(err, ErrGres) && !errors.Is(err, ErrAutoDetect) {
					t.Errorf("err %v is neither ErrGres nor ErrAutoDetect", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if g == nil {
				return
			}
			if got := devSummary(g.Devices); got != tc.devs {
				t.Errorf("devices\n got %s\nwant %s", got, tc.devs)
			}
			if got := msgSummary(g.Messages); got != tc.msgs {
				t.Errorf("messages\n got %s\nwant %s", got, tc.msgs)
			}
			if sleeps != tc.sleeps {
				t.Errorf("%d sleeps, want %d", sleeps, tc.sleeps)
			}
		})
	}
}

func TestNodeCPUs(t *testing.T) {
	top := &Topology{Layout: Layout{CPUs: 8, Boards: 1, Sockets: 2, CoresPerSocket: 2, ThreadsPerCore: 2},
		BlockMap: []int{0, 4, 1, 5, 2, 6, 3, 7}}
	// slurm.conf says more CPUs than the hardware has: the larger count,
	// the reported layout, the hardware map.
	got := top.NodeCPUs(Layout{CPUs: 16, Sockets: 2, CoresPerSocket: 4, ThreadsPerCore: 2}, 16)
	want := conf.NodeCPUs{CPUs: 16, Sockets: 2, CoresPerSocket: 4, ThreadsPerCore: 2, MachineCPUs: 8, BlockMap: top.BlockMap}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := top.NodeCPUs(top.Layout, 4); got.CPUs != 8 {
		t.Errorf("CPUs %d, want the hardware's 8", got.CPUs)
	}
}

// TestLoadGresCoresThroughBlockMap: gres.conf Cores= are abstract core
// ids; the machine CPUs come from the hardware block map.
func TestLoadGresCoresThroughBlockMap(t *testing.T) {
	fsys := conf.MapFS{
		"/e/slurm.conf": "ClusterName=c\nSlurmctldHost=h\nGresTypes=gpu\nNodeName=n1 CPUs=8 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2 Gres=gpu:1\nPartitionName=p Nodes=ALL\n",
		"/e/gres.conf":  "Name=gpu File=/dev/nvidia0 Cores=1\n",
	}
	c, err := conf.Load(fsys, "/e/slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	g, err := conf.LoadGres(fsys, "/e/gres.conf", c.GresTypes)
	if err != nil {
		t.Fatal(err)
	}
	top := &Topology{Layout: Layout{CPUs: 8, Boards: 1, Sockets: 2, CoresPerSocket: 2, ThreadsPerCore: 2},
		BlockMap: []int{0, 4, 1, 5, 2, 6, 3, 7}}
	cpus := top.NodeCPUs(top.Layout, 8)
	devs := &fakeDevs{files: map[string][3]uint32{"/dev/nvidia0": chr(195, 0)}}
	gr, err := LoadGres(c, g, "n1", &cpus, GresOptions{Stat: devs.stat})
	if err != nil {
		t.Fatal(err)
	}
	// Abstract core 1 = abstract CPUs 2,3 = OS CPUs 1 and 5.
	if r := gr.Records[0]; fmt.Sprint(r.CoreIDs, r.CPUIDs) != "[1] [1 5]" {
		t.Errorf("cores %v, CPUs %v", r.CoreIDs, r.CPUIDs)
	}
}
