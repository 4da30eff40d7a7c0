package priority

import (
	"github.com/goslurm/goslurm/conf"
)

// Slurm's special uint32 values for time limits (minutes).
const (
	NoValue  uint32 = 0xfffffffe // NO_VAL: not set
	Infinite uint32 = 0xffffffff // INFINITE: UNLIMITED
)

// Cluster holds the cluster-wide values the multifactor factors are
// normalized by. The caller keeps it current (nodes added, QOS changed).
type Cluster struct {
	Nodes uint32 // every configured node (node_record_count)
	CPUs  uint32 // every configured CPU (cluster_cpus)
	// MaxPartitionJobFactor is the largest PriorityJobFactor of any
	// partition; Slurm never lets it drop below 1.
	MaxPartitionJobFactor uint16
	MaxQOSPriority        uint32 // largest Priority of any QOS
	MaxAssocPriority      uint32 // largest Priority of any association
}

// Partition is what the multifactor plugin reads from one partition.
type Partition struct {
	JobFactor uint16 // PriorityJobFactor
	MaxTime   uint32 // minutes, Infinite = UNLIMITED; for SMALL_RELATIVE_TO_TIME
	// TRES is the partition's total of each TRES (keys as TRESKey), the
	// denominators of the TRES factors.
	TRES map[string]uint64
}

// Job is what the multifactor plugin reads from one job. Times are Unix
// seconds.
type Job struct {
	SubmitTime int64
	// EligibleTime is when the job started accruing age (Slurm's
	// accrue_time): its begin time once it is not held and has no pending
	// dependency. It is only read when Eligible is set (Slurm: accrue_time
	// not 0). With ACCRUE_ALWAYS the submit time is used instead.
	EligibleTime int64
	Eligible     bool

	User, Account string // the association, for fair-share

	MinNodes uint32
	// CPUs is the job's CPU count: allocated CPUs once known, else the
	// requested maximum, else the requested minimum; 0 if unknown.
	CPUs      uint32
	TimeLimit uint32 // minutes; NoValue = partition MaxTime

	Nice          int32  // --nice, signed (not NICE_OFFSET encoded)
	SiteFactor    int64  // site_factor plugin value, signed; 0 = none
	QOSPriority   uint32 // Priority of the job's QOS
	AssocPriority uint32 // Priority of the job's association

	// TRES holds allocated (else requested) counts, keys as TRESKey; only
	// read when Config.WeightTRES is set.
	TRES map[string]uint64

	// Held jobs keep priority 0 and are not recomputed.
	Held bool
	// AdminPriority, when not 0, is a priority an operator set
	// (scontrol update priority=): it is returned unchanged.
	AdminPriority uint32
	// Previous is the job's current priority, kept when INCR_ONLY is set
	// and the new value would be lower.
	Previous uint32
}

// Factors are a job's normalized factors (0..1 unless a NO_NORMAL_* flag
// is set) before weighting, as sprio shows them, plus the weighted TRES
// sum and the signed site and nice values.
type Factors struct {
	Age, Assoc, FairShare, JobSize, Partition, QOS float64
	TRES                                           float64 // already weighted
	Site                                           int64
	Nice                                           int32
}

// FairShareSource gives the fair-share factor (0..1) of an association.
// *Usage implements it.
type FairShareSource interface {
	FairShareFactor(user, account string) float64
}

// Multifactor is priority/multifactor. It is not safe for concurrent use
// when FairShare is a *Usage that is being charged at the same time.
type Multifactor struct {
	Config    Config
	Cluster   Cluster
	FairShare FairShareSource // nil: fair-share factor 0
}

// NewMultifactor returns a calculator for cfg and cl; fs may be nil.
func NewMultifactor(cfg Config, cl Cluster, fs FairShareSource) *Multifactor {
	return &Multifactor{Config: cfg, Cluster: cl, FairShare: fs}
}

