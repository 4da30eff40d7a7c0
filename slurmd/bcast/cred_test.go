package bcast

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
)

var testKey = jobcred.HMACKey{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}

// countingSigs is a signature verifier that counts its calls and can
// behave as munged does: a second decode of one signature is a replay,
// and signatures carry an expiry.
type countingSigs struct {
	v       jobcred.SignatureVerifier
	calls   int
	munge   bool
	seen    map[string]bool
	expires time.Time
}

func (c *countingSigs) VerifySignature(ctx context.Context, body, sig []byte) (jobcred.SigInfo, error) {
	c.calls++
	info, err := c.v.VerifySignature(ctx, body, sig)
	if err != nil || !c.munge {
		return info, err
	}
	if c.seen[string(sig)] {
		return jobcred.SigInfo{}, jobcred.ErrSignatureReplayed
	}
	c.seen[string(sig)] = true
	info.Expires = c.expires
	return info, nil
}

type credRig struct {
	now     time.Time
	sigs    *countingSigs
	checker *CredChecker
}

func newCredRig(t *testing.T) *credRig {
	t.Helper()
	v, err := jobcred.NewHMACVerifier(testKey)
	if err != nil {
		t.Fatal(err)
	}
	r := &credRig{now: time.Unix(1_700_000_000, 0)}
	r.sigs = &countingSigs{v: v, seen: map[string]bool{}, expires: r.now.Add(5 * time.Minute)}
	r.checker = &CredChecker{Sigs: r.sigs, Clock: func() time.Time { return r.now }, Started: r.now.Add(-time.Hour),
		Node: "n1", Version: codec.Version(jobcred.Version2205)}
	return r
}

func signCred(t *testing.T, c msg.SbcastCred) msg.SbcastCred {
	t.Helper()
	s, err := jobcred.NewHMACSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, err := c.SignedBytes(codec.Version(jobcred.Version2205))
	if err != nil {
		t.Fatal(err)
	}
	if c.Signature, err = s.Sign(context.Background(), body); err != nil {
		t.Fatal(err)
	}
	return c
}

func (r *credRig) cred(t *testing.T) msg.SbcastCred {
	return signCred(t, msg.SbcastCred{Ctime: r.now.Unix() - 1, Expiration: r.now.Unix() + 3600, JobID: 42, StepID: 0,
		UID: 1000, GID: 100, UserName: msg.Str("alice"), GIDs: []uint32{100, 27}, Nodes: msg.Str("n[1-2]")})
}

func block(c msg.SbcastCred, no uint32, flags uint16) *msg.FileBcast {
	return &msg.FileBcast{BlockNo: no, Flags: flags, Fname: msg.Str("/tmp/x"), Cred: c}
}

var alice = Caller{UID: 1000, GID: 100}

func TestCredCheck(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		mutate func(r *credRig, c *msg.SbcastCred, caller *Caller)
		want   error
	}{
		{"valid", nil, nil},
		{"body changed after signing (uid)", func(_ *credRig, c *msg.SbcastCred, caller *Caller) {
			c.UID, caller.UID = 0, 0
		}, jobcred.ErrBadSignature},
		{"groups added after signing", func(_ *credRig, c *msg.SbcastCred, _ *Caller) {
			c.GIDs = append(c.GIDs, 0)
		}, jobcred.ErrBadSignature},
		{"signature of another key", func(t0 *credRig, c *msg.SbcastCred, _ *Caller) {
			c.Signature = []byte("GOSLURM-HS256:k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:\x00")
		}, jobcred.ErrBadSignature},
		{"credential expired", func(r *credRig, c *msg.SbcastCred, _ *Caller) {
			r.now = time.Unix(c.Expiration+1, 0)
		}, ErrCredExpired},
		{"signature expired (munge TTL)", func(r *credRig, _ *msg.SbcastCred, _ *Caller) {
			r.sigs.munge = true
			r.sigs.expires = r.now.Add(-time.Second)
		}, ErrCredExpired},
		{"another node", func(r *credRig, _ *msg.SbcastCred, _ *Caller) { r.checker.Node = "n3" }, ErrCredWrongNode},
		{"another uid", func(_ *credRig, _ *msg.SbcastCred, caller *Caller) { caller.UID = 1001 }, ErrCredWrongUser},
		{"another gid", func(_ *credRig, _ *msg.SbcastCred, caller *Caller) { caller.GID = 0 }, ErrCredWrongUser},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newCredRig(t)
			cr := r.cred(t)
			caller := alice
			if c.mutate != nil {
				c.mutate(r, &cr, &caller)
			}
			got, err := r.checker.Check(ctx, block(cr, 1, 0), caller)
			if !errors.Is(err, c.want) || (err == nil) != (c.want == nil) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if err == nil && (got.UID != 1000 || got.GID != 100 || len(got.GIDs) != 2) {
				t.Errorf("identity %+v", got)
			}
		})
	}
}

