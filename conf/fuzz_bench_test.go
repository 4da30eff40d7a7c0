package conf

import (
	"fmt"
	"strings"
	"testing"
)

func FuzzParseSlurmConf(f *testing.F) {
	seeds := []string{
		base,
		base + "NodeName=n[1-4] CPUs=4 Port=[7001-7004]\nPartitionName=p Nodes=ALL Default=YES MaxTime=1-00:00:00\n",
		base + "NodeName=DEFAULT CPUs=2\nNodeName=a[1-2] NodeAddr=x[1-2]\nNodeSet=s Feature=f\nPartitionName=q Nodes=s\n",
		base + "include other.conf\nKillWait=\"5\" \\\n # c\nSchedulerParameters=bf_interval=30\n",
		"ClusterName=x\\#y\nControlMachine=a,b\nFastSchedule=2\n",
		base + "DownNodes=n1 State=DOWN Reason=\"x y\"\nFrontendName=fe1\n",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	fsys := MapFS{"/etc/slurm/other.conf": "NodeName=o1\ninclude slurm.conf\n"}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse("/etc/slurm/slurm.conf", []byte(text), fsys)
		if err != nil {
			if c != nil {
				t.Fatal("error with non-nil config")
			}
			el, ok := err.(ErrorList)
			if !ok || len(el) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %T %v", err, err)
			}
			return
		}
		if c.ClusterName == "" || len(c.SlurmctldHost) == 0 {
			t.Fatal("accepted config without ClusterName/SlurmctldHost")
		}
		if len(c.NodeIndex) != len(c.Nodes) {
			t.Fatal("node index out of sync")
		}
		_ = Dump(c)
	})
}

// genConfig builds a slurm.conf with n nodes on n/100 lines.
func genConfig(n int) string {
	var b strings.Builder
	b.WriteString("ClusterName=bench\nSlurmctldHost=ctl1\nSlurmctldHost=ctl2(10.0.0.2)\n")
	b.WriteString("SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\n")
	b.WriteString("SchedulerParameters=bf_interval=60,bf_continue,default_queue_depth=1000\n")
	b.WriteString("NodeName=DEFAULT Sockets=2 CoresPerSocket=32 ThreadsPerCore=2 RealMemory=256000 State=UNKNOWN\n")
	per := 100
	for i := 0; i < n; i += per {
		fmt.Fprintf(&b, "NodeName=cn[%05d-%05d] Feature=rack%d,ib Weight=%d\n", i+1, i+per, i/per, 1+i/1000)
	}
	b.WriteString("PartitionName=DEFAULT MaxTime=2-00:00:00 State=UP\n")
	fmt.Fprintf(&b, "PartitionName=batch Nodes=cn[00001-%05d] Default=YES\n", n)
	b.WriteString("PartitionName=all Nodes=ALL\n")
	fmt.Fprintf(&b, "PartitionName=half Nodes=cn[00001-%05d]\n", n/2)
	return b.String()
}

func TestGenConfig(t *testing.T) {
	c := mustLoad(t, genConfig(20000))
	if len(c.Nodes) != 20000 || len(c.Partitions[1].NodeNames) != 20000 || c.NodeLines[0].CPUs != 128 {
		t.Errorf("nodes=%d", len(c.Nodes))
	}
}

func BenchmarkParse20000Nodes(b *testing.B) {
	data := []byte(genConfig(20000))
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse("/etc/slurm/slurm.conf", data, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseCompanions feeds the same text to the gres.conf and cgroup.conf
// readers: no panic, and an error never comes with a partial model.
func FuzzParseCompanions(f *testing.F) {
	for _, s := range []string{
		"AutoDetect=off\nNodeName=n[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-3] Cores=0-7 Links=-1,2,0,0\n",
		"Name=mps Count=200K\nName=shard Count=8 Flags=one_sharing\n",
		"CgroupPlugin=cgroup/v1\nConstrainCores=yes\nAllowedRAMSpace=95.5\nMinRAMSpace=30\n",
		"CgroupReleaseAgentDir=/x\nConstrainRAMSpace=maybe\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fsys := MapFS{"/etc/slurm/x.conf": text}
		g, err := LoadGres(fsys, "/etc/slurm/x.conf", List{"gpu", "mps", "shard"})
		if (err == nil) == (g == nil) {
			t.Fatalf("LoadGres: config %v with error %v", g != nil, err)
		}
		if g != nil {
			for _, r := range g.Records {
				if r == nil {
					t.Fatal("nil gres record")
				}
			}
		}
		c, err := LoadCgroup(fsys, "/etc/slurm/x.conf")
		if (err == nil) == (c == nil) {
			t.Fatalf("LoadCgroup: config %v with error %v", c != nil, err)
		}
	})
}
