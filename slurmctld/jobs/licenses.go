package jobs

import (
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// ReasonLicenses is WAIT_LICENSES: the job's licenses are not all free.
const ReasonLicenses uint16 = 10

// Licenses are counted from the job table rather than kept as running
// totals: a job holds its licenses from its start (allocate_nodes'
// license_job_get) until its completion ends (cleanup_completing's
// license_job_return), suspended or not, requeued and still completing
// or not. Deriving the counts makes start, end, requeue, suspend and a
// restart's recovery (read_config's license_job_get for running and
// suspended jobs) need no bookkeeping of their own.

// LicenseCount is one configured license with what jobs hold of it.
type LicenseCount struct {
	Name  string
	Total uint32
	Used  uint32
}

// LicenseUse is the state of the configured licenses during one pass:
// what is held now, plus what jobs started in the pass took.
type LicenseUse struct {
	counts []LicenseCount
	index  map[string]int
	// keep: the jobs' parsed requests may be cached on them (the caller
	// holds the controller's lock exclusively; see licenseCache).
	keep bool
	// holds are the reservations holding licenses back, as of now, with
	// cl for the jobs' partitions (resv_lic.go; none unless made by
	// clusterLicenses).
	holds []licHold
	now   int64
	cl    *Cluster
}

// holdsLicenses: started and not through its completion yet. A requeued
// job is pending and completing until its epilogs are done; a job that
// never started is never completing.
func (j *Job) holdsLicenses() bool {
	return j.Licenses != "" && (j.Running() || j.IsCompleting())
}

// licenseCache is a job's Licenses= parsed, with the text it was parsed
// from. Every pass tests each pending job's licenses and counts each
// holder's, while the text changes rarely (scontrol update, a
// reconfiguration's RestoreLicenses). The cache is valid while its text
// equals Licenses, so any write of the field, wherever it is made,
// invalidates it without a hook; the compare is cheap, as the text is
// the very string the field holds until it is replaced.
//
// It is written only when the caller holds the controller's lock
// exclusively (a scheduling pass, an allocation): scontrol show licenses
// counts under the read lock, and there the cache is only read.
type licenseCache struct {
	src string
	req []conf.License
	ok  bool
}

// licenseRequest is the job's Licenses= as license_validate reads it
// (repeated names summed); ok is false for a string it would refuse. keep
// stores the parse on the job (the caller's lock is exclusive). The
// returned list is shared: callers must not change it.
func (j *Job) licenseRequest(keep bool) ([]conf.License, bool) {
	if j.Licenses == "" {
		return nil, true
	}
	if c := &j.lic; c.src == j.Licenses {
		return c.req, c.ok
	}
	l, ok := conf.ParseLicenses(j.Licenses)
	if keep {
		j.lic = licenseCache{src: j.Licenses, req: l, ok: ok}
	}
	return l, ok
}

// LicenseUsage returns the configured licenses (slurm.conf's Licenses,
// the scheduler's Cluster.Licenses) and what the jobs hold of each. The
// order is slurmctld's license list: _build_license_list pushes every new
// name at the head of its list, so the last configured name comes first
// (that is the order scontrol show licenses prints). Names a job holds
// that are no longer configured (a reconfiguration removed them) are not
// counted, as license_job_return ignores them.
// It may be called under the controller's read lock.
func (m *Manager) LicenseUsage(configured []conf.License) *LicenseUse {
	return m.licenseUsage(configured, false)
}

// licenseUsage is LicenseUsage; keep caches the parsed requests on the
// jobs (see licenseCache), also those Test and takeLicenses read later.
func (m *Manager) licenseUsage(configured []conf.License, keep bool) *LicenseUse {
	u := newLicenseUse(configured)
	u.keep = keep
	if len(u.counts) == 0 {
		return u
	}
	for _, j := range m.jobs {
		if !j.holdsLicenses() {
			continue
		}
		req, _ := j.licenseRequest(keep)
		u.add(req)
	}
	return u
}

func newLicenseUse(configured []conf.License) *LicenseUse {
	u := &LicenseUse{index: map[string]int{}}
	for i := len(configured) - 1; i >= 0; i-- {
		u.index[configured[i].Name] = len(u.counts)
		u.counts = append(u.counts, LicenseCount{Name: configured[i].Name, Total: configured[i].Count})
	}
	return u
}

// ConfiguredLicenses is the license list of a configuration with nothing
// in use, in slurmctld's order (see LicenseUsage).
func ConfiguredLicenses(l []conf.License) []LicenseCount { return newLicenseUse(l).counts }

// Counts returns the licenses in list order (a copy).
func (u *LicenseUse) Counts() []LicenseCount {
	return append([]LicenseCount(nil), u.counts...)
}

func (u *LicenseUse) add(req []conf.License) {
	for _, r := range req {
		if i, ok := u.index[r.Name]; ok {
			u.counts[i].Used += r.Count
		}
	}
}

// LicenseTest is license_job_test's answer.
type LicenseTest uint8

const (
	LicensesFree     LicenseTest = iota // SLURM_SUCCESS
	LicensesBusy                        // EAGAIN: not all free now
	LicensesNeverRun                    // SLURM_ERROR: unknown name or more than configured
)

// Test is license_job_test for the current counts, now: what
// reservations hold back for j's run is set aside (resv_lic.go).
func (u *LicenseUse) Test(j *Job) LicenseTest {
	req, ok := j.licenseRequest(u.keep)
	if !ok {
		return LicensesNeverRun
	}
	for _, r := range req {
		i, found := u.index[r.Name]
		if !found {
			return LicensesNeverRun
		}
		c := u.counts[i]
		switch {
		case r.Count > c.Total:
			return LicensesNeverRun
		case uint64(r.Count)+uint64(c.Used) > uint64(c.Total):
			return LicensesBusy
		case uint64(r.Count)+uint64(c.Used)+u.reservedFor(j, r.Name) > uint64(c.Total):
			return LicensesBusy
		}
	}
	return LicensesFree
}

// takeLicenses is the test again as a job of the plan starts (jobs
// started earlier in the same pass took theirs), then license_job_get.
// A job whose licenses went meanwhile stays pending with reason Licenses.
func (m *Manager) takeLicenses(j *Job, u *LicenseUse, now int64) bool {
	if j.Licenses == "" {
		return true
	}
	if u.Test(j) != LicensesFree {
		m.setReason(j, ReasonLicenses, now)
		if j.StateDesc != "" {
			j.StateDesc = ""
			m.touch(j, now)
		}
		return false
	}
	req, _ := j.licenseRequest(u.keep)
	u.add(req)
	return true
}

// ValidLicenses is license_validate for a reservation or a job update:
// every name configured, no count above the configured total, else
// ESLURM_INVALID_LICENSES.
func ValidLicenses(spec string, configured []conf.License) error {
	return validLicenses(spec, configured, false)
}

// validLicenses is ValidLicenses; overTotal lets counts above the
// configured total through, as a submission's check does with
// SchedulerParameters=allow_zero_lic (names must still be configured).
func validLicenses(spec string, configured []conf.License, overTotal bool) error {
	if spec == "" {
		return nil
	}
	req, ok := conf.ParseLicenses(spec)
	if !ok {
		return serr(slurmerr.ESLURM_INVALID_LICENSES)
	}
	u := newLicenseUse(configured)
	for _, r := range req {
		i, found := u.index[r.Name]
		if !found || (r.Count > u.counts[i].Total && !overTotal) {
			return serr(slurmerr.ESLURM_INVALID_LICENSES)
		}
	}
	return nil
}

// RestoreLicenses is what _restore_job_accounting does to every job's
// Licenses= when slurmctld reads its configuration (start-up and
// reconfigure): the string is rebuilt from its parsed list, names no
// longer configured dropped, each with its count, in the list's order
// (head-pushed, so reversed: "foo:1,bar:1" comes back as "bar:1,foo:1",
// and again reversed at the next read, as 22.05 does). A string the
// parser refuses is left alone. The changed records are journaled with
// the manager's next change.
func (m *Manager) RestoreLicenses(configured []conf.License, now int64) {
	known := make(map[string]bool, len(configured))
	for _, l := range configured {
		known[l.Name] = true
	}
	for _, j := range m.Jobs() {
		if j.Licenses == "" {
			continue
		}
		req, ok := conf.ParseLicenses(j.Licenses)
		if !ok {
			continue
		}
		var parts []string
		for i := len(req) - 1; i >= 0; i-- {
			if known[req[i].Name] {
				parts = append(parts, req[i].Name+":"+strconv.FormatUint(uint64(req[i].Count), 10))
			}
		}
		if s := strings.Join(parts, ","); s != j.Licenses {
			j.Licenses = s
			m.touch(j, now)
		}
	}
}
