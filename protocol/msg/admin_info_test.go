package msg

import (
	"bytes"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// The bodies of admin_info.go join bodyTypes, so TestPropertyRoundTrip and
// TestEveryTypeRegistered cover them. testsuite/interop's
// TestSlurmctldAdminWire round-trips real slurmctld's and real commands'
// bytes of each.
func init() {
	for mt, v := range map[msgtype.Type]any{
		msgtype.REQUEST_FRONT_END_INFO:       FrontEndInfoRequest{},
		msgtype.RESPONSE_FRONT_END_INFO:      FrontEndInfoResponse{},
		msgtype.RESPONSE_BURST_BUFFER_INFO:   BurstBufferInfoResponse{},
		msgtype.REQUEST_ASSOC_MGR_INFO:       AssocMgrInfoRequest{},
		msgtype.RESPONSE_ASSOC_MGR_INFO:      AssocMgrInfoResponse{},
		msgtype.REQUEST_TRIGGER_SET:          TriggerInfo{},
		msgtype.REQUEST_TRIGGER_GET:          TriggerInfo{},
		msgtype.REQUEST_TRIGGER_CLEAR:        TriggerInfo{},
		msgtype.REQUEST_TRIGGER_PULL:         TriggerInfo{},
		msgtype.RESPONSE_TRIGGER_GET:         TriggerInfo{},
		msgtype.REQUEST_BURST_BUFFER_STATUS:  BBStatusRequest{},
		msgtype.RESPONSE_BURST_BUFFER_STATUS: BBStatusResponse{},
		msgtype.REQUEST_UPDATE_FRONT_END:     UpdateFrontEndRequest{},
		msgtype.REQUEST_SHARE_INFO:           SharesRequest{},
		msgtype.RESPONSE_SHARE_INFO:          SharesResponse{},
	} {
		bodyTypes[mt] = v
	}
}

func TestAdminInfoLayouts(t *testing.T) {
	u16 := func(v uint16) []byte { return []byte{byte(v >> 8), byte(v)} }
	u32 := func(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	str := func(s string) []byte { return cat(u32(uint32(len(s)+1)), []byte(s), []byte{0}) }
	noVal := u32(pack.NoVal)
	cases := []struct {
		name string
		mt   msgtype.Type
		body any
		want []byte
	}{
		{"front end: count before time", msgtype.RESPONSE_FRONT_END_INFO, FrontEndInfoResponse{LastUpdate: 9},
			cat(u32(0), u32(0), u32(9))},
		{"burst buffer", msgtype.RESPONSE_BURST_BUFFER_INFO, BurstBufferInfoResponse{}, u32(0)},
		{"assoc_mgr request: NO_VAL for absent lists", msgtype.REQUEST_ASSOC_MGR_INFO,
			AssocMgrInfoRequest{Flags: 3, Users: []NullString{Str("root")}},
			cat(noVal, u32(3), noVal, u32(1), str("root"))},
		{"assoc_mgr reply", msgtype.RESPONSE_ASSOC_MGR_INFO, AssocMgrInfoResponse{TRESNames: []NullString{Str("cpu")}},
			cat(u32(1), str("cpu"), u32(0), u32(0), u32(0))},
		{"trigger", msgtype.RESPONSE_TRIGGER_GET, TriggerInfo{Triggers: []Trigger{{Flags: 1, TrigID: 2, ResType: 2,
			ResID: Str("n1"), TrigType: 2, ControlInx: 0, Offset: 0x803c, UserID: 0, Program: Str("/bin/true")}}},
			cat(u32(1), u16(1), u32(2), u16(2), str("n1"), u32(2), u32(0), u16(0x803c), u32(0), str("/bin/true"))},
		{"shares reply: NO_VAL without records", msgtype.RESPONSE_SHARE_INFO, SharesResponse{TotShares: 5},
			cat(u32(0), noVal, u32(0), u32(5))},
		{"shares request", msgtype.REQUEST_SHARE_INFO, SharesRequest{Users: []NullString{}},
			cat(noVal, u32(0))},
		{"update front end", msgtype.REQUEST_UPDATE_FRONT_END, UpdateFrontEndRequest{Name: Str("f"), NodeState: 2, ReasonUID: 7},
			cat(str("f"), u32(2), u32(0), u32(7))},
	}
	for _, c := range cases {
		if got := encodeBody(t, c.mt, c.body); !bytes.Equal(got, c.want) {
			t.Errorf("%s: got  %x\nwant %x", c.name, got, c.want)
		}
	}
}

// TestAdminInfoRecords: records of subsystems goslurm does not have fail
// the decode rather than being skipped.
func TestAdminInfoRecords(t *testing.T) {
	cases := []struct {
		name string
		mt   msgtype.Type
		body []byte
	}{
		{"front-end node", msgtype.RESPONSE_FRONT_END_INFO, []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"burst buffer", msgtype.RESPONSE_BURST_BUFFER_INFO, []byte{0, 0, 0, 1}},
		{"association", msgtype.RESPONSE_ASSOC_MGR_INFO, []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"user", msgtype.RESPONSE_ASSOC_MGR_INFO, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"huge trigger count", msgtype.REQUEST_TRIGGER_SET, []byte{0x7f, 0, 0, 0}},
		{"share record", msgtype.RESPONSE_SHARE_INFO, []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		v, err := lookup(t, c.mt).Decode(pack.NewReader(c.body), codec.Version2205)
		if err == nil || v != nil {
			t.Errorf("%s: got %#v, %v", c.name, v, err)
		}
	}
}
