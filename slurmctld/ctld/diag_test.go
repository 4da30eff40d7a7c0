package ctld

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// TestRPCStatsRecord: types and users in the order first seen, root's
// slot first whether or not root sent anything, nothing past the tables'
// sizes, and a clear keeps only root's empty slot.
func TestRPCStatsRecord(t *testing.T) {
	type rec struct {
		t   msgtype.Type
		uid uint32
		us  uint64
	}
	for _, tc := range []struct {
		name      string
		recs      []rec
		wantTypes []msg.RPCTypeStat
		wantUsers []msg.RPCUserStat
	}{
		{name: "none", wantTypes: []msg.RPCTypeStat{}, wantUsers: []msg.RPCUserStat{{UID: 0}}},
		{name: "user only", recs: []rec{{msgtype.REQUEST_PING, 1000, 5}, {msgtype.REQUEST_NODE_INFO, 1000, 7}, {msgtype.REQUEST_PING, 1000, 1}},
			wantTypes: []msg.RPCTypeStat{{Type: uint16(msgtype.REQUEST_PING), Count: 2, Time: 6}, {Type: uint16(msgtype.REQUEST_NODE_INFO), Count: 1, Time: 7}},
			wantUsers: []msg.RPCUserStat{{UID: 0}, {UID: 1000, Count: 3, Time: 13}}},
		{name: "root and others", recs: []rec{{msgtype.REQUEST_PING, 1001, 1}, {msgtype.REQUEST_PING, 0, 2}, {msgtype.REQUEST_PING, 1000, 3}},
			wantTypes: []msg.RPCTypeStat{{Type: uint16(msgtype.REQUEST_PING), Count: 3, Time: 6}},
			wantUsers: []msg.RPCUserStat{{UID: 0, Count: 1, Time: 2}, {UID: 1001, Count: 1, Time: 1}, {UID: 1000, Count: 1, Time: 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s rpcStats
			s.clear()
			for _, r := range tc.recs {
				s.record(r.t, r.uid, r.us)
			}
			var resp msg.StatsInfoResponse
			s.fill(&resp)
			if d := cmp.Diff(tc.wantTypes, resp.RPCTypes); d != "" {
				t.Errorf("types (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantUsers, resp.RPCUsers); d != "" {
				t.Errorf("users (-want +got):\n%s", d)
			}
		})
	}
}

func TestRPCStatsFull(t *testing.T) {
	var s rpcStats
	s.clear()
	for i := range rpcTypeSlots + 5 {
		s.record(msgtype.Type(1000+i), uint32(5000+i), 1)
	}
	for i := range rpcUserSlots + 5 {
		s.record(msgtype.REQUEST_PING, uint32(10000+i), 1)
	}
	var resp msg.StatsInfoResponse
	s.fill(&resp)
	if len(resp.RPCTypes) != rpcTypeSlots || len(resp.RPCUsers) != rpcUserSlots {
		t.Fatalf("%d types, %d users; want %d, %d", len(resp.RPCTypes), len(resp.RPCUsers), rpcTypeSlots, rpcUserSlots)
	}
	s.clear()
	s.fill(&resp)
	if len(resp.RPCTypes) != 0 || len(resp.RPCUsers) != 1 || resp.RPCUsers[0] != (msg.RPCUserStat{}) {
		t.Errorf("after clear: %+v %+v", resp.RPCTypes, resp.RPCUsers)
	}
}

func BenchmarkRPCStatsRecord(b *testing.B) {
	var s rpcStats
	s.clear()
	for i := range 40 {
		s.record(msgtype.Type(1000+i), uint32(i), 1)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.record(msgtype.Type(1039), 39, 3)
		}
	})
}

// TestDiagReset: an explicit reset clears the counters and the backfilled
// jobs since start; the daily one keeps those. What describes the last
// cycle stays.
func TestDiagReset(t *testing.T) {
	const day0 = 1_800_000_000
	totals := jobs.DiagCounters{Submitted: 10, Started: 8, Backfilled: 3}
	for _, tc := range []struct {
		name     string
		explicit bool
		wantAll  uint32
	}{
		{name: "daily", wantAll: 3},
		{name: "sdiag -r", explicit: true, wantAll: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d diagStats
			d.init(day0)
			d.mainCycle(50, sched.PassStats{MainQueue: 4, MainDepth: 2})
			d.bfCycle(day0+5, 70, sched.PassStats{BFQueue: 3, BFDepth: 3, BFDepthTry: 1, BFTable: 2})
			d.jobCompleted()
			d.jobCanceled()
			d.jobFailed()
			if tc.explicit {
				d.mu.Lock()
				d.reset(day0+10, totals, true)
				d.mu.Unlock()
			} else {
				d.dailyReset(day0+10, func() jobs.DiagCounters { return totals }) // not midnight yet
				var s msg.SchedStats
				d.fill(&s, day0+10, totals)
				if s.JobsCompleted != 1 || s.ScheduleCycleCounter != 1 {
					t.Fatalf("reset before midnight: %+v", s)
				}
				d.dailyReset(nextMidnight(day0), func() jobs.DiagCounters { return totals })
			}
			more := totals
			more.Submitted++
			more.Backfilled++
			var s msg.SchedStats
			d.fill(&s, day0+100, more)
			want := msg.SchedStats{
				ReqTime: day0 + 100, ReqTimeStart: s.ReqTimeStart, GettimeofdayLatency: s.GettimeofdayLatency,
				JobsSubmitted: 1, ScheduleCycleLast: 50, ScheduleQueueLen: 4,
				BFBackfilledJobs: tc.wantAll + 1, BFLastBackfilledJobs: 1,
				BFWhenLastCycle: day0 + 5, BFTableSize: 2,
			}
			if d := cmp.Diff(want, s); d != "" {
				t.Errorf("after reset (-want +got):\n%s", d)
			}
			if s.ReqTimeStart == day0 {
				t.Errorf("interval start not moved: %d", s.ReqTimeStart)
			}
		})
	}
}

