package msg

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// Property tests, fixed layouts and fuzz targets for admin.go and
// reservation.go.

// adminTypes are the types of admin.go and reservation.go; their Go body
// types are in bodyTypes (small_test.go), so TestPropertyRoundTrip and
// TestEveryTypeRegistered cover them.
var adminTypes = []msgtype.Type{
	msgtype.RESPONSE_BATCH_SCRIPT, msgtype.RESPONSE_LICENSE_INFO, msgtype.RESPONSE_TOPO_INFO,
	msgtype.REQUEST_SET_DEBUG_LEVEL, msgtype.REQUEST_SET_SCHEDLOG_LEVEL, msgtype.REQUEST_SET_DEBUG_FLAGS,
	msgtype.REQUEST_SET_FS_DAMPENING_FACTOR, msgtype.REQUEST_STATS_INFO, msgtype.REQUEST_JOB_ID,
	msgtype.RESPONSE_JOB_ID, msgtype.REQUEST_AUTH_TOKEN, msgtype.RESPONSE_AUTH_TOKEN, msgtype.RESPONSE_CONFIG,
	msgtype.RESPONSE_SLURM_REROUTE_MSG, msgtype.RESPONSE_RESERVATION_INFO, msgtype.REQUEST_CREATE_RESERVATION,
	msgtype.REQUEST_UPDATE_RESERVATION, msgtype.REQUEST_DELETE_RESERVATION, msgtype.RESPONSE_CREATE_RESERVATION,
	msgtype.REQUEST_JOB_SBCAST_CRED, msgtype.SRUN_NET_FORWARD,
}

func TestAdminTypesInBodyTypes(t *testing.T) {
	for _, mt := range adminTypes {
		if _, ok := bodyTypes[mt]; !ok {
			t.Errorf("%v: missing from bodyTypes", mt)
		}
	}
}

