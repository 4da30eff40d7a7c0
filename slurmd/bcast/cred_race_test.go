package bcast

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
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
