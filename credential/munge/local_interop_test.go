package munge_test

// Differential tests of the in-process codec (Local) against Debian's real
// munged, munge and unmunge (MUNGE 0.5.15), sharing one key: what Local
// encodes unmunge must accept with the same fields, what munge encodes Local
// must accept, and both must refuse the same bad credentials with the same
// codes.

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
)

// startLocal starts a private munged and returns it with a Local holding
// the same key and origin.
func startLocal(t *testing.T, cfg munge.LocalConfig) (*mungetest.Daemon, *munge.Local) {
	t.Helper()
	d := mungetest.Start(t, mungetest.Options{})
	key, err := munge.LoadKey(d.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Origin.IsValid() {
		cfg.Origin = netip.MustParseAddr("127.0.0.1")
	}
	l, err := munge.NewLocal(key, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d, l
}

// compressible is a payload zlib shrinks, so a zip request stays zipped.
var compressible = bytes.Repeat([]byte("goslurm munge "), 64)

func TestLocalInteropOursToUnmunge(t *testing.T) {
	d, l := startLocal(t, munge.LocalConfig{})
	cases := []struct {
		name     string
		payload  []byte
		uid, gid uint32
		ttl      time.Duration
		opts     []munge.EncodeOption
		// what unmunge must print
		ttlOut, cipher, mac, zip string
	}{
		{"defaults", []byte("hello\x00\x01"), 0, 0, 0, nil, "300", "aes128 (4)", "sha256 (5)", "none (0)"},
		{"empty payload", nil, 0, 0, 0, nil, "300", "aes128 (4)", "sha256 (5)", "none (0)"},
		{"other identity", []byte("x"), 1234, 5678, 60 * time.Second, nil, "60", "aes128 (4)", "sha256 (5)", "none (0)"},
		{"ttl capped", []byte("x"), 0, 0, 2 * time.Hour, nil, "3600", "aes128 (4)", "sha256 (5)", "none (0)"},
		{"ttl maximum", []byte("x"), 0, 0, -1, nil, "3600", "aes128 (4)", "sha256 (5)", "none (0)"},
		{"aes256 sha512", []byte("x"), 0, 0, 0,
			[]munge.EncodeOption{munge.WithAlgorithms(munge.CipherAES256, munge.MACSHA512, munge.ZipNone)}, "300", "aes256 (5)", "sha512 (6)", "none (0)"},
		{"aes256 sha256", []byte("x"), 0, 0, 0,
			[]munge.EncodeOption{munge.WithAlgorithms(munge.CipherAES256, munge.MACSHA256, munge.ZipNone)}, "300", "aes256 (5)", "sha256 (5)", "none (0)"},
		{"no cipher md5", []byte("clear"), 0, 0, 0,
			[]munge.EncodeOption{munge.WithAlgorithms(munge.CipherNone, munge.MACMD5, munge.ZipNone)}, "300", "none (0)", "md5 (2)", "none (0)"},
		{"aes128 sha1", []byte("x"), 0, 0, 0,
			[]munge.EncodeOption{munge.WithAlgorithms(munge.CipherAES128, munge.MACSHA1, munge.ZipNone)}, "300", "aes128 (4)", "sha1 (3)", "none (0)"},
		{"aes128 md5", []byte("x"), 0, 0, 0,
			[]munge.EncodeOption{munge.WithAlgorithms(munge.CipherAES128, munge.MACMD5, munge.ZipNone)}, "300", "aes128 (4)", "md5 (2)", "none (0)"},
		{"zlib", compressible, 0, 0, 0,
			[]munge.EncodeOption{munge.WithAlgorithms(munge.CipherDefault, munge.MACDefault, munge.ZipZlib)}, "300", "aes128 (4)", "sha256 (5)", "zlib (3)"},
		{"zlib not worth it", []byte("hi"), 0, 0, 0,
			[]munge.EncodeOption{munge.WithAlgorithms(munge.CipherDefault, munge.MACDefault, munge.ZipZlib)}, "300", "aes128 (4)", "sha256 (5)", "none (0)"},
		{"restricted to us", []byte("x"), 0, 0, 0,
			[]munge.EncodeOption{munge.WithUIDRestriction(uint32(os.Getuid())), munge.WithGIDRestriction(uint32(os.Getgid()))}, "300", "aes128 (4)", "sha256 (5)", "none (0)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cred, err := l.EncodeAt(tc.payload, tc.uid, tc.gid, tc.ttl, time.Now(), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			r := runUnmunge(t, d, cred, nil)
			if r.status != 0 {
				t.Fatalf("unmunge exit %d, meta %v", r.status, r.meta)
			}
			if !bytes.Equal(r.payload, tc.payload) {
				t.Errorf("payload %q, want %q", r.payload, tc.payload)
			}
			want := map[string]string{
				"TTL": tc.ttlOut, "CIPHER": tc.cipher, "MAC": tc.mac, "ZIP": tc.zip,
				"LENGTH": strconv.Itoa(len(tc.payload)),
			}
			for k, v := range want {
				if r.meta[k] != v {
					t.Errorf("%s: unmunge says %q, want %q", k, r.meta[k], v)
				}
			}
			for k, id := range map[string]uint32{"UID": tc.uid, "GID": tc.gid} {
				if !strings.HasSuffix(r.meta[k], fmt.Sprintf("(%d)", id)) {
					t.Errorf("%s: unmunge says %q, want id %d", k, r.meta[k], id)
				}
			}
			if !strings.Contains(r.meta["ENCODE_HOST"], "127.0.0.1") {
				t.Errorf("ENCODE_HOST %q", r.meta["ENCODE_HOST"])
			}
		})
	}
}

func TestLocalInteropMungeToOurs(t *testing.T) {
	d, l := startLocal(t, munge.LocalConfig{})
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	cases := []struct {
		name    string
		payload []byte
		args    []string
		cipher  munge.Cipher
		mac     munge.MAC
		zip     munge.Zip
		ttl     time.Duration
	}{
		{"defaults", []byte("from munge"), nil, munge.CipherAES128, munge.MACSHA256, munge.ZipNone, 300 * time.Second},
		{"empty", nil, nil, munge.CipherAES128, munge.MACSHA256, munge.ZipNone, 300 * time.Second},
		{"ttl", []byte("x"), []string{"--ttl=42"}, munge.CipherAES128, munge.MACSHA256, munge.ZipNone, 42 * time.Second},
		{"ttl max", []byte("x"), []string{"--ttl=-1"}, munge.CipherAES128, munge.MACSHA256, munge.ZipNone, 3600 * time.Second},
		{"no cipher", []byte("x"), []string{"-c", "none"}, munge.CipherNone, munge.MACSHA256, munge.ZipNone, 300 * time.Second},
		{"aes256", []byte("x"), []string{"-c", "aes256"}, munge.CipherAES256, munge.MACSHA256, munge.ZipNone, 300 * time.Second},
		{"aes256 sha512", []byte("x"), []string{"-c", "aes256", "-m", "sha512"}, munge.CipherAES256, munge.MACSHA512, munge.ZipNone, 300 * time.Second},
		{"md5", []byte("x"), []string{"-m", "md5"}, munge.CipherAES128, munge.MACMD5, munge.ZipNone, 300 * time.Second},
		{"sha1", []byte("x"), []string{"-m", "sha1"}, munge.CipherAES128, munge.MACSHA1, munge.ZipNone, 300 * time.Second},
		{"none md5", []byte("x"), []string{"-c", "none", "-m", "md5"}, munge.CipherNone, munge.MACMD5, munge.ZipNone, 300 * time.Second},
		{"zlib", compressible, []string{"-z", "zlib"}, munge.CipherAES128, munge.MACSHA256, munge.ZipZlib, 300 * time.Second},
		{"bzlib", compressible, []string{"-z", "bzlib"}, munge.CipherAES128, munge.MACSHA256, munge.ZipBzlib, 300 * time.Second},
		{"zlib no cipher", compressible, []string{"-z", "zlib", "-c", "none"}, munge.CipherNone, munge.MACSHA256, munge.ZipZlib, 300 * time.Second},
		{"bzlib aes256 sha512", compressible, []string{"-z", "bzlib", "-c", "aes256", "-m", "sha512"}, munge.CipherAES256, munge.MACSHA512, munge.ZipBzlib, 300 * time.Second},
		{"restricted to us", []byte("x"), []string{"--restrict-uid=" + strconv.Itoa(int(uid)), "--restrict-gid=" + strconv.Itoa(int(gid))},
			munge.CipherAES128, munge.MACSHA256, munge.ZipNone, 300 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cred := runMunge(t, d, tc.payload, tc.args...)
			got, err := l.DecodeAt(cred, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Payload, tc.payload) || got.UID != uid || got.GID != gid {
				t.Errorf("decoded payload %q uid %d gid %d, want %q %d %d", got.Payload, got.UID, got.GID, tc.payload, uid, gid)
			}
			if got.Cipher != tc.cipher || got.MAC != tc.mac || got.Zip != tc.zip || got.TTL != tc.ttl {
				t.Errorf("decoded %v/%v/%v ttl %v, want %v/%v/%v %v", got.Cipher, got.MAC, got.Zip, got.TTL, tc.cipher, tc.mac, tc.zip, tc.ttl)
			}
			if got.Origin != netip.MustParseAddr("127.0.0.1") {
				t.Errorf("origin %v", got.Origin)
			}
			// And the same credential through munged gives the same fields.
			ref, err := d.Client().Decode(ctxT(t), cred)
			if !errors.Is(err, munge.ErrCredReplayed) && err != nil {
				t.Fatalf("munged decode: %v", err)
			}
			if ref != nil && (!ref.Encoded.Equal(got.Encoded) || ref.UIDRestrict != got.UIDRestrict || ref.GIDRestrict != got.GIDRestrict) {
				t.Errorf("munged: encoded %v restrictions %d/%d; ours %v %d/%d",
					ref.Encoded, ref.UIDRestrict, ref.GIDRestrict, got.Encoded, got.UIDRestrict, got.GIDRestrict)
			}
		})
	}
}