// TestAdminLayouts pins the bytes of bodies whose layout is easy to get
// wrong: the count before last_update, the zero-terminated count arrays,
// minus before plus.
func TestAdminLayouts(t *testing.T) {
	u32 := func(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	str := func(s string) []byte { return cat(u32(uint32(len(s)+1)), []byte(s), []byte{0}) }
	cases := []struct {
		name string
		mt   msgtype.Type
		body any
		want []byte
	}{
		{"license", msgtype.RESPONSE_LICENSE_INFO,
			LicenseInfoResponse{LastUpdate: 5, Licenses: []License{{Name: Str("fs"), Total: 3, InUse: 1, Reserved: 0, Remote: 1}}},
			cat(u32(1), u32(0), u32(5), str("fs"), u32(3), u32(1), u32(0), []byte{1})},
		{"debug flags", msgtype.REQUEST_SET_DEBUG_FLAGS, SetDebugFlagsRequest{Minus: 1, Plus: 2},
			cat(u32(0), u32(1), u32(0), u32(2))},
		{"dampening", msgtype.REQUEST_SET_FS_DAMPENING_FACTOR, SetFSDampeningFactorRequest{Factor: 7}, []byte{0, 7}},
		{"resv name", msgtype.REQUEST_DELETE_RESERVATION, ReservationName{Name: Str("r1")}, str("r1")},
		{"resv desc counts", msgtype.REQUEST_UPDATE_RESERVATION,
			ReservationDesc{NodeCnt: []uint32{2, 3}, CoreCnt: nil},
			cat(u32(0), make([]byte, 8+8+4+8), u32(3), u32(2), u32(3), u32(0), u32(0),
				u32(0), u32(0), u32(0), u32(0), u32(0), u32(0), u32(0), u32(0), u32(0), u32(0), u32(0))},
	}
	for _, c := range cases {
		if got := encodeBody(t, c.mt, c.body); !bytes.Equal(got, c.want) {
			t.Errorf("%s: got  %x\nwant %x", c.name, got, c.want)
		}
	}
	if a := (License{Total: 1, InUse: 4}).Available(); a != 0 {
		t.Errorf("Available with in_use > total = %d", a)
	}
}

func TestAdminBadInput(t *testing.T) {
	cases := []struct {
		name string
		mt   msgtype.Type
		body []byte
	}{
		{"count array not zero-terminated", msgtype.REQUEST_CREATE_RESERVATION,
			append(make([]byte, 4+8+8+4+8), 0, 0, 0, 1, 0, 0, 0, 5)},
		{"huge reservation count", msgtype.RESPONSE_RESERVATION_INFO, []byte{0x7f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"huge license count", msgtype.RESPONSE_LICENSE_INFO, []byte{0x7f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"reroute to a cluster", msgtype.RESPONSE_SLURM_REROUTE_MSG, []byte{1}},
		{"bitmap too small", msgtype.RESPONSE_RESERVATION_INFO, func() []byte {
			var w pack.Writer
			_ = lookup(t, msgtype.RESPONSE_RESERVATION_INFO).Encode(&w, codec.Version2205,
				ReservationInfoResponse{Reservations: []Reservation{{NodeInx: HexBitmap{NBits: 1, Hex: Str("0xF")}}}})
			return w.Bytes()
		}()},
	}
	for _, c := range cases {
		v, err := lookup(t, c.mt).Decode(pack.NewReader(c.body), codec.Version2205)
		if err == nil || v != nil {
			t.Errorf("%s: got %#v, %v", c.name, v, err)
		}
	}
}

func TestReservationMinSize(t *testing.T) {
	var w pack.Writer
	walkReservation(&encoder{w: &w}, &Reservation{NodeInx: NullBitmap})
	if w.Len() != reservationMinSize {
		t.Errorf("empty reservation record is %d bytes, reservationMinSize %d", w.Len(), reservationMinSize)
	}
	w = pack.Writer{}
	var l License
	walkLicenseInfo(&encoder{w: &w}, codec.Version2205, &LicenseInfoResponse{Licenses: []License{l}})
	if w.Len()-12 != licenseMinSize {
		t.Errorf("empty license record is %d bytes, licenseMinSize %d", w.Len()-12, licenseMinSize)
	}
}

var adminFuzzTypes = []msgtype.Type{
	msgtype.RESPONSE_BATCH_SCRIPT, msgtype.RESPONSE_LICENSE_INFO, msgtype.RESPONSE_TOPO_INFO,
	msgtype.REQUEST_SET_DEBUG_LEVEL, msgtype.REQUEST_SET_DEBUG_FLAGS, msgtype.REQUEST_SET_FS_DAMPENING_FACTOR,
	msgtype.REQUEST_STATS_INFO, msgtype.REQUEST_JOB_ID, msgtype.RESPONSE_JOB_ID, msgtype.REQUEST_AUTH_TOKEN,
	msgtype.RESPONSE_AUTH_TOKEN, msgtype.RESPONSE_CONFIG, msgtype.RESPONSE_SLURM_REROUTE_MSG,
	msgtype.RESPONSE_CREATE_RESERVATION, msgtype.REQUEST_JOB_SBCAST_CRED, msgtype.SRUN_NET_FORWARD,
}

func seedAdmin(f *testing.F, mt msgtype.Type, n int, prefix []byte) {
	r := rand.New(rand.NewPCG(uint64(mt), 11))
	for i := 0; i < n; i++ {
		v := reflect.New(reflect.TypeOf(bodyTypes[mt])).Elem()
		gen(r, v, false, 0)
		f.Add(append(append([]byte(nil), prefix...), encodeBody(f, mt, v.Interface())...))
	}
}

// FuzzAdmin covers the small bodies of admin.go; the first byte picks the
// message type.
func FuzzAdmin(f *testing.F) {
	for i, mt := range adminFuzzTypes {
		seedAdmin(f, mt, 3, []byte{byte(i)})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		fuzzBody(t, adminFuzzTypes[int(data[0])%len(adminFuzzTypes)], data[1:])
	})
}

func FuzzReservationInfo(f *testing.F) {
	seedAdmin(f, msgtype.RESPONSE_RESERVATION_INFO, 8, nil)
	for _, b := range captureBodies(f, msgtype.RESPONSE_RESERVATION_INFO) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzBody(t, msgtype.RESPONSE_RESERVATION_INFO, data) })
}

func FuzzReservationDesc(f *testing.F) {
	seedAdmin(f, msgtype.REQUEST_CREATE_RESERVATION, 8, nil)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzBody(t, msgtype.REQUEST_CREATE_RESERVATION, data) })
}