func TestBatchFailed(t *testing.T) {
	for _, tc := range []struct {
		rc   int
		want bool
	}{
		{0, false},
		{slurmerr.ESLURMD_CREDENTIAL_REVOKED, false},
		{slurmerr.ESLURM_ALREADY_DONE, false},
		{slurmerr.ESLURMD_UID_NOT_FOUND, false},
		{slurmerr.SLURM_COMMUNICATIONS_SEND_ERROR, false},
		{slurmerr.SLURM_ERROR, true},
		{4000, true}, // ESLURMD_KILL_TASK_FAILED and the like
	} {
		if got := jobs.BatchFailure(uint32(int32(tc.rc))); got != tc.want {
			t.Errorf("slurm_rc %d: failed %v, want %v", tc.rc, got, tc.want)
		}
	}
}

// TestAgentPending: queued messages by type and the first of them with
// their hosts; the summary is rebuilt only when 30 seconds old.
func TestAgentPending(t *testing.T) {
	var a agentStats
	ids := a.enqueue(queuedRPCs([]jobs.Action{
		jobs.LaunchBatch{JobID: 1, Node: "n1"},
		jobs.NodeMessage{JobID: 2, Nodes: []string{"n1", "n2"}, MsgType: msgtype.REQUEST_TERMINATE_JOB},
		jobs.DrainNode{Node: "n3"},
		jobs.LaunchBatch{JobID: 3, Node: "n2"},
	}))
	if len(ids) != 3 || a.queueSize() != 3 {
		t.Fatalf("ids %v, queue %d", ids, a.queueSize())
	}
	var r msg.StatsInfoResponse
	a.fill(&r, 100)
	wantQ := []msg.RPCQueueStat{{Type: uint32(msgtype.REQUEST_BATCH_JOB_LAUNCH), Count: 2}, {Type: uint32(msgtype.REQUEST_TERMINATE_JOB), Count: 1}}
	wantP := []msg.RPCPending{
		{Type: uint32(msgtype.REQUEST_BATCH_JOB_LAUNCH), HostList: msg.Str("n1")},
		{Type: uint32(msgtype.REQUEST_TERMINATE_JOB), HostList: msg.Str("n[1-2]")},
		{Type: uint32(msgtype.REQUEST_BATCH_JOB_LAUNCH), HostList: msg.Str("n2")},
	}
	if d := cmp.Diff(wantQ, r.RPCQueue); d != "" {
		t.Errorf("queue (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantP, r.RPCPending); d != "" {
		t.Errorf("pending (-want +got):\n%s", d)
	}
	var threads []int32
	for _, id := range ids {
		threads = append(threads, a.begin(id))
	}
	// An agent per message, with two threads plus one per node.
	if a.queueSize() != 0 || a.agents.Load() != 3 || a.threads.Load() != 3+4+3 {
		t.Errorf("after begin: queue %d agents %d threads %d", a.queueSize(), a.agents.Load(), a.threads.Load())
	}
	for _, th := range threads {
		a.end(th)
	}
	if a.agents.Load() != 0 || a.threads.Load() != 0 {
		t.Errorf("after end: agents %d threads %d", a.agents.Load(), a.threads.Load())
	}
	if th := a.start(25); th != 2+agentThreadCount {
		t.Errorf("threads of an agent to 25 nodes: %d", th)
	}
	a.fill(&r, 130) // cached
	if len(r.RPCQueue) != 2 {
		t.Errorf("summary rebuilt within 30 s: %+v", r.RPCQueue)
	}
	a.fill(&r, 131)
	if len(r.RPCQueue) != 0 || len(r.RPCPending) != 0 {
		t.Errorf("summary not rebuilt: %+v %+v", r.RPCQueue, r.RPCPending)
	}
}

func statsReq(uid uint32, cmd uint16) *server.Request {
	return &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_STATS_INFO, Version: codec.Current},
		Body: &msg.StatsInfoRequest{CommandID: cmd}, Identity: auth.Identity{UID: uid, GID: uid}}
}

