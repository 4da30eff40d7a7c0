package jobs

import (
	"slices"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Reservation is what the job manager knows of an advanced reservation:
// who may use it (the submit check, validate_job_resv), its window and
// nodes (the scheduling snapshot). The controller owns reservations and
// puts the current ones in Cluster.Reservations.
type Reservation struct {
	Name       string
	Start, End int64
	Nodes      []int // indexes in Cluster.Nodes
	// Partition is PartitionName=: the partition of the reservation's
	// jobs that name none.
	Partition string
	// Maint: MAINT or ALL_NODES (jobs without the reservation whose
	// partition it covers wait "Reserved for maintenance").
	Maint bool
	// TimeFloat: a floating reservation, which no job may use.
	TimeFloat bool
	// Flex (FLEX): its jobs may use nodes outside it and start before
	// or after its window.
	Flex bool
	// Magnetic (MAGNETIC): jobs naming no reservation that may use this
	// one are tried in it first, and run in it when they start there.
	Magnetic bool
	// AnyNodes (ANY_NODES): its jobs may use any node (see
	// sched.Reservation.AnyNodes).
	AnyNodes bool
	// Cores, for a core reservation (CoreCnt=), are its cores by node
	// index (see sched.Reservation.Cores); nil for whole nodes.
	Cores map[int][]uint16

	// Users (uids) and Accounts may use it; the Not forms (Users=-name)
	// list who may not. Empty lists do not restrict.
	// Groups= reservations list their groups' members here.
	Users       []uint32
	UsersNot    bool
	Accounts    []string
	AccountsNot bool

	// Licenses are its Licenses= (repeated names summed): held back
	// from the jobs that do not name it when their run would meet its
	// window (resv_lic.go).
	Licenses []conf.License
	// Now is when the controller made this view of the reservation: the
	// license test's present (the view is made for each pass, under the
	// lock the pass holds).
	Now int64
}

// reservation finds a reservation by name.
func (cl *Cluster) reservation(name string) *Reservation {
	if cl == nil {
		return nil
	}
	for i := range cl.Reservations {
		if cl.Reservations[i].Name == name {
			return &cl.Reservations[i]
		}
	}
	return nil
}

// resvPartition is the partition of the named reservation, if it has one.
func (cl *Cluster) resvPartition(name string) *sched.Partition {
	if rv := cl.reservation(name); name != "" && rv != nil && rv.Partition != "" {
		return cl.partition(rv.Partition)
	}
	return nil
}

// checkReservation is the submit-time test of --reservation
// (validate_job_resv, then _valid_job_access_resv without accounting
// enforcement): ESLURM_RESERVATION_INVALID when no such reservation
// exists, ESLURM_RESERVATION_ACCESS when the job's user or account may
// not use it. Several comma-separated names are not supported and are
// refused as invalid.
func (cl *Cluster) checkReservation(j *Job) error {
	if j.Reservation == "" {
		return nil
	}
	rv := cl.reservation(j.Reservation)
	if rv == nil {
		return serr(slurmerr.ESLURM_RESERVATION_INVALID)
	}
	if rc := rv.access(j.UserID, j.Account); rc != 0 {
		return serr(rc)
	}
	return nil
}

// access is _valid_job_access_resv's user and account lists.
func (rv *Reservation) access(uid uint32, account string) int {
	if rv.TimeFloat {
		return slurmerr.ESLURM_RESERVATION_ACCESS
	}
	if !sched.ResvAccess(rv.Users, rv.UsersNot, rv.Accounts, rv.AccountsNot, uid, account) {
		return slurmerr.ESLURM_RESERVATION_ACCESS
	}
	return 0
}

// schedReservations is the scheduler's view of the reservations.
func (cl *Cluster) schedReservations() []sched.Reservation {
	if cl == nil || len(cl.Reservations) == 0 {
		return nil
	}
	out := make([]sched.Reservation, 0, len(cl.Reservations))
	for _, rv := range cl.Reservations {
		sr := sched.Reservation{Name: rv.Name, Nodes: rv.Nodes, Start: rv.Start, End: rv.End, Maint: rv.Maint, Flex: rv.Flex,
			AnyNodes: rv.AnyNodes, Cores: rv.Cores, Licenses: schedLicenseList(rv.Licenses)}
		if rv.Magnetic && !rv.TimeFloat {
			sr.Magnetic = true
			sr.Users, sr.UsersNot, sr.Accounts, sr.AccountsNot = rv.Users, rv.UsersNot, rv.Accounts, rv.AccountsNot
		}
		out = append(out, sr)
	}
	return out
}

// setPendingDesc keeps a job's state description in step with the plan:
// the scheduler's description when it gives one, none otherwise (only
// descriptions this file sets are cleared).
func (m *Manager) setPendingDesc(j *Job, p sched.Pending, now int64) {
	switch {
	case p.Desc != "" && j.StateDesc != p.Desc:
		j.StateDesc = p.Desc
		m.touch(j, now)
	case p.Desc == "" && (j.StateDesc == sched.DescReservedMaint || j.StateDesc == sched.DescMayBeReserved):
		j.StateDesc = ""
		m.touch(j, now)
	}
}

// resvReady is job_independent's job_test_resv_now: a job whose
// reservation is gone, not started, over, or not open to it waits with
// reason Reservation and is not eligible yet.
func (m *Manager) resvReady(j *Job, cl *Cluster, now int64) bool {
	if j.Reservation == "" {
		return true
	}
	if cl.resvOpen(j, now) {
		return true
	}
	m.setReason(j, ReasonWaitResv, now)
	return false
}

// ReasonWaitResv is WAIT_RESERVATION ("Reservation").
const ReasonWaitResv = uint16(sched.ReasonReservation)

// resvOpen reports whether j's reservation (if any) may be used now.
func (cl *Cluster) resvOpen(j *Job, now int64) bool {
	if j.Reservation == "" {
		return true
	}
	rv := cl.reservation(j.Reservation)
	if rv == nil || rv.access(j.UserID, j.Account) != 0 {
		return false
	}
	return rv.Flex || (now >= rv.Start && now < rv.End)
}

// TakeMagnetic gives a job that named no reservation and starts now the
// MAGNETIC reservation it starts in (job_queue_rec_magnetic_resv: the
// job keeps the reservation once running). The scheduler tries the
// magnetic reservations in table order before anything else, and a job
// without a reservation never gets a node of one in its window, so the
// first magnetic reservation open to the job that is FLEX, or that is on
// and holds one of its nodes, is the one it started in. Call it once
// the job's nodes are set.
func (m *Manager) TakeMagnetic(j *Job, cl *Cluster, now int64) {
	if j.Reservation != "" || cl == nil {
		return
	}
	for i := range cl.Reservations {
		rv := &cl.Reservations[i]
		if !rv.Magnetic || rv.access(j.UserID, j.Account) != 0 {
			continue
		}
		in := rv.Flex
		if !in && now >= rv.Start && now < rv.End {
			for _, ni := range j.NodeIdx {
				in = in || slices.Contains(rv.Nodes, ni)
			}
		}
		if in {
			j.Reservation = rv.Name
			return
		}
	}
}
