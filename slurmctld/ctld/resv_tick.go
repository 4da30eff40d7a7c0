package ctld

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// setResvNodeFlags is set_node_maint_mode: nodes of the reservations
// active now carry NODE_STATE_RES, and MAINT for maintenance ones; the
// flags come off when the reservation ends. It reports whether a
// reservation started or ended since the last call (the scheduler's
// picture changed). Called under the write lock.
func (c *Controller) setResvNodeFlags(now int64) bool {
	want := make(map[string]uint32)
	changed := false
	for _, r := range c.resv.list {
		s, e := r.relTimes(now)
		active := now >= s && now < e
		if active != r.nodeFlagsSet {
			r.nodeFlagsSet = active
			changed = true
		}
		if !active {
			continue
		}
		f := uint32(nodeStateRes)
		if r.Flags&resvMaint != 0 {
			f |= msg.NodeStateMaint
		}
		for _, n := range r.Nodes {
			want[n] |= f
		}
	}
	if len(want) == 0 && !c.resv.flagged {
		return changed
	}
	c.resv.flagged = len(want) > 0
	nodesChanged := false
	for _, n := range c.nodes {
		old := n.State
		n.State = n.State&^(nodeStateRes|msg.NodeStateMaint) | want[n.Name]
		if n.State != old {
			nodesChanged = true
		}
	}
	if nodesChanged {
		c.lastNodeUpdate = now
	}
	return changed
}

// resvCheck is job_resv_check's reservation part: a reservation past its
// end that repeats moves on to its next occurrence; one that does not is
// purged once no running job uses it. It returns whether anything
// changed. Called under the write lock.
func (c *Controller) resvCheck(now int64) bool {
	changed := c.purgeComp(now)
	keep := c.resv.list[:0]
	for _, r := range c.resv.list {
		if r.Flags&resvTimeFloat != 0 || r.End > now {
			keep = append(keep, r)
			continue
		}
		if r.Flags&resvReoccurring != 0 {
			c.advanceResv(r, now)
			keep = append(keep, r)
			changed = true
			continue
		}
		if c.resvUsed(r.Name) {
			keep = append(keep, r)
			continue
		}
		c.log.Info(fmt.Sprintf("Purging vestigial reservation %s", r.Name))
		changed = true
	}
	clear(c.resv.list[len(keep):])
	c.resv.list = keep
	if changed {
		c.resv.lastUpdate = now
		c.resv.seq++
	}
	return changed
}

// purgeComp is job_resv_check's PURGE_COMP part: a started reservation
// without running or pending jobs for PurgeCompTime seconds ends (a
// repeating one moves on to its next occurrence). It returns whether a
// reservation changed.
func (c *Controller) purgeComp(now int64) bool {
	some := false
	for _, r := range c.resv.list {
		some = some || r.Flags&resvPurgeComp != 0
	}
	if !some {
		return false
	}
	used := map[string]bool{}
	if c.jobs != nil {
		for _, j := range c.jobs.m.Jobs() {
			if j.Reservation != "" && (j.Pending() || j.Running()) {
				used[j.Reservation] = true
			}
		}
	}
	changed := false
	for _, r := range c.resv.list {
		if r.Start > now || r.Flags&resvTimeFloat != 0 {
			continue
		}
		switch {
		case used[r.Name]:
			r.IdleStart = 0
		case r.IdleStart == 0:
			r.IdleStart = now
		}
		if r.Flags&resvPurgeComp == 0 || r.IdleStart == 0 || r.End <= now || now-r.IdleStart < int64(r.PurgeCompTime) {
			continue
		}
		c.log.Info(fmt.Sprintf("Reservation %s has no more jobs for %d seconds, ending it", r.Name, r.PurgeCompTime))
		r.IdleStart = 0
		if r.Flags&resvReoccurring != 0 {
			c.advanceOnce(r, now)
		} else {
			r.End = now // purged below, as any reservation past its end
		}
		changed = true
	}
	return changed
}

