package msg

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// The bodies of stats.go and sbcast.go have a rule gen cannot know
// (statistics only with parts_packed, a credential always signed), so they
// are generated here and kept out of bodyTypes.

// genStats is a random RESPONSE_STATS_INFO body.
func genStats(r *rand.Rand) StatsInfoResponse {
	var b StatsInfoResponse
	gen(r, reflect.ValueOf(&b).Elem(), false, 0)
	if b.PartsPacked == 0 {
		b.Sched = SchedStats{}
	}
	return b
}

// genSbcast is a random RESPONSE_JOB_SBCAST_CRED body.
func genSbcast(r *rand.Rand) JobSbcastCredResponse {
	var b JobSbcastCredResponse
	gen(r, reflect.ValueOf(&b).Elem(), false, 0)
	if len(b.Cred.Signature) == 0 {
		b.Cred.Signature = []byte("MUNGE:sig\x00")
	}
	return b
}

// statsBodies is a few generated bodies of each type, for the round-trip
// and fuzz seeds.
func statsBodies(mt msgtype.Type, seed uint64, n int) []any {
	r := rand.New(rand.NewPCG(uint64(mt), seed))
	var out []any
	for i := 0; i < n; i++ {
		if mt == msgtype.RESPONSE_STATS_INFO {
			out = append(out, genStats(r))
		} else {
			out = append(out, genSbcast(r))
		}
	}
	return out
}

var statsTypes = []msgtype.Type{msgtype.RESPONSE_STATS_INFO, msgtype.RESPONSE_JOB_SBCAST_CRED}

func TestStatsSbcastRoundTrip(t *testing.T) {
	iters := 300
	if testing.Short() {
		iters = 30
	}
	for _, mt := range statsTypes {
		t.Run(mt.String(), func(t *testing.T) {
			for _, b := range statsBodies(mt, 3, iters) {
				checkRoundTrip(t, mt, b, 8)
			}
			c := lookup(t, mt)
			var w pack.Writer
			if err := c.Encode(&w, codec.Version2205, 42); !errors.Is(err, codec.ErrEncode) {
				t.Errorf("encoding an int: %v", err)
			}
			if err := c.Encode(&w, codec.Version2405, statsBodies(mt, 4, 1)[0]); !errors.Is(err, codec.ErrVersion) {
				t.Errorf("encoding at 24.05: %v", err)
			}
			if _, err := c.Decode(pack.NewReader(nil), codec.Version2108); !errors.Is(err, codec.ErrVersion) {
				t.Errorf("decoding at 21.08: %v", err)
			}
		})
	}
	// A reset reply and the zero value round-trip too.
	checkRoundTrip(t, msgtype.RESPONSE_STATS_INFO, StatsInfoResponse{}, 1)
}