// Factors computes the unweighted factors of j in partition p at now
// (set_priority_factors).
func (m *Multifactor) Factors(j *Job, p *Partition, now int64) Factors {
	c := &m.Config
	var f Factors

	if c.WeightAge != 0 {
		accrue, ok := j.EligibleTime, j.Eligible
		if c.Flags&conf.PriorityAccrueAlways != 0 {
			accrue, ok = j.SubmitTime, true
		}
		if ok {
			var diff uint32
			if now > accrue {
				diff = uint32(now - accrue)
			}
			if diff < c.MaxAge {
				f.Age = float64(diff) / float64(c.MaxAge)
			} else {
				f.Age = 1
			}
		}
	}

	if c.WeightFairshare != 0 && m.FairShare != nil {
		f.FairShare = m.FairShare.FairShareFactor(j.User, j.Account)
	}

	if c.WeightJobSize != 0 {
		f.JobSize = m.jobSize(j, p)
	}

	if c.WeightPartition != 0 {
		f.Partition = m.partitionFactor(p)
	}

	if c.WeightAssoc != 0 {
		if c.Flags&conf.PriorityNoNormalAssoc != 0 {
			f.Assoc = float64(j.AssocPriority)
		} else if m.Cluster.MaxAssocPriority != 0 {
			f.Assoc = float64(j.AssocPriority) / float64(m.Cluster.MaxAssocPriority)
		}
	}

	if j.QOSPriority != 0 && c.WeightQOS != 0 {
		if c.Flags&conf.PriorityNoNormalQOS != 0 {
			f.QOS = float64(j.QOSPriority)
		} else if m.Cluster.MaxQOSPriority != 0 {
			f.QOS = float64(j.QOSPriority) / float64(m.Cluster.MaxQOSPriority)
		}
	}

	if len(c.WeightTRES) != 0 {
		f.TRES = m.tresWeighted(j, p)
	}
	f.Site = j.SiteFactor
	f.Nice = j.Nice
	return f
}

// jobSize is the job size factor, with Slurm's integer arithmetic where it
// uses it (the favor-small differences are unsigned).
func (m *Multifactor) jobSize(j *Job, p *Partition) float64 {
	nodes := float64(m.Cluster.Nodes)
	cpus := float64(m.Cluster.CPUs)
	minNodes := j.MinNodes
	var js float64
	switch {
	case m.Config.Flags&conf.PrioritySizeRelative != 0:
		// The job's size in CPUs (at least its nodes' average share of
		// the cluster's CPUs) per minute of time limit, over the
		// cluster's CPUs.
		js = float64(minNodes) * cpus / nodes
		if float64(j.CPUs) > js {
			js = float64(j.CPUs)
		}
		limit := uint32(1)
		if j.TimeLimit != NoValue {
			limit = j.TimeLimit
		} else if p != nil {
			limit = p.MaxTime
		}
		js /= float64(limit)
		js /= cpus
		if m.Config.FavorSmall {
			js = 1 - js
		}
	case m.Config.FavorSmall:
		js = float64(m.Cluster.Nodes-minNodes) / nodes
		if j.CPUs != 0 {
			js += float64(m.Cluster.CPUs-j.CPUs) / cpus
			js /= 2
		}
	default:
		js = float64(minNodes) / nodes
		if j.CPUs != 0 {
			js += float64(j.CPUs) / cpus
			js /= 2
		}
	}
	// NaN (an empty cluster) fails both tests, as in Slurm; treat it as 0.
	if js < 0 || js != js {
		js = 0
	} else if js > 1 {
		js = 1
	}
	return js
}

// tresWeighted is the sum over TRES of weight * count / partition total
// (or weight * count with NO_NORMAL_TRES).
func (m *Multifactor) tresWeighted(j *Job, p *Partition) float64 {
	sum := 0.0
	noNormal := m.Config.Flags&conf.PriorityNoNormalTRES != 0
	for _, k := range sortedTRES(m.Config.WeightTRES) {
		w, v := m.Config.WeightTRES[k], j.TRES[k]
		if noNormal {
			sum += float64(v) * w
			continue
		}
		if v == 0 || p == nil {
			continue
		}
		if total := p.TRES[k]; total != 0 {
			sum += float64(v) / float64(total) * w
		}
	}
	return sum
}

