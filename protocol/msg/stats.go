package msg

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// RESPONSE_STATS_INFO, sdiag's reply (22.05 layout of
// _unpack_stats_response_msg; slurmctld builds it in two parts,
// pack_all_stat and _pack_rpc_stats, the latter ending with the agent's
// pending-RPC summary).
//
// Slurm keeps each RPC statistic as parallel arrays behind one count (the
// type ids, their counts, their times). Slurm's own clients index all of
// them by that one count, so a reply whose arrays disagree in length is
// rejected here rather than carried; each array is a slice of records.

// REQUEST_STATS_INFO command ids (StatsInfoRequest.CommandID). Note the
// order: 0 is the reset (operators only), 1 the plain query sdiag sends.
const (
	StatsCommandReset uint16 = 0
	StatsCommandGet   uint16 = 1
)

// SchedStats is the block sent only when parts_packed is non-zero (a
// plain query; a reset answers without it): the controller's thread and
// agent figures, the job counters and the main and backfill scheduler
// statistics, in wire order.
type SchedStats struct {
	ReqTime             int64
	ReqTimeStart        int64 // start of the statistics interval
	ServerThreadCount   uint32
	AgentQueueSize      uint32
	AgentCount          uint32
	AgentThreadCount    uint32
	DBDAgentQueueSize   uint32
	GettimeofdayLatency uint32

	JobsSubmitted uint32
	JobsStarted   uint32
	JobsCompleted uint32
	JobsCanceled  uint32
	JobsFailed    uint32
	JobsPending   uint32
	JobsRunning   uint32
	JobStatesTS   int64

	ScheduleCycleMax     uint32
	ScheduleCycleLast    uint32
	ScheduleCycleSum     uint32
	ScheduleCycleCounter uint32
	ScheduleCycleDepth   uint32
	ScheduleQueueLen     uint32

	BFBackfilledJobs     uint32
	BFLastBackfilledJobs uint32
	BFCycleCounter       uint32
	BFCycleSum           uint64
	BFCycleLast          uint32
	BFLastDepth          uint32
	BFLastDepthTry       uint32
	BFQueueLen           uint32
	BFCycleMax           uint32
	BFWhenLastCycle      int64
	BFDepthSum           uint32
	BFDepthTrySum        uint32
	BFQueueLenSum        uint32
	BFTableSize          uint32
	BFTableSizeSum       uint32
	BFActive             uint32
	BFBackfilledHetJobs  uint32
}

// RPCTypeStat is one message type the controller has served: how many
// times and the total time spent (microseconds).
type RPCTypeStat struct {
	Type  uint16
	Count uint32
	Time  uint64
}

// RPCUserStat is one user's RPC count and total time (microseconds).
type RPCUserStat struct {
	UID   uint32
	Count uint32
	Time  uint64
}

// RPCQueueStat is one message type waiting in the agent's retry queue and
// how many of it.
type RPCQueueStat struct {
	Type  uint32
	Count uint32
}

// RPCPending is one queued agent RPC (sdiag -r's "Pending RPCs"): its type
// and the ranged host list it goes to.
type RPCPending struct {
	Type     uint32
	HostList NullString
}

// StatsInfoResponse is RESPONSE_STATS_INFO. PartsPacked is sent as a u32
// (slurmctld sends 1, or 0 after a reset); Sched is on the wire only when
// it is non-zero, and must then be zero (Encode refuses otherwise, as it
// could not be carried).
type StatsInfoResponse struct {
	PartsPacked uint32
	Sched       SchedStats
	RPCTypes    []RPCTypeStat
	RPCUsers    []RPCUserStat
	RPCQueue    []RPCQueueStat
	RPCPending  []RPCPending
}

