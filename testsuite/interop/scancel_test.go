package interop

// Paired differential tests of the commands that change the cluster:
// scontrol's job, node and partition updates and control commands, and
// scancel. The real command acts on one object and ours on an
// equivalent one (or on the same one after the real command's effect is
// undone); their outputs and the resulting states must match once the
// ids and names that differ between the two objects are masked.

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// masker replaces the ids and names that differ between the real and our
// half of a pair by the same placeholders.
type masker struct {
	res  []*regexp.Regexp
	repl []string
}

func newMasker(pairs ...string) *masker {
	m := &masker{}
	for i := 0; i+1 < len(pairs); i += 2 {
		// Not inside a longer number or word, but "1234_[1-2]" and
		// "1234.batch" still match: '_' is no boundary here.
		m.res = append(m.res, regexp.MustCompile(`(^|[^0-9A-Za-z])`+regexp.QuoteMeta(pairs[i])+`($|[^0-9A-Za-z])`))
		m.repl = append(m.repl, "${1}"+pairs[i+1]+"${2}")
	}
	return m
}

func (m *masker) apply(s string) string {
	for i, re := range m.res {
		// Twice, for occurrences that share a separator ("12,12").
		s = re.ReplaceAllString(s, m.repl[i])
		s = re.ReplaceAllString(s, m.repl[i])
	}
	return s
}

// Time stamps and ages differ between two objects made a moment apart
// (a node's BootTime too: slurmd computes it as now minus uptime at each
// registration, so it moves by a second between re-registrations);
// priority/basic gives each submission one less priority than the last,
// so non-zero priorities are masked too (a hold's 0 stays visible).
var (
	stateTimes  = regexp.MustCompile(`\b(BootTime|SubmitTime|EligibleTime|AccrueTime|StartTime|EndTime|LastSchedEval|SuspendTime|ResizeTime|PreemptEligibleTime|RunTime|LastBusyTime|Deadline)=\S+`)
	statePrio   = regexp.MustCompile(`\bPriority=[1-9][0-9]*`)
	reasonStamp = regexp.MustCompile(`\[([^@\]]*)@[^\]]*\]`)
	secsPreSusp = regexp.MustCompile(`\bSecsPreSuspend=[0-9]+`)
	// Array tasks split off a pending array get new ids in submission
	// order, different for the two halves.
	splitJobID = regexp.MustCompile(`\bJobId=[0-9]+`)
	// Node load and free memory are sampled by slurmd pings.
	nodeSamples = regexp.MustCompile(`\b(CPULoad|FreeMem)=\S+`)
	// show config's first line carries the configuration's last change.
	confStamp     = regexp.MustCompile(`Configuration data as of \S+`)
	stateNodeList = regexp.MustCompile(`\b(NodeList|BatchHost|SchedNodeList)=\S*`)
)

func maskState(s string, keepNodes bool) string {
	s = stateTimes.ReplaceAllString(s, "$1=<t>")
	s = statePrio.ReplaceAllString(s, "Priority=<p>")
	s = reasonStamp.ReplaceAllString(s, "[$1@<t>]")
	s = secsPreSusp.ReplaceAllString(s, "SecsPreSuspend=<s>")
	s = splitJobID.ReplaceAllString(s, "JobId=<id>")
	s = nodeSamples.ReplaceAllString(s, "$1=<x>")
	s = confStamp.ReplaceAllString(s, "Configuration data as of <t>")
	if !keepNodes {
		s = stateNodeList.ReplaceAllString(s, "$1=<n>")
	}
	return s
}

func (r ctlResult) String() string {
	return fmt.Sprintf("(exit %d)\n%s%s", r.code, r.stdout, ctlIndent(r.stderr))
}

func (r ctlResult) masked(m *masker) ctlResult {
	return ctlResult{m.apply(r.stdout), m.apply(r.stderr), r.code}
}

// showJobState is the real scontrol's one-line view of a job (all its
// array records), used to compare the effect of a pair of commands.
func (cc *ctlCluster) showJobState(t *testing.T, id string) string {
	r := cc.exec(t, cc.real["scontrol"], "scontrol", []string{"-o", "show", "job", id}, nil, "")
	// Both jobs come from sbatch run in this process's session; masked
	// here, before the job id masks, which a sid equal to an id would
	// meet.
	return allocSid.ReplaceAllString(r.stdout+r.stderr, "AllocNode:Sid=$1:<sid>")
}

