package conf

import (
	"errors"
	"strings"
	"testing"
)

const base = "ClusterName=Test\nSlurmctldHost=ctl\n"

func load(t *testing.T, text string) (*Config, error) {
	t.Helper()
	return Parse("/etc/slurm/slurm.conf", []byte(text), nil)
}

func mustLoad(t *testing.T, text string) *Config {
	t.Helper()
	c, err := load(t, text)
	if err != nil {
		t.Fatalf("unexpected error:\n%v", err)
	}
	return c
}

func TestKnownKeys(t *testing.T) {
	if n := len(KnownKeys()); n != 226 {
		t.Errorf("known keys = %d, want 226 (22.05)", n)
	}
	for _, k := range []string{"ControlMachine", "ControlAddr", "BackupController", "BackupAddr", "FastSchedule",
		"AccountingStorageLoc", "SallocDefaultCommand", "SchedulerAuth", "CryptoType", "KeepAliveTime"} {
		if topKeyIndex[strings.ToLower(k)] == nil {
			t.Errorf("missing key %s", k)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := mustLoad(t, base)
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"ClusterName", c.ClusterName, "test"},
		{"KillWait", c.KillWait, Seconds(30)},
		{"MessageTimeout", c.MessageTimeout, Seconds(10)},
		{"SlurmdTimeout", c.SlurmdTimeout, Seconds(300)},
		{"MinJobAge", c.MinJobAge, Seconds(300)},
		{"SlurmctldPort", c.SlurmctldPort, PortRange{6817, 1}},
		{"SlurmdPort", c.SlurmdPort, uint32(6818)},
		{"AuthType", c.AuthType, "auth/munge"},
		{"CredType", c.CredType, "cred/munge"},
		{"SelectType", c.SelectType, "select/linear"},
		{"SchedulerType", c.SchedulerType, "sched/backfill"},
		{"MaxJobCount", c.MaxJobCount, uint32(10000)},
		{"MaxJobId", c.MaxJobId, uint32(67043328)},
		{"PriorityDecayHalfLife", c.PriorityDecayHalfLife, Seconds(604800)},
		{"PriorityCalcPeriod", c.PriorityCalcPeriod, Seconds(300)},
		{"EpilogMsgTime", c.EpilogMsgTime, Microseconds(2000)},
		{"PrologEpilogTimeout", c.PrologEpilogTimeout, Seconds(65534)},
		{"SuspendTime", c.SuspendTime, Seconds(Infinite32)},
		{"SlurmctldDebug", c.SlurmctldDebug, "info"},
		{"PreemptMode", strings.Join(c.PreemptMode, ","), "OFF"},
		{"TreeWidth", c.TreeWidth, uint16(50)},
		{"JobCompLoc", c.JobCompLoc, "/var/log/slurm_jobcomp.log"},
		{"AccountingStorageTRES", strings.Join(c.AccountingStorageTRES, ","), "cpu,mem,energy,node,billing,fs/disk,vmem,pages"},
		{"SlurmctldHost", c.SlurmctldHost[0].Host + "/" + c.SlurmctldHost[0].Addr, "ctl/ctl"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
	if len(c.Set) != 2 {
		t.Errorf("Set = %v", c.Set)
	}
}

func TestKeySyntax(t *testing.T) {
	c := mustLoad(t, base+
		"killwait = 45\n"+
		"SLURMCTLDPORT=7000-7009\n"+
		"SchedulerParameters=bf_interval=60,bf_continue,default_queue_depth=200\n"+
		"DefMemPerCPU=2k\n"+
		"UsePAM=yes\n"+
		"OverTimeLimit=UNLIMITED\n"+
		"PriorityDecayHalfLife=1-00:00:00\n"+
		"SlurmctldHost=backup(10.0.0.2)\n"+
		"Epilog=\"/etc/slurm/epilog script.sh\"\n"+
		"MaxMemPerNode=1000\nMaxMemPerCPU=10\n")
	if c.KillWait != 45 || c.SlurmctldPort != (PortRange{7000, 10}) || c.DefMemPerCPU != 2048 || !c.UsePAM ||
		c.OverTimeLimit != Infinite16 || c.PriorityDecayHalfLife != 86400 || c.Epilog != "/etc/slurm/epilog script.sh" {
		t.Errorf("values: %+v", c)
	}
	if v, _ := c.SchedulerParameters.Get("bf_interval"); v != "60" {
		t.Errorf("bf_interval = %q", v)
	}
	if len(c.SlurmctldHost) != 2 || c.SlurmctldHost[1].Host != "backup" || c.SlurmctldHost[1].Addr != "10.0.0.2" {
		t.Errorf("SlurmctldHost = %+v", c.SlurmctldHost)
	}
	if c.MaxMemPerCPU != 0 || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Msg, "MaxMemPerCPU ignored") {
		t.Errorf("mem warning: %v %v", c.MaxMemPerCPU, c.Warnings)
	}
}

func TestDuplicateKeyLaterWins(t *testing.T) {
	c := mustLoad(t, base+"KillWait=10\nKillWait=20\n")
	if c.KillWait != 20 {
		t.Errorf("KillWait = %d", c.KillWait)
	}
	if len(c.Warnings) != 1 || c.Warnings[0].Msg != "KillWait 1 specified more than once, latest value used" ||
		c.Warnings[0].Pos.Line != 4 {
		t.Errorf("warnings = %v", c.Warnings)
	}
}

func TestObsoleteController(t *testing.T) {
	c := mustLoad(t, "ClusterName=x\nControlMachine=a\nControlAddr=10.0.0.1\nBackupController=b\n")
	if len(c.SlurmctldHost) != 2 || c.SlurmctldHost[0].Addr != "10.0.0.1" || c.SlurmctldHost[1].Addr != "b" {
		t.Errorf("%+v", c.SlurmctldHost)
	}
}

func TestNodeDefaultsAndCPUs(t *testing.T) {
	c := mustLoad(t, base+
		"NodeName=DEFAULT CPUs=8 RealMemory=1000\n"+
		"NodeName=DEFAULT Sockets=2 CoresPerSocket=2 ThreadsPerCore=2\n"+ // adds to the earlier DEFAULT
		"NodeName=a[1-4] Feature=x,y\n"+
		"NodeName=DEFAULT RealMemory=2000\n"+
		"NodeName=b1 NodeHostname=host1 NodeAddr=10.0.0.1 Port=7001\n"+
		"NodeName=c[1-3] Boards=2 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=1 CPUs=0\n"+
		"NodeName=d[1-3] NodeHostname=localhost Port=17001-17003\n"+
		"NodeName=e1 CPUs=12 Sockets=0\n")
	a := c.NodeLines[0]
	if a.CPUs != 8 || a.RealMemory != 1000 || a.Sockets != 2 || a.Count != 4 || !a.Features.Has("y") {
		t.Errorf("a: %+v", a)
	}
	b := c.NodeLines[1]
	if b.RealMemory != 2000 || b.CPUs != 8 {
		t.Errorf("b: %+v", b)
	}
	n := c.Nodes[c.NodeIndex["b1"]]
	if n.Hostname != "host1" || n.Addr != "10.0.0.1" || n.Port != 7001 {
		t.Errorf("b1 node: %+v", n)
	}
	cl := c.NodeLines[2]
	// CPUs=0 is reset to 1 which then matches no layout and is recomputed.
	if cl.Sockets != 4 || cl.CPUs != 16 {
		t.Errorf("c: sockets %d cpus %d", cl.Sockets, cl.CPUs)
	}
	for i, want := range []uint16{17001, 17002, 17003} {
		if p := c.Nodes[c.NodeIndex["d"+string(rune('1'+i))]].Port; p != want {
			t.Errorf("d%d port %d", i+1, p)
		}
	}
	if c.Nodes[0].Port != 6818 {
		t.Errorf("default port %d", c.Nodes[0].Port)
	}
	if e := c.NodeLines[4]; e.Sockets != 1 || e.CPUs != 12 {
		// Sockets=0 -> 1; CPUs=12 matches no layout with 2 cores x 2 threads -> reset to 4
		if e.CPUs != 4 {
			t.Errorf("e: %+v", e)
		}
	}
}

func TestPartitions(t *testing.T) {
	c := mustLoad(t, base+
		"NodeName=n[1-4] Feature=fast\nNodeName=m[1-2]\n"+
		"NodeSet=fastset Feature=fast\n"+
		"PartitionName=DEFAULT MaxTime=1-00:00:00 State=UP\n"+
		"PartitionName=all Nodes=ALL Default=YES\n"+
		"PartitionName=set Nodes=fastset,m1 Shared=FORCE:2 MaxTime=INFINITE DefaultTime=30\n"+
		"PartitionName=spaced Nodes=\"n1 n2\" OverSubscribe=EXCLUSIVE AllowGroups=ALL AllowAccounts=Foo,BAR\n")
	all, set, sp := c.Partitions[0], c.Partitions[1], c.Partitions[2]
	if len(all.NodeNames) != 6 || all.MaxTime != 1440 || c.DefaultPartition != "all" {
		t.Errorf("all: %+v", all)
	}
	if strings.Join(set.NodeNames, ",") != "m1,n1,n2,n3,n4" || set.OverSubscribe != "FORCE" || set.MaxShare != 2 ||
		set.MaxTime != Infinite32 || set.DefaultTime != 30 {
		t.Errorf("set: %+v", set)
	}
	if sp.Nodes != "n1,n2" || sp.OverSubscribe != "EXCLUSIVE" || sp.AllowGroups != nil ||
		strings.Join(sp.AllowAccounts, ",") != "foo,bar" {
		t.Errorf("spaced: %+v", sp)
	}
}

// TestAllErrors checks that every problem is reported, each with its
// position, in Slurm's words.
func TestAllErrors(t *testing.T) {
	text := "SlurmctldHost=ctl\n" + // 1
		"FooBar=1\n" + // 2
		"KillWait=abc\n" + // 3
		"NodeName=n[1-2] CPUs=abc\n" + // 4
		"NodeName=n2\n" + // 5
		"PartitionName=p Nodes=n[1-3] MaxTime=bogus\n" + // 6
		"PartitionName=q Nodes=n[1-3]\n" + // 7
		"MessageTimeout=5 TCPTimeout=3\n" + // 8
		"NodeName=x NodeAddr=a,b\n" + // 9
		"NodeName=y[1-2] Port=1,2,3\n" + // 10
		"UsePAM=maybe\n" // 11
	_, err := load(t, text)
	var el ErrorList
	if !errors.As(err, &el) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		"/etc/slurm/slurm.conf:2: _parse_next_key: Parsing error at unrecognized key: FooBar",
		"/etc/slurm/slurm.conf:3: KillWait value \"abc\" is not a valid number",
		"/etc/slurm/slurm.conf:4: CPUs value \"abc\" is not a valid number",
		"/etc/slurm/slurm.conf:8: Parse error in file /etc/slurm/slurm.conf line 8: \" TCPTimeout=3\"",
		"/etc/slurm/slurm.conf:11: \"maybe\" is not a valid option for \"UsePAM\"",
		"-: ClusterName needs to be specified",
		"/etc/slurm/slurm.conf:5: Duplicated NodeName n2 in the config file",
		"/etc/slurm/slurm.conf:9: NodeAddr count must equal that of NodeName records of there must be no more than one",
		"/etc/slurm/slurm.conf:10: Port count must equal that of NodeName records or there must be no more than one (3 != 2)",
		"/etc/slurm/slurm.conf:6: Bad value \"bogus\" for MaxTime",
		"/etc/slurm/slurm.conf:7: Invalid node names in partition q (invalid node name n3)",
	}
	got := strings.Split(el.Error(), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// "\"maybe\"" — the bool error names the value first.
	_ = got
}

func TestMissingController(t *testing.T) {
	_, err := load(t, "ClusterName=x\n")
	if err == nil || !strings.Contains(err.Error(), "No SlurmctldHost defined.") {
		t.Errorf("err = %v", err)
	}
}

func TestRemovedOptions(t *testing.T) {
	tests := map[string]string{
		"FastSchedule=2":                                 "The FastSchedule option has been removed. The FastSchedule=2",
		"FastSchedule=0":                                 "The FastSchedule option has been removed. Please update",
		"AccountingStorageLoc=/x":                        "The AccountingStorageLoc option has been removed.",
		"SallocDefaultCommand=bash":                      "SallocDefaultCommand has been removed.",
		"AccountingStoreJobComment=yes":                  "AccountingStoreJobComment option has been removed",
		"PreemptMode=SUSPEND":                            "PreemptMode=SUSPEND requires GANG too",
		"PreemptMode=on":                                 "PreemptMode=SUSPEND requires GANG too",
		"PreemptMode=SUSPEND,CANCEL,GANG":                "PreemptMode=SUSPEND,CANCEL,GANG invalid",
		"PreemptMode=REQUEUE,GANG,WITHIN":                "PreemptMode=REQUEUE,GANG,WITHIN invalid",
		"PreemptMode=bogus":                              "PreemptMode=bogus invalid",
		"DebugFlags=Backfill,Nope":                       "DebugFlags invalid: Backfill,Nope",
		"SlurmctldDebug=loud":                            "Invalid SlurmctldDebug loud",
		"SlurmctldPort=abc":                              "Invalid SlurmctldPort abc",
		"PriorityUsageResetPeriod=hourly":                "Bad value \"hourly\" for PriorityUsageResetPeriod",
		"PrologFlags=Contain,NoHold":                     "NoHold cannot be combined",
		"AccountingStorageType=accounting_storage/mysql": "only permitted in SlurmDBD",
		"FirstJobId=0":                                   "FirstJobId cannot be zero",
		"NodeName=ALL":                                   "'ALL' is a reserved word disallowed for use with NodeName",
		"NodeName=DEFAULT NodeAddr=x":                    "NodeAddr not allowed with NodeName=DEFAULT",
		"NodeName=n1 State=BOGUS":                        "Invalid state BOGUS from n1",
		"PartitionName=p State=weird":                    "Bad value \"weird\" for State",
		"PartitionName=p OverSubscribe=maybe":            "Bad value \"maybe\" for OverSubscribe",
		"SlurmctldHost=a(b":                              "Bad value \"a(b\" for SlurmctldHost",
		"SlurmctldHost=ctl":                              "Duplicate SlurmctldHost records: ctl",
		"PartitionName=p\nPartitionName=p":               "duplicate entry for partition p",
	}
	for line, want := range tests {
		_, err := load(t, base+line+"\n")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", line, err, want)
		}
	}
}