// Algorithms munged has and the in-process codec does not (they need
// golang.org/x/crypto) are refused with a clear code, never misread.
func TestLocalInteropUnsupportedAlgorithms(t *testing.T) {
	d, l := startLocal(t, munge.LocalConfig{})
	cases := []struct {
		args []string
		want *munge.Error
	}{
		{[]string{"-c", "blowfish"}, munge.ErrBadCipher},
		{[]string{"-c", "cast5"}, munge.ErrBadCipher},
		{[]string{"-m", "ripemd160"}, munge.ErrBadMAC},
	}
	for _, tc := range cases {
		cred := runMunge(t, d, []byte("x"), tc.args...)
		got, err := l.DecodeAt(cred, time.Now())
		if !errors.Is(err, tc.want) || got != nil {
			t.Errorf("%v: %v %v, want %v", tc.args, got, err, tc.want)
		}
	}
}

// flipByte returns cred with one bit of its i-th raw (base64-decoded) byte
// flipped, re-armored.
func flipByte(t *testing.T, cred string, i int) string {
	t.Helper()
	body := strings.TrimSuffix(strings.TrimPrefix(cred, "MUNGE:"), ":")
	raw, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		t.Fatal(err)
	}
	raw[i] ^= 0x10
	return "MUNGE:" + base64.StdEncoding.EncodeToString(raw) + ":"
}

