package msg

import (
	"bytes"
	"math"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// There is no capture of sprio's traffic in /work/shared/captures; the
// layout is pinned by hand from slurm_protocol_pack.c (22.05) instead,
// and the interop test (testsuite/interop/sprio_test.go) checks it
// against real sprio.

func TestPriorityFactorsRoundTrip(t *testing.T) {
	full := PriorityFactors{
		JobID: 7, UserID: 1000,
		Age: PackDouble(12.5), Assoc: PackDouble(1), FairShare: PackDouble(0.25), JobSize: PackDouble(33333.333),
		Partition: PackDouble(50000), QOS: PackDouble(3), DirectPrio: 0, Site: 0x80000000,
		TRES:        []PackedDouble{PackDouble(375), 0, PackDouble(1.5)},
		TRESCount:   3,
		TRESNames:   []NullString{Str("cpu"), Str("mem"), Str("gres/gpu")},
		TRESWeights: []PackedDouble{PackDouble(3000), PackDouble(2000), PackDouble(1)},
		Nice:        0x80000000 - 77, PartitionName: Str("debug"),
	}
	for _, tc := range []struct {
		name string
		mt   msgtype.Type
		body any
	}{
		{"request no filter", msgtype.REQUEST_PRIORITY_FACTORS, PriorityFactorsRequest{}},
		{"request empty lists", msgtype.REQUEST_PRIORITY_FACTORS, PriorityFactorsRequest{JobIDs: []uint32{}, UIDs: []uint32{}, Partitions: Str("")}},
		{"request filters", msgtype.REQUEST_PRIORITY_FACTORS, PriorityFactorsRequest{JobIDs: []uint32{3, 9}, UIDs: []uint32{0}, Partitions: Str("debug,hi")}},
		{"response no list", msgtype.RESPONSE_PRIORITY_FACTORS, PriorityFactorsResponse{}},
		{"response empty list", msgtype.RESPONSE_PRIORITY_FACTORS, PriorityFactorsResponse{Factors: []PriorityFactors{}}},
		{"response", msgtype.RESPONSE_PRIORITY_FACTORS, PriorityFactorsResponse{Factors: []PriorityFactors{
			full, {JobID: 8, DirectPrio: PackDouble(12345), PartitionName: Str("hi")}}}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkRoundTrip(t, tc.mt, tc.body, 0) })
	}
}

// TestPriorityFactorsLayout pins the bytes: the NO_VAL lists of the
// request, the TRES arrays with tres_cnt between them, nice after them.
func TestPriorityFactorsLayout(t *testing.T) {
	u32 := func(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	u64 := func(v uint64) []byte { return append(u32(uint32(v>>32)), u32(uint32(v))...) }
	dbl := func(f float64) []byte { return u64(math.Float64bits(f * 1e6)) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	str := func(s string) []byte { return cat(u32(uint32(len(s)+1)), []byte(s), []byte{0}) }
	noVal := u32(0xfffffffe)
	cases := []struct {
		name string
		mt   msgtype.Type
		body any
		want []byte
	}{
		{"request none", msgtype.REQUEST_PRIORITY_FACTORS, PriorityFactorsRequest{}, cat(noVal, noVal, u32(0))},
		{"request", msgtype.REQUEST_PRIORITY_FACTORS,
			PriorityFactorsRequest{JobIDs: []uint32{5, 6}, UIDs: []uint32{1000}, Partitions: Str("hi")},
			cat(u32(2), u32(5), u32(6), u32(1), u32(1000), str("hi"))},
		{"response none", msgtype.RESPONSE_PRIORITY_FACTORS, PriorityFactorsResponse{}, noVal},
		{"response", msgtype.RESPONSE_PRIORITY_FACTORS,
			PriorityFactorsResponse{Factors: []PriorityFactors{{
				JobID: 3, UserID: 0,
				JobSize: PackDouble(2.5), Partition: PackDouble(50000), Site: 0x80000000,
				TRES: []PackedDouble{PackDouble(375)}, TRESCount: 1, TRESNames: []NullString{Str("cpu")},
				TRESWeights: []PackedDouble{PackDouble(3000)},
				Nice:        0x80000000, PartitionName: Str("debug"),
			}}},
			cat(u32(1), u32(3), u32(0),
				dbl(0), dbl(0), dbl(0), dbl(2.5), dbl(50000), dbl(0), dbl(0), u32(0x80000000),
				u32(1), dbl(375), u32(1), u32(1), str("cpu"), u32(1), dbl(3000),
				u32(0x80000000), str("debug"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := encodeBody(t, tc.mt, tc.body)
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("encoded\n %x\nwant\n %x", got, tc.want)
			}
			back, err := decodeExact(tc.mt, tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if again := encodeBody(t, tc.mt, back); !bytes.Equal(again, tc.want) {
				t.Fatalf("re-encoded %x", again)
			}
		})
	}
}

func TestPriorityFactorsTruncated(t *testing.T) {
	b := encodeBody(t, msgtype.RESPONSE_PRIORITY_FACTORS, PriorityFactorsResponse{Factors: []PriorityFactors{{JobID: 1, PartitionName: Str("p")}}})
	for n := 0; n < len(b); n++ {
		if _, err := decodeExact(msgtype.RESPONSE_PRIORITY_FACTORS, b[:n]); err == nil {
			t.Fatalf("decoded %d of %d bytes", n, len(b))
		}
	}
}

func FuzzPriorityFactors(f *testing.F) {
	f.Add(encodeBody(f, msgtype.RESPONSE_PRIORITY_FACTORS, PriorityFactorsResponse{Factors: []PriorityFactors{{
		JobID: 1, TRES: []PackedDouble{1}, TRESCount: 1, TRESNames: []NullString{Str("cpu")}, TRESWeights: []PackedDouble{2}}}}))
	f.Add(encodeBody(f, msgtype.REQUEST_PRIORITY_FACTORS, PriorityFactorsRequest{JobIDs: []uint32{1}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, mt := range []msgtype.Type{msgtype.REQUEST_PRIORITY_FACTORS, msgtype.RESPONSE_PRIORITY_FACTORS} {
			c := lookup(t, mt)
			r := pack.NewReader(b)
			v, err := c.Decode(r, codec.Version2205)
			if err != nil {
				continue
			}
			var w pack.Writer
			if err := c.Encode(&w, codec.Version2205, v); err != nil {
				t.Fatalf("%v: re-encode: %v", mt, err)
			}
			if !bytes.Equal(w.Bytes(), b[:r.Offset()]) {
				t.Fatalf("%v: re-encoded %x, read %x", mt, w.Bytes(), b[:r.Offset()])
			}
		}
	})
}
