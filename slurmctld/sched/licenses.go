package sched

// bf_licenses: the backfill pass plans licenses as it plans nodes. A
// license's availability is kept per bucket of the window (the buckets of
// timeline.go): the configured total, less what advanced reservations
// hold during their window (moved to a pool of their own that only their
// jobs draw on, first), less what running jobs hold until their end
// (rounded down to bf_resolution, as _bf_reserve_running does), less what
// jobs started or reserved in the pass take for their run. A job starts
// or gets a reservation only where its licenses are free for its whole
// run, so a lower priority job cannot take licenses a higher priority one
// was planned to get.

// licTimeline is the licenses available per bucket: the general pool of
// each license, and the pools of the reservations holding some.
type licTimeline struct {
	index map[string]int
	free  [][]int64 // [license][bucket]
	resv  map[licKey][]int64
}

type licKey struct{ resv, name string }

// initLicenses builds the timeline when bf_licenses is set and licenses
// are configured; otherwise c.lic stays nil and licenses are not looked
// at (the caller then leaves jobs blocked on licenses out of the pass).
func (c *cluster) initLicenses() {
	s := c.snap
	if !s.Config.BF.Licenses || len(s.Licenses) == 0 {
		return
	}
	lt := &licTimeline{index: make(map[string]int, len(s.Licenses)), resv: map[licKey][]int64{}}
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
	// Reservations first, as backfill.c sets them up before the running
	// jobs: a FLEX one holds its licenses all the time.
	for i := range s.Reservations {
		rv := &s.Reservations[i]
		if len(rv.Licenses) == 0 || rv.End < c.now/c.res*c.res {
			continue
		}
		b0, b1 := 0, c.nb
		if !rv.Flex {
			b0 = c.bucketFloor(rv.Start / c.res * c.res)
			b1 = c.bucketCeil(rv.End / c.res * c.res)
		}
		c.transferLicenses(rv.Name, rv.Licenses, b0, b1)
	}
	for i := range s.Running {
		a := &s.Running[i]
		if len(a.Licenses) == 0 {
			continue
		}
		end := a.End / c.res * c.res
		// At least one bucket, as _add_reservation makes sure of.
		c.takeLicenseSpan(a.Licenses, a.Reservation, 0, max(c.bucketCeil(end), 1))
	}
}

// bucketFloor is the bucket holding time t (0 for the past).
func (c *cluster) bucketFloor(t int64) int {
	if t <= c.now {
		return 0
	}
	return int(min((t-c.now)/c.res, int64(c.nb)))
}

// bucketCeil is the first bucket starting at or after t.
func (c *cluster) bucketCeil(t int64) int {
	if t <= c.now {
		return 0
	}
	return int(min((t-c.now+c.res-1)/c.res, int64(c.nb)))
}

// transferLicenses moves a reservation's licenses from the general pools
// to its own in buckets [b0, b1) (bf_licenses_transfer: no more than is
// left).
func (c *cluster) transferLicenses(resv string, ls []License, b0, b1 int) {
	for _, l := range ls {
		i, ok := c.lic.index[l.Name]
		if !ok {
			continue
		}
		k := licKey{resv, l.Name}
		own := c.lic.resv[k]
		if own == nil {
			own = make([]int64, c.nb)
			c.lic.resv[k] = own
		}
		row := c.lic.free[i]
		for b := max(b0, 0); b < min(b1, len(row)); b++ {
			n := min(int64(l.Count), max(row[b], 0))
			row[b] -= n
			own[b] += n
		}
	}
}

// takeLicenseSpan takes licenses in buckets [b0, b1): from resv's pool
// first, then from the general one.
func (c *cluster) takeLicenseSpan(ls []License, resv string, b0, b1 int) {
	for _, l := range ls {
		i, ok := c.lic.index[l.Name]
		if !ok {
			continue
		}
		row := c.lic.free[i]
		var own []int64
		if resv != "" {
			own = c.lic.resv[licKey{resv, l.Name}]
		}
		for b := max(b0, 0); b < min(b1, len(row)); b++ {
			need := int64(l.Count)
			if own != nil {
				n := min(need, max(own[b], 0))
				own[b] -= n
				need -= n
			}
			// No lower than none left (bf_licenses_deduct's underflow).
			row[b] = max(row[b]-need, 0)
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
		var own []int64
		if r.job.Reservation != "" {
			own = c.lic.resv[licKey{r.job.Reservation, l.Name}]
		}
		for k := max(b, 0); k < min(b+max(m, 1), len(row)); k++ {
			have := row[k]
			if own != nil {
				have += max(own[k], 0)
			}
			if have < int64(l.Count) {
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
	b0 := c.bucketFloor(t)
	c.takeLicenseSpan(r.job.Licenses, r.job.Reservation, b0, max(c.bucketCeil(t+r.duration), b0+1))
}

// runBuckets is the number of buckets a run of r occupies.
func (c *cluster) runBuckets(r *request) int {
	return int((r.duration + c.res - 1) / c.res)
}

// skipRest marks the jobs of the queue entries the main pass did not
// reach, having stopped at a job blocked on licenses: no pass sets their
// reason (Pending.Skipped), as neither schedule() nor backfill.c would.
func (c *cluster) skipRest(out []outcome, rest []entry) {
	for _, e := range rest {
		if o := &out[e.ji]; !o.started && o.reason == ReasonNone {
			o.skipped = true
		}
	}
}
