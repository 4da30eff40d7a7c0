package main

import (
	"strings"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
)

// filterJob is _filter_job: true keeps the job. It may narrow a pending
// array record to the tasks named with -j.
func (q *squeue) filterJob(r *jobRec) bool {
	j := r.j
	if j.JobID == 0 {
		return false
	}
	partial := false
	if q.hasJobs {
		keep := false
		for _, s := range q.jobs {
			if (s.arrayID == sc.NoVal && (s.jobID == j.ArrayJobID || s.jobID == j.JobID)) ||
				(s.arrayID == r.taskID && s.jobID == j.ArrayJobID) {
				keep = true
				break
			}
			if s.arrayID != sc.NoVal && s.jobID == j.ArrayJobID && r.bitmap != nil &&
				int(s.arrayID) < len(r.bitmap) && r.bitmap[s.arrayID] {
				keep, partial = true, true
				break
			}
			if s.jobID == j.HetJobID {
				keep = true
				break
			}
		}
		if !keep {
			return false
		}
	}
	if q.hasLicenses {
		keep := false
		if j.Licenses.Valid {
			for _, tok := range sc.SplitList(j.Licenses.Value) {
				name, _, _ := strings.Cut(tok, ":")
				for _, l := range q.licenses {
					if l == name {
						keep = true
					}
				}
				if keep {
					break
				}
			}
		}
		if !keep {
			return false
		}
	}
	if q.hasAccounts && !matchFold(q.accounts, nstr(j.Account)) {
		return false
	}
	if q.hasQOS && !matchFold(q.qoss, nstr(j.QOS)) {
		return false
	}
	switch {
	case q.allStates:
	case q.hasStates:
		keep := false
		j.JobState &^= sc.JobUpdateDB
		for _, st := range q.states {
			if st&sc.JobStateFlags != 0 {
				keep = st&j.JobState != 0
			} else {
				keep = st == j.JobState
			}
			if keep {
				break
			}
		}
		if !keep {
			return false
		}
	default:
		base := j.JobState & sc.JobStateBase
		if base != sc.JobPending && base != sc.JobRunning && j.JobState&sc.JobStageOut == 0 &&
			base != sc.JobSuspended && j.JobState&sc.JobCompleting == 0 {
			return false
		}
	}
	if q.nodes != nil {
		if !j.Nodes.Valid || !intersects(q.nodes, j.Nodes.Value) {
			return false
		}
	}
	if q.hasUsers {
		keep := false
		for _, u := range q.users_ {
			if u == j.UserID {
				keep = true
				break
			}
		}
		if !keep {
			return false
		}
	}
	if q.hasReservation {
		if !j.ResvName.Valid || j.ResvName.Value != q.reservation {
			return false
		}
	}
	if q.hasNames && !matchFold(q.names, nstr(j.Name)) {
		return false
	}
	if partial {
		nb := make([]bool, len(r.bitmap))
		for _, s := range q.jobs {
			if s.jobID == j.ArrayJobID && int(s.arrayID) < len(r.bitmap) {
				nb[s.arrayID] = true
			}
		}
		count, first := 0, -1
		for i := range r.bitmap {
			r.bitmap[i] = r.bitmap[i] && nb[i]
			if r.bitmap[i] {
				count++
				if first < 0 {
					first = i
				}
			}
		}
		r.taskStr = sc.NullStr
		if count == 1 {
			r.taskID = uint32(first)
			r.bitmap = nil
		} else {
			r.taskStr = sc.S(sc.BitFmt(r.bitmap, count*16+10))
		}
	}
	return true
}

func matchFold(list []string, v sc.Str) bool {
	if v.Null {
		return false
	}
	for _, s := range list {
		if strings.EqualFold(s, v.V) {
			return true
		}
	}
	return false
}

// intersects is hostset_intersects.
func intersects(set *hostlist.Hostlist, nodes string) bool {
	hl, err := hostlist.Parse(nodes)
	if err != nil {
		return false
	}
	for _, h := range hl.Hosts() {
		if set.Find(h) >= 0 {
			return true
		}
	}
	return false
}
