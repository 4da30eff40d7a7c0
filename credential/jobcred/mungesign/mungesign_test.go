package mungesign_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/jobcred/mungesign"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
)

// TestSignVerify: a credential our controller signs through munged decodes
// as cred/munge requires (payload = body, restricted to SlurmdUser), is
// accepted once, and munged's own replay detection catches a second decode.
func TestSignVerify(t *testing.T) {
	cl := mungetest.Start(t, mungetest.Options{}).Client()
	ctx := context.Background()
	now := time.Now() // the test's clock; the package under test takes it as input
	body := jobcred.Body{
		StepID: jobcred.StepID{JobID: 42, StepID: 0, StepHetComp: 0xfffffffe},
		UID:    1000, GID: 1000, PwName: jobcred.Str("alice"), GIDs: []uint32{1000},
		StepHostlist: jobcred.Str("n[1-2]"), JobHostlist: jobcred.Str("n[1-2]"), JobNHosts: 2,
		JobCoreBitmap: jobcred.BitmapOf(32, 0, 16), StepCoreBitmap: jobcred.BitmapOf(32, 0, 16),
		SocketGroups: []jobcred.SocketGroup{{CoresPerSocket: 1, SocketsPerNode: 16, RepCount: 2}}, CPUGroups: []jobcred.CPUGroup{{CPUs: 1, Reps: 2}},
		JobMem: []jobcred.MemGroup{{MB: 0, Reps: 2}}, StepMem: []jobcred.MemGroup{{MB: 0, Reps: 2}}, JobCoreSpec: 0xfffe,
	}
	signer := &mungesign.Signer{Client: cl, SlurmdUID: 0, TTL: 60 * time.Second}
	c, err := jobcred.Create(ctx, body, jobcred.Version2205, signer, now)
	if err != nil {
		t.Fatal(err)
	}
	sig := c.Signature
	if sig[len(sig)-1] != 0 || string(sig[:6]) != "MUNGE:" {
		t.Fatalf("signature %.20q is not a munge string with NUL", sig)
	}
	mc, err := cl.Decode(ctx, string(sig[:len(sig)-1]))
	if err != nil {
		t.Fatal(err)
	}
	if string(mc.Payload) != string(c.Signed()) || mc.UIDRestrict != 0 || mc.TTL != 60*time.Second {
		t.Fatalf("munge payload/r_uid/ttl = %d bytes/%d/%v", len(mc.Payload), mc.UIDRestrict, mc.TTL)
	}

	// That decode used the credential up on this munged: a fresh one.
	c, err = jobcred.Create(ctx, body, jobcred.Version2205, signer, now)
	if err != nil {
		t.Fatal(err)
	}
	wire, err := jobcred.Decode(c.Bytes(), jobcred.Version2205)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jobcred.NewVerifier(jobcred.Config{
		Signatures: &mungesign.Verifier{Client: cl, SlurmUID: 64030},
		Clock:      func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	req := jobcred.LaunchRequest{StepID: body.StepID, UID: 1000, GID: 1000, NodeName: "n2"}
	got, err := v.VerifyLaunch(ctx, wire, req)
	if err != nil {
		t.Fatal(err)
	}
	if got.HostIndex != 1 || got.Sig.UID != 0 {
		t.Errorf("verified: host index %d, signer %d", got.HostIndex, got.Sig.UID)
	}
	// A second decode on the same munged: munged reports the replay.
	v2, _ := jobcred.NewVerifier(jobcred.Config{
		Signatures: &mungesign.Verifier{Client: cl, SlurmUID: 64030},
		Clock:      func() time.Time { return now },
	})
	if _, err := v2.VerifyLaunch(ctx, wire, req); !errors.Is(err, jobcred.ErrInvalid) || !errors.Is(err, jobcred.ErrSignatureReplayed) {
		t.Errorf("second decode: %v, want invalid (signature replayed)", err)
	}
	// With AcceptReplayed (several slurmd sharing the munged) the same
	// second decode passes, and that verifier's own replay cache still
	// refuses a third launch with the credential.
	shared, _ := jobcred.NewVerifier(jobcred.Config{
		Signatures: &mungesign.Verifier{Client: cl, SlurmUID: 64030, AcceptReplayed: true},
		Clock:      func() time.Time { return now },
	})
	if _, err := shared.VerifyLaunch(ctx, wire, req); err != nil {
		t.Errorf("shared munged, second decode: %v", err)
	}
	if _, err := shared.VerifyLaunch(ctx, wire, req); !errors.Is(err, jobcred.ErrReplayed) {
		t.Errorf("shared munged, relaunch: %v, want replayed", err)
	}
	// A signature made with another munge key does not verify.
	other := mungetest.Start(t, mungetest.Options{}).Client()
	c3, err := jobcred.Create(ctx, body, jobcred.Version2205, &mungesign.Signer{Client: other}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyLaunch(ctx, c3, req); !errors.Is(err, jobcred.ErrBadSignature) {
		t.Errorf("other key: %v, want bad signature", err)
	}
	// Malformed signature texts never reach munged.
	for _, s := range [][]byte{[]byte("MUNGE:abc"), []byte("MUNGE:a\x00b\x00"), []byte("XUNGE:abc:\x00")} {
		bad := *c3
		bad.Signature = s
		if _, err := v.VerifyLaunch(ctx, &bad, req); !errors.Is(err, jobcred.ErrBadSignature) {
			t.Errorf("signature %q: %v", s, err)
		}
	}
}