// Weighted returns the weighted sum of f, before clamping: Slurm's double
// "priority" in _get_priority_internal.
func (m *Multifactor) Weighted(f Factors) float64 {
	c := &m.Config
	return f.Age*float64(c.WeightAge) +
		f.Assoc*float64(c.WeightAssoc) +
		f.FairShare*float64(c.WeightFairshare) +
		f.JobSize*float64(c.WeightJobSize) +
		f.Partition*float64(c.WeightPartition) +
		f.QOS*float64(c.WeightQOS) +
		f.TRES +
		float64(f.Site) -
		float64(f.Nice)
}

// Priority is the job's priority in partition p at now, as Slurm stores it
// in job_ptr->priority (or priority_array for each of several partitions):
// the weighted sum, at least 1, at most 2^32-1, truncated toward zero.
// Held jobs get 0 and operator-set priorities are returned unchanged.
func (m *Multifactor) Priority(j *Job, p *Partition, now int64) uint32 {
	if j.Held {
		return 0
	}
	if j.AdminPriority != 0 {
		return j.AdminPriority
	}
	prio := Clamp(m.Weighted(m.Factors(j, p, now)))
	if m.Config.Flags&conf.PriorityIncrOnly != 0 && j.Previous > prio {
		return j.Previous
	}
	return prio
}

// PriorityArray is the job's priority in each partition of parts, as
// _get_priority_internal fills priority_array for a job submitted to
// several partitions: every factor is the job's in its own partition
// (its age, size, fair-share, ...), but the partition factor and the
// TRES part (whose denominators are the partition's totals) are each
// partition's. Each value is clamped like Priority; with INCR_ONLY an
// element of prev (the array as it was, same order) that is higher is
// kept. Held jobs get zeros and operator-set priorities that value in
// every partition, as update_job and the hold do to the array.
func (m *Multifactor) PriorityArray(j *Job, own *Partition, parts []*Partition, prev []uint32, now int64) []uint32 {
	out := make([]uint32, len(parts))
	switch {
	case j.Held:
		return out
	case j.AdminPriority != 0:
		for i := range out {
			out[i] = j.AdminPriority
		}
		return out
	}
	c := &m.Config
	f := m.Factors(j, own, now)
	// Slurm's sum for an array element, in its order: the partition
	// part first, then the job's own weighted factors.
	rest := func(tres float64) float64 {
		return f.Age*float64(c.WeightAge) +
			f.Assoc*float64(c.WeightAssoc) +
			f.FairShare*float64(c.WeightFairshare) +
			f.JobSize*float64(c.WeightJobSize) +
			f.QOS*float64(c.WeightQOS) +
			tres +
			float64(f.Site) -
			float64(f.Nice)
	}
	incrOnly := c.Flags&conf.PriorityIncrOnly != 0
	for i, p := range parts {
		tres := 0.0
		if len(c.WeightTRES) != 0 {
			tres = m.tresWeighted(j, p)
		}
		v := Clamp(m.partitionFactor(p)*float64(c.WeightPartition) + rest(tres))
		if incrOnly && i < len(prev) && prev[i] > v {
			v = prev[i]
		}
		out[i] = v
	}
	return out
}

// partitionFactor is the partition's PriorityJobFactor over the largest
// one (norm_priority), or the factor itself with NO_NORMAL_PART; 0 for
// an unknown partition.
func (m *Multifactor) partitionFactor(p *Partition) float64 {
	if p == nil {
		return 0
	}
	if m.Config.Flags&conf.PriorityNoNormalPart != 0 {
		return float64(p.JobFactor)
	}
	return float64(p.JobFactor) / float64(max(m.Cluster.MaxPartitionJobFactor, 1, p.JobFactor))
}

// Clamp turns a weighted sum into a stored priority: below 1 becomes 1
// (0 is reserved for held jobs), above 2^32-1 becomes 2^32-1, the rest is
// truncated.
func Clamp(prio float64) uint32 {
	if prio < 1 || prio != prio {
		return 1
	}
	if prio >= 0xffffffff {
		return 0xffffffff
	}
	return uint32(prio)
}
