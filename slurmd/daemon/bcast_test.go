package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// TestFileBcastRPC drives REQUEST_FILE_BCAST through the daemon: a
// transfer, then the refusals (replayed, forged, another user's, another
// node's, a revoked job's credential), each ESLURMD_INVALID_JOB_CREDENTIAL.
func TestFileBcastRPC(t *testing.T) {
	// fakeAuth gives the sender gid = uid.
	user := uint32(os.Geteuid())
	if user == 0 {
		user = 65534
	} else if uint32(os.Getegid()) != user {
		t.Skip("needs a user whose gid equals its uid")
	}
	r := newRig(t, rigOpts{})
	dir, err := os.MkdirTemp("", "bcast-rpc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, int(user), int(user)); err != nil {
		t.Fatal(err)
	}
	signer, err := jobcred.NewHMACSigner(credKey)
	if err != nil {
		t.Fatal(err)
	}
	step := uint32(0)
	mkCred := func(job uint32, nodes string, edit func(*msg.SbcastCred)) msg.SbcastCred {
		step++
		c := msg.SbcastCred{Ctime: r.now.Unix() - 1, Expiration: r.now.Unix() + 600, JobID: job, StepID: step,
			UID: user, GID: user, GIDs: []uint32{user}, Nodes: msg.Str(nodes)}
		body, err := c.SignedBytes(codec.Current)
		if err != nil {
			t.Fatal(err)
		}
		if c.Signature, err = signer.Sign(context.Background(), body); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(&c)
		}
		return c
	}
	req := func(c msg.SbcastCred, name string, no uint32, off uint64, data string, last bool) msg.FileBcast {
		b := msg.FileBcast{BlockNo: no, Modes: 0o100644, Fname: msg.Str(filepath.Join(dir, name)),
			BlockOffset: off, Block: []byte(data), UncompLen: uint32(len(data)), Cred: c}
		if last {
			b.Flags |= msg.FileBcastLastBlock
		}
		return b
	}

	c := mkCred(9, "n[1-2]", nil)
	if rc := r.rc(user, msgtype.REQUEST_FILE_BCAST, req(c, "f", 1, 0, "hello ", false)); rc != 0 {
		t.Fatalf("block 1: rc %d", rc)
	}
	if rc := r.rc(user, msgtype.REQUEST_FILE_BCAST, req(c, "f", 2, 6, "world\n", true)); rc != 0 {
		t.Fatalf("block 2: rc %d", rc)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "hello world\n" {
		t.Errorf("file %q", b)
	}

	const invalid = slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL
	for _, x := range []struct {
		name string
		uid  uint32
		cred msg.SbcastCred
	}{
		{"replayed", user, c},
		{"forged groups", user, mkCred(9, "n[1-2]", func(c *msg.SbcastCred) { c.GIDs = []uint32{0} })},
		{"forged job", user, mkCred(9, "n[1-2]", func(c *msg.SbcastCred) { c.JobID = 10 })},
		{"another user's", user + 1, mkCred(9, "n[1-2]", nil)},
		{"another node's", user, mkCred(9, "n2", nil)},
		{"expired", user, mkCred(9, "n1", func(c *msg.SbcastCred) { c.Expiration = r.now.Unix() - 1 })},
	} {
		if rc := r.rc(x.uid, msgtype.REQUEST_FILE_BCAST, req(x.cred, x.name, 1, 0, "x", true)); rc != invalid {
			t.Errorf("%s: rc %d, want %d", x.name, rc, invalid)
		}
		if _, err := os.Lstat(filepath.Join(dir, x.name)); err == nil {
			t.Errorf("%s: file created", x.name)
		}
	}

	// A job that ended here: its credentials made before the end are
	// refused.
	old := mkCred(11, "n1", nil)
	if rc := r.rc(500, msgtype.REQUEST_TERMINATE_JOB, killReq(11, r.now)); rc != slurmerr.ESLURMD_KILL_JOB_ALREADY_COMPLETE && rc != 0 {
		t.Fatalf("terminate: rc %d", rc)
	}
	if rc := r.rc(user, msgtype.REQUEST_FILE_BCAST, req(old, "late", 1, 0, "x", true)); rc != invalid {
		t.Errorf("revoked job: rc %d", rc)
	}
}

// TestLibdirFixup: a step whose executable came with --send-libs gets
// its library directory first in LD_LIBRARY_PATH, as _handle_libdir_fixup.
func TestLibdirFixup(t *testing.T) {
	user := uint32(os.Geteuid())
	if user == 0 {
		user = 65534
	} else if uint32(os.Getegid()) != user {
		t.Skip("needs a user whose gid equals its uid")
	}
	r := newRig(t, rigOpts{})
	dir, err := os.MkdirTemp("", "bcast-libs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, int(user), int(user)); err != nil {
		t.Fatal(err)
	}
	signer, _ := jobcred.NewHMACSigner(credKey)
	c := msg.SbcastCred{Ctime: r.now.Unix(), Expiration: r.now.Unix() + 600, JobID: 3, StepID: 2,
		UID: user, GID: user, GIDs: []uint32{user}, Nodes: msg.Str("n1")}
	body, _ := c.SignedBytes(codec.Current)
	c.Signature, _ = signer.Sign(context.Background(), body)
	exe := filepath.Join(dir, "prog")
	if rc := r.rc(user, msgtype.REQUEST_FILE_BCAST, msg.FileBcast{BlockNo: 1, Flags: msg.FileBcastExe | msg.FileBcastLastBlock,
		Modes: 0o100755, Fname: msg.Str(exe), Block: []byte("x"), UncompLen: 1, Cred: c}); rc != 0 {
		t.Fatalf("rc %d", rc)
	}
	for _, x := range []struct {
		step uint32
		env  []string
		want string
	}{
		{2, []string{"A=1"}, "LD_LIBRARY_PATH=" + exe + "_libs"},
		{2, []string{"LD_LIBRARY_PATH=/opt/lib"}, "LD_LIBRARY_PATH=" + exe + "_libs:/opt/lib"},
		{1, []string{"LD_LIBRARY_PATH=/opt/lib"}, "LD_LIBRARY_PATH=/opt/lib"},
	} {
		req := msg.LaunchTasksRequest{UID: user, StepID: msg.StepID{JobID: 3, StepID: x.step}}
		for _, e := range x.env {
			req.Env = append(req.Env, msg.Str(e))
		}
		r.d.libdirFixup(&req)
		got := ""
		for _, e := range req.Env {
			if len(e.Value) > 16 && e.Value[:16] == "LD_LIBRARY_PATH=" {
				got = e.Value
			}
		}
		if got != x.want {
			t.Errorf("step %d env %v: %q, want %q", x.step, x.env, got, x.want)
		}
	}
}
