package slurmauth

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// publicDir returns a fresh 0755 directory any uid can traverse (t.TempDir
// is 0700 under a 0700 parent).
func publicDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "slurmauth-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type sackEnv struct {
	path   string
	daemon *Slurm // the key holder that runs the service (real uid)
	srv    *SackServer
}

func startSack(t *testing.T, timeout time.Duration) *sackEnv {
	t.Helper()
	path := filepath.Join(publicDir(t), "run", "sack.socket")
	d := &Slurm{Key: testKey(t), Cluster: "demo", Host: "ctl"}
	srv := &SackServer{Auth: d, Timeout: timeout}
	l, err := ListenSack(path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return &sackEnv{path: path, daemon: d, srv: srv}
}

func (e *sackEnv) client() *SackClient {
	return &SackClient{Paths: []string{e.path}, Timeout: 5 * time.Second}
}

func TestListenSackPermissions(t *testing.T) {
	e := startSack(t, 0)
	st, err := os.Stat(e.path)
	if err != nil || st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != SackSocketMode {
		t.Fatalf("socket %v %v", st.Mode(), err)
	}
	dst, err := os.Stat(filepath.Dir(e.path))
	if err != nil || dst.Mode().Perm() != SackDirMode {
		t.Fatalf("dir %v %v", dst.Mode(), err)
	}

	t.Run("world-writable dir refused", func(t *testing.T) {
		dir := publicDir(t)
		os.Chmod(dir, 0o777)
		if _, err := ListenSack(filepath.Join(dir, "sack.socket")); err == nil || !strings.Contains(err.Error(), "writable") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("regular file not removed", func(t *testing.T) {
		p := filepath.Join(publicDir(t), "sack.socket")
		os.WriteFile(p, []byte("x"), 0o600)
		if _, err := ListenSack(p); err == nil || !strings.Contains(err.Error(), "not a socket") {
			t.Fatalf("%v", err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Fatal("file removed")
		}
	})
	t.Run("symlinked dir refused", func(t *testing.T) {
		base := publicDir(t)
		os.Symlink(publicDir(t), filepath.Join(base, "link"))
		if _, err := ListenSack(filepath.Join(base, "link", "sack.socket")); err == nil {
			t.Fatal("listened through a symlinked directory")
		}
	})
	t.Run("stale socket replaced", func(t *testing.T) {
		p := filepath.Join(publicDir(t), "sack.socket")
		l1, err := ListenSack(p)
		if err != nil {
			t.Fatal(err)
		}
		l1.Close() // leaves the file, as Slurm does
		l2, err := ListenSack(p)
		if err != nil {
			t.Fatal(err)
		}
		l2.Close()
	})
}

// TestSackClientServer: a command without the key signs through sack and
// the daemon verifies with the key; the identity is the caller's real uid.
func TestSackClientServer(t *testing.T) {
	e := startSack(t, 0)
	ctx := context.Background()
	cmd := &Slurm{Sack: e.client(), Cluster: "demo"}
	body := []byte("hello")
	f := codec.NewFrame(msgtype.REQUEST_JOB_INFO, codec.AuthBlob{}, body)
	if err := cmd.Sign(ctx, &f, UIDAny); err != nil {
		t.Fatal(err)
	}
	id, cl, err := e.daemon.VerifyClaims(ctx, &f)
	if err != nil {
		t.Fatal(err)
	}
	if id.UID != uint32(os.Getuid()) || id.GID != uint32(os.Getgid()) || cl.Context != ContextSack || id.Hash != authhash.K12 {
		t.Fatalf("identity %+v claims %+v", id, cl)
	}
	// Bound to the message as any token.
	g := f
	g.Header.MsgType = msgtype.REQUEST_CANCEL_JOB_STEP
	if _, err := e.daemon.Verify(ctx, &g); !errors.Is(err, ErrHash) {
		t.Fatalf("other type: %v", err)
	}

	// The daemon's reply, verified by the command through sack.
	r := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, []byte{0, 0, 0, 0})
	if err := e.daemon.SignHash(ctx, &r, uint32(os.Getuid()), id.Hash); err != nil {
		t.Fatal(err)
	}
	if rid, err := cmd.Verify(ctx, &r); err != nil || rid.UID != uint32(os.Getuid()) {
		t.Fatalf("reply: %+v %v", rid, err)
	}
	r.Body = []byte{0, 0, 0, 1}
	if _, err := cmd.Verify(ctx, &r); !errors.Is(err, ErrHash) {
		t.Fatalf("tampered reply: %v", err)
	}
	// A reply restricted to someone else: sack refuses it for us.
	if err := e.daemon.Sign(ctx, &r, uint32(os.Getuid())+1); err != nil {
		t.Fatal(err)
	}
	_, err = cmd.Verify(ctx, &r)
	if !errors.Is(err, ErrCredInvalid) || !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURM_AUTH_CRED_INVALID}) {
		t.Fatalf("restricted reply: %v", err)
	}
	// Forged token: sack says no.
	if err := cmd.Sack.Verify(ctx, mustMint(t, otherKey(t), mintParams())); !errors.Is(err, ErrCredInvalid) {
		t.Fatalf("forged: %v", err)
	}
}

func TestSackClientTrust(t *testing.T) {
	e := startSack(t, 0)
	c := e.client()
	c.TrustedUIDs = []uint32{uint32(os.Geteuid()) + 12345}
	if _, err := c.Create(context.Background(), UIDAny, nil); !errors.Is(err, ErrSack) ||
		slurmerr.Code(err) != slurmerr.ESLURM_AUTH_NET_ERROR {
		t.Fatalf("untrusted server: %v", err)
	}
	c.TrustedUIDs = []uint32{uint32(os.Geteuid())}
	if _, err := c.Create(context.Background(), UIDAny, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := (&SackClient{Paths: []string{filepath.Join(t.TempDir(), "none")}}).Create(context.Background(), UIDAny, nil); !errors.Is(err, ErrSack) {
		t.Fatalf("no socket: %v", err)
	}
}

func TestSackSocketPaths(t *testing.T) {
	env := func(string) string { return "" }
	got := SackSocketPaths("c1", env)
	want := []string{"/run/slurm-c1/sack.socket", "/run/slurm/sack.socket", "/run/slurmctld/sack.socket", "/run/slurmdbd/sack.socket"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatal(got)
	}
	got = SackSocketPaths("c1", func(n string) string {
		if n == EnvSocket {
			return "/x/s"
		}
		return ""
	})
	if len(got) != 1 || got[0] != "/x/s" {
		t.Fatal(got)
	}
}

// rawExchange sends b and returns everything the server writes before it
// closes the connection.
func rawExchange(t *testing.T, path string, b []byte) ([]byte, error) {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if len(b) > 0 {
		c.Write(b)
	}
	c.(*net.UnixConn).CloseWrite()
	return io.ReadAll(c)
}

func hdr(version uint16, length, rpc uint32) []byte {
	b := binary.BigEndian.AppendUint16(nil, version)
	b = binary.BigEndian.AppendUint32(b, length)
	return binary.BigEndian.AppendUint32(b, rpc)
}

// TestSackGarbage: malformed requests get an error (or a closed
// connection) and the server keeps serving.
func TestSackGarbage(t *testing.T) {
	e := startSack(t, 2*time.Second)
	createFail := []byte{0, 0, 0, 0}
	verifyUnpack := binary.BigEndian.AppendUint32(nil, uint32(slurmerr.ESLURM_AUTH_UNPACK))
	verifyInvalid := binary.BigEndian.AppendUint32(nil, uint32(slurmerr.ESLURM_AUTH_CRED_INVALID))
	validVerify := AppendSackRequest(nil, &SackRequest{Version: 0x2600, RPC: SackVerify, Token: "x.y.z"})
	cases := []struct {
		name string
		in   []byte
		want []byte // nil: closed without a reply
	}{
		{"nothing", nil, nil},
		{"short header", []byte{0x26, 0}, nil},
		{"ascii", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), nil},
		{"length too small", hdr(0x2600, 7, SackCreate), nil},
		{"length huge", hdr(0x2600, 0xFFFFFFFF, SackCreate), nil},
		{"length over limit", hdr(0x2600, MaxSackRequest+1, SackVerify), nil},
		{"unknown rpc", append(hdr(0x2600, 12, 1), 0, 0, 0, 0), nil},
		{"body shorter than length", append(hdr(0x2600, 100, SackCreate), 1, 2, 3), nil},
		{"create without payload", append(hdr(0x2600, 12, SackCreate), 0, 0, 0, 0), createFail},
		{"create mem length past end", append(hdr(0x2600, 16, SackCreate), 0, 0, 0, 0, 0, 0, 1, 0), createFail},
		{"create payload too big", AppendSackRequest(nil, &SackRequest{RPC: SackCreate, Payload: make([]byte, MaxSackPayload+1)}), createFail},
		{"create trailing byte", append(hdr(0x2600, 17, SackCreate), 0, 0, 0, 0, 0, 0, 0, 0, 9), createFail},
		{"verify null token", append(hdr(0x2600, 12, SackVerify), 0, 0, 0, 0), verifyUnpack},
		{"verify no NUL", append(hdr(0x2600, 13, SackVerify), 0, 0, 0, 1, 'x'), verifyUnpack},
		{"verify garbage token", validVerify, verifyInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rawExchange(t, e.path, tc.in)
			if err != nil && tc.want != nil {
				t.Fatal(err)
			}
			if string(got) != string(tc.want) {
				t.Fatalf("reply %x, want %x", got, tc.want)
			}
		})
	}
	// Still alive and correct.
	if _, err := e.client().Create(context.Background(), UIDAny, []byte{1}); err != nil {
		t.Fatal(err)
	}
}

