package msg

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Reservation messages (22.05): the info reply the controller builds
// (_pack_resv in reservation.c, read by _unpack_reserve_info_members), the
// create/update descriptor (_pack_update_resv_msg) and the name-only body
// of delete and of the create reply (_pack_resv_name_msg).

// ResvCoreSpec is one resv_core_spec_t: a node and its reserved core ids.
type ResvCoreSpec struct {
	NodeName NullString
	CoreID   NullString
}

// Reservation is one reserve_info_t record, in wire order.
type Reservation struct {
	Accounts      NullString
	BurstBuffer   NullString
	CoreCnt       uint32
	EndTime       int64
	Features      NullString
	Flags         uint64
	Licenses      NullString
	MaxStartDelay uint32
	Name          NullString
	NodeCnt       uint32
	NodeList      NullString
	Partition     NullString
	PurgeCompTime uint32
	Watts         uint32
	StartTime     int64
	TRES          NullString
	Users         NullString
	Groups        NullString
	NodeInx       HexBitmap
	CoreSpec      []ResvCoreSpec
}

// reservationMinSize is the smallest record: 10 NULL strings, five u32,
// two times, a u64, a NULL bitmap and an empty core_spec count.
const reservationMinSize = 10*4 + 5*4 + 2*8 + 8 + 4 + 4

func walkReservation(w fieldWalker, r *Reservation) {
	w.str(&r.Accounts)
	w.str(&r.BurstBuffer)
	w.u32(&r.CoreCnt)
	w.time(&r.EndTime)
	w.str(&r.Features)
	w.u64(&r.Flags)
	w.str(&r.Licenses)
	w.u32(&r.MaxStartDelay)
	w.str(&r.Name)
	w.u32(&r.NodeCnt)
	w.str(&r.NodeList)
	w.str(&r.Partition)
	w.u32(&r.PurgeCompTime)
	w.u32(&r.Watts)
	w.time(&r.StartTime)
	w.str(&r.TRES)
	w.str(&r.Users)
	w.str(&r.Groups)
	w.bitmap(&r.NodeInx)
	walkArray(w, &r.CoreSpec, 8, func(w fieldWalker, c *ResvCoreSpec) {
		w.str(&c.NodeName)
		w.str(&c.CoreID)
	})
}

// ReservationInfoResponse is RESPONSE_RESERVATION_INFO: u32 count, time
// last_update, then the records.
type ReservationInfoResponse struct {
	LastUpdate   int64
	Reservations []Reservation
}

func walkReservationInfo(w fieldWalker, _ codec.Version, b *ReservationInfoResponse) {
	n := w.count(len(b.Reservations), reservationMinSize)
	w.time(&b.LastUpdate)
	walkCounted(w, &b.Reservations, n, walkReservation)
}

// ReservationDesc is resv_desc_msg_t: REQUEST_CREATE_RESERVATION and
// REQUEST_UPDATE_RESERVATION. Unset numbers are NO_VAL (flags NO_VAL64) as
// slurm_init_resv_desc_msg leaves them; NewReservationDesc returns that.
//
// NodeCnt and CoreCnt are Slurm's zero-terminated count arrays without
// their terminator: nil is not sent (count 0); a non-nil slice is sent with
// a trailing 0 appended (so an empty non-nil slice is count 1, {0}). A
// decoded array must end in 0, as Slurm's unpacker requires.
type ReservationDesc struct {
	Name          NullString
	StartTime     int64
	EndTime       int64
	Duration      uint32
	Flags         uint64
	NodeCnt       []uint32 `slurm:"nullable"`
	CoreCnt       []uint32 `slurm:"nullable"`
	NodeList      NullString
	Features      NullString
	Licenses      NullString
	MaxStartDelay uint32
	Partition     NullString
	PurgeCompTime uint32
	Watts         uint32
	Users         NullString
	Accounts      NullString
	BurstBuffer   NullString
	Groups        NullString
}

// NewReservationDesc is slurm_init_resv_desc_msg: every number unset.
func NewReservationDesc() ReservationDesc {
	const noVal = 0xfffffffe
	return ReservationDesc{StartTime: noVal, EndTime: noVal, Duration: noVal, Flags: 0xfffffffffffffffe,
		MaxStartDelay: noVal, PurgeCompTime: noVal, Watts: noVal}
}

// walkZeroTerminated walks a pack32_array whose last element must be 0.
func walkZeroTerminated(w fieldWalker, s *[]uint32) {
	if !w.decoding() {
		if *s == nil {
			w.count(0, 4)
			return
		}
		w.count(len(*s)+1, 4)
		for i := range *s {
			w.u32(&(*s)[i])
		}
		var zero uint32
		w.u32(&zero)
		return
	}
	n := w.count(0, 4)
	if w.err() != nil || n == 0 {
		*s = nil
		return
	}
	v := make([]uint32, n)
	for i := range v {
		w.u32(&v[i])
	}
	if w.err() != nil {
		*s = nil
		return
	}
	if v[n-1] != 0 {
		w.fail(fmt.Errorf("msg: count array of %d elements is not zero-terminated", n))
		*s = nil
		return
	}
	*s = v[:n-1]
}

func walkReservationDesc(w fieldWalker, _ codec.Version, d *ReservationDesc) {
	w.str(&d.Name)
	w.time(&d.StartTime)
	w.time(&d.EndTime)
	w.u32(&d.Duration)
	w.u64(&d.Flags)
	walkZeroTerminated(w, &d.NodeCnt)
	walkZeroTerminated(w, &d.CoreCnt)
	w.str(&d.NodeList)
	w.str(&d.Features)
	w.str(&d.Licenses)
	w.u32(&d.MaxStartDelay)
	w.str(&d.Partition)
	w.u32(&d.PurgeCompTime)
	w.u32(&d.Watts)
	w.str(&d.Users)
	w.str(&d.Accounts)
	w.str(&d.BurstBuffer)
	w.str(&d.Groups)
}

// ReservationName is reservation_name_msg_t: REQUEST_DELETE_RESERVATION
// and RESPONSE_CREATE_RESERVATION (the name the controller chose).
type ReservationName struct {
	Name NullString
}

func walkReservationName(w fieldWalker, _ codec.Version, b *ReservationName) { w.str(&b.Name) }

func init() { registrars = append(registrars, registerReservation) }

func registerReservation(g *codec.Registry) {
	g.Register(msgtype.RESPONSE_RESERVATION_INFO, bodyCodec("RESPONSE_RESERVATION_INFO", walkReservationInfo))
	desc := bodyCodec("resv_desc", walkReservationDesc)
	g.Register(msgtype.REQUEST_CREATE_RESERVATION, desc)
	g.Register(msgtype.REQUEST_UPDATE_RESERVATION, desc)
	name := bodyCodec("reservation_name", walkReservationName)
	g.Register(msgtype.REQUEST_DELETE_RESERVATION, name)
	g.Register(msgtype.RESPONSE_CREATE_RESERVATION, name)
}