func rawLen(t *testing.T, cred string) int {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(cred, "MUNGE:"), ":"))
	if err != nil {
		t.Fatal(err)
	}
	return len(raw)
}

// TestLocalInteropTamper flips a bit in every byte of a credential, ours and
// munge's, and checks that Local and unmunge refuse each with the same code.
// The one expected difference: a changed realm length is EMUNGE_BAD_REALM for
// Local (which serves no realm) where munged reads on and fails later.
func TestLocalInteropTamper(t *testing.T) {
	d, l := startLocal(t, munge.LocalConfig{})
	ours, err := l.EncodeAt([]byte("tamper with me"), 0, 0, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	theirs := runMunge(t, d, compressible, "-z", "zlib")
	for name, cred := range map[string]string{"ours": ours, "munge": theirs} {
		seen := map[munge.Code]int{}
		defer func() { t.Logf("%s: codes %v", name, seen) }()
		for i := range rawLen(t, cred) {
			bad := flipByte(t, cred, i)
			got, err := l.DecodeAt(bad, time.Now())
			code := munge.CodeOf(err)
			seen[code]++
			if err == nil || got != nil {
				t.Errorf("%s byte %d: decoded %+v, err %v", name, i, got, err)
				continue
			}
			r := runUnmunge(t, d, bad, nil)
			if munge.Code(r.status) != code && !(code == munge.CodeBadRealm && i == 4) {
				t.Errorf("%s byte %d: ours %v (%v), unmunge exit %d", name, i, code, err, r.status)
			}
		}
	}
}

func TestLocalInteropReplay(t *testing.T) {
	d, l := startLocal(t, munge.LocalConfig{})
	// munge's credential: once, then replayed, with the fields beside the
	// error.
	cred := runMunge(t, d, []byte("once"))
	if _, err := l.DecodeAt(cred, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, err := l.DecodeAt(cred, time.Now())
	if !errors.Is(err, munge.ErrCredReplayed) || !munge.Decoded(err) || got == nil || string(got.Payload) != "once" {
		t.Fatalf("second decode: %+v %v, want EMUNGE_CRED_REPLAYED with the fields", got, err)
	}
	// Ours through unmunge: once, then replayed.
	ours, err := l.EncodeAt([]byte("ours once"), 0, 0, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r := runUnmunge(t, d, ours, nil); r.status != 0 {
		t.Fatalf("first unmunge: exit %d", r.status)
	}
	if r := runUnmunge(t, d, ours, nil); r.status != int(munge.CodeCredReplayed) || string(r.payload) != "ours once" {
		t.Fatalf("second unmunge: exit %d payload %q", r.status, r.payload)
	}
}

func TestLocalInteropTime(t *testing.T) {
	d, l := startLocal(t, munge.LocalConfig{})
	now := time.Now()
	// Ours, encoded in the past or the future: unmunge judges by its clock.
	expired, err := l.EncodeAt([]byte("old"), 0, 0, time.Second, now.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if r := runUnmunge(t, d, expired, nil); r.status != int(munge.CodeCredExpired) || string(r.payload) != "old" {
		t.Errorf("expired: unmunge exit %d payload %q", r.status, r.payload)
	}
	rewound, err := l.EncodeAt([]byte("new"), 0, 0, time.Minute, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if r := runUnmunge(t, d, rewound, nil); r.status != int(munge.CodeCredRewound) {
		t.Errorf("rewound: unmunge exit %d", r.status)
	}
	// munge's, decoded by us at a later or earlier time.
	cred := runMunge(t, d, []byte("short"), "--ttl=5")
	got, err := l.DecodeAt(cred, now.Add(time.Minute))
	if !errors.Is(err, munge.ErrCredExpired) || got == nil || string(got.Payload) != "short" {
		t.Errorf("expired: %+v %v", got, err)
	}
	if _, err := l.DecodeAt(cred, got.Encoded.Add(-6*time.Second)); !errors.Is(err, munge.ErrCredRewound) {
		t.Errorf("rewound: %v", err)
	}
	// A time check does not burn the credential: still good once.
	if _, err := l.DecodeAt(cred, got.Encoded); err != nil {
		t.Errorf("in time: %v", err)
	}
}

func TestLocalInteropWrongKey(t *testing.T) {
	d, l := startLocal(t, munge.LocalConfig{})
	other, err := munge.NewKey(bytes.Repeat([]byte("not the key "), 4))
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := munge.NewLocal(other, munge.LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cred := runMunge(t, d, []byte("x"))
	if _, err := stranger.DecodeAt(cred, time.Now()); !errors.Is(err, munge.ErrCredInvalid) {
		t.Errorf("munge's credential, wrong key: %v, want EMUNGE_CRED_INVALID", err)
	}
	ours, err := stranger.EncodeAt([]byte("x"), 0, 0, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r := runUnmunge(t, d, ours, nil); r.status != int(munge.CodeCredInvalid) {
		t.Errorf("our credential with another key: unmunge exit %d, want %d", r.status, munge.CodeCredInvalid)
	}
	// The right key still works both ways.
	if _, err := l.DecodeAt(cred, time.Now()); err != nil {
		t.Error(err)
	}
}

func TestLocalInteropRestriction(t *testing.T) {
	d, l := startLocal(t, munge.LocalConfig{})
	ours, err := l.EncodeAt([]byte("x"), 0, 0, 0, time.Now(), munge.WithUIDRestriction(otherUID))
	if err != nil {
		t.Fatal(err)
	}
	if r := runUnmunge(t, d, ours, nil); r.status != int(munge.CodeCredUnauthorized) {
		t.Errorf("ours restricted to %d, unmunge as %d: exit %d", otherUID, os.Getuid(), r.status)
	}
	theirs := runMunge(t, d, []byte("x"), "--restrict-gid="+strconv.Itoa(otherGID))
	if got, err := l.DecodeAt(theirs, time.Now()); !errors.Is(err, munge.ErrCredUnauthorized) || got != nil {
		t.Errorf("munge's restricted to gid %d: %+v %v", otherGID, got, err)
	}
}

// TestLocalInteropArmor feeds Local and unmunge the same armor variants:
// what munged tolerates and what it refuses, with the same codes.
func TestLocalInteropArmor(t *testing.T) {
	d, l := startLocal(t, munge.LocalConfig{})
	good := func() string {
		c, err := l.EncodeAt([]byte("armor"), 0, 0, 0, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	b := len("MUNGE:") + 8
	cases := []struct {
		name string
		cred func() string
	}{
		{"leading white space", func() string { return " \t\n" + good() }},
		{"white space inside", func() string { c := good(); return c[:b] + "\n \t\v\f\r" + c[b:] }},
		{"text after the suffix", func() string { return good() + "trailing" }},
		{"colon inside", func() string { c := good(); return c[:b] + ":" + c[b:] }},
		{"no suffix", func() string { return strings.TrimSuffix(good(), ":") }},
		{"no prefix", func() string { return strings.TrimPrefix(good(), "MUNGE:") }},
		{"lower-case prefix", func() string { return "munge:" + strings.TrimPrefix(good(), "MUNGE:") }},
		{"empty body", func() string { return "MUNGE::" }},
		{"bad padding", func() string { return "MUNGE:AwQFAA=:" }},
		{"not base64", func() string { return "MUNGE:!!!!:" }},
		{"short", func() string { return "MUNGE:AwQFAA==:" }},
	}
	for _, tc := range cases {
		cred := tc.cred()
		got, err := l.DecodeAt(cred, time.Now())
		r := runUnmunge(t, d, cred, nil)
		if munge.Code(r.status) != munge.CodeOf(err) {
			t.Errorf("%s: ours %v (%v), unmunge exit %d", tc.name, munge.CodeOf(err), err, r.status)
		}
		if err == nil && string(got.Payload) != "armor" {
			t.Errorf("%s: payload %q", tc.name, got.Payload)
		}
	}
}
