package interop

import "strings"

// sinfoCorpus lists the sinfo invocations compared with the real one.
func sinfoCorpus() []queryInvocation {
	var c []queryInvocation
	add := func(env []string, args ...string) { c = append(c, queryInvocation{args: args, env: env}) }
	for _, a := range [][]string{
		{}, {"-l"}, {"-N"}, {"-N", "-l"}, {"-Nl"}, {"-s"}, {"-s", "-l"}, {"-R"}, {"-R", "-l"}, {"-R", "-N"},
		{"-h"}, {"--noheader"}, {"-a"}, {"--all"}, {"--hide"}, {"-e"}, {"--exact"}, {"-e", "-N", "-l"},
		{"-d"}, {"-r"}, {"--dead"}, {"--responding"},
		{"-p", "debug"}, {"-p", "long"}, {"-p", "debug,long"}, {"-p", "hid"}, {"-p", "nosuch"},
		{"-p", "empty"}, {"--partition=tiny"}, {"-p", "debug", "-N"}, {"-a", "-p", "debug"},
		{"-n", "n1"}, {"-n", "n[1-2]"}, {"-n", "n4"}, {"--nodes=n[2-4]"}, {"-n", "n9"}, {"-n", "n1", "-N"},
		{"-n", "n1", "-l"}, {"-n", "n[1-3]", "-s"},
		{"-t", "idle"}, {"-t", "IDLE"}, {"-t", "mix"}, {"-t", "alloc"}, {"-t", "drain"},
		{"-t", "drained"}, {"-t", "draining"}, {"-t", "down"}, {"-t", "all"}, {"-t", "idle,mix"},
		{"-t", "idle&drain"}, {"-t", "bogus"}, {"-t", "i"}, {"-t", "dr"}, {"-t", "resv"}, {"-t", "comp"},
		{"-t", "no_respond"}, {"-t", "fail"}, {"-t", "maint"}, {"-t", "planned"}, {"-t", "mixed", "-N"},
		{"--states=idle,alloc", "-N", "-l"},
		{"-S", "P"}, {"-S", "-P"}, {"-S", "#P"}, {"-S", "t"}, {"-S", "-t"}, {"-S", "N"}, {"-S", "-N"},
		{"-S", "D"}, {"-S", "-D"}, {"-S", "c"}, {"-S", "m"}, {"-S", "l"}, {"-S", "-l"}, {"-S", "a"},
		{"-S", "p"}, {"-S", "-p"}, {"-S", "f"}, {"-S", "w"}, {"-S", "-w"}, {"-S", "E"}, {"-S", "s"},
		{"-S", "h,P"}, {"-S", "x"}, {"-N", "-S", "-N"}, {"-N", "-S", "P"}, {"-N", "-S", "t,N"},
		{"-S", "A"}, {"-S", "g"}, {"-S", "z"}, {"-S", "X,Y,Z"}, {"-S", "d"}, {"-S", "r"},
		{"-i"}, {"-i", "0"}, {"-i", "abc"}, {"--bogus"}, {"-Z"}, {"-o"}, {"extra"}, {"-V"}, {"--version"},
		{"-a", "-p", "debug"}, {"-l", "-o", "%P"}, {"-v"}, {"-vv"}, {"--noconv"}, {"--s"}, {"--no"},
		{"-T"}, {"-M", "x"}, {"-M", "all"}, {"--federation"}, {"--local"},
		{"-t", "down"}, {"-t", "down", "-N", "-l"}, {"-R", "-t", "all"}, {"-R", "-l", "-S", "E"},
		{"-R", "-S", "-H"}, {"-R", "-S", "u"}, {"-R", "-p", "long"}, {"-d", "-N"}, {"-r", "-N"},
		{"-N", "-l", "-e"}, {"-s", "-p", "debug"}, {"-s", "-N"}, {"-R", "-s"}, {"-a", "-s"},
		{"-N", "-n", "n[4-5]", "-l"}, {"-n", "n5", "-R"}, {"-vv", "-n", "n1"}, {"-v", "-R"},
		{"-t", "idle,down", "-S", "-t"}, {"-t", "drain&idle"}, {"-t", "alloc&mix"}, {"-t", "DRAIN,DOWN", "-N"},
		{"-O", "nodelist,statecomplete:30", "-N"}, {"-o", "%N %E %H %u %U", "-N"},
	} {
		add(nil, a...)
	}
	for _, a := range [][]string{{"--usage"}, {"--help"}, {"--us"}} {
		c = append(c, queryInvocation{args: a, usage: true})
	}
	letters := "aAbBcCdDeEfFgGhHIlLmMnNoOpPrRsStTuUvVwXYZz"
	for _, l := range letters {
		s := string(l)
		add(nil, "-o", "%"+s)
		add(nil, "-o", "%P %.12"+s+"|")
		add(nil, "-o", "%5"+s+":%N")
		add(nil, "-N", "-o", "%N %"+s)
		add(nil, "-R", "-o", "%"+s+" %N")
	}
	add(nil, "-o", "%all")
	add(nil, "-N", "-o", "%all")
	add(nil, "-o", "%P%%%a")
	add(nil, "-o", "prefix %P suffix")
	add(nil, "-o", "none")
	add(nil, "-o", "%P %1 %!")
	add(nil, "-o", "")
	add(nil, "-o", "%9P %.5a %.10l %.6D %.6t %N")
	add(nil, "-o", "%20P %C %F %A")
	add(nil, "-o", "%3P")
	add(nil, "-o", "%.3P")
	names := strings.Fields(`All AllocMem AllocNodes Available Cluster Comment Cores CPUs CPUsLoad
	CPUsState DefaultTime Disk Extra Features features_act FreeMem Gres GresUsed Groups
	MaxCPUsPerNode Memory NodeAddr NodeAI NodeAIOT NodeHost NodeList Nodes OverSubscribe Partition
	PartitionName Port PreemptMode PriorityJobFactor PriorityTier Reason Root Size SocketCoreThread
	Sockets StateCompact StateLong StateComplete Threads Time TimeStamp User UserLong Version Weight
	share Bogus`)
	for _, n := range names {
		add(nil, "-O", n)
		add(nil, "-O", "partition:12,"+n+":.10|")
		add(nil, "-N", "-O", "nodelist:6 ,"+strings.ToLower(n)+":0")
	}
	add(nil, "-O", "partition,nodes:3,statelong:.4,")
	add(nil, "-O", "nodelist:")
	add(nil, "-O", "nodelist:.")
	add(nil, "-O", "nodelist:x")
	add(nil, "-e", "-O", "partition,cpus,memory,features,nodelist")
	add([]string{"SLURM_CLUSTERS=x"})
	add([]string{"SINFO_FORMAT=%P %N"})
	add([]string{"SINFO_FORMAT=%P %N"}, "-l")
	add([]string{"SINFO_FORMAT=%P %N"}, "-N")
	add([]string{"SINFO_FORMAT=%P %N"}, "-o", "%a")
	add([]string{"SINFO_SORT=-P"})
	add([]string{"SINFO_SORT=-P"}, "-S", "P")
	add([]string{"SINFO_PARTITION=long"})
	add([]string{"SINFO_PARTITION=long"}, "-p", "debug")
	add([]string{"SINFO_ALL=1"})
	add([]string{"SINFO_ALL=1", "SINFO_PARTITION=long"})
	add([]string{"SLURM_TIME_FORMAT=%s"}, "-R")
	add([]string{"SLURM_TIME_FORMAT=relative"}, "-R")
	add([]string{"TZ=UTC"}, "-R")
	return c
}
