package jobs

import (
	"slices"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/slurmctld/sched/priority"
)

// FactorsQuery selects the jobs of REQUEST_PRIORITY_FACTORS. A nil list
// does not filter; a non-nil empty one matches nothing (Slurm's NO_VAL
// list versus an empty one).
type FactorsQuery struct {
	JobIDs []uint32
	UIDs   []uint32
	// Partitions are the partition names asked for (nil: every one).
	// Names that do not exist are dropped, so asking only for those
	// matches nothing.
	Partitions []string
	// Visible, when set, says whether the requester may see a job
	// (PrivateData=jobs); nil shows every job.
	Visible func(j *Job) bool
}

// JobFactors is one record of RESPONSE_PRIORITY_FACTORS: a job's
// weighted factors in one partition, as priority_factors_object_t.
type JobFactors struct {
	JobID, UserID uint32
	Partition     string
	// Direct is the priority an operator set (direct_prio); the other
	// factors are then zero.
	Direct float64
	priority.Detail
	// Site and Nice are NICE_OFFSET encoded, as Slurm sends them; both
	// are 0 in the zeroed record of a multi-partition job with an
	// operator-set priority.
	Site, Nice uint32
}

// PriorityFactors lists the factors of the jobs q selects, as
// priority_p_get_priority_factors_list does: pending jobs (running ones
// too with CALCULATE_RUNNING) that are eligible (begin time passed; with
// ACCRUE_ALWAYS, submitted) and not held, one record per partition for a
// job submitted to several (PriorityTier order). tres is the
// controller's TRES table (names as configured), the order of each
// record's TRES factors. It returns nil when no job matches, and nil
// with priority/basic (whose answer is an empty list: see Multifactor).
func (m *Manager) PriorityFactors(cl *Cluster, now int64, tres []string, q FactorsQuery) []JobFactors {
	p := m.Priority()
	if p == nil {
		return nil
	}
	keys := make([]string, len(tres))
	for i, n := range tres {
		keys[i] = strings.ToLower(n)
	}
	var filter []string
	if q.Partitions != nil {
		filter = []string{}
		for _, name := range q.Partitions {
			if cl.partition(name) != nil {
				filter = append(filter, name)
			}
		}
	}
	r := p.newRun(cl)
	part := func(name string) *priority.Partition {
		pp, ok := r.parts[name]
		if !ok {
			pp = m.prioPartition(cl, name)
			r.parts[name] = pp
		}
		return pp
	}
	calcRunning := p.cfg.Flags&conf.PriorityCalculateRunning != 0
	var out []JobFactors
	for _, j := range m.Jobs() {
		if !j.Pending() && !(calcRunning && j.Running()) {
			continue
		}
		if use := factorsUseTime(j, p.cfg.Flags); use == 0 || use > now {
			continue
		}
		if j.Priority == 0 {
			continue
		}
		if q.Visible != nil && !q.Visible(j) {
			continue
		}
		if q.JobIDs != nil && !slices.Contains(q.JobIDs, j.ID) {
			continue
		}
		if q.UIDs != nil && !slices.Contains(q.UIDs, j.UserID) {
			continue
		}
		own := jobPartition(j)
		if cl.partition(own) == nil {
			continue
		}
		want := func(name string) bool { return filter == nil || slices.Contains(filter, name) }

		var d priority.Detail
		if !j.AdminPrio {
			pj := m.priorityJob(j, cl, p)
			d = p.mf.Detail(&pj, part(own), now, keys)
			names := tierOrder(j, cl)
			if len(names) >= 2 {
				for _, name := range names {
					if !want(name) {
						continue
					}
					out = append(out, JobFactors{JobID: j.ID, UserID: j.UserID, Partition: name,
						Detail: p.mf.PartitionDetail(d, &pj, part(name), keys),
						Site:   siteWire(j), Nice: j.Nice})
				}
				continue
			}
		} else if names := tierOrder(j, cl); len(names) >= 2 {
			// Slurm zeroes the record of an operator-set priority
			// (direct_prio, site and nice included) and copies it for
			// each partition, with that partition's factor.
			for _, name := range names {
				if want(name) {
					out = append(out, JobFactors{JobID: j.ID, UserID: j.UserID, Partition: name,
						Detail: p.mf.PartitionDetail(priority.Detail{}, &priority.Job{}, part(name), keys)})
				}
			}
			continue
		}
		if !want(own) {
			continue
		}
		jf := JobFactors{JobID: j.ID, UserID: j.UserID, Partition: own}
		if j.AdminPrio {
			jf.Direct = float64(j.Priority)
		} else {
			jf.Detail, jf.Site, jf.Nice = d, siteWire(j), j.Nice
		}
		out = append(out, jf)
	}
	return out
}

// factorsUseTime is the time a job counts as eligible from for sprio
// (Slurm: begin_time, set when the job first became independent, or its
// submit time with ACCRUE_ALWAYS); 0 while it never was.
func factorsUseTime(j *Job, flags conf.PriorityFlagBits) int64 {
	if flags&conf.PriorityAccrueAlways != 0 {
		return j.SubmitTime
	}
	if j.EligibleTime != 0 {
		return j.EligibleTime
	}
	if j.BeginTime != 0 && j.Dependency == nil {
		return j.BeginTime
	}
	return 0
}

// siteWire is the job's site factor as Slurm keeps it (NICE_OFFSET
// encoded; NICE_OFFSET when none was set).
func siteWire(j *Job) uint32 {
	if j.SiteFactor == 0 {
		return niceOff
	}
	return j.SiteFactor
}

// TRESWeights returns PriorityWeightTRES for each name of tres (0 for
// those without a weight); nil with priority/basic or without
// PriorityWeightTRES, when the records carry no TRES factors.
func (m *Manager) TRESWeights(tres []string) []float64 {
	p := m.Priority()
	if p == nil || len(p.cfg.WeightTRES) == 0 {
		return nil
	}
	w := make([]float64, len(tres))
	for i, n := range tres {
		w[i] = p.cfg.WeightTRES[strings.ToLower(n)]
	}
	return w
}
