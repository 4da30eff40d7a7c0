package msg

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// Bodies of the informational requests a controller without front-end
// nodes, burst buffers or accounting still answers (scontrol show
// frontend, burstbuffer, bbstat, assoc_mgr, update FrontendName=; sshare)
// and of the event triggers (strigger).
// 22.05 layouts from slurm_protocol_pack.c and assoc_mgr.c.

// FrontEndInfoRequest is REQUEST_FRONT_END_INFO: time last_update.
type FrontEndInfoRequest struct {
	LastUpdate int64
}

func walkFrontEndInfoRequest(w fieldWalker, _ codec.Version, b *FrontEndInfoRequest) {
	w.time(&b.LastUpdate)
}

// FrontEndInfoResponse is RESPONSE_FRONT_END_INFO: u32 count, time
// last_update, then the records. Only builds without front-end nodes are
// supported, so the count is always 0; a record fails the decode.
type FrontEndInfoResponse struct {
	LastUpdate int64
}

func walkFrontEndInfoResponse(w fieldWalker, _ codec.Version, b *FrontEndInfoResponse) {
	n := uint32(0)
	w.u32(&n)
	w.time(&b.LastUpdate)
	if n != 0 {
		w.fail(fmt.Errorf("%w: front-end node records", ErrPlugin))
	}
}

// BurstBufferInfoResponse is RESPONSE_BURST_BUFFER_INFO: u32 count of
// burst buffer plugins, then their state. No burst buffer plugin is
// supported: the count is 0 and a record fails the decode.
type BurstBufferInfoResponse struct{}

func walkBurstBufferInfoResponse(w fieldWalker, _ codec.Version, _ *BurstBufferInfoResponse) {
	n := uint32(0)
	w.u32(&n)
	if n != 0 {
		w.fail(fmt.Errorf("%w: burst buffer records", ErrPlugin))
	}
}

// Flags of AssocMgrInfoRequest (ASSOC_MGR_INFO_FLAG_*).
const (
	AssocMgrInfoAssoc uint32 = 1 << 0
	AssocMgrInfoUsers uint32 = 1 << 1
	AssocMgrInfoQOS   uint32 = 1 << 2
)

// AssocMgrInfoRequest is REQUEST_ASSOC_MGR_INFO: NO_VAL-able string lists
// of accounts, u32 flags, then QOS and user lists.
type AssocMgrInfoRequest struct {
	Accounts []NullString `slurm:"nullable"`
	Flags    uint32
	QOS      []NullString `slurm:"nullable"`
	Users    []NullString `slurm:"nullable"`
}

func walkNullableStrList(w fieldWalker, l *[]NullString) {
	walkList(w, l, 4, func(w fieldWalker, s *NullString) { w.str(s) })
}

func walkAssocMgrInfoRequest(w fieldWalker, _ codec.Version, b *AssocMgrInfoRequest) {
	walkNullableStrList(w, &b.Accounts)
	w.u32(&b.Flags)
	walkNullableStrList(w, &b.QOS)
	walkNullableStrList(w, &b.Users)
}

// AssocMgrInfoResponse is RESPONSE_ASSOC_MGR_INFO: the TRES names (string
// array), then u32 counts of associations, QOS and users, each followed
// by its records. Without accounting the association manager holds no
// records: the counts are 0 and a record fails the decode.
type AssocMgrInfoResponse struct {
	TRESNames []NullString
}

func walkAssocMgrInfoResponse(w fieldWalker, _ codec.Version, b *AssocMgrInfoResponse) {
	walkStrArray(w, &b.TRESNames)
	for range 3 {
		n := uint32(0)
		w.u32(&n)
		if n != 0 {
			w.fail(fmt.Errorf("%w: association manager records", ErrPlugin))
			return
		}
	}
}

// Trigger is one trigger_info_t.
type Trigger struct {
	Flags      uint16
	TrigID     uint32
	ResType    uint16
	ResID      NullString
	TrigType   uint32
	ControlInx uint32
	Offset     uint16
	UserID     uint32
	Program    NullString
}

// TriggerInfo is trigger_info_msg_t: REQUEST_TRIGGER_SET, _GET, _CLEAR,
// _PULL and RESPONSE_TRIGGER_GET: u32 count, then the triggers.
type TriggerInfo struct {
	Triggers []Trigger
}

// triggerMinSize is the smallest trigger record: NULL strings.
const triggerMinSize = 2 + 4 + 2 + 4 + 4 + 4 + 2 + 4 + 4

func walkTriggerInfo(w fieldWalker, _ codec.Version, b *TriggerInfo) {
	walkArray(w, &b.Triggers, triggerMinSize, func(w fieldWalker, t *Trigger) {
		w.u16(&t.Flags)
		w.u32(&t.TrigID)
		w.u16(&t.ResType)
		w.str(&t.ResID)
		w.u32(&t.TrigType)
		w.u32(&t.ControlInx)
		w.u16(&t.Offset)
		w.u32(&t.UserID)
		w.str(&t.Program)
	})
}