// settled: nothing is still in flight for the job: not COMPLETING, not
// SIGNALING (a signal's delivery to the nodes under way; a loaded .ci/run
// read it twice in a row after scancel -s CONT -b under real slurmctld),
// and not a pending job the scheduler has not looked at since the last
// change (Reason=None until a pass sets Priority, Resources,
// PartitionDown, ...).
func settled(s string) bool {
	return !strings.Contains(s, "COMPLETING") && !strings.Contains(s, "SIGNALING") &&
		!(strings.Contains(s, "JobState=PENDING") && strings.Contains(s, "Reason=None "))
}

// settledJobState is the masked state of a job once the controller has
// finished acting on the last operation (see settled: a requeue of a
// running job passes through COMPLETING until slurmd's epilog reply, a
// released job has Reason=None until the next scheduling pass) and two
// reads in a row agree. Comparing earlier would compare how far each
// controller got, not where it ends.
func (cc *ctlCluster) settledJobState(t *testing.T, id string, m *masker, keepNodes bool) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	prev := ""
	for {
		s := maskState(m.apply(cc.showJobState(t, id)), keepNodes)
		if s == prev && settled(s) || time.Now().After(deadline) {
			return s
		}
		prev = s
		time.Sleep(200 * time.Millisecond)
	}
}

// jobMutation is one paired job scenario: the jobs are made with sbatch
// (name %N), then each op runs with %J replaced by the job id and %N by
// the name.
type jobMutation struct {
	sbatch []string
	ops    [][]string
	// running jobs are waited for before the ops, and their node lists
	// (which may legitimately differ) are masked.
	running bool
}

func subst(args []string, id, name string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "%J", id)
		out[i] = strings.ReplaceAll(a, "%N", name)
	}
	return out
}