// TestSackSlowClient: a connection that sends nothing is dropped after the
// timeout and does not block others.
func TestSackSlowClient(t *testing.T) {
	e := startSack(t, 300*time.Millisecond)
	c, err := net.Dial("unix", e.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := e.client().Create(context.Background(), UIDAny, nil); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("dropped after %v", d)
	}
}

// TestSackPeerUID runs a child as uid/gid 65534 (nobody): the token sack
// mints for it carries 65534 whatever it asks for, it cannot get a root
// token, and sack refuses to tell it that a root-only token is valid.
func TestSackPeerUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a child as another uid")
	}
	e := startSack(t, 0)
	ctx := context.Background()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(publicDir(t), "child.test")
	src, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	// Tokens the child asks sack to verify: restricted to root, to nobody.
	rootOnly := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, nil)
	e.daemon.Sign(ctx, &rootOnly, 0)
	nobodyOnly := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, nil)
	e.daemon.Sign(ctx, &nobodyOnly, 65534)

	keyPath := filepath.Join(publicDir(t), "slurm.key")
	if _, err := GenerateKey(keyPath); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "-test.run=^TestSackChildHelper$", "-test.v")
	cmd.Env = []string{
		"GOSLURM_SACK_CHILD=1", EnvSocket + "=" + e.path,
		"CHILD_ROOT_TOKEN=" + rootOnly.Auth.Token, "CHILD_NOBODY_TOKEN=" + nobodyOnly.Auth.Token,
		"CHILD_KEY_FILE=" + keyPath,
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	res := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && strings.HasPrefix(k, "CHILD_") {
			res[k] = v
		}
	}
	if res["CHILD_UID"] != "65534" {
		t.Fatalf("child did not run as 65534:\n%s", out)
	}
	// The frame the child signed through sack verifies as uid 65534.
	f := codec.NewFrame(msgtype.REQUEST_SHUTDOWN, AuthBlob(res["CHILD_TOKEN"]), []byte("shutdown"))
	id, cl, err := e.daemon.VerifyClaims(ctx, &f)
	if err != nil {
		t.Fatalf("child's token: %v\n%s", err, out)
	}
	if id.UID != 65534 || id.GID != 65534 || cl.Context != ContextSack {
		t.Fatalf("child's identity %+v %+v", id, cl)
	}
	if res["CHILD_VERIFY_ROOT"] == "ok" || !strings.Contains(res["CHILD_VERIFY_ROOT"], "Invalid authentication credential") {
		t.Fatalf("sack told nobody a root-only token is valid: %q", res["CHILD_VERIFY_ROOT"])
	}
	if res["CHILD_VERIFY_NOBODY"] != "ok" {
		t.Fatalf("nobody's own token: %q", res["CHILD_VERIFY_NOBODY"])
	}
	if res["CHILD_KEY"] == "ok" || !strings.Contains(res["CHILD_KEY"], "permission denied") {
		t.Fatalf("child and the key file: %q", res["CHILD_KEY"])
	}
}

