package munge_test

// Fixed vectors: credentials made once by the real munge (MUNGE 0.5.15) with
// testdata/local_munge.key, and credentials captured from real Slurm 22.05.8
// traffic with testdata/local_capture.key. The in-process codec must decode
// each at its encode time to exactly the recorded fields; no munged needed.
//
// Regenerate with a real munged installed:
//
//	go test -run TestLocalVectors -update ./credential/munge

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
)

var update = flag.Bool("update", false, "regenerate testdata/local_*.txt (needs munged, and the captures for local_capture.txt)")

const (
	vectorKey      = "testdata/local_munge.key"
	vectorFile     = "testdata/local_vectors.txt"
	captureKey     = "testdata/local_capture.key"
	captureFile    = "testdata/local_capture.txt"
	capturesSource = "/work/shared/captures"
)

// vector is one line: name cipher mac zip ttl uid gid ruid rgid
// encode_time origin payload_hex credential.
type vector struct {
	name       string
	cipher     munge.Cipher
	mac        munge.MAC
	zip        munge.Zip
	ttl        uint32
	uid, gid   uint32
	ruid, rgid uint32
	encoded    int64
	origin     netip.Addr
	payload    []byte
	cred       string
	location   string
}

func (v vector) line() string {
	p := hex.EncodeToString(v.payload)
	if p == "" {
		p = "-"
	}
	return fmt.Sprintf("%s %d %d %d %d %d %d %d %d %d %s %s %s", v.name, v.cipher, v.mac, v.zip, v.ttl,
		v.uid, v.gid, v.ruid, v.rgid, v.encoded, v.origin, p, v.cred)
}

func fromCredential(name string, c *munge.Credential, cred string) vector {
	return vector{
		name: name, cipher: c.Cipher, mac: c.MAC, zip: c.Zip, ttl: uint32(c.TTL / time.Second),
		uid: c.UID, gid: c.GID, ruid: c.UIDRestrict, rgid: c.GIDRestrict,
		encoded: c.Encoded.Unix(), origin: c.Origin, payload: c.Payload, cred: cred,
	}
}