func (cc *ctlCluster) diffMutations(t *testing.T, ids map[string]string) (int, []string) {
	held := []string{"--hold", "-p", "down", "-J", "%N", "-t", "30", "--wrap", "true"}
	pend := []string{"-p", "down", "-J", "%N", "-t", "30", "--wrap", "true"}
	arr := []string{"--hold", "-p", "down", "-J", "%N", "-a", "1-4", "--wrap", "true"}
	run := []string{"-p", "debug", "-w", "n2", "-J", "%N", "--wrap", "sleep 600"}
	op := func(a ...string) []string { return a }
	upd := func(a ...string) []string { return append([]string{"update", "JobId=%J"}, a...) }
	muts := []jobMutation{
		{sbatch: held, ops: [][]string{op("release", "%J")}},
		{sbatch: pend, ops: [][]string{op("hold", "%J")}},
		{sbatch: pend, ops: [][]string{op("uhold", "%J"), op("release", "%J")}},
		{sbatch: pend, ops: [][]string{op("holdu", "%J")}},
		{sbatch: pend, ops: [][]string{op("hold", "JobId=%J"), op("hold", "%J")}},
		{sbatch: pend, ops: [][]string{op("hold", "Name=%N")}},
		{sbatch: held, ops: [][]string{op("release", "JobName=%N")}},
		{sbatch: held, ops: [][]string{upd("TimeLimit=20")}},
		{sbatch: held, ops: [][]string{upd("TimeLimit+=5")}},
		{sbatch: held, ops: [][]string{upd("TimeLimit-=5")}},
		{sbatch: held, ops: [][]string{upd("TimeLimit-=50")}},
		{sbatch: held, ops: [][]string{upd("TimeLimit=+7")}},
		{sbatch: held, ops: [][]string{upd("TimeLimit=1-00:00:00", "TimeMin=10")}},
		{sbatch: held, ops: [][]string{upd("TimeLimit=UNLIMITED")}},
		{sbatch: held, ops: [][]string{upd("Name=%N-new")}},
		{sbatch: held, ops: [][]string{upd("Priority=100")}},
		{sbatch: held, ops: [][]string{upd("Nice=5")}},
		{sbatch: held, ops: [][]string{upd("Nice")}},
		{sbatch: held, ops: [][]string{upd("Partition=long")}},
		{sbatch: held, ops: [][]string{upd("Partition=nosuchpart")}},
		{sbatch: held, ops: [][]string{upd("NumNodes=1-2")}},
		{sbatch: held, ops: [][]string{upd("NumNodes=9")}},
		{sbatch: held, ops: [][]string{upd("NumCPUs=2")}},
		{sbatch: held, ops: [][]string{upd("NumTasks=2")}},
		{sbatch: held, ops: [][]string{upd("Comment=hello world")}},
		{sbatch: held, ops: [][]string{upd("AdminComment=adm")}},
		{sbatch: held, ops: [][]string{upd("Features=fast")}},
		{sbatch: held, ops: [][]string{upd("ExcNodeList=n4")}},
		{sbatch: held, ops: [][]string{upd("ReqNodeList=n2")}},
		{sbatch: held, ops: [][]string{upd("MinMemoryNode=50")}},
		{sbatch: held, ops: [][]string{upd("MinMemoryCPU=60")}},
		{sbatch: held, ops: [][]string{upd("MinTmpDiskNode=10")}},
		{sbatch: held, ops: [][]string{upd("MinCPUsNode=2")}},
		{sbatch: held, ops: [][]string{upd("Requeue=0")}},
		{sbatch: held, ops: [][]string{upd("Contiguous=yes")}},
		{sbatch: held, ops: [][]string{upd("OverSubscribe=yes")}},
		{sbatch: held, ops: [][]string{upd("StartTime=now+1hour")}},
		{sbatch: held, ops: [][]string{upd("Dependency=afterany:1000")}},
		{sbatch: held, ops: [][]string{upd("Account=acct2")}},
		{sbatch: held, ops: [][]string{upd("Licenses=foo:2")}},
		{sbatch: held, ops: [][]string{upd("WorkDir=/tmp")}},
		{sbatch: held, ops: [][]string{upd("StdOut=/tmp/x.out")}},
		{sbatch: held, ops: [][]string{upd("MailUser=x@y")}},
		{sbatch: held, ops: [][]string{upd("CPUsPerTask=2")}},
		{sbatch: held, ops: [][]string{upd("Reboot=yes")}},
		{sbatch: held, ops: [][]string{upd("DelayBoot=5:00", "ClusterFeatures=cf")}},
		{sbatch: held, ops: [][]string{upd("ReqSockets=1", "ReqCores=1", "ReqThreads=1", "TasksPerNode=1")}},
		{sbatch: held, ops: [][]string{upd("CoreSpec=1")}},
		{sbatch: held, ops: [][]string{upd("ThreadSpec=1")}},
		{sbatch: held, ops: [][]string{upd("CpusPerTres=gpu:2", "MemPerTres=gpu:100")}},
		{sbatch: held, ops: [][]string{upd("Gres=gpu:1")}},
		{sbatch: held, ops: [][]string{upd("Switches=1@5")}},
		{sbatch: held, ops: [][]string{upd("EndTime=now+1day", "Deadline=now+2days")}},
		{sbatch: held, ops: [][]string{upd("Deadline=bogus")}},
		{sbatch: held, ops: [][]string{upd("MailType=END,FAIL", "MailUser=a@b")}},
		{sbatch: held, ops: [][]string{upd("MailType=bogus")}},
		{sbatch: held, ops: [][]string{upd("SiteFactor=5")}},
		{sbatch: held, ops: [][]string{upd("ResetAccrueTime")}},
		{sbatch: held, ops: [][]string{upd("De=afterany:1000", "Ta=1")}},
		{sbatch: held, ops: [][]string{op("update", "Name=%N", "TimeLimit=9")}},
		{sbatch: held, ops: [][]string{op("update", "JobId", "%J", "Comment", "spaced")}},
		{sbatch: held, ops: [][]string{op("requeue", "%J")}},
		{sbatch: held, ops: [][]string{op("requeuehold", "%J")}},
		{sbatch: held, ops: [][]string{op("suspend", "%J")}},
		{sbatch: arr, ops: [][]string{op("release", "%J_2")}},
		{sbatch: arr, ops: [][]string{op("release", "%J_[1-2]")}},
		{sbatch: arr, ops: [][]string{upd("ArrayTaskThrottle=1"), op("release", "%J")}},
		{sbatch: arr, ops: [][]string{op("update", "JobId=%J_3", "TimeLimit=7")}},
		{sbatch: arr, ops: [][]string{op("update", "JobId=%J_[1-2]", "Comment=two")}},
		{sbatch: arr, ops: [][]string{op("hold", "%J_9")}},
		{sbatch: run, running: true, ops: [][]string{op("suspend", "%J")}},
		{sbatch: run, running: true, ops: [][]string{op("suspend", "%J"), op("resume", "%J")}},
		{sbatch: run, running: true, ops: [][]string{upd("TimeLimit=300")}},
		{sbatch: run, running: true, ops: [][]string{op("hold", "%J")}},
		{sbatch: run, running: true, ops: [][]string{op("requeuehold", "%J")}},
		{sbatch: run, running: true, ops: [][]string{op("requeue", "%J")}},
		{sbatch: run, running: true, ops: [][]string{upd("NumNodes=2")}},
	}
	var failures []string
	n := 0
	for k, mu := range muts {
		nameA, nameB := fmt.Sprintf("mA%d", k), fmt.Sprintf("mB%d", k)
		idA := cc.submit(t, subst(mu.sbatch, "", nameA)...)
		idB := cc.submit(t, subst(mu.sbatch, "", nameB)...)
		if mu.running {
			cc.waitState(t, idA, "R")
			cc.waitState(t, idB, "R")
		}
		mA := newMasker(idA, "<J>", nameA, "<N>")
		mB := newMasker(idB, "<J>", nameB, "<N>")
		for _, o := range mu.ops {
			n++
			real := cc.exec(t, cc.real["scontrol"], "scontrol", subst(o, idA, nameA), nil, "").masked(mA)
			ours := cc.exec(t, cc.ours["scontrol"], "scontrol", subst(o, idB, nameB), nil, "").masked(mB)
			if real != ours {
				failures = append(failures, fmt.Sprintf("scontrol %s:\n--- real %s--- ours %s",
					strings.Join(o, " "), real, ours))
			}
		}
		sA := cc.settledJobState(t, idA, mA, !mu.running)
		sB := cc.settledJobState(t, idB, mB, !mu.running)
		// The two jobs are read one after the other: a scheduling pass
		// between the reads (a Nice update releases a held job's
		// priority, and the pass then sets its reason) changes only the
		// second. Read both again before calling it a difference.
		for try := 0; try < 3 && sA != sB; try++ {
			time.Sleep(time.Second)
			sA = cc.settledJobState(t, idA, mA, !mu.running)
			sB = cc.settledJobState(t, idB, mB, !mu.running)
		}
		if sA != sB {
			failures = append(failures, fmt.Sprintf("job state after %q:\n--- real\n%s--- ours\n%s", mu.ops, sA, sB))
		}
		cc.exec(t, cc.real["scancel"], "scancel", []string{idA, idB}, nil, "")
	}
	n += len(muts)
	n2, f2 := cc.diffNodePartMutations(t)
	return n + n2, append(failures, f2...)
}