func TestCredLaterBlocksAndReplay(t *testing.T) {
	ctx := context.Background()
	for _, munge := range []bool{false, true} {
		r := newCredRig(t)
		r.sigs.munge = munge
		cr := r.cred(t)
		if _, err := r.checker.Check(ctx, block(cr, 1, msg.FileBcastExe), alice); err != nil {
			t.Fatal(err)
		}
		// Later blocks and shared objects ride on the remembered
		// credential without another signature check.
		for _, b := range []*msg.FileBcast{block(cr, 2, 0), block(cr, 3, msg.FileBcastLastBlock), block(cr, 1, msg.FileBcastSO)} {
			if _, err := r.checker.Check(ctx, b, alice); err != nil {
				t.Fatalf("block %d flags %#x: %v", b.BlockNo, b.Flags, err)
			}
		}
		if r.sigs.calls != 1 {
			t.Errorf("%d signature checks, want 1", r.sigs.calls)
		}
		// The first block again: a replay, whether or not the signature
		// scheme has replay detection of its own.
		if _, err := r.checker.Check(ctx, block(cr, 1, 0), alice); !errors.Is(err, ErrCredReplayed) {
			t.Errorf("munge=%v: replayed first block: %v", munge, err)
		}
		// A field changed under the remembered signature is not the
		// remembered credential.
		forged := cr
		forged.GIDs = []uint32{100, 0}
		if _, err := r.checker.Check(ctx, block(forged, 2, 0), alice); !errors.Is(err, ErrCredNotCached) {
			t.Errorf("forged later block: %v", err)
		}
		forged = cr
		forged.JobID = 43
		if _, err := r.checker.Check(ctx, block(forged, 1, msg.FileBcastSO), alice); !errors.Is(err, ErrCredNotCached) {
			t.Errorf("forged shared object: %v", err)
		}
	}
}

func TestCredRestartWindow(t *testing.T) {
	ctx := context.Background()
	r := newCredRig(t)
	r.sigs.munge = true
	cr := r.cred(t)
	// Decoded once before the restart: munged calls it a replay now.
	r.sigs.seen[string(cr.Signature)] = true
	r.checker.Started = r.now.Add(-30 * time.Second)
	if _, err := r.checker.Check(ctx, block(cr, 5, 0), alice); err != nil {
		t.Fatalf("within the restart window: %v", err)
	}
	r2 := newCredRig(t)
	if _, err := r2.checker.Check(ctx, block(r2.cred(t), 5, 0), alice); !errors.Is(err, ErrCredNotCached) {
		t.Fatalf("long after the start: %v", err)
	}
	// Within the window a forged credential still fails its signature.
	r3 := newCredRig(t)
	r3.checker.Started = r3.now
	forged := r3.cred(t)
	forged.UID = 0
	if _, err := r3.checker.Check(ctx, block(forged, 5, 0), Caller{UID: 0, GID: 100}); !errors.Is(err, jobcred.ErrBadSignature) {
		t.Fatalf("forged within the window: %v", err)
	}
}

func TestCredJobEndedAndBound(t *testing.T) {
	ctx := context.Background()
	r := newCredRig(t)
	cr := r.cred(t)
	if _, err := r.checker.Check(ctx, block(cr, 1, 0), alice); err != nil {
		t.Fatal(err)
	}
	r.checker.JobEnded(43) // another job: no effect
	if _, err := r.checker.Check(ctx, block(cr, 2, 0), alice); err != nil {
		t.Fatal(err)
	}
	r.checker.JobEnded(42)
	if _, err := r.checker.Check(ctx, block(cr, 3, 0), alice); !errors.Is(err, ErrCredNotCached) {
		t.Fatalf("after the job ended: %v", err)
	}

	// A munge credential's record outlives the job until its signature
	// expires, so a replay is still recognised.
	r = newCredRig(t)
	r.sigs.munge = true
	cr = r.cred(t)
	if _, err := r.checker.Check(ctx, block(cr, 1, 0), alice); err != nil {
		t.Fatal(err)
	}
	r.checker.JobEnded(42)
	if _, err := r.checker.Check(ctx, block(cr, 1, 0), alice); !errors.Is(err, ErrCredReplayed) {
		t.Fatalf("replay after the job ended: %v", err)
	}

	// Full of live records: refused, nothing forgotten.
	r = newCredRig(t)
	r.checker.Max = 2
	for i := range 3 {
		c := r.cred(t)
		c.StepID = uint32(i)
		c = signCred(t, c)
		_, err := r.checker.Check(ctx, block(c, 1, 0), alice)
		if (i < 2) != (err == nil) || (i == 2 && !errors.Is(err, ErrCredCacheFull)) {
			t.Errorf("credential %d: %v", i, err)
		}
	}
	// Expired records make room.
	r.now = r.now.Add(2 * time.Hour)
	c := r.cred(t)
	c.StepID = 9
	if _, err := r.checker.Check(ctx, block(signCred(t, c), 1, 0), alice); err != nil {
		t.Errorf("after expiry: %v", err)
	}
}

func TestCredNoValIdentity(t *testing.T) {
	r := newCredRig(t)
	cr := r.cred(t)
	cr.UID, cr.GID = noVal, noVal
	cr = signCred(t, cr)
	got, err := r.checker.Check(context.Background(), block(cr, 1, 0), alice)
	if err != nil || got.UID != alice.UID || got.GID != alice.GID {
		t.Fatalf("%+v %v", got, err)
	}
}