func readVectors(t *testing.T, path string) []vector {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		w := strings.Fields(line)
		if len(w) != 13 {
			t.Fatalf("%s:%d: %d fields", path, n, len(w))
		}
		num := func(i int) uint64 {
			v, err := strconv.ParseUint(w[i], 10, 64)
			if err != nil {
				t.Fatalf("%s:%d: field %d: %v", path, n, i, err)
			}
			return v
		}
		v := vector{
			name: w[0], cipher: munge.Cipher(num(1)), mac: munge.MAC(num(2)), zip: munge.Zip(num(3)),
			ttl: uint32(num(4)), uid: uint32(num(5)), gid: uint32(num(6)), ruid: uint32(num(7)), rgid: uint32(num(8)),
			encoded: int64(num(9)), cred: w[12], location: fmt.Sprintf("%s:%d", path, n),
		}
		if v.origin, err = netip.ParseAddr(w[10]); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		if w[11] != "-" {
			if v.payload, err = hex.DecodeString(w[11]); err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeVectors(t *testing.T, path, header string, vs []vector) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(header)
	for _, v := range vs {
		b.WriteString(v.line() + "\n")
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rawKey reads a test key without LoadKey's permission checks (checked-out
// files are 0644).
func rawKey(t *testing.T, path string) *munge.Key {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := munge.NewKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestLocalVectors(t *testing.T) {
	if *update {
		generateVectors(t)
		generateCaptureVectors(t)
	}
	for _, f := range []struct{ key, file string }{{vectorKey, vectorFile}, {captureKey, captureFile}} {
		key := rawKey(t, f.key)
		vs := readVectors(t, f.file)
		if len(vs) == 0 {
			t.Fatalf("%s: no vectors", f.file)
		}
		for _, v := range vs {
			t.Run(v.name, func(t *testing.T) {
				checkVector(t, key, v)
			})
		}
	}
}

func checkVector(t *testing.T, key *munge.Key, v vector) {
	// Decode as the restriction's uid/gid, or as root when unrestricted.
	id := &munge.LocalIdentity{}
	if v.ruid != munge.UIDAny {
		id.UID = v.ruid
	}
	if v.rgid != munge.GIDAny {
		id.GID = v.rgid
	}
	l, err := munge.NewLocal(key, munge.LocalConfig{Identity: id})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(v.encoded, 0)
	got, err := l.DecodeAt(v.cred, at)
	if err != nil {
		t.Fatalf("%s: %v", v.location, err)
	}
	if g := fromCredential(v.name, got, v.cred); g.line() != v.line() {
		t.Errorf("%s:\n got %s\nwant %s", v.location, g.line(), v.line())
	}
	// The vector's edges: good at encode time + ttl and - ttl, expired and
	// rewound one second beyond (each on a fresh replay cache).
	for _, tc := range []struct {
		at   int64
		want error
	}{
		{v.encoded + int64(v.ttl), nil},
		{v.encoded - int64(v.ttl), nil},
		{v.encoded + int64(v.ttl) + 1, munge.ErrCredExpired},
		{v.encoded - int64(v.ttl) - 1, munge.ErrCredRewound},
	} {
		l, err := munge.NewLocal(key, munge.LocalConfig{Identity: id})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.DecodeAt(v.cred, time.Unix(tc.at, 0)); !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
			t.Errorf("%s: at encode %+d s: %v, want %v", v.location, tc.at-v.encoded, err, tc.want)
		}
	}
	// The second decode in one cache is a replay.
	if _, err := l.DecodeAt(v.cred, at); !errors.Is(err, munge.ErrCredReplayed) {
		t.Errorf("%s: second decode: %v, want replayed", v.location, err)
	}
}

// generateVectors has the real munge encode a credential per interesting
// option set, and records what the real munged decodes from it.
func generateVectors(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{KeyFile: vectorKey})
	uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	cases := []struct {
		name    string
		payload []byte
		args    []string
	}{
		{"default", []byte("fixed vector payload"), nil},
		{"empty", nil, nil},
		{"slurm-k12", append([]byte{2}, bytes.Repeat([]byte{0x5a}, 32)...), []string{"--restrict-uid=" + uid}},
		{"ttl-max", []byte("x"), []string{"--ttl=-1"}},
		{"ttl-7", []byte("x"), []string{"--ttl=7"}},
		{"none-sha256", []byte("clear text"), []string{"-c", "none"}},
		{"none-md5", []byte("clear text"), []string{"-c", "none", "-m", "md5"}},
		{"aes128-sha1", []byte("x"), []string{"-m", "sha1"}},
		{"aes128-md5", []byte("x"), []string{"-m", "md5"}},
		{"aes256-sha256", []byte("x"), []string{"-c", "aes256"}},
		{"aes256-sha512", bytes.Repeat([]byte{0xff}, 100), []string{"-c", "aes256", "-m", "sha512"}},
		{"zlib", compressible, []string{"-z", "zlib"}},
		{"bzlib", compressible, []string{"-z", "bzlib"}},
		{"zlib-none-md5", compressible, []string{"-z", "zlib", "-c", "none", "-m", "md5"}},
		{"restrict-gid", []byte("x"), []string{"--restrict-gid=" + gid}},
		{"block-exact", bytes.Repeat([]byte("b"), 16-((8+1+4+7*4)%16)), nil},
	}
	var vs []vector
	for _, tc := range cases {
		cred := runMunge(t, d, tc.payload, tc.args...)
		c, err := d.Client().Decode(ctxT(t), cred)
		if err != nil {
			t.Fatalf("%s: munged decode: %v", tc.name, err)
		}
		vs = append(vs, fromCredential(tc.name, c, cred))
	}
	writeVectors(t, vectorFile, "# Made by the real munge 0.5.15 with local_munge.key; see local_vectors_test.go.\n"+
		"# name cipher mac zip ttl uid gid ruid rgid encode_time origin payload_hex credential\n", vs)
}

// generateCaptureVectors takes the first credentials of the sbatch capture
// (real slurmctld and sbatch, via real munged) and records their fields.
func generateCaptureVectors(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(capturesSource, "sbatch.pcap"))
	if err != nil {
		t.Skipf("captures not available: %v", err)
	}
	creds := regexp.MustCompile(`MUNGE:[A-Za-z0-9+/=]+:`).FindAll(b, 3)
	if len(creds) == 0 {
		t.Fatal("no credential in the capture")
	}
	l, err := munge.NewLocal(rawKey(t, captureKey), munge.LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	for i, cred := range creds {
		// Long expired: the fields come back beside the error.
		c, err := l.DecodeAt(string(cred), time.Now())
		if c == nil {
			t.Fatalf("capture credential %d: %v", i, err)
		}
		vs = append(vs, fromCredential(fmt.Sprintf("sbatch-%d", i), c, string(cred)))
	}
	writeVectors(t, captureFile, "# Credentials from /work/shared/captures/sbatch.pcap (real Slurm 22.05.8 + munged 0.5.15), key local_capture.key.\n"+
		"# name cipher mac zip ttl uid gid ruid rgid encode_time origin payload_hex credential\n", vs)
}
