package bcast

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

const nobody = 65534

type svcRig struct {
	*credRig
	svc     *Service
	dir     string // mode 0755, owned by the transfer's user
	user    Caller
	revoked bool
}

// newSvcRig: transfers of user (nobody when the test runs as root, else
// the test's own user) into a fresh directory that user owns.
func newSvcRig(t *testing.T) *svcRig {
	t.Helper()
	r := &svcRig{credRig: newCredRig(t)}
	r.user = Caller{UID: uint32(os.Geteuid()), GID: uint32(os.Getegid())}
	if os.Geteuid() == 0 {
		r.user = Caller{UID: nobody, GID: nobody}
	}
	dir, err := os.MkdirTemp("", "bcast-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.dir = filepath.Join(dir, "user")
	if err := os.Mkdir(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(r.dir, int(r.user.UID), int(r.user.GID)); err != nil {
		t.Fatal(err)
	}
	r.svc = &Service{Node: "n1", Creds: r.checker, Clock: func() time.Time { return r.now }, Log: slog.New(slog.DiscardHandler),
		Revoked: func(uint32, int64) bool { return r.revoked },
		Groups:  func(string, uint32, uint32) []uint32 { return []uint32{r.user.GID} }}
	return r
}

func (r *svcRig) userCred(t *testing.T, gids ...uint32) msg.SbcastCred {
	c := r.cred(t)
	c.UID, c.GID, c.GIDs = r.user.UID, r.user.GID, gids
	return signCred(t, c)
}

// send sends data in blocks (nil: an empty file) and returns each rc.
func (r *svcRig) send(c msg.SbcastCred, fname string, flags uint16, blocks ...[]byte) []int {
	var rcs []int
	var off uint64
	for i, b := range blocks {
		req := &msg.FileBcast{BlockNo: uint32(i + 1), Flags: flags, Modes: 0o100640, Fname: msg.Str(fname),
			BlockOffset: off, UncompLen: uint32(len(b)), Block: b, Cred: c}
		if i == len(blocks)-1 {
			req.Flags |= msg.FileBcastLastBlock
		}
		rcs = append(rcs, r.svc.Handle(context.Background(), req, r.user))
		off += uint64(len(b))
	}
	return rcs
}

func statOf(t *testing.T, path string) (os.FileInfo, *syscall.Stat_t) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st, st.Sys().(*syscall.Stat_t)
}

func TestTransferBlocks(t *testing.T) {
	r := newSvcRig(t)
	c := r.userCred(t)
	path := filepath.Join(r.dir, "f")
	text, err := os.ReadFile("testdata/text")
	if err != nil {
		t.Fatal(err)
	}
	comp, _ := os.ReadFile("testdata/text.lz4legacy")
	lz := legacyBlocks(t, comp)[0]
	ctx := context.Background()
	reqs := []*msg.FileBcast{
		{BlockNo: 1, Block: []byte("head\n")},
		{BlockNo: 2, Compress: msg.CompressLZ4, Block: lz, UncompLen: uint32(len(text)), BlockOffset: 5},
		{BlockNo: 3, Flags: msg.FileBcastLastBlock, Block: []byte("tail\n"), BlockOffset: 5 + uint64(len(text)),
			Modes: 0o100751, Atime: 1_500_000_000, Mtime: 1_500_000_100},
	}
	for _, q := range reqs {
		q.Fname, q.Cred = msg.Str(path), c
		if rc := r.svc.Handle(ctx, q, r.user); rc != 0 {
			t.Fatalf("block %d: rc %d", q.BlockNo, rc)
		}
	}
	got, _ := os.ReadFile(path)
	if string(got) != "head\n"+string(text)+"tail\n" {
		t.Errorf("content of %d bytes differs", len(got))
	}
	st, sys := statOf(t, path)
	if st.Mode().Perm() != 0o751 || sys.Uid != r.user.UID || sys.Gid != r.user.GID || st.ModTime().Unix() != 1_500_000_100 {
		t.Errorf("mode %v uid %d gid %d mtime %d", st.Mode(), sys.Uid, sys.Gid, st.ModTime().Unix())
	}
	if r.svc.Transfers() != 0 {
		t.Errorf("%d transfers left open", r.svc.Transfers())
	}
}

func TestTransferForceAndOrder(t *testing.T) {
	r := newSvcRig(t)
	c := r.userCred(t)
	path := filepath.Join(r.dir, "f")
	if rc := r.send(c, path, 0, []byte("one")); rc[0] != 0 {
		t.Fatalf("rc %v", rc)
	}
	// Each sbcast has its own credential.
	c2 := r.cred(t)
	c2.UID, c2.GID, c2.StepID = r.user.UID, r.user.GID, 1
	c2 = signCred(t, c2)
	if rc := r.send(c2, path, 0, []byte("two")); rc[0] != int(syscall.EEXIST) {
		t.Errorf("existing file without force: rc %v", rc)
	}
	c3 := r.cred(t)
	c3.UID, c3.GID, c3.StepID = r.user.UID, r.user.GID, 2
	c3 = signCred(t, c3)
	if rc := r.send(c3, path, msg.FileBcastForce, []byte("three")); rc[0] != 0 {
		t.Errorf("force: rc %v", rc)
	}
	if b, _ := os.ReadFile(path); string(b) != "three" {
		t.Errorf("after force: %q", b)
	}

	// Out of order: the transfer is refused and dropped.
	c4 := r.cred(t)
	c4.UID, c4.GID, c4.StepID = r.user.UID, r.user.GID, 3
	c4 = signCred(t, c4)
	ctx := context.Background()
	p2 := filepath.Join(r.dir, "g")
	first := &msg.FileBcast{BlockNo: 1, Fname: msg.Str(p2), Block: []byte("ab"), Cred: c4}
	if rc := r.svc.Handle(ctx, first, r.user); rc != 0 {
		t.Fatal(rc)
	}
	for _, q := range []*msg.FileBcast{
		{BlockNo: 3, BlockOffset: 2, Block: []byte("x")}, // skipped block 2
		{BlockNo: 2, BlockOffset: 2, Block: []byte("x")}, // no transfer any more
	} {
		q.Fname, q.Cred = msg.Str(p2), c4
		if rc := r.svc.Handle(ctx, q, r.user); rc != slurmerr.SLURM_ERROR {
			t.Errorf("block %d: rc %d", q.BlockNo, rc)
		}
	}
	// A wrong offset and an unknown compression are refused too.
	for i, q := range []*msg.FileBcast{
		{BlockNo: 2, BlockOffset: 1, Block: []byte("x")},
		{BlockNo: 2, BlockOffset: 2, Block: []byte("x"), Compress: msg.CompressZlib},
		{BlockNo: 2, BlockOffset: 2, Block: []byte{0xf0}, Compress: msg.CompressLZ4, UncompLen: 20},
	} {
		// A new sbcast, a new credential.
		cn := r.cred(t)
		cn.UID, cn.GID, cn.StepID = r.user.UID, r.user.GID, uint32(10+i)
		cn = signCred(t, cn)
		first.Flags, first.Cred = msg.FileBcastForce, cn
		if rc := r.svc.Handle(ctx, first, r.user); rc != 0 {
			t.Fatal(rc)
		}
		q.Fname, q.Cred = msg.Str(p2), cn
		if rc := r.svc.Handle(ctx, q, r.user); rc != slurmerr.SLURM_ERROR {
			t.Errorf("%+v: rc %d", q, rc)
		}
		if r.svc.Transfers() != 0 {
			t.Errorf("transfer kept after an error")
		}
	}
}

func TestTransferRefusals(t *testing.T) {
	r := newSvcRig(t)
	c := r.userCred(t)
	forged := c
	forged.GIDs = []uint32{0}
	if rc := r.send(forged, filepath.Join(r.dir, "x"), 0, []byte("a")); rc[0] != slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL {
		t.Errorf("forged: %v", rc)
	}
	r.revoked = true
	if rc := r.send(c, filepath.Join(r.dir, "x"), 0, []byte("a")); rc[0] != slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL {
		t.Errorf("revoked job: %v", rc)
	}
	if _, err := os.Lstat(filepath.Join(r.dir, "x")); err == nil {
		t.Error("a refused transfer created its file")
	}
}

// TestTransferAsUser: the file is opened with the user's identity only,
// even though slurmd is root: no write where the user may not, no
// following a link to a file the user may not write.
func TestTransferAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	r := newSvcRig(t)
	root := filepath.Dir(r.dir)
	secret := filepath.Join(root, "secret")
	if err := os.WriteFile(secret, []byte("root's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(r.dir, "link")); err != nil {
		t.Fatal(err)
	}
	group := filepath.Join(root, "group")
	if err := os.Mkdir(group, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(group, 0, 4242); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(group, 0o770); err != nil {
		t.Fatal(err)
	}
	step := uint32(0)
	cred := func(gids ...uint32) msg.SbcastCred {
		c := r.userCred(t, gids...)
		step++
		c.StepID = step
		return signCred(t, c)
	}
	for _, c := range []struct {
		name  string
		path  string
		flags uint16
		gids  []uint32
		want  int
	}{
		{"root's directory", filepath.Join(root, "x"), 0, nil, int(syscall.EACCES)},
		{"link to root's file, force", filepath.Join(r.dir, "link"), msg.FileBcastForce, nil, int(syscall.EACCES)},
		{"link to root's file", filepath.Join(r.dir, "link"), 0, nil, int(syscall.EEXIST)},
		{"group directory, not a member", filepath.Join(group, "a"), 0, []uint32{nobody}, int(syscall.EACCES)},
		{"group directory, member through the credential", filepath.Join(group, "b"), 0, []uint32{nobody, 4242}, 0},
	} {
		rc := r.send(cred(c.gids...), c.path, c.flags, []byte("data\n"))
		if rc[0] != c.want {
			t.Errorf("%s: rc %v, want %d", c.name, rc, c.want)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "root's\n" {
		t.Errorf("root's file changed: %q", b)
	}
	_, sys := statOf(t, filepath.Join(group, "b"))
	if sys.Uid != nobody || sys.Gid != nobody {
		t.Errorf("created as %d:%d", sys.Uid, sys.Gid)
	}
	// The daemon's own thread kept its identity.
	if os.Geteuid() != 0 {
		t.Fatal("euid changed")
	}
	if _, err := os.ReadFile(secret); err != nil {
		t.Fatal(err)
	}
}

func TestTransferSendLibs(t *testing.T) {
	r := newSvcRig(t)
	c := r.userCred(t)
	exe := filepath.Join(r.dir, "prog")
	if rc := r.send(c, exe, msg.FileBcastExe, []byte("#!/bin/true\n")); rc[0] != 0 {
		t.Fatalf("rc %v", rc)
	}
	if rc := r.send(c, "libfoo.so.1", msg.FileBcastSO, []byte("lib"), []byte("foo")); rc[0] != 0 || rc[1] != 0 {
		t.Fatalf("shared object: rc %v", rc)
	}
	if b, _ := os.ReadFile(filepath.Join(exe+"_libs", "libfoo.so.1")); string(b) != "libfoo" {
		t.Errorf("library: %q", b)
	}
	if d, ok := r.svc.LibDir(r.user.UID, 42, 0); !ok || d != exe+"_libs" {
		t.Errorf("LibDir %q %v", d, ok)
	}
	// A shared object of a step that sent no executable.
	c2 := r.cred(t)
	c2.UID, c2.GID, c2.StepID = r.user.UID, r.user.GID, 7
	c2 = signCred(t, c2)
	if rc := r.send(c2, filepath.Join(r.dir, "x"), 0, []byte("x")); rc[0] != 0 {
		t.Fatal(rc)
	}
	if rc := r.send(c2, "libbar.so", msg.FileBcastSO, []byte("x")); rc[0] != slurmerr.SLURM_ERROR {
		t.Errorf("no library directory: rc %v", rc)
	}
	r.svc.JobEnded(42)
	if _, ok := r.svc.LibDir(r.user.UID, 42, 0); ok {
		t.Error("library directory kept after the job ended")
	}
}

func TestTransferDirectoryNameAndCleanup(t *testing.T) {
	r := newSvcRig(t)
	c := r.userCred(t)
	ctx := context.Background()
	req := &msg.FileBcast{BlockNo: 1, Fname: msg.Str(r.dir + "/"), Block: []byte("a"), Cred: c}
	if rc := r.svc.Handle(ctx, req, r.user); rc != 0 {
		t.Fatal(rc)
	}
	want := filepath.Join(r.dir, "slurm_bcast_42.0_n1")
	if _, err := os.Lstat(want); err != nil {
		t.Fatal(err)
	}
	r.now = r.now.Add(FileBcastTimeout - time.Second)
	r.svc.Cleanup()
	if r.svc.Transfers() != 1 {
		t.Fatal("a transfer idle for less than the timeout was dropped")
	}
	r.now = r.now.Add(2 * time.Second)
	r.svc.Cleanup()
	if r.svc.Transfers() != 0 {
		t.Fatal("a stalled transfer was kept")
	}
	next := &msg.FileBcast{BlockNo: 2, BlockOffset: 1, Fname: msg.Str(r.dir + "/"), Block: []byte("b"), Cred: c}
	if rc := r.svc.Handle(ctx, next, r.user); rc != slurmerr.SLURM_ERROR {
		t.Errorf("block after the cleanup: rc %d", rc)
	}
}