// TestStatsLayout pins the bytes of a small reply against the order of
// pack_all_stat and _pack_rpc_stats.
func TestStatsLayout(t *testing.T) {
	u16 := func(v uint16) []byte { return []byte{byte(v >> 8), byte(v)} }
	u32 := func(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	u64 := func(v uint64) []byte { return append(u32(uint32(v>>32)), u32(uint32(v))...) }
	cat := func(p ...[]byte) []byte { return bytes.Join(p, nil) }

	reset := StatsInfoResponse{
		RPCTypes:   []RPCTypeStat{{Type: 2035, Count: 3, Time: 70}},
		RPCUsers:   []RPCUserStat{{UID: 0, Count: 3, Time: 70}},
		RPCPending: []RPCPending{{Type: 1001, HostList: Str("n[1-2]")}},
	}
	want := cat(u32(0),
		u32(1), u32(1), u16(2035), u32(1), u32(3), u32(1), u64(70),
		u32(1), u32(1), u32(0), u32(1), u32(3), u32(1), u64(70),
		u32(0), u32(0),
		u32(1), u32(1001), u32(1), u32(7), []byte("n[1-2]\x00"))
	if got := encodeBody(t, msgtype.RESPONSE_STATS_INFO, reset); !bytes.Equal(got, want) {
		t.Errorf("reset reply\n got %x\nwant %x", got, want)
	}

	full := StatsInfoResponse{PartsPacked: 1, Sched: SchedStats{ReqTime: 5, BFCycleSum: 9, BFBackfilledHetJobs: 7}}
	got := encodeBody(t, msgtype.RESPONSE_STATS_INFO, full)
	// u32 parts, 2 times, 13 u32, time, 9 u32, u64, 5 u32, time, 7 u32,
	// then the four empty array groups.
	if n := 4 + 16 + 13*4 + 8 + 9*4 + 8 + 5*4 + 8 + 7*4 + 16 + 16 + 8 + 8; len(got) != n {
		t.Errorf("full reply is %d bytes, want %d", len(got), n)
	}
	if !bytes.Equal(got[4:12], u64(5)) {
		t.Errorf("req_time at %x", got[4:12])
	}
	if off := 4 + 16 + 13*4 + 8 + 9*4; !bytes.Equal(got[off:off+8], u64(9)) {
		t.Errorf("bf_cycle_sum at %x", got[off:off+8])
	}
	if off := 4 + 16 + 13*4 + 8 + 9*4 + 8 + 5*4 + 8 + 6*4; !bytes.Equal(got[off:off+4], u32(7)) {
		t.Errorf("bf_backfilled_het_jobs at %x", got[off:off+4])
	}

	// A credential: the signed fields, then packmem of the signature.
	cred := JobSbcastCredResponse{JobID: 4, NodeList: Str("n1"), Cred: SbcastCred{
		Ctime: 1, Expiration: 2, JobID: 4, StepID: 5, UID: 6, GID: 7,
		GIDs: []uint32{8}, Nodes: Str("n1"), Signature: []byte("AB"),
	}}
	want = cat(u32(4), u32(3), []byte("n1\x00"), u32(0),
		u64(1), u64(2), u32(4), u32(0), u32(5), u32(6), u32(7), u32(0),
		u32(1), u32(8), u32(3), []byte("n1\x00"), u32(2), []byte("AB"))
	if got := encodeBody(t, msgtype.RESPONSE_JOB_SBCAST_CRED, cred); !bytes.Equal(got, want) {
		t.Errorf("sbcast cred\n got %x\nwant %x", got, want)
	}
	signed, err := cred.Cred.SignedBytes(codec.Version2205)
	if err != nil || !bytes.Equal(signed, want[4+4+3+4:len(want)-6]) {
		t.Errorf("SignedBytes %x, %v", signed, err)
	}
}

func TestStatsSbcastBadInput(t *testing.T) {
	good := func(mt msgtype.Type, b any) []byte { return encodeBody(t, mt, b) }
	statsWith := func(mutate func([]byte) []byte) []byte {
		b := good(msgtype.RESPONSE_STATS_INFO, StatsInfoResponse{RPCTypes: []RPCTypeStat{{Type: 1}}})
		return mutate(b)
	}
	cases := []struct {
		name string
		mt   msgtype.Type
		body []byte
	}{
		{"huge rpc_type_size", msgtype.RESPONSE_STATS_INFO, []byte{0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0}},
		{"rpc_type_id count differs", msgtype.RESPONSE_STATS_INFO, statsWith(func(b []byte) []byte {
			b[11] = 2
			return b
		})},
		{"rpc_type_time count differs", msgtype.RESPONSE_STATS_INFO, statsWith(func(b []byte) []byte {
			b[4+4+4+2+4+4+3] = 0
			return b
		})},
		{"queue counts differ", msgtype.RESPONSE_STATS_INFO,
			func() []byte {
				b := good(msgtype.RESPONSE_STATS_INFO, StatsInfoResponse{RPCQueue: []RPCQueueStat{{1, 2}}})
				b[4+16+16+4+4+3] = 0 // the counts array's count
				return b
			}()},
		{"dump hostlist count differs", msgtype.RESPONSE_STATS_INFO, func() []byte {
			b := good(msgtype.RESPONSE_STATS_INFO, StatsInfoResponse{RPCPending: []RPCPending{{Type: 1}}})
			b[4+16+16+8+4+4+3] = 0 // the hostlist array's count
			return b[:len(b)-4]
		}()},
		{"huge pending count", msgtype.RESPONSE_STATS_INFO, append(make([]byte, 4+16+16+8), 0x10, 0, 0, 0)},
		{"unsigned credential", msgtype.RESPONSE_JOB_SBCAST_CRED, func() []byte {
			b := good(msgtype.RESPONSE_JOB_SBCAST_CRED, JobSbcastCredResponse{Cred: SbcastCred{Signature: []byte{1}}})
			return append(b[:len(b)-5], 0, 0, 0, 0)
		}()},
		{"huge gid count", msgtype.RESPONSE_JOB_SBCAST_CRED, append(make([]byte, 4+4+4+8+8+4*5+4), 0x01, 0, 0, 0)},
		{"huge signature", msgtype.RESPONSE_JOB_SBCAST_CRED, append(make([]byte, 4+4+4+8+8+4*5+4+4+4), 0x00, 0x10, 0, 0, 1)},
	}
	for _, c := range cases {
		v, err := lookup(t, c.mt).Decode(pack.NewReader(c.body), codec.Version2205)
		if err == nil || v != nil {
			t.Errorf("%s: got %#v, %v", c.name, v, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}

	// Bodies Slurm could not carry are refused on encode.
	var w pack.Writer
	if err := lookup(t, msgtype.RESPONSE_STATS_INFO).Encode(&w, codec.Version2205,
		StatsInfoResponse{Sched: SchedStats{JobsRunning: 1}}); !errors.Is(err, codec.ErrEncode) {
		t.Errorf("statistics without parts_packed: %v", err)
	}
	if err := lookup(t, msgtype.RESPONSE_JOB_SBCAST_CRED).Encode(&w, codec.Version2205,
		JobSbcastCredResponse{}); !errors.Is(err, codec.ErrEncode) {
		t.Errorf("unsigned credential: %v", err)
	}
}

// FuzzStatsSbcast covers both bodies; the first byte picks the type.
func FuzzStatsSbcast(f *testing.F) {
	for i, mt := range statsTypes {
		for _, b := range statsBodies(mt, 9, 4) {
			f.Add(append([]byte{byte(i)}, encodeBody(f, mt, b)...))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		fuzzBody(t, statsTypes[int(data[0])%len(statsTypes)], data[1:])
	})
}
