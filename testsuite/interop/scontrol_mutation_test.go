package interop

// scontrol's mutation corpus: the job commands that change a job (hold,
// uhold, release, requeue, requeuehold, update, top, notify, suspend,
// resume), accepted and rejected, by root and by nobody, on pending,
// held, running, finished and unknown jobs and on array elements. The
// harness is in scancel_mutation_test.go.

import "testing"

// TestScontrolMutations runs scontrol's mutation corpus on the real and
// our controller.
func TestScontrolMutations(t *testing.T) {
	runMutationCorpus(t, "scontrol", scontrolMutationCorpus())
}

func scontrolMutationCorpus() []mutCase {
	held := []string{"--hold", "-p", "down", "-J", "%N", "-t", "30", "--wrap", "true"}
	pend := []string{"-p", "down", "-J", "%N", "-t", "30", "--wrap", "true"}
	run := []string{"-p", "debug", "-w", "n2", "-J", "%N", "-t", "30", "--wrap", "echo up; exec sleep 600"}
	// run2's batch host is n3.
	run2 := []string{"-p", "debug", "-N", "2", "-w", "n[3-4]", "-J", "%N", "-t", "30", "--wrap", "echo up; exec sleep 600"}
	excl4 := []string{"-p", "debug", "-w", "n4", "--exclusive", "-J", "%N", "-t", "30", "--wrap", "echo up; exec sleep 600"}
	arr := []string{"--hold", "-p", "down", "-J", "%N", "-a", "1-4", "-t", "30", "--wrap", "true"}
	// One task at a time on n2 until the throttle is raised to 2: then
	// both run (with a task left pending, the meta record's reason right
	// after a task starts up to the throttle is the scheduler's timing).
	// Two CPUs, so that the other command's cancelled array, still
	// ending on n2, leaves room.
	arrRun := []string{"-p", "debug", "-w", "n2", "-J", "%N", "-a", "1-2%1", "-t", "30", "--wrap", "echo up; exec sleep 600"}
	nobody := []string{"--uid", "nobody", "--hold", "-p", "down", "-J", "%N", "-t", "30", "--wrap", "true"}
	nobodyPend := []string{"--uid", "nobody", "-p", "down", "-J", "%N", "-t", "30", "--wrap", "true"}
	nobodyRun := []string{"--uid", "nobody", "-p", "debug", "-w", "n2", "-J", "%N", "-t", "30", "--wrap", "echo up; exec sleep 600"}
	j := func(a ...[]string) [][]string { return a }
	op := func(a ...string) [][]string { return [][]string{a} }
	ops := func(a ...[]string) [][]string { return a }
	a := func(s ...string) []string { return s }
	upd := func(s ...string) [][]string { return [][]string{append([]string{"update", "JobId=%0"}, s...)} }
	cancelled := [][]string{{"scancel", "%0"}}
	return []mutCase{
		// Holds and releases.
		{jobs: j(pend), ops: op("hold", "%0")},
		{jobs: j(pend), ops: op("uhold", "%0")},
		{jobs: j(pend), ops: op("holdu", "%0")},
		{jobs: j(held), ops: op("release", "%0")},
		{jobs: j(pend), ops: ops(a("uhold", "%0"), a("release", "%0"))},
		{jobs: j(pend), ops: ops(a("hold", "%0"), a("uhold", "%0"))},
		{jobs: j(held), ops: op("hold", "%0")},
		{jobs: j(pend), ops: op("release", "%0")},
		{jobs: j(held, pend), ops: op("hold", "%0,%1")},
		{jobs: j(held, held), ops: op("release", "%0", "%1")},
		{jobs: j(held, pend), ops: op("hold", "Name=%N")},
		{jobs: j(held, held), ops: op("release", "JobName=%N")},
		{jobs: j(held), ops: op("release", "JobId=%0")},
		{jobs: j(run), running: true, ops: op("hold", "%0")},
		{jobs: j(run), running: true, ops: op("release", "%0")},
		{jobs: j(held), pre: cancelled, ops: op("hold", "%0")},
		{jobs: j(held), pre: cancelled, ops: op("release", "%0")},
		{ops: op("hold", "999999")},
		{ops: op("release", "999999")},
		{ops: op("uhold", "999999,999998")},
		{ops: op("hold", "Name=nosuchname")},
		{jobs: j(held), ops: op("release", "%0", "999999")},
		// Array elements.
		{jobs: j(arr), ops: op("release", "%0_2")},
		{jobs: j(arr), ops: op("release", "%0_[1-2]")},
		{jobs: j(arr), ops: op("release", "%0")},
		{jobs: j(arr), ops: ops(a("release", "%0"), a("hold", "%0_3"))},
		{jobs: j(arr), ops: op("hold", "%0_9")},
		{jobs: j(arr), ops: op("uhold", "%0_[3-4]")},
		// Requeue.
		{jobs: j(run), running: true, ops: op("requeue", "%0")},
		{jobs: j(run), running: true, ops: op("requeuehold", "%0")},
		{jobs: j(run), running: true, ops: op("requeuehold", "State=SpecialExit", "%0")},
		{jobs: j(run), running: true, ops: op("requeue", "Incomplete", "%0")},
		{jobs: j(held), ops: op("requeue", "%0")},
		{jobs: j(pend), ops: op("requeuehold", "%0")},
		{jobs: j(held), pre: cancelled, ops: op("requeue", "%0")},
		// Not here: requeue of a running job already cancelled. Real
		// slurmctld requeues it, but it stays pending without a reason for
		// about a minute (our slurmctld starts it at once; real then keeps
		// ExitCode=0:15 where ours shows 0:0).
		{ops: op("requeue", "999999")},
		{jobs: j(run), running: true, ops: ops(a("requeuehold", "%0"), a("release", "%0"))},
		// Updates accepted.
		{jobs: j(held), ops: upd("TimeLimit=20")},
		{jobs: j(held), ops: upd("TimeLimit+=5")},
		{jobs: j(held), ops: upd("TimeLimit-=5")},
		{jobs: j(held), ops: upd("Name=%N-new")},
		{jobs: j(held), ops: upd("Comment=hello world")},
		{jobs: j(held), ops: upd("Priority=100")},
		// Not on a held job: real slurmctld then recomputes a non-zero
		// priority (the hold is gone) and the pending reason moves from
		// JobHeldUser to Dependency or PartitionDown over the next passes.
		{jobs: j(pend), ops: upd("Nice=5")},
		{jobs: j(held), ops: upd("Partition=long")},
		{jobs: j(held), ops: upd("NumNodes=1-2")},
		{jobs: j(held), ops: upd("NumCPUs=2")},
		{jobs: j(held), ops: upd("Features=fast")},
		{jobs: j(held), ops: upd("ExcNodeList=n4")},
		{jobs: j(held), ops: upd("MinMemoryNode=50")},
		{jobs: j(held), ops: upd("Requeue=0")},
		{jobs: j(held), ops: upd("StartTime=now+1hour")},
		{jobs: j(held), ops: upd("Dependency=afterany:1000")},
		{jobs: j(held), ops: upd("Account=acct2")},
		{jobs: j(held), ops: upd("Licenses=foo:2")},
		{jobs: j(held), ops: op("update", "Name=%N", "TimeLimit=9")},
		{jobs: j(held, held), ops: op("update", "JobId=%0,%1", "TimeLimit=11")},
		{jobs: j(run), running: true, ops: upd("TimeLimit=300")},
		{jobs: j(run), running: true, ops: upd("TimeLimit-=10")},
		{jobs: j(run), running: true, ops: upd("Comment=running")},
		{jobs: j(arr), ops: op("update", "JobId=%0_3", "TimeLimit=7")},
		{jobs: j(arr), ops: op("update", "JobId=%0", "Comment=all")},
		{jobs: j(arr), ops: op("update", "JobId=%0_[1-2]", "Name=two")},
		{jobs: j(arr), ops: upd("ArrayTaskThrottle=1")},
		// Every task split off shows the meta record's throttle.
		{jobs: j(arrRun), ops: upd("ArrayTaskThrottle=2")},
		// Updates refused.
		{jobs: j(held), ops: upd("Partition=nosuchpart")},
		{jobs: j(held), ops: upd("NumNodes=9")},
		{jobs: j(held), ops: upd("Features=nosuchfeature")},
		{jobs: j(held), ops: upd("Licenses=bar:1")},
		{jobs: j(held), ops: upd("Dependency=afterok:999999")},
		{jobs: j(held), ops: upd("ReqNodeList=n9")},
		{jobs: j(held), ops: upd("TimeLimit=abc")},
		{jobs: j(held), ops: upd("Bogus=1")},
		{jobs: j(run), running: true, ops: upd("NumNodes=2")},
		{jobs: j(run), running: true, ops: upd("Partition=long")},
		{jobs: j(run), running: true, ops: upd("Features=fast")},
		{jobs: j(held), pre: cancelled, ops: upd("TimeLimit=10")},
		{jobs: j(held), pre: cancelled, ops: upd("Comment=late")},
		{ops: op("update", "JobId=999999", "TimeLimit=10")},
		{ops: op("update", "JobName=nosuchname", "TimeLimit=5")},
		{jobs: j(arr), ops: op("update", "JobId=%0_9", "TimeLimit=7")},
		// Shrinking a running job (NumNodes, ReqNodeList): accepted while
		// the batch host stays (ResizeTime set even when no node goes), the
		// released node free at once; refused when it would drop the batch
		// host or take a node the job does not have.
		{jobs: j(run2), running: true, ops: upd("NumNodes=1")},
		{jobs: j(run2), running: true, ops: upd("ReqNodeList=n3")},
		{jobs: j(run2), running: true, ops: upd("ReqNodeList=n[3-4]")},
		{jobs: j(run2, excl4), running: true, ops: upd("NumNodes=1")},
		{jobs: j(run2), running: true, ops: upd("NumNodes=2")},
		{jobs: j(run2), running: true, ops: upd("ReqNodeList=n4")},
		{jobs: j(run2), running: true, ops: upd("ReqNodeList=n[1,3]")},
		{jobs: j(run2), running: true, ops: upd("NumNodes=0")},
		{jobs: j(run2), running: true, ops: upd("NumNodes=1-2")},
		// top and notify.
		{jobs: j(pend, pend), ops: op("top", "%1")},
		{jobs: j(pend), ops: op("top", "%0")},
		{jobs: j(held), ops: op("top", "%0")},
		{ops: op("top", "999999")},
		{jobs: j(run), running: true, ops: op("notify", "%0", "hello there")},
		{jobs: j(held), ops: op("notify", "%0", "hello")},
		{ops: op("notify", "999999", "hello")},
		// Suspend and resume.
		{jobs: j(run), running: true, ops: op("suspend", "%0")},
		{jobs: j(run), running: true, ops: ops(a("suspend", "%0"), a("resume", "%0"))},
		{jobs: j(held), ops: op("suspend", "%0")},
		{jobs: j(run), running: true, ops: op("resume", "%0")},
		// As nobody: other users' jobs and one's own.
		{jobs: j(held), nobody: true, ops: op("release", "%0")},
		{jobs: j(pend), nobody: true, ops: op("hold", "%0")},
		{jobs: j(pend), nobody: true, ops: op("uhold", "%0")},
		{jobs: j(held), nobody: true, ops: upd("TimeLimit=5")},
		{jobs: j(run), running: true, nobody: true, ops: op("requeue", "%0")},
		{jobs: j(nobodyPend), nobody: true, ops: ops(a("uhold", "%0"), a("release", "%0"))},
		{jobs: j(nobodyPend), nobody: true, ops: op("hold", "%0")},
		{jobs: j(nobody), nobody: true, ops: op("release", "%0")},
		{jobs: j(nobody), nobody: true, ops: upd("TimeLimit=5")},
		{jobs: j(nobody), nobody: true, ops: upd("TimeLimit=60")},
		{jobs: j(nobody), nobody: true, ops: upd("Priority=100")},
		{jobs: j(nobodyPend), nobody: true, ops: upd("Nice=-5")},
		{jobs: j(nobodyPend), nobody: true, ops: upd("Nice=5")},
		{jobs: j(nobodyPend, nobodyPend), nobody: true, ops: op("top", "%1")},
		{jobs: j(nobodyRun), running: true, nobody: true, ops: op("requeue", "%0")},
		{jobs: j(nobodyRun), running: true, nobody: true, ops: op("suspend", "%0")},
	}
}
