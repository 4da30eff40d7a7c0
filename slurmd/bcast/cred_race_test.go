package bcast

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
)

// gatedSigs lets a verification finish only once n have started, so that
// n first blocks with one credential all pass the early replay check.
type gatedSigs struct {
	v    jobcred.SignatureVerifier
	wg   sync.WaitGroup
	open chan struct{}
}

func (g *gatedSigs) VerifySignature(ctx context.Context, body, sig []byte) (jobcred.SigInfo, error) {
	g.wg.Done()
	select {
	case <-g.open:
	case <-time.After(60 * time.Second):
	}
	return g.v.VerifySignature(ctx, body, sig)
}

// Concurrent first blocks carrying one credential: exactly one is
// accepted, the others are replays.
func TestCredConcurrentFirstBlocks(t *testing.T) {
	const n = 4
	r := newCredRig(t)
	g := &gatedSigs{v: r.sigs.v, open: make(chan struct{})}
	g.wg.Add(n)
	r.checker.Sigs = g
	go func() { g.wg.Wait(); close(g.open) }()
	cr := r.cred(t)
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := r.checker.Check(context.Background(), block(cr, 1, 0), alice)
			errs <- err
		}()
	}
	ok := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			ok++
		case !errors.Is(err, ErrCredReplayed):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d of %d first blocks accepted, want 1", ok, n)
	}
}

// One user at the per-user bound is refused new transfers; another user
// is not, and the user's expired or ended records make room again.
func TestCredPerUserBound(t *testing.T) {
	ctx := context.Background()
	r := newCredRig(t)
	r.checker.MaxUser = 2
	bob := Caller{UID: 1001, GID: 100}
	credOf := func(who Caller, step uint32, job uint32) *msg.FileBcast {
		c := r.cred(t)
		c.UID, c.GID, c.StepID, c.JobID = who.UID, who.GID, step, job
		return block(signCred(t, c), 1, 0)
	}
	for i := range 3 {
		_, err := r.checker.Check(ctx, credOf(alice, uint32(i), 42), alice)
		if (i < 2) != (err == nil) || (i == 2 && !errors.Is(err, ErrCredCacheFull)) {
			t.Errorf("alice's credential %d: %v", i, err)
		}
	}
	if _, err := r.checker.Check(ctx, credOf(bob, 0, 43), bob); err != nil {
		t.Errorf("bob refused while alice is at her bound: %v", err)
	}
	r.checker.JobEnded(42) // no signature expiry: records dropped
	if _, err := r.checker.Check(ctx, credOf(alice, 9, 44), alice); err != nil {
		t.Errorf("alice after her job ended: %v", err)
	}
}
