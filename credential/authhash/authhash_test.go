package authhash

import (
	"encoding/hex"
	"errors"
	"strconv"
	"testing"

	"github.com/cloudflare/circl/xof/k12"
)

func ptn(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// Published KangarooTwelve vectors (32-byte output), cross-checked with the
// stdlib Python K12 in tools/verify_k12.py.
func TestK12Vectors(t *testing.T) {
	for _, v := range []struct {
		m, c []byte
		want string
	}{
		{nil, nil, "1ac2d450fc3b4205d19da7bfca1b37513c0803577ac7167f06fe2ce1f0ef39e5"},
		{ptn(17), nil, "6bf75fa2239198db4772e36478f8e19b0f371205f6a9a93a273f51df37122888"},
		{ptn(289), nil, "0c315ebcdedbf61426de7dcf8fb725d1e74675d7f5327a5067f367b108ecb67c"},
		{nil, ptn(1), "fab658db63e94a246188bf7af69a133045f46ee984c56e3c3328caaf1aa1a583"},
	} {
		var out [32]byte
		k12.Draft10Sum(out[:], v.m, v.c)
		if got := hex.EncodeToString(out[:]); got != v.want {
			t.Errorf("K12(len %d, C len %d) = %s, want %s", len(v.m), len(v.c), got, v.want)
		}
	}
	// Customization = msg_type big-endian, as Slurm uses it.
	d := Digest(0x0fa1, ptn(17))
	if got := hex.EncodeToString(d[:]); got != "9daf7b85f2e0f104044858d31d062822f2a93e0a3a0aedcd65931b2c78eb4d67" {
		t.Errorf("Digest(0x0fa1, ptn(17)) = %s", got)
	}
}

func TestComputeLayout(t *testing.T) {
	p, err := Compute(K12, 2009, []byte{1, 2, 3})
	if err != nil || len(p) != 33 || p[0] != 2 {
		t.Fatalf("K12 payload %x %v", p, err)
	}
	q, _ := Compute(Default, 2009, []byte{1, 2, 3})
	if string(p) != string(q) {
		t.Fatal("Default must compute K12 (and say so in the type byte)")
	}
	n, err := Compute(None, 0x1234, nil)
	if err != nil || hex.EncodeToString(n) != "011234" {
		t.Fatalf("None payload %x %v", n, err)
	}
	if _, err := Compute(SHA256, 1, nil); !errors.Is(err, ErrBadType) {
		t.Fatalf("SHA256: %v", err)
	}
}

func TestVerifyRules(t *testing.T) {
	body := []byte("a message body")
	const mt = 2007
	good, _ := Compute(K12, mt, body)
	none, _ := Compute(None, mt, nil)
	def := append([]byte{0}, good[1:]...)
	flip := append([]byte(nil), good...)
	flip[5] ^= 1
	cases := []struct {
		name    string
		payload []byte
		msgType uint16
		body    []byte
		pol     Policy
		want    Type
		err     error
	}{
		{"k12 ok", good, mt, body, Policy{}, K12, nil},
		{"k12 ok with blocks", good, mt, body, Policy{true, true}, K12, nil},
		{"type byte 0 is k12 in 22.05", def, mt, body, Policy{}, K12, nil},
		{"other msg type", good, mt + 1, body, Policy{}, 0, ErrMismatch},
		{"other body", good, mt, []byte("a message bodY"), Policy{}, 0, ErrMismatch},
		{"trailing byte in body", good, mt, append(append([]byte(nil), body...), 0), Policy{}, 0, ErrMismatch},
		{"short body", good, mt, body[:len(body)-1], Policy{}, 0, ErrMismatch},
		{"flipped digest", flip, mt, body, Policy{}, 0, ErrMismatch},
		{"truncated digest", good[:32], mt, body, Policy{}, 0, ErrMismatch},
		{"long digest", append(append([]byte(nil), good...), 0), mt, body, Policy{}, 0, ErrMismatch},
		{"empty payload", nil, mt, body, Policy{}, Default, nil},
		{"empty payload blocked", nil, mt, body, Policy{BlockNullHash: true}, 0, ErrNullHash},
		{"none ok", none, mt, body, Policy{}, None, nil},
		{"none ignores body", none, mt, nil, Policy{}, None, nil},
		{"none blocked", none, mt, body, Policy{BlockZeroHash: true}, 0, ErrZeroHash},
		{"none other msg type", none, mt + 1, body, Policy{}, 0, ErrMismatch},
		{"none host order (21.08 peers only)", []byte{1, mt & 0xff, mt >> 8}, mt, body, Policy{}, 0, ErrMismatch},
		{"none too long", append(append([]byte(nil), none...), 0), mt, body, Policy{}, 0, ErrMismatch},
		{"none too short", none[:2], mt, body, Policy{}, 0, ErrMismatch},
		{"sha256 not loaded", append([]byte{3}, good[1:]...), mt, body, Policy{}, 0, ErrUnsupported},
		{"unknown type", append([]byte{9}, good[1:]...), mt, body, Policy{}, 0, ErrUnsupported},
	}
	for _, c := range cases {
		got, err := Verify(c.payload, c.msgType, c.body, c.pol)
		if c.err == nil {
			if err != nil || got != c.want {
				t.Errorf("%s: got %v, %v; want %v", c.name, got, err, c.want)
			}
			continue
		}
		if !errors.Is(err, c.err) || !errors.Is(err, ErrIncompletePacket) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.err)
		}
	}
}

// FuzzVerify: Verify never panics, and accepts a K12 payload only if it is
// exactly what Compute produces.
func FuzzVerify(f *testing.F) {
	good, _ := Compute(K12, 1, []byte("x"))
	f.Add(good, uint16(1), []byte("x"))
	f.Add([]byte{1, 0, 1}, uint16(1), []byte{})
	f.Add([]byte{}, uint16(0), []byte{})
	f.Fuzz(func(t *testing.T, payload []byte, mt uint16, body []byte) {
		typ, err := Verify(payload, mt, body, Policy{})
		if err != nil {
			return
		}
		if typ == K12 {
			want, _ := Compute(K12, mt, body)
			if string(payload[1:]) != string(want[1:]) {
				t.Fatalf("accepted a wrong digest")
			}
		}
	})
}

func BenchmarkDigest(b *testing.B) {
	for _, n := range []int{16, 1024, 64 << 10} {
		body := ptn(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				Digest(2003, body)
			}
		})
	}
}