func TestTwoDefaultPartitionsWarn(t *testing.T) {
	c := mustLoad(t, base+"NodeName=n1\nPartitionName=a Nodes=n1 Default=YES\nPartitionName=b Nodes=n1 Default=YES\n")
	if c.DefaultPartition != "b" || len(c.Warnings) != 1 ||
		c.Warnings[0].Msg != "_parse_part_spec: changing default partition from a to b" {
		t.Errorf("%s %v", c.DefaultPartition, c.Warnings)
	}
}

func TestIncludeClusterName(t *testing.T) {
	fsys := MapFS{
		"/etc/slurm/slurm.conf":     "ClusterName=Big\nSlurmctldHost=c\ninclude nodes-%c.conf\n",
		"/etc/slurm/nodes-big.conf": "NodeName=n[1-2]\nPartitionName=p Nodes=ALL\n",
	}
	c, err := Load(fsys, "/etc/slurm/slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 2 || len(c.Files) != 2 || c.Partitions[0].Pos.File != "/etc/slurm/nodes-big.conf" {
		t.Errorf("%+v", c)
	}
}

// The built-in auth and credential plugins are goslurm extensions that
// parse; other unknown plugin names are still refused as 22.05 refuses them.
func TestExtensionPlugins(t *testing.T) {
	c := mustLoad(t, base+"AuthType=auth/slurm\nCredType=cred/goslurm_hs256\n")
	if c.AuthType != "auth/slurm" || c.CredType != "cred/goslurm_hs256" {
		t.Errorf("AuthType=%q CredType=%q", c.AuthType, c.CredType)
	}
	for _, line := range []string{"AuthType=auth/bogus", "CredType=cred/slurm", "SelectType=auth/slurm"} {
		if _, err := load(t, base+line+"\n"); err == nil {
			t.Errorf("%s accepted", line)
		}
	}
}
