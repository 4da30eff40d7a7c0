package jobs

import (
	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// The scheduler's side of licenses: which pending jobs a pass leaves out
// for their licenses and the reason they get. This file needs the
// Cluster.Licenses and Manager.licBlocked fields.

// licensePass starts the license side of a scheduling pass: the counts
// held now, and (unless dry) an empty list of the jobs the pass leaves
// out for their licenses.
func (m *Manager) licensePass(cl *Cluster, dry bool) *LicenseUse {
	if !dry {
		m.licBlocked, m.licBlockedSet = m.licBlocked[:0], nil
	}
	return m.clusterLicenses(cl, true)
}

// licensesReady is the main scheduler's license test of a pending job
// when the pass's snapshot is built. A job whose licenses are not free is
// left out of the pass, so it holds up no other job (schedule() moves on
// to the next one), and its reason is settled once the plan is known
// (licenseReasons).
func (m *Manager) licensesReady(j *Job, u *LicenseUse) bool {
	if j.Licenses == "" || u.Test(j) == LicensesFree {
		return true
	}
	m.licBlocked, m.licBlockedSet = append(m.licBlocked, j), nil
	return false
}

// licenseReasons gives the jobs left out for their licenses the reason
// schedule() gives them. It tests a job's partition before its licenses:
// when a job ahead of it in the queue found no resources in its
// partition, it waits with reason Priority if it had none or Resources
// (and keeps any other reason, Licenses included); otherwise its reason
// is Licenses. plan is nil when the pass had nothing to plan.
func (m *Manager) licenseReasons(plan *sched.Plan, ids map[uint32]entry, now int64) {
	type first struct {
		prio, id uint32
	}
	failed := map[string]first{} // partition -> first job in it that found no resources
	// The jobs bf_licenses' main pass did not reach keep their reason.
	skipped := map[*Job]bool{}
	if plan != nil {
		for _, p := range plan.Pending {
			if e, ok := ids[p.JobID]; ok && p.Skipped {
				skipped[e.job] = true
			}
			e, ok := ids[p.JobID]
			if !ok || p.JobID >= synthBase || p.Reason != sched.ReasonResources {
				continue
			}
			k := first{e.job.Priority, e.job.ID}
			for _, name := range e.job.Partitions {
				if f, ok := failed[name]; !ok || ahead(k.prio, k.id, f.prio, f.id) {
					failed[name] = k
				}
			}
		}
	}
	for _, j := range m.licBlocked {
		if !j.Pending() || skipped[j] {
			continue
		}
		blocked := len(j.Partitions) > 0
		for _, name := range j.Partitions {
			f, ok := failed[name]
			if !ok || !ahead(f.prio, f.id, j.Priority, j.ID) {
				blocked = false
			}
		}
		switch {
		case !blocked:
			m.setReason(j, ReasonLicenses, now)
		case j.Reason == ReasonNone || j.Reason == ReasonResources:
			m.setReason(j, ReasonPriority, now)
		}
		if j.StateDesc != "" {
			j.StateDesc = ""
			m.touch(j, now)
		}
	}
	m.licBlocked, m.licBlockedSet = m.licBlocked[:0], nil
}

// ahead reports job a before job b in the queue: higher priority, then
// lower id.
func ahead(prioA, idA, prioB, idB uint32) bool {
	return prioA > prioB || (prioA == prioB && idA < idB)
}

// bfLicenses reports SchedulerParameters=bf_licenses in effect: then
// jobs blocked on licenses stay in the pass (the main pass stops at the
// first, backfill plans their licenses) instead of being left out.
func bfLicenses(cl *Cluster) bool {
	return cl.Config.Backfill && cl.Config.BF.Licenses && len(cl.Licenses) > 0
}

// addBFLicenses gives the scheduler what bf_licenses needs: the
// configured totals, the licenses of the running jobs (backfill.c's
// _bf_reserve_running: running ones only, not suspended or completing)
// and of the pending jobs, and which pending jobs licensesReady found
// blocked.
func (m *Manager) addBFLicenses(s *sched.Snapshot, cl *Cluster, ids map[uint32]entry) {
	for _, l := range cl.Licenses {
		s.Licenses = append(s.Licenses, sched.License{Name: l.Name, Count: l.Count})
	}
	for i := range s.Running {
		a := &s.Running[i]
		if j := m.jobs[a.JobID]; j != nil && j.Running() && !j.IsCompleting() {
			a.Licenses = schedLicenses(j)
			a.Reservation = j.Reservation
		}
	}
	blocked := make(map[*Job]bool, len(m.licBlocked))
	for _, j := range m.licBlocked {
		blocked[j] = true
	}
	for i := range s.Pending {
		p := &s.Pending[i]
		if e, ok := ids[p.JobID]; ok {
			p.Licenses = schedLicenses(e.job)
			p.LicBlocked = blocked[e.job]
		}
	}
}

// schedLicenses is j's Licenses= for the scheduler.
func schedLicenses(j *Job) []sched.License {
	req, _ := j.licenseRequest(true)
	return schedLicenseList(req)
}

func schedLicenseList(req []conf.License) []sched.License {
	if len(req) == 0 {
		return nil
	}
	out := make([]sched.License, len(req))
	for i, r := range req {
		out[i] = sched.License{Name: r.Name, Count: r.Count}
	}
	return out
}

// skippedReason is the reason of a pending job bf_licenses' main pass did
// not reach (Pending.Skipped): the one it has, as nothing set another.
// A job without one waits with Priority (what its submission gives a
// job behind a higher priority one), unless its licenses are not free,
// in which case its submission set none either (job_allocate finds it not
// independent and skips the top priority test).
func (m *Manager) skippedReason(j *Job, p sched.Pending) sched.Pending {
	if !p.Skipped {
		return p
	}
	switch {
	case j.Reason != ReasonNone:
		p.Reason = sched.Reason(j.Reason)
	case m.isLicBlocked(j):
		p.Reason = sched.ReasonNone
	}
	return p
}

// submitLicenseReason undoes register's Priority for a job whose licenses
// are not free when it is submitted, with bf_licenses: job_allocate finds
// such a job not independent and skips the top priority test that would
// give it Priority, and the main pass, stopping at the first job blocked
// on licenses, may never give it a reason (skippedReason keeps none).
// Without bf_licenses the next pass gives it Licenses anyway.
func (m *Manager) submitLicenseReason(j *Job, cl *Cluster) {
	if j.Reason != ReasonPriority || j.Licenses == "" || !bfLicenses(cl) {
		return
	}
	if m.clusterLicenses(cl, false).Test(j) != LicensesFree {
		j.Reason = ReasonNone
	}
}

// isLicBlocked reports a job of m.licBlocked, through a set built once a
// pass (a pass may ask for each of 10,000 skipped jobs).
func (m *Manager) isLicBlocked(j *Job) bool {
	if len(m.licBlocked) == 0 {
		return false
	}
	if m.licBlockedSet == nil {
		m.licBlockedSet = make(map[*Job]bool, len(m.licBlocked))
		for _, b := range m.licBlocked {
			m.licBlockedSet[b] = true
		}
	}
	return m.licBlockedSet[j]
}
