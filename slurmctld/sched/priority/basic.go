package priority

// TopPriority is the value below which priority/basic hands out priorities
// (job_mgr.c's TOP_PRIORITY): the first job gets TopPriority-1, and the
// 65536 values above stay free for operators.
const TopPriority uint32 = 0xffff0000

// syncBoostMin is the least headroom loss that makes SyncBoost renumber
// recovered jobs (sync_job_priorities).
const syncBoostMin = 1000000

// Basic is priority/basic: FIFO order by submission. Every new job gets one
// less than the lowest priority handed out so far, shifted by its nice
// value, exactly as slurmctld's set_job_prio with priority_p_set of the
// basic plugin. The zero value is not ready; use NewBasic.
//
// Held jobs (priority 0) and jobs whose priority an operator set are the
// caller's business: do not call Assign for them.
type Basic struct {
	lowest  uint32
	highest uint32 // highest recovered priority, for SyncBoost
}

// NewBasic returns an assigner whose first job gets TopPriority-1.
func NewBasic() *Basic { return &Basic{lowest: TopPriority} }

// Lowest is the current base: the next job with nice 0 gets Lowest()-1.
func (b *Basic) Lowest() uint32 { return b.lowest }

// Assign returns the priority of a newly submitted job with the given nice
// value (the signed value of --nice, not Slurm's NICE_OFFSET encoding).
//
// Slurm's arithmetic is kept, wrap-around included: a positive nice only
// applies while it leaves the job above 1, and a large negative nice is
// added modulo 2^32. The base itself always moves down by exactly one,
// whatever the nice, so nice never disturbs the order of later jobs.
func (b *Basic) Assign(nice int32) uint32 {
	prio := uint32(1)
	if b.lowest >= 2 {
		prio = b.lowest - 1
	}
	off := int64(nice)
	if off <= 0 || int64(prio) > off+1 {
		prio -= uint32(off) // C: uint32 minus int, modulo 2^32
	}
	if prio < 1 {
		prio = 1 // 0 is reserved for held jobs
	}
	relative := uint32(int64(prio) + off)
	if relative < b.lowest {
		b.lowest = relative
	}
	return prio
}

// Recover tells the assigner about the priority of a job loaded from saved
// state (jobs with priority 0 or 1, or set by an operator, are ignored by
// Slurm and should not be passed), so new jobs queue behind it.
func (b *Basic) Recover(prio uint32) {
	if prio <= 1 {
		return
	}
	b.highest = max(b.highest, prio)
	b.lowest = min(b.lowest, prio)
}

// SyncBoost is sync_job_priorities for priority/basic, called once after
// every saved job went through Recover: when the recovered priorities have
// drifted at least a million below TopPriority, it returns the amount to
// add to every recovered job's priority (except held and operator-set
// ones) and raises the base by it. Otherwise it returns 0.
func (b *Basic) SyncBoost() uint32 {
	if b.highest == 0 || b.highest >= TopPriority {
		return 0
	}
	boost := TopPriority - b.highest
	if boost < syncBoostMin {
		return 0
	}
	b.lowest += boost
	b.highest += boost
	return boost
}
