package ctld

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Sizes of slurmctld's RPC statistics tables (RPC_TYPE_SIZE,
// RPC_USER_SIZE): types and users past them are not counted.
const (
	rpcTypeSlots = 100
	rpcUserSlots = 200
)

type rpcTypeSlot struct {
	id    uint16
	count uint32
	time  uint64
}

type rpcUserSlot struct {
	uid   uint32
	count uint32
	time  uint64
}

// rpcStats are the RPC counts and times by message type and by user, in
// the order first seen, as record_rpc_stats keeps them: fixed tables
// behind one small mutex, no allocation per request. The first user slot
// is root's whether or not root sent anything.
type rpcStats struct {
	mu     sync.Mutex
	types  [rpcTypeSlots]rpcTypeSlot
	ntypes int
	users  [rpcUserSlots]rpcUserSlot
	nusers int // at least 1: root's slot
}

// record counts one served request of type t from uid that took us
// microseconds.
func (s *rpcStats) record(t msgtype.Type, uid uint32, us uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i <= s.ntypes && i < rpcTypeSlots; i++ {
		if i == s.ntypes {
			s.types[i].id = uint16(t)
			s.ntypes++
		} else if s.types[i].id != uint16(t) {
			continue
		}
		s.types[i].count++
		s.types[i].time += us
		break
	}
	if s.nusers == 0 {
		s.nusers = 1
	}
	for i := 0; i <= s.nusers && i < rpcUserSlots; i++ {
		if i == s.nusers {
			s.users[i].uid = uid
			s.nusers++
		} else if s.users[i].uid != uid {
			continue
		}
		s.users[i].count++
		s.users[i].time += us
		break
	}
}

// clear is _clear_rpc_stats.
func (s *rpcStats) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.types, s.ntypes = [rpcTypeSlots]rpcTypeSlot{}, 0
	s.users, s.nusers = [rpcUserSlots]rpcUserSlot{}, 1
}

// fill is _pack_rpc_stats's tables.
func (s *rpcStats) fill(r *msg.StatsInfoResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.RPCTypes = make([]msg.RPCTypeStat, s.ntypes)
	for i := range r.RPCTypes {
		t := &s.types[i]
		r.RPCTypes[i] = msg.RPCTypeStat{Type: t.id, Count: t.count, Time: t.time}
	}
	r.RPCUsers = make([]msg.RPCUserStat, max(s.nusers, 1))
	for i := range r.RPCUsers {
		u := &s.users[i]
		r.RPCUsers[i] = msg.RPCUserStat{UID: u.uid, Count: u.count, Time: u.time}
	}
}

// Limits of the pending-RPC summary (agent.c's MAX_RPC_PACK_CNT,
// DUMP_RPC_COUNT, HOSTLIST_MAX_SIZE, RPC_PACK_MAX_AGE).
const (
	pendingTypeSlots = 100
	pendingDumpCount = 25
	pendingHostMax   = 80
	pendingMaxAge    = 30
)

// agentStats is what sdiag shows of the agent: the messages to slurmd and
// srun the controller has queued and not started sending (its retry
// list), and the messages being sent, each an agent with its threads as
// slurmctld counts them (two, plus one per node up to AGENT_THREAD_COUNT).
type agentStats struct {
	agents  atomic.Int32
	threads atomic.Int32

	mu     sync.Mutex
	seq    uint64
	queued map[uint64]queuedRPC

	// The summary is rebuilt when older than pendingMaxAge seconds, as
	// agent_pack_pending_rpc_stats caches it.
	builtAt int64
	built   bool
	summary []msg.RPCQueueStat
	dump    []msg.RPCPending
}

type queuedRPC struct {
	t     msgtype.Type
	hosts []string
}

// enqueue notes messages about to be carried out and returns their ids.
func (a *agentStats) enqueue(rpcs []queuedRPC) []uint64 {
	if len(rpcs) == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.queued == nil {
		a.queued = map[uint64]queuedRPC{}
	}
	ids := make([]uint64, len(rpcs))
	for i, r := range rpcs {
		a.seq++
		a.queued[a.seq] = r
		ids[i] = a.seq
	}
	return ids
}

// agentThreadCount is AGENT_THREAD_COUNT, the most node threads of one
// agent.
const agentThreadCount = 10

// begin notes that the queued message id is being sent now; end(the
// result) when it was.
func (a *agentStats) begin(id uint64) int32 {
	a.mu.Lock()
	q := a.queued[id]
	delete(a.queued, id)
	a.mu.Unlock()
	return a.start(len(q.hosts))
}

// start notes a message being sent to n nodes (an agent) and returns its
// thread count for end.
func (a *agentStats) start(n int) int32 {
	t := 2 + int32(min(n, agentThreadCount))
	a.agents.Add(1)
	a.threads.Add(t)
	return t
}

func (a *agentStats) end(threads int32) {
	a.agents.Add(-1)
	a.threads.Add(-threads)
}

// queueSize is retry_list_size.
func (a *agentStats) queueSize() uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return uint32(len(a.queued))
}

// fill is agent_pack_pending_rpc_stats: counts by type (first seen
// first) and the first pendingDumpCount messages with their host lists.
func (a *agentStats) fill(r *msg.StatsInfoResponse, now int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.built || now-a.builtAt > pendingMaxAge {
		a.built, a.builtAt = true, now
		a.summary, a.dump = nil, nil
		ids := make([]uint64, 0, len(a.queued))
		for id := range a.queued {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			q := a.queued[id]
			if len(a.dump) < pendingDumpCount {
				hl := hostlist.Compress(q.hosts)
				if len(hl) >= pendingHostMax {
					hl = hl[:pendingHostMax-1]
				}
				a.dump = append(a.dump, msg.RPCPending{Type: uint32(q.t), HostList: msg.Str(hl)})
			}
			found := false
			for i := range a.summary {
				if a.summary[i].Type == uint32(q.t) {
					a.summary[i].Count++
					found = true
					break
				}
			}
			if !found && len(a.summary) < pendingTypeSlots {
				a.summary = append(a.summary, msg.RPCQueueStat{Type: uint32(q.t), Count: 1})
			}
		}
	}
	r.RPCQueue = append([]msg.RPCQueueStat(nil), a.summary...)
	r.RPCPending = append([]msg.RPCPending(nil), a.dump...)
}
