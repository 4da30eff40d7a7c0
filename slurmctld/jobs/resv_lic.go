package jobs

import "github.com/goslurm/goslurm/conf"

// Licenses held by reservations (scontrol create reservation
// Licenses=...). As license_job_test does with job_test_lic_resv, a job
// may take a license only when, beside what jobs hold, enough is left
// over for every reservation that holds some of it, whose window meets
// the job's run from now to now plus its time limit, and that is not the
// job's own reservation. A job of the reservation is only spared that
// reservation's count: it takes its licenses from the same pool as every
// other job, so what it holds is counted both as used and as reserved
// while the reservation lasts (as in Slurm, where the reservation's count
// is not lowered by its jobs' use).

// licHold is one reservation's licenses as the license test sees them.
type licHold struct {
	name       string
	start, end int64
	lic        []conf.License
}

// yearSeconds is YEAR_SECONDS, the run of a job without a time limit.
const yearSeconds = 365 * 24 * 3600

// clusterLicenses is licenseUsage with the reservations of cl holding
// back their licenses (see licenseUsage for keep).
func (m *Manager) clusterLicenses(cl *Cluster, keep bool) *LicenseUse {
	if cl == nil {
		return m.licenseUsage(nil, keep)
	}
	u := m.licenseUsage(cl.Licenses, keep)
	u.cl = cl
	for _, rv := range cl.Reservations {
		if len(rv.Licenses) == 0 {
			continue
		}
		u.holds = append(u.holds, licHold{name: rv.Name, start: rv.Start, end: rv.End, lic: rv.Licenses})
		u.now = max(u.now, rv.Now)
	}
	return u
}

// reservedFor is job_test_lic_resv: how much of license name the
// reservations other than j's own hold back during j's run from now.
func (u *LicenseUse) reservedFor(j *Job, name string) uint64 {
	if len(u.holds) == 0 {
		return 0
	}
	end := u.now + licJobDuration(j, u.cl)
	var n uint64
	for _, h := range u.holds {
		if h.start >= end || h.end <= u.now || h.name == j.Reservation {
			continue
		}
		for _, l := range h.lic {
			if l.Name == name {
				n += uint64(l.Count)
			}
		}
	}
	return n
}

// licJobDuration is _get_job_duration (without gang scheduling's time
// slices): the job's time limit, else its partition's, in seconds; a
// year for UNLIMITED.
func licJobDuration(j *Job, cl *Cluster) int64 {
	limit := j.TimeLimit
	if limit == NoVal {
		limit = Infinite
		name := j.Partition
		if name == "" && len(j.Partitions) > 0 {
			name = j.Partitions[0]
		}
		if p := cl.partition(name); p != nil {
			limit = p.MaxTime
		}
	}
	if limit == Infinite || limit == NoVal {
		return yearSeconds
	}
	return int64(limit) * 60
}