// BBStatusRequest is REQUEST_BURST_BUFFER_STATUS (scontrol show bbstat):
// the arguments as a string array.
type BBStatusRequest struct {
	Argv []NullString
}

func walkBBStatusRequest(w fieldWalker, _ codec.Version, b *BBStatusRequest) {
	walkStrArray(w, &b.Argv)
}

// BBStatusResponse is RESPONSE_BURST_BUFFER_STATUS: str status.
type BBStatusResponse struct {
	Status NullString
}

func walkBBStatusResponse(w fieldWalker, _ codec.Version, b *BBStatusResponse) { w.str(&b.Status) }

// UpdateFrontEndRequest is REQUEST_UPDATE_FRONT_END (scontrol update
// FrontendName=): str name, u32 node_state, str reason, u32 reason_uid.
type UpdateFrontEndRequest struct {
	Name      NullString
	NodeState uint32
	Reason    NullString
	ReasonUID uint32
}

func walkUpdateFrontEnd(w fieldWalker, _ codec.Version, b *UpdateFrontEndRequest) {
	w.str(&b.Name)
	w.u32(&b.NodeState)
	w.str(&b.Reason)
	w.u32(&b.ReasonUID)
}

// SharesRequest is REQUEST_SHARE_INFO (sshare): NO_VAL-able string lists
// of accounts and users.
type SharesRequest struct {
	Accounts []NullString `slurm:"nullable"`
	Users    []NullString `slurm:"nullable"`
}

func walkSharesRequest(w fieldWalker, _ codec.Version, b *SharesRequest) {
	walkNullableStrList(w, &b.Accounts)
	walkNullableStrList(w, &b.Users)
}

// SharesResponse is RESPONSE_SHARE_INFO: the TRES names, the association
// share records (NO_VAL when there are none), u64 tot_shares. Without
// accounting there are no associations: records fail the decode.
type SharesResponse struct {
	TRESNames []NullString
	TotShares uint64
}

func walkSharesResponse(w fieldWalker, _ codec.Version, b *SharesResponse) {
	walkStrArray(w, &b.TRESNames)
	n := pack.NoVal
	w.u32(&n)
	if n != pack.NoVal && n != 0 {
		w.fail(fmt.Errorf("%w: association share records", ErrPlugin))
		return
	}
	w.u64(&b.TotShares)
}

func init() { registrars = append(registrars, registerAdminInfo) }

func registerAdminInfo(g *codec.Registry) {
	g.Register(msgtype.REQUEST_FRONT_END_INFO, bodyCodec("REQUEST_FRONT_END_INFO", walkFrontEndInfoRequest))
	g.Register(msgtype.RESPONSE_FRONT_END_INFO, bodyCodec("RESPONSE_FRONT_END_INFO", walkFrontEndInfoResponse))
	g.Register(msgtype.RESPONSE_BURST_BUFFER_INFO,
		bodyCodec("RESPONSE_BURST_BUFFER_INFO", walkBurstBufferInfoResponse))
	g.Register(msgtype.REQUEST_ASSOC_MGR_INFO, bodyCodec("REQUEST_ASSOC_MGR_INFO", walkAssocMgrInfoRequest))
	g.Register(msgtype.RESPONSE_ASSOC_MGR_INFO, bodyCodec("RESPONSE_ASSOC_MGR_INFO", walkAssocMgrInfoResponse))
	g.Register(msgtype.REQUEST_BURST_BUFFER_STATUS, bodyCodec("REQUEST_BURST_BUFFER_STATUS", walkBBStatusRequest))
	g.Register(msgtype.RESPONSE_BURST_BUFFER_STATUS, bodyCodec("RESPONSE_BURST_BUFFER_STATUS", walkBBStatusResponse))
	g.Register(msgtype.REQUEST_UPDATE_FRONT_END, bodyCodec("REQUEST_UPDATE_FRONT_END", walkUpdateFrontEnd))
	g.Register(msgtype.REQUEST_SHARE_INFO, bodyCodec("REQUEST_SHARE_INFO", walkSharesRequest))
	g.Register(msgtype.RESPONSE_SHARE_INFO, bodyCodec("RESPONSE_SHARE_INFO", walkSharesResponse))
	trig := bodyCodec("trigger_info_msg", walkTriggerInfo)
	for _, t := range []msgtype.Type{
		msgtype.REQUEST_TRIGGER_SET, msgtype.REQUEST_TRIGGER_GET, msgtype.REQUEST_TRIGGER_CLEAR,
		msgtype.REQUEST_TRIGGER_PULL, msgtype.RESPONSE_TRIGGER_GET,
	} {
		g.Register(t, trig)
	}
}