func walkSchedStats(w fieldWalker, s *SchedStats) {
	w.time(&s.ReqTime)
	w.time(&s.ReqTimeStart)
	for _, p := range []*uint32{&s.ServerThreadCount, &s.AgentQueueSize, &s.AgentCount,
		&s.AgentThreadCount, &s.DBDAgentQueueSize, &s.GettimeofdayLatency,
		&s.JobsSubmitted, &s.JobsStarted, &s.JobsCompleted, &s.JobsCanceled, &s.JobsFailed,
		&s.JobsPending, &s.JobsRunning} {
		w.u32(p)
	}
	w.time(&s.JobStatesTS)
	for _, p := range []*uint32{&s.ScheduleCycleMax, &s.ScheduleCycleLast, &s.ScheduleCycleSum,
		&s.ScheduleCycleCounter, &s.ScheduleCycleDepth, &s.ScheduleQueueLen,
		&s.BFBackfilledJobs, &s.BFLastBackfilledJobs, &s.BFCycleCounter} {
		w.u32(p)
	}
	w.u64(&s.BFCycleSum)
	for _, p := range []*uint32{&s.BFCycleLast, &s.BFLastDepth, &s.BFLastDepthTry,
		&s.BFQueueLen, &s.BFCycleMax} {
		w.u32(p)
	}
	w.time(&s.BFWhenLastCycle)
	for _, p := range []*uint32{&s.BFDepthSum, &s.BFDepthTrySum, &s.BFQueueLenSum,
		&s.BFTableSize, &s.BFTableSizeSum, &s.BFActive, &s.BFBackfilledHetJobs} {
		w.u32(p)
	}
}

// sameCount walks the u32 count of a further parallel array, which must
// repeat n.
func sameCount(w fieldWalker, n int, what string) {
	c := uint32(n)
	w.u32(&c)
	if w.decoding() && w.err() == nil && int64(c) != int64(n) {
		w.fail(fmt.Errorf("msg: %s: %d elements, want %d", what, c, n))
	}
}

// makeFor gives *s n elements when decoding (nil for none).
func makeFor[T any](w fieldWalker, s *[]T, n int) {
	if !w.decoding() {
		return
	}
	*s = nil
	if w.err() == nil && n > 0 {
		*s = make([]T, n)
	}
}

func walkStatsResponse(w fieldWalker, _ codec.Version, b *StatsInfoResponse) {
	w.u32(&b.PartsPacked)
	if b.PartsPacked != 0 {
		walkSchedStats(w, &b.Sched)
	} else if !w.decoding() && b.Sched != (SchedStats{}) {
		w.fail(fmt.Errorf("%w: RESPONSE_STATS_INFO scheduling statistics with parts_packed 0", codec.ErrEncode))
		return
	}

	// rpc_type_size, then u16 ids, u32 counts, u64 times: each array has
	// its own u32 count, so one element needs 14 bytes plus the counts.
	n := w.count(len(b.RPCTypes), 2+4+8)
	sameCount(w, n, "rpc_type_id")
	makeFor(w, &b.RPCTypes, n)
	for i := range b.RPCTypes {
		w.u16(&b.RPCTypes[i].Type)
	}
	sameCount(w, n, "rpc_type_cnt")
	for i := range b.RPCTypes {
		w.u32(&b.RPCTypes[i].Count)
	}
	sameCount(w, n, "rpc_type_time")
	for i := range b.RPCTypes {
		w.u64(&b.RPCTypes[i].Time)
	}

	n = w.count(len(b.RPCUsers), 4+4+8)
	sameCount(w, n, "rpc_user_id")
	makeFor(w, &b.RPCUsers, n)
	for i := range b.RPCUsers {
		w.u32(&b.RPCUsers[i].UID)
	}
	sameCount(w, n, "rpc_user_cnt")
	for i := range b.RPCUsers {
		w.u32(&b.RPCUsers[i].Count)
	}
	sameCount(w, n, "rpc_user_time")
	for i := range b.RPCUsers {
		w.u64(&b.RPCUsers[i].Time)
	}

	// The queue and pending arrays carry no separate size: the first
	// array's count is the size.
	n = w.count(len(b.RPCQueue), 4+4)
	makeFor(w, &b.RPCQueue, n)
	for i := range b.RPCQueue {
		w.u32(&b.RPCQueue[i].Type)
	}
	sameCount(w, n, "rpc_queue_count")
	for i := range b.RPCQueue {
		w.u32(&b.RPCQueue[i].Count)
	}

	n = w.count(len(b.RPCPending), 4+4)
	makeFor(w, &b.RPCPending, n)
	for i := range b.RPCPending {
		w.u32(&b.RPCPending[i].Type)
	}
	sameCount(w, n, "rpc_dump_hostlist")
	for i := range b.RPCPending {
		w.str(&b.RPCPending[i].HostList)
	}
}

func init() {
	registrars = append(registrars, func(g *codec.Registry) {
		g.Register(msgtype.RESPONSE_STATS_INFO, bodyCodec("RESPONSE_STATS_INFO", walkStatsResponse))
	})
}
