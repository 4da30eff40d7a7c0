package mungesign_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/jobcred/internal/capturecreds"
	"github.com/goslurm/goslurm/credential/jobcred/mungesign"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

type launch struct {
	f capturecreds.Found
	c *jobcred.Credential
}

func captureLaunches(t *testing.T) ([]launch, []capturecreds.IOKey) {
	t.Helper()
	var out []launch
	var keys []capturecreds.IOKey
	for _, name := range []string{"srun-hostname.pcap", "srun-N2-hostname.pcap"} {
		found, k, err := capturecreds.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k...)
		for _, f := range found {
			if f.MsgType != msgtype.REQUEST_LAUNCH_TASKS && f.MsgType != msgtype.RESPONSE_JOB_STEP_CREATE {
				continue
			}
			c, _, err := jobcred.Unpack(f.Bytes, f.Version)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, launch{f, c})
		}
	}
	if len(out) != 5 {
		t.Fatalf("found %d launch credentials, want 5 (2 step-create replies, 3 launches)", len(out))
	}
	return out, keys
}

func captureMunged(t *testing.T) *munge.Client {
	return mungetest.Start(t, mungetest.Options{KeyFile: filepath.Join(capturecreds.Dir(), "munge.key")}).Client()
}

// TestCaptureSignatures: the munge signature of every real launch
// credential decodes with the capture cluster's key, was made by root, and
// carries exactly the packed body as its payload; munged (on today's clock)
// says it is expired, and the verifier reports that as expired with the real
// clock but accepts it with a clock set to the capture time.
func TestCaptureSignatures(t *testing.T) {
	launches, keys := captureLaunches(t)
	cl := captureMunged(t)
	ctx := context.Background()

	// munged itself: payload == body, uid 0, and EMUNGE_CRED_EXPIRED.
	for _, l := range launches {
		text := string(l.c.Signature[:len(l.c.Signature)-1])
		mc, err := cl.Decode(ctx, text)
		if !errors.Is(err, munge.ErrCredExpired) || mc == nil {
			t.Fatalf("%s c%d: munged decode: %v (want EMUNGE_CRED_EXPIRED with data)", l.f.File, l.f.ConnID, err)
		}
		if !bytes.Equal(mc.Payload, l.c.Signed()) {
			t.Fatalf("%s c%d: munge payload (%d bytes) is not the packed body (%d bytes)", l.f.File, l.f.ConnID, len(mc.Payload), len(l.c.Signed()))
		}
		if mc.UID != 0 || mc.UIDRestrict != 0 {
			t.Errorf("%s c%d: munge uid %d, restricted to uid %d; want 0 and 0 (SlurmUser=root, SlurmdUser=root)", l.f.File, l.f.ConnID, mc.UID, mc.UIDRestrict)
		}
		t.Logf("%s c%d %v: munge payload = body (%d bytes), uid %d, r_uid %d, encoded %v ttl %v, cred ctime %v",
			l.f.File, l.f.ConnID, l.f.MsgType, len(mc.Payload), mc.UID, mc.UIDRestrict, mc.Encoded.UTC(), mc.TTL, time.Unix(l.c.Body.CTime, 0).UTC())
	}

	sv := &mungesign.Verifier{Client: cl, SlurmUID: 64030}
	for _, l := range launches {
		if l.f.MsgType != msgtype.REQUEST_LAUNCH_TASKS {
			continue
		}
		req := jobcred.LaunchRequest{
			StepID: jobcred.StepID{JobID: l.f.LaunchStep[0], StepID: l.f.LaunchStep[1], StepHetComp: l.f.LaunchStep[2]},
			UID:    l.f.LaunchUID, GID: l.f.LaunchGID, NodeName: "n1",
		}
		// Real clock: expired.
		real, err := jobcred.NewVerifier(jobcred.Config{Signatures: sv, Clock: time.Now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := real.VerifyLaunch(ctx, l.c, req); !errors.Is(err, jobcred.ErrExpired) || slurmerr.Code(err) != slurmerr.ESLURMD_CREDENTIAL_EXPIRED {
			t.Errorf("%s c%d: real clock: %v, want ESLURMD_CREDENTIAL_EXPIRED", l.f.File, l.f.ConnID, err)
		}
		// Clock at the capture: accepted, once.
		at := l.f.Time
		v, err := jobcred.NewVerifier(jobcred.Config{Signatures: sv, Clock: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.VerifyLaunch(ctx, l.c, req)
		if err != nil {
			t.Fatalf("%s c%d: capture clock %v: %v", l.f.File, l.f.ConnID, at.UTC(), err)
		}
		if got.Sig.Scheme != jobcred.CredTypeMunge || got.HostIndex != 0 {
			t.Errorf("verified %+v", got)
		}
		if _, err := v.VerifyLaunch(ctx, l.c, req); !errors.Is(err, jobcred.ErrReplayed) {
			t.Errorf("%s c%d: second launch: %v, want replayed", l.f.File, l.f.ConnID, err)
		}
		// Forged: every single byte of the body flipped in turn. Those
		// that still unpack must fail the signature check.
		forged := 0
		for off := range len(l.c.Signed()) {
			raw := l.c.Bytes()
			raw[off] ^= 0x01
			fc, err := jobcred.Decode(raw, l.c.Version)
			if err != nil {
				continue
			}
			forged++
			if _, err := v.VerifyLaunch(ctx, fc, req); !errors.Is(err, jobcred.ErrInvalid) || !errors.Is(err, jobcred.ErrBadSignature) {
				t.Errorf("%s c%d: body byte %d changed: %v, want invalid signature", l.f.File, l.f.ConnID, off, err)
			}
		}
		if forged < len(l.c.Signed())/3 {
			t.Errorf("only %d of %d one-byte forgeries parse", forged, len(l.c.Signed()))
		}
		t.Logf("%s c%d: %d one-byte forgeries of the body rejected", l.f.File, l.f.ConnID, forged)
		// Forged signature byte.
		bad := *l.c
		bad.Signature = bytes.Clone(l.c.Signature)
		bad.Signature[40] ^= 1
		if _, err := v.VerifyLaunch(ctx, &bad, req); !errors.Is(err, jobcred.ErrInvalid) {
			t.Errorf("%s c%d: signature byte changed: %v, want invalid", l.f.File, l.f.ConnID, err)
		}
		// Signer must be SlurmUser or root: a verifier for another
		// SlurmUser still accepts root; nothing else is tested here since
		// the captured signer is root.
	}

	// The I/O key: every captured I/O init carries the step credential's
	// signature, NUL included, byte for byte.
	if len(keys) != 3 {
		t.Fatalf("%d I/O inits, want 3", len(keys))
	}
	for _, k := range keys {
		var sig []byte
		for _, l := range launches {
			if l.f.File == k.File {
				sig = jobcred.IOKey(l.c)
			}
		}
		if !jobcred.CheckIOKey(sig, k.Key) {
			t.Errorf("%s c%d: I/O key is not the credential signature", k.File, k.ConnID)
		}
		m, err := jobcred.ParseIOInit(k.Raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(sig, 2); err != nil {
			t.Errorf("%s c%d: %v", k.File, k.ConnID, err)
		}
	}
}
