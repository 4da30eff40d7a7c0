package jobs

import "github.com/goslurm/goslurm/slurmctld/sched"

// The scheduler's side of licenses: which pending jobs a pass leaves out
// for their licenses and the reason they get. This file needs the
// Cluster.Licenses and Manager.licBlocked fields.

// licensePass starts the license side of a scheduling pass: the counts
// held now, and (unless dry) an empty list of the jobs the pass leaves
// out for their licenses.
func (m *Manager) licensePass(cl *Cluster, dry bool) *LicenseUse {
	if !dry {
		m.licBlocked = m.licBlocked[:0]
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
	m.licBlocked = append(m.licBlocked, j)
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
	if plan != nil {
		for _, p := range plan.Pending {
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
		if !j.Pending() {
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
	m.licBlocked = m.licBlocked[:0]
}

// ahead reports job a before job b in the queue: higher priority, then
// lower id.
func ahead(prioA, idA, prioB, idB uint32) bool {
	return prioA > prioB || (prioA == prioB && idA < idB)
}
