package munge_test

// Interop with Debian's real munged, munge and unmunge (MUNGE 0.5.15): each
// test starts a private munged (mungetest.Start) and skips when munged is not
// installed, unless GOSLURM_REQUIRE_ORACLE=1.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// unmungeResult is what the real unmunge printed.
type unmungeResult struct {
	status  int
	meta    map[string]string
	payload []byte
}

// runUnmunge decodes cred with the real unmunge, optionally as another
// uid/gid.
func runUnmunge(t *testing.T, d *mungetest.Daemon, cred string, cred0 *syscall.Credential) unmungeResult {
	t.Helper()
	bin := mungetest.Tool(t, "unmunge")
	dir := t.TempDir()
	if cred0 != nil {
		// t.TempDir's parent is private; the other uid needs its own.
		var err error
		if dir, err = os.MkdirTemp("", "unmunge-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		_ = os.Chmod(dir, 0o777)
	}
	meta, out := filepath.Join(dir, "meta"), filepath.Join(dir, "out")
	cmd := exec.Command(bin, "--socket="+d.Socket, "--metadata="+meta, "--output="+out)
	cmd.Stdin = strings.NewReader(cred)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if cred0 != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred0}
	}
	err := cmd.Run()
	res := unmungeResult{meta: map[string]string{}}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.status = ee.ExitCode()
	default:
		t.Fatalf("unmunge: %v", err)
	}
	if b, err := os.ReadFile(meta); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok {
				res.meta[k] = strings.TrimSpace(v)
			}
		}
	}
	res.payload, _ = os.ReadFile(out)
	if res.status != 0 {
		t.Logf("unmunge exit %d: %s", res.status, strings.TrimSpace(stderr.String()))
	}
	return res
}

// runMunge encodes payload with the real munge.
func runMunge(t *testing.T, d *mungetest.Daemon, payload []byte, args ...string) string {
	t.Helper()
	bin := mungetest.Tool(t, "munge")
	cmd := exec.Command(bin, append([]string{"--socket=" + d.Socket}, args...)...)
	cmd.Stdin = bytes.NewReader(payload)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("munge: %v: %s", err, ee.Stderr)
		}
		t.Fatalf("munge: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestInteropRoundTrip(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	c := d.Client()
	payload := append([]byte{2}, bytes.Repeat([]byte{0xab}, 32)...)
	before := time.Now().Truncate(time.Second)
	cred, err := c.Encode(ctxT(t), payload)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cred, "MUNGE:") || !strings.HasSuffix(cred, ":") {
		t.Fatalf("credential %q", cred)
	}
	got, err := c.Decode(ctxT(t), cred)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Payload, payload) {
		t.Fatalf("payload %x, want %x", got.Payload, payload)
	}
	if got.UID != uint32(os.Getuid()) || got.GID != uint32(os.Getgid()) {
		t.Fatalf("uid/gid %d/%d, want ours %d/%d", got.UID, got.GID, os.Getuid(), os.Getgid())
	}
	if got.Origin.String() != "127.0.0.1" {
		t.Fatalf("origin %v", got.Origin)
	}
	if got.TTL != 300*time.Second || got.UIDRestrict != munge.UIDAny || got.GIDRestrict != munge.GIDAny {
		t.Fatalf("ttl %v restrictions %d/%d", got.TTL, got.UIDRestrict, got.GIDRestrict)
	}
	if got.Encoded.Before(before) || got.Encoded.After(time.Now()) || got.Decoded.Before(got.Encoded) {
		t.Fatalf("times: encoded %v decoded %v (test started %v)", got.Encoded, got.Decoded, before)
	}
	// Debian's munged defaults: AES-128, SHA-256, no compression.
	if got.Cipher != munge.CipherAES128 || got.MAC != munge.MACSHA256 || got.Zip != munge.ZipNone {
		t.Fatalf("algorithms %v/%v/%v", got.Cipher, got.MAC, got.Zip)
	}
	t.Logf("credential %d bytes, %+v", len(cred), *got)
}