// TestSackChildHelper is the child of TestSackPeerUID.
func TestSackChildHelper(t *testing.T) {
	if os.Getenv("GOSLURM_SACK_CHILD") != "1" {
		t.Skip("helper process")
	}
	ctx := context.Background()
	fmtLine := func(k, v string) { os.Stdout.WriteString(k + "=" + v + "\n") }
	fmtLine("CHILD_UID", strconv.Itoa(os.Getuid()))
	c := &SackClient{Paths: SackSocketPaths("demo", os.Getenv)}
	// Sign a shutdown request, restricted to root: the token says who we
	// really are; there is nothing in the request to claim otherwise.
	s := &Slurm{Sack: c}
	f := codec.NewFrame(msgtype.REQUEST_SHUTDOWN, codec.AuthBlob{}, []byte("shutdown"))
	if err := s.Sign(ctx, &f, UIDAny); err != nil {
		fmtLine("CHILD_ERR", err.Error())
		return
	}
	fmtLine("CHILD_TOKEN", f.Auth.Token)
	for _, x := range []struct{ name, env string }{{"CHILD_VERIFY_ROOT", "CHILD_ROOT_TOKEN"}, {"CHILD_VERIFY_NOBODY", "CHILD_NOBODY_TOKEN"}} {
		if err := c.Verify(ctx, os.Getenv(x.env)); err != nil {
			fmtLine(x.name, err.Error())
		} else {
			fmtLine(x.name, "ok")
		}
	}
	if _, err := LoadKey(os.Getenv("CHILD_KEY_FILE")); err != nil {
		fmtLine("CHILD_KEY", err.Error())
	} else {
		fmtLine("CHILD_KEY", "ok")
	}
}