// TestStatsInfoRPC: the counters through the controller (submit, a pass
// starting the job, a cancel; their actions are not carried out: there is
// no slurmd), RPC statistics of what it served, the
// reset refused to others than root and SlurmUser, and what a reset
// answers and leaves.
func TestStatsInfoRPC(t *testing.T) {
	ctl, _ := attachTestJobs(t)
	ctx := context.Background()
	req := submitReq(1)
	req.Body.(*msg.JobDesc).ArrayInx = msg.Str("0-2")
	if resp := ctl.Serve(ctx, req); resp.MsgType != msgtype.RESPONSE_SUBMIT_BATCH_JOB {
		t.Fatalf("submit: %v %+v", resp.MsgType, resp.Body)
	}
	if _, err := ctl.countedPass(ctx, false); err != nil {
		t.Fatal(err)
	}
	kill := &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_KILL_JOB, Version: codec.Current},
		Body:     &msg.JobStepKillRequest{SJobID: msg.Str("1_0"), Signal: 9, StepID: msg.StepID{JobID: 1, StepID: jobs.NoVal, StepHetComp: jobs.NoVal}},
		Identity: auth.Identity{UID: 0}}
	if resp := ctl.Serve(ctx, kill); resp.MsgType != msgtype.RESPONSE_SLURM_RC || resp.Body.(codec.ReturnCode).RC != 0 {
		t.Fatalf("kill: %v %+v", resp.MsgType, resp.Body)
	}

	resp := ctl.Serve(ctx, statsReq(1000, msg.StatsCommandGet))
	st, ok := resp.Body.(*msg.StatsInfoResponse)
	if !ok || st.PartsPacked != 1 {
		t.Fatalf("stats: %v %+v", resp.MsgType, resp.Body)
	}
	s := st.Sched
	if s.JobsSubmitted != 3 || s.JobsStarted != 3 || s.JobsCanceled != 1 || s.JobsCompleted != 0 || s.JobsFailed != 0 {
		t.Errorf("job counters: %+v", s)
	}
	if s.ScheduleCycleCounter != 1 || s.ScheduleQueueLen != 3 || s.ScheduleCycleDepth != 3 || s.ServerThreadCount != 3 {
		t.Errorf("schedule statistics: %+v", s)
	}
	types := map[uint16]uint32{}
	for _, ty := range st.RPCTypes {
		types[ty.Type] = ty.Count
	}
	if types[uint16(msgtype.REQUEST_SUBMIT_BATCH_JOB)] != 1 || types[uint16(msgtype.REQUEST_KILL_JOB)] != 1 || types[uint16(msgtype.REQUEST_STATS_INFO)] != 0 {
		t.Errorf("rpc types: %+v", st.RPCTypes)
	}
	if len(st.RPCUsers) != 1 || st.RPCUsers[0].UID != 0 || st.RPCUsers[0].Count != 2 {
		t.Errorf("rpc users: %+v", st.RPCUsers)
	}

	// An ordinary user may not reset.
	resp = ctl.Serve(ctx, statsReq(1000, msg.StatsCommandReset))
	if rc, ok := resp.Body.(codec.ReturnCode); !ok || int(rc.RC) != slurmerr.ESLURM_ACCESS_DENIED {
		t.Fatalf("reset by uid 1000: %v %+v", resp.MsgType, resp.Body)
	}
	resp = ctl.Serve(ctx, statsReq(0, msg.StatsCommandReset))
	st, ok = resp.Body.(*msg.StatsInfoResponse)
	if !ok || st.PartsPacked != 0 || st.Sched != (msg.SchedStats{}) || len(st.RPCTypes) != 0 || len(st.RPCUsers) != 1 {
		t.Fatalf("reset answer: %v %+v", resp.MsgType, resp.Body)
	}
	resp = ctl.Serve(ctx, statsReq(0, msg.StatsCommandGet))
	st = resp.Body.(*msg.StatsInfoResponse)
	s = st.Sched
	if s.JobsSubmitted != 0 || s.JobsStarted != 0 || s.JobsCanceled != 0 || s.ScheduleCycleCounter != 0 || s.ScheduleQueueLen != 3 {
		t.Errorf("after reset: %+v", s)
	}
	want := []msg.RPCTypeStat{{Type: uint16(msgtype.REQUEST_STATS_INFO), Count: 1, Time: st.RPCTypes[0].Time}}
	if d := cmp.Diff(want, st.RPCTypes); d != "" {
		t.Errorf("rpc types after reset (-want +got):\n%s", d)
	}
}