func TestInteropEmptyPayload(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	c := d.Client()
	cred, err := c.Encode(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Decode(ctxT(t), cred)
	if err != nil || got.Payload != nil {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestInteropOurEncodeRealUnmunge(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	payload := []byte("hello from goslurm\x00\x01\x02")
	cred, err := d.Client().Encode(ctxT(t), payload, munge.WithTTL(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	r := runUnmunge(t, d, cred, nil)
	if r.status != 0 || !strings.HasPrefix(r.meta["STATUS"], "Success") {
		t.Fatalf("unmunge status %d meta %v", r.status, r.meta)
	}
	if !bytes.Equal(r.payload, payload) {
		t.Fatalf("unmunge payload %q", r.payload)
	}
	if r.meta["TTL"] != "60" || !strings.Contains(r.meta["UID"], fmt.Sprintf("(%d)", os.Getuid())) ||
		r.meta["LENGTH"] != strconv.Itoa(len(payload)) || !strings.Contains(r.meta["ENCODE_HOST"], "127.0.0.1") {
		t.Fatalf("unmunge metadata %v", r.meta)
	}
}

func TestInteropRealMungeOurDecode(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	payload := []byte("payload from the real munge")
	cred := runMunge(t, d, payload, "--ttl=120")
	got, err := d.Client().Decode(ctxT(t), cred)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Payload, payload) || got.TTL != 120*time.Second || got.UID != uint32(os.Getuid()) {
		t.Fatalf("decoded %+v", got)
	}
	// The real munge can also restrict; we see the restriction fields.
	cred = runMunge(t, d, nil, "--restrict-uid="+strconv.Itoa(os.Getuid()), "--restrict-gid="+strconv.Itoa(os.Getgid()))
	got, err = d.Client().Decode(ctxT(t), cred)
	if err != nil {
		t.Fatal(err)
	}
	if got.UIDRestrict != uint32(os.Getuid()) || got.GIDRestrict != uint32(os.Getgid()) {
		t.Fatalf("restrictions %d/%d", got.UIDRestrict, got.GIDRestrict)
	}
}

// otherUID is an unprivileged uid/gid pair for restriction tests; the tests
// that need to run as it require root.
const otherUID, otherGID = 65534, 65534

func TestInteropUIDRestriction(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	c := d.Client()
	cred, err := c.Encode(ctxT(t), []byte("for 65534 only"), munge.WithUIDRestriction(otherUID))
	if err != nil {
		t.Fatal(err)
	}
	// Our uid (root here) may not decode it: munged 0.5.15 gives root no
	// override (MUNGE_AUTH_ROOT_ALLOW_FLAG is 0 and has no option).
	got, err := c.Decode(ctxT(t), cred)
	if !errors.Is(err, munge.ErrCredUnauthorized) || got != nil {
		t.Fatalf("decode as uid %d: cred %v err %v, want EMUNGE_CRED_UNAUTHORIZED and no data", os.Getuid(), got, err)
	}
	// Nor does the real unmunge.
	if r := runUnmunge(t, d, cred, nil); r.status != int(munge.CodeCredUnauthorized) {
		t.Fatalf("real unmunge as uid %d: exit %d", os.Getuid(), r.status)
	}
	if os.Getuid() != 0 {
		t.Skip("decoding as another uid needs root")
	}
	// The intended uid can: the real unmunge, and our client in a child
	// process running as that uid (munged sees it through SO_PEERCRED).
	r := runUnmunge(t, d, cred, &syscall.Credential{Uid: otherUID, Gid: otherGID})
	if r.status != 0 || string(r.payload) != "for 65534 only" {
		t.Fatalf("unmunge as %d: exit %d payload %q meta %v", otherUID, r.status, r.payload, r.meta)
	}
	cred2, err := c.Encode(ctxT(t), []byte("again"), munge.WithUIDRestriction(otherUID))
	if err != nil {
		t.Fatal(err)
	}
	out := runChildDecode(t, d, cred2, otherUID, otherGID)
	if out != "ok uid=0 payload=again" {
		t.Fatalf("our client as uid %d: %q", otherUID, out)
	}
}

func TestInteropGIDRestriction(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	c := d.Client()
	cred, err := c.Encode(ctxT(t), []byte("g"), munge.WithGIDRestriction(otherGID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decode(ctxT(t), cred); !errors.Is(err, munge.ErrCredUnauthorized) {
		t.Fatalf("gid-restricted to %d, decode as gid %d: %v", otherGID, os.Getgid(), err)
	}
	cred, err = c.Encode(ctxT(t), []byte("g"), munge.WithGIDRestriction(uint32(os.Getgid())))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Decode(ctxT(t), cred)
	if err != nil || got.GIDRestrict != uint32(os.Getgid()) {
		t.Fatalf("own gid: %+v %v", got, err)
	}
}

// runChildDecode re-executes the test binary as uid/gid to decode cred with
// our client, returning what the child printed.
func runChildDecode(t *testing.T, d *mungetest.Daemon, cred string, uid, gid uint32) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The go test binary lives in a private build directory; copy it where
	// the other uid can execute it.
	dir, err := os.MkdirTemp("", "mungechild-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "munge.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestChildDecodeHelper$")
	cmd.Env = append(os.Environ(), "GOSLURM_MUNGE_CHILD_SOCKET="+d.Socket, "GOSLURM_MUNGE_CHILD_CRED="+cred, "HOME=/")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if s, ok := strings.CutPrefix(line, "CHILD: "); ok {
			return s
		}
	}
	t.Fatalf("child printed no result:\n%s", out)
	return ""
}

// TestChildDecodeHelper is the child side of runChildDecode; it does
// nothing in a normal run.
func TestChildDecodeHelper(t *testing.T) {
	sock := os.Getenv("GOSLURM_MUNGE_CHILD_SOCKET")
	if sock == "" {
		t.Skip("helper process only")
	}
	got, err := (&munge.Client{Socket: sock, SocketRetries: -1}).Decode(context.Background(), os.Getenv("GOSLURM_MUNGE_CHILD_CRED"))
	if err != nil {
		fmt.Printf("CHILD: error %v\n", err)
		return
	}
	fmt.Printf("CHILD: ok uid=%d payload=%s\n", got.UID, got.Payload)
}

func TestInteropReplay(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	c := d.Client()
	cred, err := c.Encode(ctxT(t), []byte("once"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decode(ctxT(t), cred); err != nil {
		t.Fatal(err)
	}
	got, err := c.Decode(ctxT(t), cred)
	if !errors.Is(err, munge.ErrCredReplayed) {
		t.Fatalf("second decode: %v, want EMUNGE_CRED_REPLAYED", err)
	}
	// munged still returns the decoded fields with a replay verdict.
	if !munge.Decoded(err) || got == nil || string(got.Payload) != "once" || got.UID != uint32(os.Getuid()) {
		t.Fatalf("replayed credential came back as %+v", got)
	}
	// A real munge credential replayed through our client, and ours through
	// the real unmunge, behave the same.
	if r := runUnmunge(t, d, cred, nil); r.status != int(munge.CodeCredReplayed) || string(r.payload) != "once" {
		t.Fatalf("real unmunge on replay: exit %d payload %q", r.status, r.payload)
	}
}

func TestInteropExpired(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	c := d.Client()
	cred, err := c.Encode(ctxT(t), []byte("short-lived"), munge.WithTTL(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Decode(ctxT(t), cred)
	if err != nil {
		t.Fatal(err)
	}
	if first.TTL != time.Second {
		t.Fatalf("ttl %v", first.TTL)
	}
	// munged calls it expired once its clock (whole seconds) passes
	// encode time + TTL: wait for encode+2 s, the least that works.
	time.Sleep(time.Until(first.Encoded.Add(2*time.Second)) + 20*time.Millisecond)
	got, err := c.Decode(ctxT(t), cred)
	// munged checks time before replay, so this already-decoded credential
	// reports EXPIRED, not REPLAYED.
	if !errors.Is(err, munge.ErrCredExpired) {
		t.Fatalf("decode after TTL: %v, want EMUNGE_CRED_EXPIRED", err)
	}
	if got == nil || string(got.Payload) != "short-lived" || !got.Encoded.Equal(first.Encoded) {
		t.Fatalf("expired credential came back as %+v", got)
	}
}

func TestInteropGarbage(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	c := d.Client()
	good, err := c.Encode(ctxT(t), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	// Flip one base64 character in the middle: the MAC check fails.
	b := []byte(good)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	cases := []struct {
		name, cred string
		want       []*munge.Error
	}{
		{"no prefix", "garbage", []*munge.Error{munge.ErrBadCred}},
		{"empty body", "MUNGE::", []*munge.Error{munge.ErrBadCred}},
		{"not base64", "MUNGE:!!!!:", []*munge.Error{munge.ErrBadCred}},
		{"short", "MUNGE:AwQFAA==:", []*munge.Error{munge.ErrBadCred}},
		{"tampered", string(b), []*munge.Error{munge.ErrCredInvalid, munge.ErrBadCred}},
	}
	for _, tc := range cases {
		got, err := c.Decode(ctxT(t), tc.cred)
		ok := false
		for _, w := range tc.want {
			ok = ok || errors.Is(err, w)
		}
		if !ok || got != nil {
			t.Errorf("%s: cred %v err %v, want one of %v", tc.name, got, err, tc.want)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

func TestInteropWrongKey(t *testing.T) {
	a := mungetest.Start(t, mungetest.Options{})
	b := mungetest.Start(t, mungetest.Options{})
	cred, err := a.Client().Encode(ctxT(t), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Client().Decode(ctxT(t), cred); !errors.Is(err, munge.ErrCredInvalid) {
		t.Fatalf("decode with another key: %v, want EMUNGE_CRED_INVALID", err)
	}
}

func TestInteropBadAlgorithm(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	_, err := d.Client().Encode(ctxT(t), nil, munge.WithAlgorithms(munge.CipherDefault, munge.MACNone, munge.ZipDefault))
	if !errors.Is(err, munge.ErrBadMAC) {
		t.Fatalf("MAC none: %v, want EMUNGE_BAD_MAC", err)
	}
	_, err = d.Client().Encode(ctxT(t), nil, munge.WithAlgorithms(99, munge.MACDefault, munge.ZipDefault))
	if !errors.Is(err, munge.ErrBadCipher) {
		t.Fatalf("cipher 99: %v, want EMUNGE_BAD_CIPHER", err)
	}
}

func TestInteropConcurrent(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	c := d.Client()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := []byte(strconv.Itoa(i))
			cred, err := c.Encode(ctxT(t), p)
			if err != nil {
				errs <- err
				return
			}
			got, err := c.Decode(ctxT(t), cred)
			if err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(got.Payload, p) {
				errs <- fmt.Errorf("payload %q want %q", got.Payload, p)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestInteropDaemonGone(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	d.Stop()
	c := &munge.Client{Socket: d.Socket, SocketRetries: 2, SocketRetryDelay: time.Millisecond}
	_, err := c.Encode(ctxT(t), nil)
	if !errors.Is(err, munge.ErrSocket) {
		t.Fatalf("after munged stopped: %v, want EMUNGE_SOCKET", err)
	}
}

// TestInteropRetriedDecodeMayReplay checks, with hand-built wire bytes, that
// munged lets a request whose header retry counter is non-zero decode an
// already-decoded credential: libmunge's retry after a lost reply must not
// turn into EMUNGE_CRED_REPLAYED.
func TestInteropRetriedDecodeMayReplay(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{})
	c := d.Client()
	cred, err := c.Encode(ctxT(t), []byte("retry"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decode(ctxT(t), cred); err != nil {
		t.Fatal(err)
	}
	status := func(retry byte) byte {
		conn, err := net.Dial("unix", d.Socket)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		body := binary.BigEndian.AppendUint32(nil, uint32(len(cred)+1))
		body = append(append(body, cred...), 0)
		msg := []byte{0x00, 0x60, 0x6D, 0x4B, 4, 4 /* DEC_REQ */, retry}
		msg = binary.BigEndian.AppendUint32(msg, uint32(len(body)))
		if _, err := conn.Write(append(msg, body...)); err != nil {
			t.Fatal(err)
		}
		var hdr [12]byte // 11-byte header + status byte
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			t.Fatal(err)
		}
		if hdr[5] != 5 {
			t.Fatalf("reply type %d, want DEC_RSP (5)", hdr[5])
		}
		return hdr[11]
	}
	if s := status(0); s != byte(munge.CodeCredReplayed) {
		t.Fatalf("retry 0: status %d, want replayed", s)
	}
	if s := status(1); s != 0 {
		t.Fatalf("retry 1: status %d, want success", s)
	}
	if s := status(6); s != byte(munge.CodeSocket) {
		t.Fatalf("retry 6 (over munged's limit of 5): status %d, want EMUNGE_SOCKET", s)
	}
}