// advanceResv is _advance_resv_time, repeated until the reservation ends
// in the future: the next hour, day, weekday, weekend day or week, in
// local time (so daylight saving keeps the wall-clock hour). Each
// occurrence gets a new id.
func (c *Controller) advanceResv(r *resvRec, now int64) {
	for r.End <= now {
		if !c.advanceOnce(r, now) {
			return
		}
		// Weekday/weekend steps depend on today, not on the
		// reservation: one step per call is what Slurm does, so stop
		// once the window moved.
		if r.Flags&(resvWeekday|resvWeekend) != 0 {
			return
		}
	}
}

// advanceOnce moves a repeating reservation to its next occurrence; it
// reports false for one that does not repeat.
func (c *Controller) advanceOnce(r *resvRec, now int64) bool {
	days, hours := 0, 0
	wd := time.Unix(now, 0).Weekday()
	switch {
	case r.Flags&resvHourly != 0:
		hours = 1
	case r.Flags&resvDaily != 0:
		days = 1
	case r.Flags&resvWeekday != 0:
		days = map[time.Weekday]int{time.Friday: 3, time.Saturday: 2}[wd]
		if days == 0 {
			days = 1
		}
	case r.Flags&resvWeekend != 0:
		switch wd {
		case time.Sunday:
			days = 6
		case time.Saturday:
			days = 1
		default:
			days = 6 - int(wd)
		}
	case r.Flags&resvWeekly != 0:
		days = 7
	default:
		return false
	}
	step := func(t int64) int64 {
		return time.Unix(t, 0).AddDate(0, 0, days).Add(time.Duration(hours) * time.Hour).Unix()
	}
	r.Start = step(r.StartFirst)
	r.StartFirst = r.Start
	r.End = step(r.End)
	if id, err := c.resv.nextID(); err == nil {
		r.ID = id
	}
	return true
}

// resvTick is the once-a-second reservation work: expiry and repeats,
// node flags, the state file, and a scheduler kick when a window opened
// or closed.
func (c *Controller) resvTick(ctx context.Context) {
	now := c.now().Unix()
	c.mu.RLock()
	idle := len(c.resv.list) == 0 && !c.resv.flagged
	c.mu.RUnlock()
	if idle {
		return
	}
	c.mu.Lock()
	changed := c.resvCheck(now)
	if c.setResvNodeFlags(now) {
		changed = true
	}
	if c.resvGroupRefresh(now) {
		changed = true
	}
	c.mu.Unlock()
	if changed {
		c.saveResv(ctx)
		if c.jobs != nil {
			c.kickScheduler()
		}
	}
}

// runResv calls resvTick every second until ctx ends.
func (c *Controller) runResv(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.resvTick(ctx)
		}
	}
}

// jobReservations is the job manager's view of the reservations (access
// lists, window, node indexes). Called under the lock.
func (c *Controller) jobReservations() []jobs.Reservation {
	if len(c.resv.list) == 0 {
		return nil
	}
	idx := c.nodeIdx()
	now := c.now().Unix()
	out := make([]jobs.Reservation, 0, len(c.resv.list))
	for _, r := range c.resv.list {
		s, e := r.relTimes(now)
		jr := jobs.Reservation{Name: r.Name, Start: s, End: e, Partition: r.Partition,
			Maint: r.Flags&(resvMaint|resvAllNodes) != 0, TimeFloat: r.Flags&resvTimeFloat != 0,
			Flex: r.Flags&resvFlex != 0, Magnetic: r.Flags&resvMagnetic != 0, AnyNodes: r.Flags&resvAnyNodes != 0,
			Users: slices.Clone(r.UIDs), UsersNot: r.UsersNot, Accounts: slices.Clone(r.AcctList), AccountsNot: r.AcctNot,
			Licenses: resvLicenseList(r), Now: now}
		for _, n := range r.Nodes {
			if i, ok := idx[n]; ok {
				jr.Nodes = append(jr.Nodes, i)
			}
		}
		if !r.Full {
			jr.Cores = make(map[int][]uint16, len(r.Cores))
			for _, rc := range r.Cores {
				if i, ok := idx[rc.Node]; ok {
					jr.Cores[i] = slices.Clone(rc.Cores)
				}
			}
		}
		out = append(out, jr)
	}
	return out
}
