package sched

// bf_licenses: the backfill pass plans licenses as it plans nodes. A
// license's availability is kept per bucket of the window (the buckets of
// timeline.go): the configured total, less what running jobs hold until
// their end (rounded down to bf_resolution, as _bf_reserve_running does),
// less what jobs started or reserved in the pass take for their run. A
// job starts or gets a reservation only where its licenses are free for
// its whole run, so a lower priority job cannot take licenses a higher
// priority one was planned to get.
//
// Not modelled: licenses advanced reservations hold (backfill.c reserves
// them for the reservation's span, usable by its jobs).

// licTimeline is the licenses available per bucket.
type licTimeline struct {
	index map[string]int
	free  [][]int64 // [license][bucket]
}

// initLicenses builds the timeline when bf_licenses is set and licenses
// are configured; otherwise c.lic stays nil and licenses are not looked
// at (the caller then leaves jobs blocked on licenses out of the pass).
func (c *cluster) initLicenses() {
	s := c.snap
	if !s.Config.BF.Licenses || len(s.Licenses) == 0 {
		return
	}
	lt := &licTimeline{index: make(map[string]int, len(s.Licenses))}
	for _, l := range s.Licenses {
		if _, dup := lt.index[l.Name]; dup {
			continue
		}
		lt.index[l.Name] = len(lt.free)
		row := make([]int64, c.nb)
		for b := range row {
			row[b] = int64(l.Count)
		}
		lt.free = append(lt.free, row)
	}
	c.lic = lt
	for i := range s.Running {
		a := &s.Running[i]
		if len(a.Licenses) == 0 {
			continue
		}
		end := a.End / c.res * c.res
		c.takeLicenseSpan(a.Licenses, 0, c.bucketCeil(end))
	}
}

// bucketCeil is the first bucket starting at or after t.
func (c *cluster) bucketCeil(t int64) int {
	if t <= c.now {
		return 0
	}
	return int(min((t-c.now+c.res-1)/c.res, int64(c.nb)))
}

// takeLicenseSpan takes the licenses in buckets [b0, b1).
func (c *cluster) takeLicenseSpan(ls []License, b0, b1 int) {
	for _, l := range ls {
		i, ok := c.lic.index[l.Name]
		if !ok {
			continue
		}
		row := c.lic.free[i]
		for b := max(b0, 0); b < min(b1, len(row)); b++ {
			row[b] -= int64(l.Count)
		}
	}
}

// licensesFit reports whether r's licenses are free in every bucket of a
// run starting at bucket b (m buckets long). It is true when bf_licenses
// is off or the job needs none.
func (c *cluster) licensesFit(r *request, b, m int) bool {
	if c.lic == nil || len(r.job.Licenses) == 0 {
		return true
	}
	for _, l := range r.job.Licenses {
		i, ok := c.lic.index[l.Name]
		if !ok {
			return false
		}
		row := c.lic.free[i]
		for k := max(b, 0); k < min(b+max(m, 1), len(row)); k++ {
			if row[k] < int64(l.Count) {
				return false
			}
		}
	}
	return true
}

// takeLicenses takes r's licenses for a run starting at time t.
func (c *cluster) takeLicenses(r *request, t int64) {
	if c.lic == nil || len(r.job.Licenses) == 0 {
		return
	}
	b0 := int((t - c.now) / c.res)
	c.takeLicenseSpan(r.job.Licenses, b0, c.bucketCeil(t+r.duration))
}

// runBuckets is the number of buckets a run of r occupies.
func (c *cluster) runBuckets(r *request) int {
	return int((r.duration + c.res - 1) / c.res)
}
