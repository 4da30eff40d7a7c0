package ctld

import (
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// Reservations that hold licenses (Licenses=). The reservation keeps its
// Licenses= text as given; the scheduler's view carries the parsed
// counts (jobReservations), and the job manager holds them back from the
// jobs outside the reservation (jobs/resv_lic.go). scontrol show licenses
// reports what the active reservations hold as Reserved.

// resvLicenses is _license_validate2: spec must name configured licenses
// with counts within their totals, and so must spec summed with the
// Licenses= of every other reservation whose window meets [start, end)
// (by the raw times given: an update that gives neither time meets no
// reservation with a finite end). Either failure is
// ESLURM_INVALID_LICENSES. self is the reservation being updated ("" on
// create).
func (c *Controller) resvLicenses(spec, self string, start, end int64) error {
	configured := c.cfg.Conf.LicenseList
	if jobs.ValidLicenses(spec, configured) != nil {
		return resvErr(slurmerr.ESLURM_INVALID_LICENSES)
	}
	merged := []string{spec}
	now := c.now().Unix()
	for _, r := range c.resv.list {
		if r.Licenses == "" || r.Name == self {
			continue
		}
		rs, re := r.relTimes(now)
		if re <= start || rs >= end {
			continue
		}
		merged = append(merged, r.Licenses)
	}
	if len(merged) > 1 && jobs.ValidLicenses(strings.Join(merged, ","), configured) != nil {
		return resvErr(slurmerr.ESLURM_INVALID_LICENSES)
	}
	return nil
}

// updateResvLicenses is update_resv's Licenses=: "" clears them, unless
// the reservation has (or is given) no nodes; anything else is checked
// by resvLicenses against the times the request gives and replaces
// them.
func (c *Controller) updateResvLicenses(r *resvRec, d *msg.ReservationDesc) error {
	if !d.Licenses.Valid {
		return nil
	}
	if d.Licenses.Value == "" {
		noNodes := len(r.Nodes) == 0
		if d.NodeCnt != nil {
			noNodes = len(d.NodeCnt) == 0 || d.NodeCnt[0] == 0
		}
		if noNodes {
			return resvErr(slurmerr.ESLURM_INVALID_LICENSES)
		}
		r.Licenses = ""
		return nil
	}
	if err := c.resvLicenses(d.Licenses.Value, d.Name.Value, d.StartTime, d.EndTime); err != nil {
		return err
	}
	r.Licenses = d.Licenses.Value
	return nil
}

// resvLicenseList is a reservation's Licenses= parsed (repeated names
// summed); nil when it has none or the text does not parse (it was
// checked when set, so only a state file edited by hand gets there).
func resvLicenseList(r *resvRec) []conf.License {
	if r.Licenses == "" {
		return nil
	}
	l, ok := conf.ParseLicenses(r.Licenses)
	if !ok {
		return nil
	}
	return l
}

// reservedLicenses is what set_reserved_license_count adds up for
// scontrol show licenses: the licenses of every reservation active now
// (FLEX ones always), by name.
func (c *Controller) reservedLicenses(now int64) map[string]uint32 {
	var out map[string]uint32
	for _, r := range c.resv.list {
		l := resvLicenseList(r)
		if len(l) == 0 {
			continue
		}
		if r.Flags&resvFlex == 0 {
			if s, e := r.relTimes(now); now < s || now > e {
				continue
			}
		}
		if out == nil {
			out = map[string]uint32{}
		}
		for _, x := range l {
			out[x.Name] += x.Count
		}
	}
	return out
}