// diffNodePartMutations applies each node or partition update with the
// real scontrol, records the record, undoes it, applies it with ours and
// compares both the command results and the records.
func (cc *ctlCluster) diffNodePartMutations(t *testing.T) (int, []string) {
	cases := []struct {
		op, undo []string
		show     []string
		pre      []string // run with the real scontrol before each half
	}{
		{[]string{"update", "NodeName=n3", "State=DRAIN", "Reason=pair test"}, []string{"update", "NodeName=n3", "State=RESUME"}, []string{"show", "node", "n3"}, nil},
		{[]string{"update", "NodeName=n3", "State=DOWN", "Reason=\"quoted reason\""}, []string{"update", "NodeName=n3", "State=RESUME"}, []string{"show", "node", "n3"}, nil},
		{[]string{"update", "NodeName=n3", "State=FAIL", "Reason=failing"}, []string{"update", "NodeName=n3", "State=RESUME"}, []string{"show", "node", "n3"}, nil},
		{[]string{"update", "NodeName=n4", "State=RESUME"}, []string{"update", "NodeName=n4", "State=DRAIN", "Reason=maintenance test"}, []string{"show", "node", "n4"}, nil},
		{[]string{"update", "NodeName=n4", "State=UNDRAIN"}, []string{"update", "NodeName=n4", "State=DRAIN", "Reason=maintenance test"}, []string{"show", "node", "n4"}, nil},
		{[]string{"update", "NodeName=n4", "State=IDLE"}, []string{"update", "NodeName=n4", "State=DRAIN", "Reason=maintenance test"}, []string{"show", "node", "n4"}, nil},
		{[]string{"update", "NodeName=n3", "Weight=7", "Comment=hi"}, []string{"update", "NodeName=n3", "Weight=1", "Comment="}, []string{"show", "node", "n3"}, nil},
		{[]string{"update", "NodeName=n3", "AvailableFeatures=a,b", "ActiveFeatures=a"}, []string{"update", "NodeName=n3", "AvailableFeatures=", "ActiveFeatures="}, []string{"show", "node", "n3"}, nil},
		{[]string{"update", "NodeName=n[3-4]", "Extra=x"}, []string{"update", "NodeName=n[3-4]", "Extra="}, []string{"show", "node", "n[3-4]"}, nil},
		{[]string{"update", "NodeName=n3", "State=RESUME"}, nil, []string{"show", "node", "n3"}, nil},
		{[]string{"update", "NodeName=n3", "Gres=gpu:1"}, nil, []string{"show", "node", "n3"}, nil},
		{[]string{"update", "PartitionName=tiny", "MaxTime=45"}, []string{"update", "PartitionName=tiny", "MaxTime=30"}, []string{"show", "partition", "tiny"}, nil},
		{[]string{"update", "PartitionName=tiny", "State=DRAIN"}, []string{"update", "PartitionName=tiny", "State=UP"}, []string{"show", "partition", "tiny"}, nil},
		{[]string{"update", "PartitionName=tiny", "State=INACTIVE", "Hidden=yes"}, []string{"update", "PartitionName=tiny", "State=UP", "Hidden=no"}, []string{"show", "partition", "tiny"}, nil},
		{[]string{"update", "PartitionName=tiny", "DefaultTime=10", "MaxNodes=1", "MinNodes=1"}, []string{"update", "PartitionName=tiny", "DefaultTime=UNLIMITED", "MaxNodes=UNLIMITED", "MinNodes=0"}, []string{"show", "partition", "tiny"}, nil},
		{[]string{"update", "PartitionName=tiny", "OverSubscribe=YES:3", "PriorityTier=5", "GraceTime=20"}, []string{"update", "PartitionName=tiny", "OverSubscribe=FORCE:2", "PriorityTier=1", "GraceTime=0"}, []string{"show", "partition", "tiny"}, nil},
		{[]string{"update", "PartitionName=tiny", "AllowGroups=root", "AllowAccounts=ALL", "DenyQos=normal"}, []string{"update", "PartitionName=tiny", "AllowGroups=ALL", "AllowAccounts=root", "AllowQos=ALL"}, []string{"show", "partition", "tiny"}, nil},
		{[]string{"update", "PartitionName=tiny", "Nodes=n[1-2]", "Default=yes"}, []string{"update", "PartitionName=tiny", "Nodes=n1", "Default=no"}, []string{"show", "partition"}, nil},
		{[]string{"update", "PartitionName=tiny", "MaxMemPerCPU=100", "DefMemPerNode=50", "LLN=yes", "ExclusiveUser=yes"}, []string{"update", "PartitionName=tiny", "MaxMemPerNode=0", "DefMemPerNode=0", "LLN=no", "ExclusiveUser=no"}, []string{"show", "partition", "tiny"}, nil},
		{[]string{"update", "PartitionName=tiny", "PreemptMode=OFF", "RootOnly=yes", "ReqResv=yes", "DisableRootJobs=yes"}, []string{"update", "PartitionName=tiny", "RootOnly=no", "ReqResv=no", "DisableRootJobs=no"}, []string{"show", "partition", "tiny"}, nil},
		{[]string{"update", "PartitionName=tiny", "MaxCPUsPerNode=2", "TRESBillingWeights=CPU=2.0"}, []string{"update", "PartitionName=tiny", "MaxCPUsPerNode=UNLIMITED", "TRESBillingWeights="}, []string{"show", "partition", "tiny"}, nil},
		{[]string{"reconfigure"}, nil, []string{"show", "partition", "tiny"}, nil},
		{op: []string{"create", "PartitionName=xa", "Nodes=n1", "MaxTime=10", "State=DOWN"}, undo: []string{"delete", "PartitionName=xa"}, show: []string{"show", "partition", "xa"}},
		{op: []string{"create", "PartitionName=debug", "Nodes=n1"}, show: []string{"show", "partition", "debug"}},
		{op: []string{"delete", "PartitionName=xb"}, pre: []string{"create", "PartitionName=xb", "Nodes=n2"}, show: []string{"show", "partition"}},
		{op: []string{"delete", "PartitionName", "xc"}, pre: []string{"create", "PartitionName=xc", "Nodes=n2"}, show: []string{"show", "partition", "xc"}},
		{op: []string{"delete", "PartitionName=nosuch"}, show: []string{"show", "partition"}},
		{[]string{"delete", "ReservationName=tmpres"}, nil, []string{"show", "reservation"},
			[]string{"create", "reservation", "ReservationName=tmpres", "StartTime=now+3days", "Duration=10", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"delete", "reservation", "tmpres2"}, nil, []string{"show", "reservation"},
			[]string{"create", "reservation", "ReservationName=tmpres2", "StartTime=now+3days", "Duration=10", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS,MAINT"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, nil},
		{[]string{"create", "res", "ReservationName=ur1", "StartTime=now+5days", "EndTime=now+6days", "Nodes=n4", "Accounts=root", "Flags=PURGE_COMP=10:00,IGNORE_JOBS", "MaxStartDelay=5:00"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, nil},
		{[]string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "NodeCnt=1", "PartitionName=long", "Users=root", "Flags=IGNORE_JOBS"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, nil},
		{[]string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=ALL", "PartitionName=tiny", "Users=root", "Flags=IGNORE_JOBS"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, nil},
		{[]string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Licenses=foo:1", "Users=root", "Flags=ANY_NODES"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, nil},
		{[]string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root,daemon", "Flags=IGNORE_JOBS", "Features="}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, nil},
		{[]string{"create", "reservation", "ReservationName=ur1", "StartTime=bogus", "Duration=60", "Nodes=n4", "Users=root"}, nil, []string{"show", "reservation", "ur1"}, nil},
		{[]string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4"}, nil, []string{"show", "reservation", "ur1"}, nil},
		{[]string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=bogus"}, nil, []string{"show", "reservation", "ur1"}, nil},
		{[]string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "NodeCnt=99", "Users=root"}, nil, []string{"show", "reservation", "ur1"}, nil},
		{[]string{"update", "ReservationName=ur1", "Duration=120"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, []string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"update", "ReservationName=ur1", "Duration+=30"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, []string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"update", "ReservationName=ur1", "Users+=daemon"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, []string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"update", "ReservationName=ur1", "Flags+=DAILY"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, []string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"update", "ReservationName=ur1", "Flags-=IGNORE_JOBS"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, []string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"update", "ReservationName=ur1", "StartTime=now+6days", "Accounts=root"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, []string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"update", "ReservationName=ur1", "Licenses=foo:1", "MaxStartDelay=10"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, []string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"update", "ReservationName=ur1", "Bogus=1"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, []string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"update", "ReservationName=ur1", "Skip"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, []string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"update", "ReservationName=nosuch", "Duration=5"}, []string{"delete", "ReservationName=ur1"}, []string{"show", "reservation", "ur1"}, []string{"create", "reservation", "ReservationName=ur1", "StartTime=now+5days", "Duration=60", "Nodes=n4", "Users=root", "Flags=IGNORE_JOBS"}},
		{[]string{"setdebugflags", "+Gang,Backfill"}, []string{"setdebugflags", "-Gang,Backfill"}, []string{"show", "config"}, nil},
		{[]string{"setdebug", "debug2"}, []string{"setdebug", "info"}, []string{"show", "config"}, nil},
		{[]string{"setdebug", "5"}, []string{"setdebug", "info"}, []string{"show", "config"}, nil},
		// Refused without SlurmSchedLogFile, so nothing to undo.
		{[]string{"schedloglevel", "enable"}, nil, []string{"show", "config"}, nil},
		{[]string{"fsdampeningfactor", "3"}, nil, []string{"show", "config"}, nil},
		// Last: OverTimeLimit cannot be set back to its unset value.
		{[]string{"update", "PartitionName=tiny", "OverTimeLimit=5"}, nil, []string{"show", "partition", "tiny"}, nil},
	}
	var failures []string
	for _, c := range cases {
		if c.pre != nil {
			cc.undo(t, c.pre)
		}
		real := cc.exec(t, cc.real["scontrol"], "scontrol", c.op, nil, "")
		realShow := cc.exec(t, cc.real["scontrol"], "scontrol", c.show, nil, "")
		cc.revert(t, c.op, c.undo)
		if c.pre != nil {
			cc.undo(t, c.pre)
		}
		cc.waitNodesResponding(t)
		ours := cc.exec(t, cc.ours["scontrol"], "scontrol", c.op, nil, "")
		oursShow := cc.exec(t, cc.real["scontrol"], "scontrol", c.show, nil, "")
		cc.revert(t, c.op, c.undo)
		cc.waitNodesResponding(t)
		if real != ours {
			failures = append(failures, fmt.Sprintf("scontrol %s:\n--- real %s--- ours %s", strings.Join(c.op, " "), real, ours))
		}
		a, b := maskState(realShow.stdout, true), maskState(oursShow.stdout, true)
		if a != b {
			failures = append(failures, fmt.Sprintf("state after scontrol %s:\n--- real\n%s--- ours\n%s", strings.Join(c.op, " "), a, b))
		}
	}
	return 2 * len(cases), failures
}

// cancelScenario is one scancel round: jobs made with sbatch (%N is the
// round's name), then scancel with %N and %0..%9 (the jobs' ids).
type cancelScenario struct {
	jobs    [][]string
	args    []string
	stdin   string
	running bool
}

func substIDs(args []string, name string, ids []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for k := len(ids) - 1; k >= 0; k-- {
			a = strings.ReplaceAll(a, fmt.Sprintf("%%%d", k), ids[k])
		}
		out[i] = strings.ReplaceAll(a, "%N", name)
	}
	return out
}

func (cc *ctlCluster) diffScancel(t *testing.T) (int, []string) {
	held := []string{"--hold", "-p", "down", "-J", "%N", "--wrap", "true"}
	pend := []string{"-p", "down", "-J", "%N", "--wrap", "true"}
	run := []string{"-p", "debug", "-w", "n2", "-J", "%N", "--wrap", "sleep 600"}
	arr := []string{"--hold", "-p", "down", "-J", "%N", "-a", "1-4", "--wrap", "true"}
	nobody := []string{"--uid", "nobody", "--hold", "-p", "down", "-J", "%N", "--wrap", "true"}
	acct := []string{"-A", "acctx", "--hold", "-p", "down", "-J", "%N", "--wrap", "true"}
	j := func(a ...[]string) [][]string { return a }
	a := func(s ...string) []string { return s }
	scen := []cancelScenario{
		{jobs: j(held), args: a("%0")},
		{jobs: j(held), args: a("-v", "%0")},
		{jobs: j(held), args: a("-Q", "%0")},
		{jobs: j(held, held), args: a("%0", "%1")},
		{jobs: j(held, held), args: a("%0,%1")},
		{jobs: j(held, held), args: a("-v", "%0,%1")},
		// A signal other than KILL to a pending job is refused as a
		// transitional state and retried for 95 s; too slow to run here.
		{jobs: j(held), args: a("--signal=9", "-v", "%0")},
		{jobs: j(held), args: a("-b", "-v", "%0")},
		{jobs: j(held), args: a("-f", "%0")},
		{jobs: j(held), args: a("-H", "-v", "%0")},
		{jobs: j(held), args: a("--ctld", "-v", "%0")},
		{jobs: j(held, pend), args: a("-n", "%N")},
		{jobs: j(held, pend), args: a("-v", "--name=%N")},
		{jobs: j(held, pend), args: a("-n", "%N", "-t", "PENDING")},
		{jobs: j(held, pend), args: a("-n", "%N", "-t", "RUNNING", "-v")},
		{jobs: j(held, pend), args: a("-p", "down")},
		{jobs: j(held, pend), args: a("-v", "-p", "down", "-n", "%N")},
		{jobs: j(nobody, held), args: a("-u", "nobody", "-p", "down")},
		{jobs: j(nobody, held), args: a("-v", "--user=root", "-p", "down")},
		{jobs: j(acct, held), args: a("-A", "ACCTX", "-p", "down")},
		{jobs: j(held), args: a("-q", "normal", "-n", "%N", "-v")},
		{jobs: j(held), args: a("--wckey=w", "-n", "%N", "-v")},
		{jobs: j(held), args: a("-R", "resv", "-n", "%N", "-v")},
		{jobs: j(held, held), args: a("-i", "-n", "%N"), stdin: "y\nn\n"},
		{jobs: j(held), args: a("-i", "%0"), stdin: "x\nY\n"},
		{jobs: j(arr), args: a("%0_2")},
		{jobs: j(arr), args: a("-v", "%0_[1-2]")},
		{jobs: j(arr), args: a("%0_*")},
		{jobs: j(arr), args: a("-v", "%0")},
		{jobs: j(arr), args: a("-v", "-n", "%N")},
		{jobs: j(arr), args: a("%0_9")},
		{jobs: j(arr), args: a("-v", "%0_9")},
		{jobs: j(run), args: a("-v", "%0"), running: true},
		{jobs: j(run), args: a("-s", "USR1", "-v", "%0"), running: true},
		{jobs: j(run), args: a("-b", "-s", "CONT", "%0"), running: true},
		{jobs: j(run), args: a("-f", "-s", "CONT", "-v", "%0"), running: true},
		{jobs: j(run), args: a("-t", "R", "-n", "%N", "-v"), running: true},
		{jobs: j(run), args: a("-w", "n2", "-n", "%N", "-v"), running: true},
		{jobs: j(run), args: a("-w", "n3", "-n", "%N", "-v"), running: true},
		{jobs: j(run), args: a("-v", "%0.0"), running: true},
		{jobs: j(run), args: a("-v", "%0.batch"), running: true},
		{jobs: j(run, held), args: a("-v", "-n", "%N"), running: true},
	}
	var failures []string
	for k, sc := range scen {
		var res [2]ctlResult
		var states [2]string
		for side := 0; side < 2; side++ {
			name := fmt.Sprintf("c%s%d", []string{"R", "O"}[side], k)
			var ids []string
			for _, jb := range sc.jobs {
				ids = append(ids, cc.submit(t, subst(jb, "", name)...))
			}
			if sc.running {
				cc.waitState(t, ids[0], "R")
			}
			pairs := []string{name, "<N>"}
			for i, id := range ids {
				pairs = append(pairs, id, fmt.Sprintf("<J%d>", i))
			}
			m := newMasker(pairs...)
			bin := cc.real["scancel"]
			if side == 1 {
				bin = cc.ours["scancel"]
			}
			res[side] = cc.exec(t, bin, "scancel", substIDs(sc.args, name, ids), nil, sc.stdin).masked(m)
			// The states once the controller is done with the signal:
			// COMPLETING and SIGNALING last as long as slurmd takes
			// (seconds on a loaded machine), so a fixed wait compared
			// how far the controller got.
			read := func() string {
				var st strings.Builder
				for _, id := range ids {
					out := cc.exec(t, cc.real["squeue"], "squeue", []string{"-h", "-t", "all", "-j", id, "-o", "%i %T %r"}, nil, "")
					st.WriteString(m.apply(out.stdout))
				}
				return st.String()
			}
			prev := read()
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
				time.Sleep(300 * time.Millisecond)
				cur := read()
				if cur == prev && !strings.Contains(cur, "COMPLETING") && !strings.Contains(cur, "SIGNALING") {
					break
				}
				prev = cur
			}
			states[side] = prev
			cc.exec(t, cc.real["scancel"], "scancel", ids, nil, "")
			time.Sleep(200 * time.Millisecond)
		}
		// Real scancel signals each job from its own thread, so its
		// per-job messages come out in a racy order: compare them as
		// a set when the order is all that differs.
		if res[0] != res[1] && !sameLines(res[0], res[1]) {
			failures = append(failures, fmt.Sprintf("scancel %s:\n--- real %s--- ours %s", strings.Join(sc.args, " "), res[0], res[1]))
		}
		if states[0] != states[1] {
			failures = append(failures, fmt.Sprintf("states after scancel %s:\n--- real\n%s--- ours\n%s", strings.Join(sc.args, " "), states[0], states[1]))
		}
	}
	return 2 * len(scen), failures
}

// undo reverts a change (or prepares one) with the real scontrol. A
// failure is only logged: if it leaves the two halves in different
// states, the comparison that follows reports that.
func (cc *ctlCluster) undo(t *testing.T, args []string) {
	t.Helper()
	if r := cc.exec(t, cc.real["scontrol"], "scontrol", args, nil, ""); r.code != 0 {
		t.Logf("undo scontrol %q: %s", args, r)
	}
}

// waitNodesResponding waits (up to 30 s) until no node is marked not
// responding: resuming a DOWN node makes slurmctld ping it again, and
// its record shows NOT_RESPONDING and no BootTime until it answers.
func (cc *ctlCluster) waitNodesResponding(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r := cc.exec(t, cc.real["scontrol"], "scontrol", []string{"-o", "show", "node"}, nil, "")
		if !strings.Contains(r.stdout, "NOT_RESPONDING") && !strings.Contains(r.stdout, "BootTime=None") {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// sameLines reports whether two results differ only in the order of
// their stderr lines.
func sameLines(a, b ctlResult) bool {
	if a.stdout != b.stdout || a.code != b.code {
		return false
	}
	la, lb := strings.Split(a.stderr, "\n"), strings.Split(b.stderr, "\n")
	sort.Strings(la)
	sort.Strings(lb)
	return strings.Join(la, "\n") == strings.Join(lb, "\n")
}

// revert runs a case's undo; after a create the object may legitimately
// not exist (the create was refused), so that undo's result is ignored.
func (cc *ctlCluster) revert(t *testing.T, op, undo []string) {
	t.Helper()
	switch {
	case undo == nil:
	case op[0] == "create":
		cc.exec(t, cc.real["scontrol"], "scontrol", undo, nil, "")
	default:
		cc.undo(t, undo)
	}
}
