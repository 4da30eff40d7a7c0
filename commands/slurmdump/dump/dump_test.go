package dump

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

const capturesDir = "../../../testsuite/captures/testdata"

type nullStr struct {
	Value string
	Valid bool
}

type state uint32

func (s state) String() string {
	if s == 1 {
		return "IDLE"
	}
	return "UNKNOWN"
}

type inner struct {
	Name nullStr
	N    int
}

type big struct {
	A, B, C, D, E, F, G, H, I int
	Limit                     uint32
	Mem                       uint64
	Name                      string
	Inner                     []inner
	Key                       []byte
	State                     state
	T                         time.Time
	Addr                      codec.Addr
	M                         map[string]uint16
	P                         *inner
	Any                       any
	//lint:ignore U1000 here for render to skip (unexported fields are not shown)
	hidden int
}

func TestRender(t *testing.T) {
	if got := render(codec.ReturnCode{RC: 2017}, ""); got != "codec.ReturnCode{RC: ESLURM_INVALID_JOB_ID(2017)}" {
		t.Errorf("small struct: %s", got)
	}
	if got := render(codec.ReturnCodeMsg{MsgNull: true}, ""); got != `codec.ReturnCodeMsg{RC: SLURM_SUCCESS(0), Msg: "", MsgNull: true}` {
		t.Errorf("small struct: %s", got)
	}
	v := big{
		B:     2,
		Limit: 0xffffffff,
		Mem:   1<<64 - 2,
		Name:  "x\ny",
		Inner: []inner{{Name: nullStr{"n1", true}, N: 1}, {N: 2}},
		Key:   bytes.Repeat([]byte{0xab}, 70),
		State: 1,
		T:     time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Addr:  codec.AddrIPv4([4]byte{127, 0, 0, 1}, 6817),
		M:     map[string]uint16{"b": 2, "a": 1},
		Any:   msgtype.REQUEST_PING,
	}
	want := `dump.big{
  B: 2
  Limit: INFINITE
  Mem: NO_VAL64
  Name: "x\ny"
  Inner: [inner{Name: "n1", N: 1}, inner{Name: NULL, N: 2}]
  Key: 0x` + strings.Repeat("ab", 64) + `... (70 bytes)
  State: IDLE(1)
  T: 2025-01-02T03:04:05Z
  Addr: 127.0.0.1:6817
  M: {"a": 1, "b": 2}
  Any: REQUEST_PING(1008)
  (9 zero fields not shown)
}`
	if got := render(v, ""); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A cycle ends in "...", not a stack overflow.
	type node struct {
		Next *node
		V    int
	}
	n := &node{V: 1}
	n.Next = n
	if got := render(n, ""); !strings.Contains(got, "...") {
		t.Errorf("cycle: %s", got)
	}
	if jsonable(math.NaN()) || !jsonable(v) {
		t.Errorf("jsonable")
	}
}

func TestHexDump(t *testing.T) {
	var b strings.Builder
	hexDump(&b, []byte("0123456789abcdefXYZ\x00"))
	want := "    0000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  |0123456789abcdef|\n" +
		"    0010  58 59 5a 00                                       |XYZ.|\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestParseType(t *testing.T) {
	for in, want := range map[string]msgtype.Type{"REQUEST_PING": 1008, "request_ping": 1008, "1008": 1008, "0x3f0": 1008, "65000": 65000} {
		if got, err := ParseType(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	if _, err := ParseType("PING"); err == nil {
		t.Error("PING accepted")
	}
}

// FuzzDump: any byte string as a pcap file, in one of three output modes
// (picked by the input's length). Nothing panics (a panicking body codec is
// reported, and fails this test), JSON output stays one parseable object per
// line. The seeds are whole captures, so keep minimization short:
//
//	go test ./commands/slurmdump/dump -run '^$' -fuzz FuzzDump -fuzztime 30s -fuzzminimizetime 1s
func FuzzDump(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(capturesDir, "*.pcap"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) < 12000 { // keep the seed corpus quick
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		modes := []Options{{}, {JSON: true}, {Hex: true, Brief: true}}
		for _, opts := range modes[len(data)%3 : len(data)%3+1] {
			var out bytes.Buffer
			st, err := Dump(context.Background(), bytes.NewReader(data), &out, opts)
			if err != nil && out.Len() == 0 && st.Messages+st.Errors > 0 {
				t.Fatalf("error %v with records but no output", err)
			}
			if strings.Contains(out.String(), "panicked") {
				t.Fatalf("a codec panicked:\n%s", out.String())
			}
			if opts.JSON {
				for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
					if line == "" && out.Len() == 0 {
						continue
					}
					if !json.Valid([]byte(line)) {
						t.Fatalf("invalid JSON line %q", line)
					}
				}
			}
		}
	})
}
