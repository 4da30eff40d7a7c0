package munge

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var testSecret = bytes.Repeat([]byte("0123456789abcdef"), 8)

// t0 is a fixed clock for unit tests.
var t0 = time.Unix(1_700_000_000, 0)

func newTestLocal(t testing.TB, cfg LocalConfig) *Local {
	t.Helper()
	k, err := NewKey(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Identity == nil {
		cfg.Identity = &LocalIdentity{UID: 1000, GID: 100, Groups: []uint32{27}}
	}
	l, err := NewLocal(k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLoadKey(t *testing.T) {
	euid := os.Geteuid()
	good := bytes.Repeat([]byte{7}, MinKeyLen)
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the key path
		ok    bool
	}{
		{"0600", func(t *testing.T, dir string) string { return writeKey(t, dir, good, 0o600) }, true},
		{"0400", func(t *testing.T, dir string) string { return writeKey(t, dir, good, 0o400) }, true},
		{"0700 (munged checks read/write bits only)", func(t *testing.T, dir string) string { return writeKey(t, dir, good, 0o700) }, true},
		{"group readable", func(t *testing.T, dir string) string { return writeKey(t, dir, good, 0o640) }, false},
		{"group writable", func(t *testing.T, dir string) string { return writeKey(t, dir, good, 0o620) }, false},
		{"world readable", func(t *testing.T, dir string) string { return writeKey(t, dir, good, 0o604) }, false},
		{"short", func(t *testing.T, dir string) string { return writeKey(t, dir, good[:MinKeyLen-1], 0o600) }, false},
		{"empty", func(t *testing.T, dir string) string { return writeKey(t, dir, nil, 0o600) }, false},
		{"missing", func(t *testing.T, dir string) string { return filepath.Join(dir, "nokey") }, false},
		{"directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "d")
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
		{"symlink", func(t *testing.T, dir string) string {
			p := writeKey(t, dir, good, 0o600)
			l := filepath.Join(dir, "link")
			if err := os.Symlink(p, l); err != nil {
				t.Fatal(err)
			}
			return l
		}, false},
		{"world-writable directory", func(t *testing.T, dir string) string {
			sub := filepath.Join(dir, "open")
			if err := os.Mkdir(sub, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(sub, 0o777); err != nil {
				t.Fatal(err)
			}
			return writeKey(t, sub, good, 0o600)
		}, false},
		{"sticky world-writable directory", func(t *testing.T, dir string) string {
			sub := filepath.Join(dir, "sticky")
			if err := os.Mkdir(sub, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(sub, os.ModeSticky|0o777); err != nil {
				t.Fatal(err)
			}
			return writeKey(t, sub, good, 0o600)
		}, true},
		{"owned by another user", func(t *testing.T, dir string) string {
			if euid != 0 {
				t.Skip("chown needs root")
			}
			p := writeKey(t, dir, good, 0o600)
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			k, err := LoadKey(path)
			if tc.ok != (err == nil) {
				t.Fatalf("LoadKey: %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrKeyFile) {
					t.Fatalf("error %v does not wrap ErrKeyFile", err)
				}
				t.Logf("%v", err)
				return
			}
			want, _ := NewKey(good)
			if *k != *want {
				t.Fatal("LoadKey and NewKey derive different subkeys")
			}
		})
	}
}

func writeKey(t *testing.T, dir string, b []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, "munge.key")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLocalRoundTrip(t *testing.T) {
	l := newTestLocal(t, LocalConfig{Origin: netip.MustParseAddr("10.1.2.3")})
	payloads := map[string][]byte{
		"nil":         nil,
		"one":         {1},
		"block-exact": bytes.Repeat([]byte("b"), 7), // inner of 48 bytes
		"k12":         append([]byte{2}, bytes.Repeat([]byte{0xab}, 32)...),
		"big":         bytes.Repeat([]byte("compress me "), 500),
	}
	algs := []struct {
		c Cipher
		m MAC
		z Zip
	}{
		{CipherDefault, MACDefault, ZipDefault},
		{CipherNone, MACMD5, ZipNone},
		{CipherNone, MACSHA512, ZipZlib},
		{CipherAES128, MACMD5, ZipNone},
		{CipherAES128, MACSHA1, ZipZlib},
		{CipherAES256, MACSHA256, ZipNone},
		{CipherAES256, MACSHA512, ZipZlib},
	}
	for pname, payload := range payloads {
		for _, a := range algs {
			name := fmt.Sprintf("%s/%v-%v-%v", pname, a.c, a.m, a.z)
			cred, err := l.EncodeAt(payload, 42, 43, 90*time.Second, t0, WithAlgorithms(a.c, a.m, a.z), WithGIDRestriction(27))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := l.DecodeAt(cred, t0.Add(time.Minute))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			wantC, wantM, wantZ := a.c, a.m, a.z
			if wantC == CipherDefault {
				wantC = CipherAES128
			}
			if wantM == MACDefault {
				wantM = MACSHA256
			}
			if wantZ == ZipDefault || len(payload) < 30 {
				wantZ = ZipNone // tiny payloads do not shrink
			}
			if !bytes.Equal(got.Payload, payload) || got.UID != 42 || got.GID != 43 || got.TTL != 90*time.Second ||
				!got.Encoded.Equal(t0) || !got.Decoded.Equal(t0.Add(time.Minute)) ||
				got.Origin != netip.MustParseAddr("10.1.2.3") || got.UIDRestrict != UIDAny || got.GIDRestrict != 27 ||
				got.Cipher != wantC || got.MAC != wantM || got.Zip != wantZ {
				t.Errorf("%s: decoded %+v", name, got)
			}
		}
	}
}

func TestLocalEncodeDefaults(t *testing.T) {
	l := newTestLocal(t, LocalConfig{DefaultTTL: 30 * time.Second, MaxTTL: 60 * time.Second})
	for _, tc := range []struct {
		ttl  time.Duration
		want time.Duration
	}{{0, 30 * time.Second}, {-1, 60 * time.Second}, {time.Hour, 60 * time.Second}, {1500 * time.Millisecond, 2 * time.Second}} {
		cred, err := l.EncodeAt([]byte("x"), 1, 2, tc.ttl, t0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.DecodeAt(cred, t0)
		if err != nil || got.TTL != tc.want {
			t.Errorf("ttl %v: decoded %v, %v; want %v", tc.ttl, got.TTL, err, tc.want)
		}
	}
	// Encode/Decode use the identity and the configured clock.
	now := t0
	l2 := newTestLocal(t, LocalConfig{Now: func() time.Time { return now }})
	cred, err := l2.Encode(t.Context(), []byte("y"), WithTTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got, err := l2.Decode(t.Context(), cred)
	if err != nil || got.UID != 1000 || got.GID != 100 || !got.Encoded.Equal(t0) || got.TTL != 10*time.Second {
		t.Fatalf("decoded %+v, %v", got, err)
	}
}

func TestLocalEncodeErrors(t *testing.T) {
	l := newTestLocal(t, LocalConfig{})
	cases := []struct {
		name    string
		payload []byte
		opt     EncodeOption
		want    *Error
	}{
		{"cipher 99", nil, WithAlgorithms(99, MACDefault, ZipDefault), ErrBadCipher},
		{"cipher blowfish", nil, WithAlgorithms(CipherBlowfish, MACDefault, ZipDefault), ErrBadCipher},
		{"mac none", nil, WithAlgorithms(CipherDefault, MACNone, ZipDefault), ErrBadMAC},
		{"mac 99", nil, WithAlgorithms(CipherDefault, 99, ZipDefault), ErrBadMAC},
		{"mac ripemd160", nil, WithAlgorithms(CipherDefault, MACRIPEMD160, ZipDefault), ErrBadMAC},
		{"md5 too short for aes256", nil, WithAlgorithms(CipherAES256, MACMD5, ZipDefault), ErrBadMAC},
		{"zip 99", nil, WithAlgorithms(CipherDefault, MACDefault, 99), ErrBadZip},
		{"bzlib", []byte("x"), WithAlgorithms(CipherDefault, MACDefault, ZipBzlib), ErrBadZip},
		{"too long", make([]byte, MaxRequestLen), WithTTL(0), ErrBadLength},
	}
	for _, tc := range cases {
		cred, err := l.EncodeAt(tc.payload, 0, 0, 0, t0, tc.opt)
		if !errors.Is(err, tc.want) || cred != "" {
			t.Errorf("%s: %q %v, want %v", tc.name, cred, err, tc.want)
		}
	}
}

func TestLocalDecodeMalformed(t *testing.T) {
	l := newTestLocal(t, LocalConfig{})
	good, err := l.EncodeAt([]byte("x"), 0, 0, 0, t0)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimSuffix(strings.TrimPrefix(good, "MUNGE:"), ":")
	raw, _ := base64.StdEncoding.DecodeString(body)
	armor := func(b []byte) string { return "MUNGE:" + base64.StdEncoding.EncodeToString(b) + ":" }
	withRealm := append([]byte{3, 4, 5, 0, 3, 'a', 'b', 'c'}, raw[5:]...)
	cases := []struct {
		name, cred string
		want       *Error
	}{
		{"empty", "", ErrBadArg},
		{"white space only", " \n\t", ErrBadArg},
		{"no prefix", "garbage", ErrBadCred},
		{"no suffix", "MUNGE:AwQFAA==", ErrBadCred},
		{"empty body", "MUNGE::", ErrBadCred},
		{"not base64", "MUNGE:!!!!:", ErrBadCred},
		{"bad padding", "MUNGE:AwQFAA=:", ErrBadCred},
		{"short", "MUNGE:AwQFAA==:", ErrBadCred},
		{"version 2", armor(append([]byte{2}, raw[1:]...)), ErrBadVersion},
		{"cipher default", armor(append([]byte{3, 1}, raw[2:]...)), ErrBadCipher},
		{"cipher cast5", armor(append([]byte{3, 3}, raw[2:]...)), ErrBadCipher},
		{"mac none", armor(append([]byte{3, 4, 0}, raw[3:]...)), ErrBadMAC},
		{"zip 7", armor(append([]byte{3, 4, 5, 7}, raw[4:]...)), ErrBadZip},
		{"realm", armor(withRealm), ErrBadRealm},
		{"truncated iv", armor(raw[:10]), ErrBadCred},
		{"truncated mac", armor(raw[:30]), ErrBadCred},
		{"no inner", armor(raw[:21+32]), ErrCredInvalid},
		{"half block", armor(raw[:len(raw)-8]), ErrCredInvalid},
		{"extra block", armor(append(append([]byte(nil), raw...), make([]byte, 16)...)), ErrCredInvalid},
	}
	for _, tc := range cases {
		got, err := l.DecodeAt(tc.cred, t0)
		if !errors.Is(err, tc.want) || got != nil {
			t.Errorf("%s: %+v %v, want %v", tc.name, got, err, tc.want)
		}
	}
	// What munged tolerates: leading white space, white space inside the
	// base64 text, anything after the last ':'.
	b := len("MUNGE:") + 8
	for _, cred := range []string{
		" \n" + good,
		good[:b] + "\n \t" + good[b:],
		good + "\n",
	} {
		l := newTestLocal(t, LocalConfig{})
		if got, err := l.DecodeAt(cred, t0); err != nil || string(got.Payload) != "x" {
			t.Errorf("%q: %+v %v", cred, got, err)
		}
	}
}

// TestLocalTamper flips every bit of a credential: each variant is refused,
// with no data.
func TestLocalTamper(t *testing.T) {
	l := newTestLocal(t, LocalConfig{})
	for _, opt := range []EncodeOption{
		WithAlgorithms(CipherDefault, MACDefault, ZipDefault),
		WithAlgorithms(CipherNone, MACSHA1, ZipZlib),
	} {
		cred, err := l.EncodeAt(bytes.Repeat([]byte("payload "), 20), 0, 0, 0, t0, opt)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(cred, "MUNGE:"), ":"))
		for i := range raw {
			for bit := range 8 {
				bad := append([]byte(nil), raw...)
				bad[i] ^= 1 << bit
				got, err := l.DecodeAt("MUNGE:"+base64.StdEncoding.EncodeToString(bad)+":", t0)
				if err == nil || got != nil || Decoded(err) {
					t.Fatalf("byte %d bit %d: %+v %v", i, bit, got, err)
				}
			}
		}
	}
}

func TestLocalRestrictions(t *testing.T) {
	enc := newTestLocal(t, LocalConfig{})
	cases := []struct {
		name string
		opts []EncodeOption
		ok   bool
	}{
		{"uid ours", []EncodeOption{WithUIDRestriction(1000)}, true},
		{"uid other", []EncodeOption{WithUIDRestriction(0)}, false},
		{"gid primary", []EncodeOption{WithGIDRestriction(100)}, true},
		{"gid supplementary", []EncodeOption{WithGIDRestriction(27)}, true},
		{"gid other", []EncodeOption{WithGIDRestriction(0)}, false},
		{"uid ours gid other", []EncodeOption{WithUIDRestriction(1000), WithGIDRestriction(5)}, false},
		{"any", []EncodeOption{WithUIDRestriction(UIDAny), WithGIDRestriction(GIDAny)}, true},
	}
	for _, tc := range cases {
		cred, err := enc.EncodeAt([]byte("r"), 0, 0, 0, t0, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		dec := newTestLocal(t, LocalConfig{})
		got, err := dec.DecodeAt(cred, t0)
		if tc.ok != (err == nil) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.ok && (!errors.Is(err, ErrCredUnauthorized) || got != nil) {
			t.Errorf("%s: %+v %v, want unauthorized without data", tc.name, got, err)
		}
	}
	// Root gets no override, as in munged 0.5.15.
	cred, _ := enc.EncodeAt([]byte("r"), 0, 0, 0, t0, WithUIDRestriction(1000))
	root := newTestLocal(t, LocalConfig{Identity: &LocalIdentity{}})
	if _, err := root.DecodeAt(cred, t0); !errors.Is(err, ErrCredUnauthorized) {
		t.Errorf("root: %v", err)
	}
}

func TestLocalTime(t *testing.T) {
	enc := newTestLocal(t, LocalConfig{})
	cred, err := enc.EncodeAt([]byte("t"), 0, 0, 10*time.Second, t0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		at   time.Duration
		want error
	}{
		{0, nil},
		{10 * time.Second, nil},
		{10*time.Second + 999*time.Millisecond, nil}, // whole seconds
		{11 * time.Second, ErrCredExpired},
		{-10 * time.Second, nil}, // skew allowed up to the TTL
		{-11 * time.Second, ErrCredRewound},
	}
	for _, tc := range cases {
		dec := newTestLocal(t, LocalConfig{})
		got, err := dec.DecodeAt(cred, t0.Add(tc.at))
		if tc.want == nil {
			if err != nil {
				t.Errorf("at %v: %v", tc.at, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) || !Decoded(err) || got == nil || string(got.Payload) != "t" {
			t.Errorf("at %v: %+v %v, want %v with the fields", tc.at, got, err, tc.want)
		}
	}
	// A decoder with a lower maximum TTL caps the credential's.
	capped := newTestLocal(t, LocalConfig{MaxTTL: 5 * time.Second})
	got, err := capped.DecodeAt(cred, t0.Add(6*time.Second))
	if !errors.Is(err, ErrCredExpired) || got.TTL != 5*time.Second {
		t.Errorf("capped: %+v %v", got, err)
	}
	// Expiry is checked before replay, so an expired replay says expired.
	if _, err := enc.DecodeAt(cred, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := enc.DecodeAt(cred, t0.Add(time.Minute)); !errors.Is(err, ErrCredExpired) {
		t.Errorf("expired replay: %v", err)
	}
	if _, err := enc.DecodeAt(cred, t0.Add(time.Second)); !errors.Is(err, ErrCredReplayed) {
		t.Errorf("replay: %v", err)
	}
}

func TestReplayCache(t *testing.T) {
	c := newReplayCache(replayShards * 2) // two entries per shard
	mac := func(i byte) []byte { return bytes.Repeat([]byte{i}, 32) }
	now := int64(1000)
	// Same first byte, so one shard.
	a, b, d := mac(0), append([]byte{0}, mac(1)[1:]...), append([]byte{0}, mac(2)[1:]...)
	for _, step := range []struct {
		mac     []byte
		exp     int64
		now     int64
		fresh   bool
		wantErr *Error
	}{
		{a, now + 10, now, true, nil},
		{a, now + 10, now, false, nil},
		{a, now + 11, now, true, nil},  // another expiry is another credential
		{b, now + 5, now, false, nil},  // full: a@+10 forgotten, the cutoff is +10
		{a, now + 10, now, false, nil}, // forgotten, but at the cutoff: replayed
		{d, now + 20, now + 11, true, nil},
		{b, now + 20, now + 11, true, nil}, // full: a@+11 forgotten, cutoff +11
		{b, now + 20, now + 11, false, nil},
		{a, now + 11, now + 11, false, nil}, // forgotten, at the cutoff
	} {
		fresh, err := c.insert(step.mac, step.exp, step.now)
		if fresh != step.fresh || (step.wantErr == nil) != (err == nil) || (err != nil && !errors.Is(err, step.wantErr)) {
			t.Fatalf("insert(%x.., %d, %d) = %v, %v; want %v, %v", step.mac[:2], step.exp, step.now, fresh, err, step.fresh, step.wantErr)
		}
	}
	if n := c.len(); n != 2 {
		t.Fatalf("len %d", n)
	}
	// Another shard is independent; a later insert in the first purges
	// what expired there.
	if _, err := c.insert(mac(9), now+100, now+50); err != nil {
		t.Fatal(err)
	}
	if _, err := c.insert(a, now+200, now+150); err != nil {
		t.Fatal(err)
	}
	if n := c.len(); n != 2 {
		t.Fatalf("len %d after purge, want 2", n)
	}
}

func TestLocalReplayCacheBounded(t *testing.T) {
	l := newTestLocal(t, LocalConfig{ReplayLimit: 64})
	// A flood of credentials, one a second, more than the cache holds:
	// the cache stays bounded, the newest are still accepted (a full cache
	// does not shut the door), and no credential is ever accepted twice.
	var creds []string
	for i := range 64 * 4 {
		at := t0.Add(time.Duration(i) * time.Second)
		cred, err := l.EncodeAt([]byte{byte(i)}, 0, 0, time.Hour, at)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.DecodeAt(cred, at); err != nil {
			t.Fatalf("credential %d, fresh: %v", i, err)
		}
		creds = append(creds, cred)
	}
	if n := l.replay.len(); n > 64+replayShards {
		t.Fatalf("%d entries in a cache of 64", n)
	}
	end := t0.Add(64 * 4 * time.Second)
	for i, cred := range creds {
		if _, err := l.DecodeAt(cred, end); !errors.Is(err, ErrCredReplayed) {
			t.Fatalf("credential %d again: %v, want replayed", i, err)
		}
	}
	cred, _ := l.EncodeAt([]byte("later"), 0, 0, time.Hour, end)
	if _, err := l.DecodeAt(cred, end); err != nil {
		t.Fatalf("a new credential after the flood: %v", err)
	}
}

func TestLocalConcurrent(t *testing.T) {
	l := newTestLocal(t, LocalConfig{})
	var wg sync.WaitGroup
	creds := make([][]string, 8)
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := fmt.Appendf(nil, "%d/%d", g, i)
				cred, err := l.EncodeAt(p, uint32(g), 0, 0, t0)
				if err == nil {
					var c *Credential
					c, err = l.DecodeAt(cred, t0)
					if err == nil && (!bytes.Equal(c.Payload, p) || c.UID != uint32(g)) {
						err = fmt.Errorf("decoded %q uid %d", c.Payload, c.UID)
					}
				}
				if err != nil {
					errs <- err
					return
				}
				creds[g] = append(creds[g], cred)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, cs := range creds {
		for _, c := range cs {
			if _, err := l.DecodeAt(c, t0); !errors.Is(err, ErrCredReplayed) {
				t.Fatalf("replay: %v", err)
			}
		}
	}
}

func TestNewLocalConfig(t *testing.T) {
	k, _ := NewKey(testSecret)
	if _, err := NewLocal(nil, LocalConfig{}); err == nil {
		t.Error("nil key accepted")
	}
	if _, err := NewLocal(k, LocalConfig{Origin: netip.MustParseAddr("::1")}); err == nil {
		t.Error("IPv6 origin accepted")
	}
	if _, err := NewLocal(k, LocalConfig{MaxTTL: -time.Second}); err == nil {
		t.Error("negative max TTL accepted")
	}
	l, err := NewLocal(k, LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if id := l.Identity(); id.UID != uint32(os.Geteuid()) || id.GID != uint32(os.Getegid()) {
		t.Errorf("default identity %+v", id)
	}
	if _, err := NewKey(testSecret[:MinKeyLen-1]); !errors.Is(err, ErrKeyFile) {
		t.Errorf("short key: %v", err)
	}
}

func FuzzLocalDecode(f *testing.F) {
	l := newTestLocal(f, LocalConfig{})
	for _, opt := range []EncodeOption{
		WithAlgorithms(CipherDefault, MACDefault, ZipDefault),
		WithAlgorithms(CipherNone, MACMD5, ZipZlib),
		WithAlgorithms(CipherAES256, MACSHA512, ZipZlib),
	} {
		cred, err := l.EncodeAt(bytes.Repeat([]byte("fuzz"), 40), 0, 0, 0, t0, opt)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(cred)
	}
	f.Add("MUNGE:AwQFAA==:")
	f.Add("MUNGE::")
	f.Fuzz(func(t *testing.T, cred string) {
		got, err := l.DecodeAt(cred, t0)
		if err == nil && got == nil {
			t.Fatal("no error and no credential")
		}
		if err != nil {
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a munge error", err)
			}
			if (got != nil) != Decoded(err) {
				t.Fatalf("credential %v beside %v", got, err)
			}
		}
	})
}

func TestHostOrigin(t *testing.T) {
	a, err := HostOrigin(t.Context())
	if err != nil {
		t.Skipf("host name does not resolve here: %v", err)
	}
	if !a.Is4() {
		t.Fatalf("origin %v", a)
	}
	if _, err := NewLocal(&Key{}, LocalConfig{Origin: a}); err != nil {
		t.Fatal(err)
	}
}

// The system key belongs to the munge user: refused as ours unless that
// owner is trusted.
func TestLoadKeySystemKey(t *testing.T) {
	const path = "/etc/munge/munge.key"
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Skipf("no system key: %v", err)
	}
	if os.Geteuid() != 0 || st.Uid == 0 {
		t.Skip("needs root and a key owned by the munge user")
	}
	if _, err := LoadKey(path); !errors.Is(err, ErrKeyFile) {
		t.Fatalf("untrusted owner: %v", err)
	}
	if _, err := LoadKey(path, st.Uid); err != nil {
		t.Fatalf("trusted owner %d: %v", st.Uid, err)
	}
}

// TestLocalNotBefore: a credential encoded before NotBefore (a controller
// restarted since) counts as replayed; one of the same second or later
// is decoded.
func TestLocalNotBefore(t *testing.T) {
	start := t0.Add(time.Minute)
	l := newTestLocal(t, LocalConfig{NotBefore: start})
	for _, tc := range []struct {
		at   time.Time
		want error
	}{
		{t0, ErrCredReplayed},
		{start.Add(-time.Second), ErrCredReplayed},
		{start, nil},
		{start.Add(time.Second), nil},
	} {
		cred, err := l.EncodeAt([]byte("x"), 0, 0, 0, tc.at)
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.DecodeAt(cred, start.Add(2*time.Second))
		if (tc.want == nil) != (err == nil) || (err != nil && !errors.Is(err, tc.want)) {
			t.Errorf("encoded at %v: %v, want %v", tc.at.Sub(start), err, tc.want)
		}
	}
}
