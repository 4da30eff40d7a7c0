package conf

import (
	"strconv"
	"strings"
	"testing"
)

// TestFlagKeyReaders pins the small value readers of flags.go against the
// behaviour of 22.05's C parsers (read from the 22.05.8 source).
func TestFlagKeyReaders(t *testing.T) {
	cpuBind := []struct {
		in   string
		want uint32
		ok   bool
	}{
		{"", 0, true}, {"cores", CPUBindToCores, true}, {"V;Threads", CPUBindVerbose | CPUBindToThreads, true},
		{"none", CPUBindNone, true}, {"off", CPUBindOff, true}, {"ldoms,verbose", CPUBindToLdoms | CPUBindVerbose, true},
		{"cores,sockets", 0, false}, {"bogus", 0, false}, {"map_cpu:0,1", 0, false},
	}
	for _, c := range cpuBind {
		got, ok := ParseCPUBind(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseCPUBind(%q) = %#x, %v; want %#x, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	tpp := []struct{ in, plugin, msg string }{
		{"Cores,Verbose", "task/affinity", ""}, {"autobind=threads,none", "", ""},
		{"Cores,Sockets", "", "Bad TaskPluginParam: Sockets"},
		{"autobind=cores,autobind=none", "", "Bad TaskPluginParam: autobind already set"},
		{"autobind=ldoms", "", "Bad TaskPluginParam autobind value: ldoms"},
		{"SlurmdOffSpec", "task/cray_aries", "TaskPluginParam=SlurmdOffSpec invalid with TaskPlugin=task/cray_aries"},
		{"cpusets", "", "Bad TaskPluginParam: cpusets"},
	}
	for _, c := range tpp {
		if _, msg := parseTaskPluginParam(c.in, c.plugin); msg != c.msg {
			t.Errorf("TaskPluginParam=%s: %q, want %q", c.in, msg, c.msg)
		}
	}
	rl := []struct {
		in, bad string
		ok      bool
	}{
		{"ALL", "", true}, {"NONE", "", true}, {"CPU,RLIMIT_CORE,MEMLOCK", "", true},
		{"all", "all", false}, {"memlock", "memlock", false}, {"CPU,BOGUS", "BOGUS", false},
	}
	for _, c := range rl {
		if bad, ok := parseRlimits(c.in); bad != c.bad || ok != c.ok {
			t.Errorf("parseRlimits(%q) = %q, %v", c.in, bad, ok)
		}
	}
	lic := []struct {
		in   string
		want string
	}{
		{"matlab:4,fluent", "matlab:4 fluent:1"}, {"a:2;a:3", "a:5"}, {"x:", "x:0"},
		{"x:abc", "!"}, {"x:-1", "!"}, {"x:2y", "!"}, {"x y:1", "!"}, {"x: ", "!"},
	}
	for _, c := range lic {
		l, ok := ParseLicenses(c.in)
		var got []string
		for _, x := range l {
			got = append(got, x.Name+":"+strconv.Itoa(int(x.Count)))
		}
		g := strings.Join(got, " ")
		if !ok {
			g = "!"
		}
		if g != c.want {
			t.Errorf("ParseLicenses(%q) = %q, want %q", c.in, g, c.want)
		}
	}
	spec := []struct {
		in   string
		cpus int
		ok   bool
	}{
		{"0-3", 4, true}, {"0,7", 4, false}, {"abc", 4, true}, {",9", 4, true},
		{"0-6:2", 8, true}, {"0-9:2", 8, false}, {"3-1:1", 8, false}, {"4", 4, false},
	}
	for _, c := range spec {
		if ok := cpuSpecListFits(c.in, c.cpus); ok != c.ok {
			t.Errorf("cpuSpecListFits(%q, %d) = %v", c.in, c.cpus, ok)
		}
	}
	for in, want := range map[string]string{"Low": "", "perf": "Performance", "UserSpace": "UserSpace", "sched": "SchedUtil", "co": "Conservative"} {
		if got := cpuFreqGovernor(in); got != want {
			t.Errorf("cpuFreqGovernor(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFlagKeysTyped checks the typed readings and the severities of the
// flag-list keys on small configurations.
func TestFlagKeysTyped(t *testing.T) {
	base := "ClusterName=c\nSlurmctldHost=h\nNodeName=n1 CPUs=4\nPartitionName=p Nodes=ALL\n"
	load := func(extra string) (*Config, error) { return Parse("slurm.conf", []byte(base+extra), nil) }
	c, err := load("PrivateData=jobs,bogus,usage\nPriorityFlags=MAX_TRES,NO_FAIR_TREE,junk\n" +
		"AccountingStorageEnforce=safe,nojobs\nTaskPluginParam=cores,verbose\nLicenses=a:2,b\n" +
		"PropagateResourceLimitsExcept=CORE\nPropagateResourceLimits=nonsense\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.PrivateDataFlags != PrivateJobs|PrivateUsage {
		t.Errorf("PrivateDataFlags = %#x", c.PrivateDataFlags)
	}
	if c.PriorityFlagBits != PriorityMaxTRES {
		t.Errorf("PriorityFlagBits = %#x", c.PriorityFlagBits)
	}
	if c.AccountingEnforceFlags != 0x73 {
		t.Errorf("AccountingEnforceFlags = %#x", c.AccountingEnforceFlags)
	}
	if c.TaskPluginParamFlags != CPUBindToCores|CPUBindVerbose {
		t.Errorf("TaskPluginParamFlags = %#x", c.TaskPluginParamFlags)
	}
	if len(c.LicenseList) != 2 || c.LicenseList[1] != (License{"b", 1}) {
		t.Errorf("LicenseList = %v", c.LicenseList)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings: %v", c.Warnings)
	}
	c, err = load("PrivateData=all\nSchedulerParameters=bf_max_job_test=1,bf_max_job_user=3,bf_max_job_assoc=2\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.PrivateDataFlags != PrivateAll {
		t.Errorf("PrivateData=all: %#x", c.PrivateDataFlags)
	}
	var ws []string
	for _, w := range c.Warnings {
		ws = append(ws, w.Msg)
	}
	want := "Invalid SchedulerParameters bf_node_space_size: 1|Both bf_max_job_user and bf_max_job_assoc are set: bf_max_job_assoc taking precedence."
	if got := strings.Join(ws, "|"); got != want {
		t.Errorf("warnings = %q, want %q", got, want)
	}
	// sched/builtin reads max_job_bf as an alias and does not die on it.
	if _, err := load("SchedulerType=sched/builtin\nSchedulerParameters=max_job_bf=10\n"); err != nil {
		t.Errorf("sched/builtin max_job_bf: %v", err)
	}
	c, err = load("ReconfigFlags=KeepPartInfo,KeepAll\nCpuFreqGovernors=OnDemand,Turbo\nHealthCheckNodeState=CYCLE,BUSY\n")
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(c.ReconfigFlags, ","); s != "KeepPartState" {
		t.Errorf("ReconfigFlags = %s (22.05 ends up with KeepPartState only)", s)
	}
	if s := strings.Join(c.CpuFreqGovernors, ","); s != "OnDemand,Performance,UserSpace" {
		t.Errorf("CpuFreqGovernors = %s", s)
	}
	if s := strings.Join(c.HealthCheckNodeState, ","); s != "CYCLE,ANY" {
		t.Errorf("HealthCheckNodeState = %s", s)
	}
}
