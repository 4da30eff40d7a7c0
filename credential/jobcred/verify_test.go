package jobcred_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

var (
	t0     = time.Unix(1795240390, 0)
	keyA   = jobcred.HMACKey{ID: "k1", Secret: bytes.Repeat([]byte{0xa5}, 32)}
	keyB   = jobcred.HMACKey{ID: "k2", Secret: bytes.Repeat([]byte{0x5a}, 32)}
	ctx    = context.Background()
	stepID = jobcred.StepID{JobID: 7, StepID: 0, StepHetComp: 0xfffffffe}
)

func testBody() jobcred.Body {
	return jobcred.Body{
		StepID: stepID, UID: 1000, GID: 100,
		PwName: jobcred.Str("alice"), PwDir: jobcred.Str("/home/alice"), PwShell: jobcred.Str("/bin/sh"),
		GIDs: []uint32{100, 27}, GrNames: []string{"users", "sudo"},
		JobCoreSpec: 0xfffe, JobPartition: jobcred.Str("debug"), JobRestartCnt: 0,
		StepHostlist: jobcred.Str("n[1-2]"), JobHostlist: jobcred.Str("n[1-3]"), JobNHosts: 3, JobNTasks: 3,
		JobCoreBitmap: jobcred.BitmapOf(48, 0, 16, 32), StepCoreBitmap: jobcred.BitmapOf(48, 0, 16),
		SocketGroups: []jobcred.SocketGroup{{CoresPerSocket: 16, SocketsPerNode: 1, RepCount: 3}}, CPUGroups: []jobcred.CPUGroup{{CPUs: 1, Reps: 3}},
		JobMem: []jobcred.MemGroup{{MB: 1024, Reps: 3}}, StepMem: []jobcred.MemGroup{{MB: 512, Reps: 2}},
	}
}

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newVerifier(t *testing.T, clk *clock, keys ...jobcred.HMACKey) *jobcred.Verifier {
	t.Helper()
	if len(keys) == 0 {
		keys = []jobcred.HMACKey{keyA}
	}
	hv, err := jobcred.NewHMACVerifier(keys...)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jobcred.NewVerifier(jobcred.Config{Signatures: hv, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func create(t *testing.T, b jobcred.Body, at time.Time, key jobcred.HMACKey) *jobcred.Credential {
	t.Helper()
	s, err := jobcred.NewHMACSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := jobcred.Create(ctx, b, jobcred.Version2205, s, at)
	if err != nil {
		t.Fatal(err)
	}
	// What the node gets: the bytes, unpacked again.
	w, err := jobcred.Decode(c.Bytes(), jobcred.Version2205)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var goodReq = jobcred.LaunchRequest{StepID: stepID, UID: 1000, GID: 100, NodeName: "n2"}

func wantCode(t *testing.T, what string, err error, code int, cause error) {
	t.Helper()
	if slurmerr.Code(err) != code || (cause != nil && !errors.Is(err, cause)) {
		t.Errorf("%s: %v (code %d), want %s%s", what, err, slurmerr.Code(err), slurmerr.Name(code), map[bool]string{true: "", false: " / " + errString(cause)}[cause == nil])
	}
}

func errString(e error) string {
	if e == nil {
		return ""
	}
	return e.Error()
}

func TestVerifyLaunchAccepts(t *testing.T) {
	clk := &clock{t0.Add(119 * time.Second)}
	v := newVerifier(t, clk)
	got, err := v.VerifyLaunch(ctx, create(t, testBody(), t0, keyA), goodReq)
	if err != nil {
		t.Fatal(err)
	}
	if got.HostIndex != 1 || got.Sig.Scheme != jobcred.CredTypeHMAC || got.Sig.KeyID != "k1" {
		t.Errorf("verified %+v", got)
	}
	if !v.JobSeen(7) {
		t.Error("job 7 not recorded")
	}
}

// TestVerifyLaunchRejects covers security checklist items 1 and 3 for the
// step credential: forged, expired, replayed, revoked, wrong identity, wrong
// node, wrong step, unsigned.
func TestVerifyLaunchRejects(t *testing.T) {
	const (
		invalid  = slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL
		expired  = slurmerr.ESLURMD_CREDENTIAL_EXPIRED
		revoked  = slurmerr.ESLURMD_CREDENTIAL_REVOKED
		replayed = slurmerr.ESLURMD_CREDENTIAL_REPLAYED
	)
	t.Run("forged body byte", func(t *testing.T) {
		v := newVerifier(t, &clock{t0})
		c := create(t, testBody(), t0, keyA)
		n := 0
		for off := range len(c.Signed()) {
			raw := c.Bytes()
			raw[off] ^= 0x01
			f, err := jobcred.Decode(raw, jobcred.Version2205)
			if err != nil {
				continue
			}
			n++
			_, err = v.VerifyLaunch(ctx, f, goodReq)
			wantCode(t, "byte flipped", err, invalid, jobcred.ErrBadSignature)
		}
		if n < 50 {
			t.Errorf("only %d forgeries", n)
		}
		// The genuine one still passes: failures changed no state.
		if _, err := v.VerifyLaunch(ctx, c, goodReq); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("forged signature byte", func(t *testing.T) {
		v := newVerifier(t, &clock{t0})
		c := create(t, testBody(), t0, keyA)
		for i := range c.Signature {
			f := *c
			f.Signature = bytes.Clone(c.Signature)
			f.Signature[i] ^= 0x01
			_, err := v.VerifyLaunch(ctx, &f, goodReq)
			wantCode(t, "sig byte", err, invalid, jobcred.ErrBadSignature)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		_, err := newVerifier(t, &clock{t0}).VerifyLaunch(ctx, create(t, testBody(), t0, keyB), goodReq)
		wantCode(t, "key B", err, invalid, jobcred.ErrBadSignature)
		// Same id, other secret.
		_, err = newVerifier(t, &clock{t0}).VerifyLaunch(ctx, create(t, testBody(), t0, jobcred.HMACKey{ID: "k1", Secret: keyB.Secret}), goodReq)
		wantCode(t, "key k1 with B's secret", err, invalid, jobcred.ErrBadSignature)
	})
	t.Run("rotation", func(t *testing.T) {
		v := newVerifier(t, &clock{t0}, keyA, keyB)
		if _, err := v.VerifyLaunch(ctx, create(t, testBody(), t0, keyB), goodReq); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unsigned", func(t *testing.T) {
		c, err := jobcred.Create(ctx, testBody(), jobcred.Version2205, nil, t0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = newVerifier(t, &clock{t0}).VerifyLaunch(ctx, c, goodReq)
		wantCode(t, "unsigned", err, invalid, jobcred.ErrUnsigned)
	})
	t.Run("expired", func(t *testing.T) {
		clk := &clock{t0.Add(121 * time.Second)}
		_, err := newVerifier(t, clk).VerifyLaunch(ctx, create(t, testBody(), t0, keyA), goodReq)
		wantCode(t, "121 s old", err, expired, nil)
	})
	t.Run("window configurable", func(t *testing.T) {
		hv, _ := jobcred.NewHMACVerifier(keyA)
		clk := &clock{t0.Add(30 * time.Second)}
		v, err := jobcred.NewVerifier(jobcred.Config{Signatures: hv, Clock: clk.Now, ExpirationWindow: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.VerifyLaunch(ctx, create(t, testBody(), t0, keyA), goodReq)
		wantCode(t, "30 s old, 20 s window", err, expired, nil)
		if _, err := jobcred.NewVerifier(jobcred.Config{Signatures: hv, Clock: clk.Now, ExpirationWindow: 4 * time.Second}); err == nil {
			t.Error("window of 4 s accepted")
		}
	})
	t.Run("replayed", func(t *testing.T) {
		clk := &clock{t0}
		v := newVerifier(t, clk)
		c := create(t, testBody(), t0, keyA)
		if _, err := v.VerifyLaunch(ctx, c, goodReq); err != nil {
			t.Fatal(err)
		}
		clk.now = t0.Add(60 * time.Second)
		_, err := v.VerifyLaunch(ctx, c, goodReq)
		wantCode(t, "second use", err, replayed, nil)
		// Rewind (reply to srun failed): the retry is allowed once more.
		if !v.Rewind(c) {
			t.Fatal("rewind found nothing")
		}
		if _, err := v.VerifyLaunch(ctx, c, goodReq); err != nil {
			t.Fatalf("after rewind: %v", err)
		}
		// Same step, new ctime: a different credential.
		if _, err := v.VerifyLaunch(ctx, create(t, testBody(), t0.Add(time.Second), keyA), goodReq); err != nil {
			t.Fatalf("new ctime: %v", err)
		}
		// Once the window is over the entry is purged, and the
		// credential is refused as expired instead.
		clk.now = t0.Add(10 * time.Minute)
		_, err = v.VerifyLaunch(ctx, c, goodReq)
		wantCode(t, "after window", err, expired, nil)
	})
	t.Run("revoked", func(t *testing.T) {
		clk := &clock{t0.Add(10 * time.Second)}
		v := newVerifier(t, clk)
		if err := v.Revoke(7, t0.Add(5*time.Second), time.Time{}); err != nil {
			t.Fatal(err)
		}
		old := create(t, testBody(), t0, keyA)
		_, err := v.VerifyLaunch(ctx, old, goodReq)
		wantCode(t, "created before revocation", err, revoked, nil)
		atT := create(t, testBody(), t0.Add(5*time.Second), keyA)
		_, err = v.VerifyLaunch(ctx, atT, goodReq)
		wantCode(t, "created at revocation", err, revoked, nil)
		if !v.Revoked(old) {
			t.Error("Revoked(old) false")
		}
		if err := v.Revoke(7, t0.Add(6*time.Second), time.Time{}); !errors.Is(err, jobcred.ErrAlreadyRevoked) {
			t.Errorf("second revoke: %v", err)
		}
		// Other jobs are not affected.
		b := testBody()
		b.StepID.JobID = 8
		r := goodReq
		r.StepID.JobID = 8
		if _, err := v.VerifyLaunch(ctx, create(t, b, t0, keyA), r); err != nil {
			t.Errorf("job 8: %v", err)
		}
		// Requeued job: a credential created after the revocation is a
		// reissue; it is accepted and clears the revocation.
		if _, err := v.VerifyLaunch(ctx, create(t, testBody(), t0.Add(6*time.Second), keyA), goodReq); err != nil {
			t.Errorf("reissued: %v", err)
		}
		// Revocation records expire one window after BeginExpiration.
		v2 := newVerifier(t, clk)
		_ = v2.Revoke(9, t0, time.Time{})
		if err := v2.BeginExpiration(9); err != nil {
			t.Fatal(err)
		}
		clk.now = clk.now.Add(3 * time.Minute)
		if v2.JobSeen(9) {
			t.Error("revocation record of job 9 not purged")
		}
	})
	t.Run("wrong uid", func(t *testing.T) {
		r := goodReq
		r.UID = 1001
		_, err := newVerifier(t, &clock{t0}).VerifyLaunch(ctx, create(t, testBody(), t0, keyA), r)
		wantCode(t, "uid", err, invalid, jobcred.ErrUserMismatch)
		r = goodReq
		r.GID = 0
		_, err = newVerifier(t, &clock{t0}).VerifyLaunch(ctx, create(t, testBody(), t0, keyA), r)
		wantCode(t, "gid", err, invalid, jobcred.ErrUserMismatch)
	})
	t.Run("wrong step", func(t *testing.T) {
		for _, s := range []jobcred.StepID{{8, 0, 0xfffffffe}, {7, 1, 0xfffffffe}, {7, jobcred.StepBatch, 0xfffffffe}} {
			r := goodReq
			r.StepID = s
			_, err := newVerifier(t, &clock{t0}).VerifyLaunch(ctx, create(t, testBody(), t0, keyA), r)
			wantCode(t, s.String(), err, invalid, jobcred.ErrStepMismatch)
		}
	})
	t.Run("wrong node", func(t *testing.T) {
		for _, node := range []string{"n3" /* job only */, "n4", "n", "n02x", ""} {
			r := goodReq
			r.NodeName = node
			_, err := newVerifier(t, &clock{t0}).VerifyLaunch(ctx, create(t, testBody(), t0, keyA), r)
			wantCode(t, "node "+node, err, invalid, jobcred.ErrNodeNotInCredential)
		}
		// In the step list but not the job list / beyond job_nhosts.
		b := testBody()
		b.JobHostlist = jobcred.Str("n[3-4]")
		_, err := newVerifier(t, &clock{t0}).VerifyLaunch(ctx, create(t, b, t0, keyA), goodReq)
		wantCode(t, "not in job list", err, invalid, jobcred.ErrNodeNotInCredential)
		b = testBody()
		b.JobNHosts = 1
		_, err = newVerifier(t, &clock{t0}).VerifyLaunch(ctx, create(t, b, t0, keyA), goodReq)
		wantCode(t, "index beyond job_nhosts", err, invalid, jobcred.ErrNodeNotInCredential)
	})
	t.Run("cache full fails closed", func(t *testing.T) {
		hv, _ := jobcred.NewHMACVerifier(keyA)
		clk := &clock{t0}
		v, _ := jobcred.NewVerifier(jobcred.Config{Signatures: hv, Clock: clk.Now, MaxCredStates: 2})
		for i := range 3 {
			b := testBody()
			b.StepID.StepID = uint32(i)
			r := goodReq
			r.StepID.StepID = uint32(i)
			_, err := v.VerifyLaunch(ctx, create(t, b, t0, keyA), r)
			if i < 2 && err != nil {
				t.Fatal(err)
			}
			if i == 2 {
				wantCode(t, "third", err, invalid, jobcred.ErrStateFull)
			}
		}
		clk.now = t0.Add(121 * time.Second)
		b := testBody()
		b.StepID.StepID = 5
		r := goodReq
		r.StepID.StepID = 5
		if _, err := v.VerifyLaunch(ctx, create(t, b, clk.now, keyA), r); err != nil {
			t.Errorf("after expiry: %v", err)
		}
	})
}

func TestHMACKeys(t *testing.T) {
	if _, err := jobcred.NewHMACSigner(jobcred.HMACKey{Secret: make([]byte, 31)}); err == nil {
		t.Error("31-byte key accepted")
	}
	if _, err := jobcred.NewHMACSigner(jobcred.HMACKey{ID: "a:b", Secret: make([]byte, 32)}); err == nil {
		t.Error("key id with ':' accepted")
	}
	if _, err := jobcred.NewHMACVerifier(keyA, keyA); err == nil {
		t.Error("duplicate key id accepted")
	}
	s, _ := jobcred.NewHMACSigner(keyA)
	sig, _ := s.Sign(ctx, []byte("body"))
	if !bytes.HasPrefix(sig, []byte(jobcred.HMACSignaturePrefix+"k1:")) || sig[len(sig)-1] != 0 || bytes.IndexByte(sig[:len(sig)-1], 0) >= 0 {
		t.Errorf("signature %q", sig)
	}
}

func TestIOKey(t *testing.T) {
	c := create(t, testBody(), t0, keyA)
	key := jobcred.IOKey(c)
	if !bytes.Equal(key, c.Signature) {
		t.Fatal("I/O key is not the signature")
	}
	var w = jobcred.IOInit{Version: jobcred.Version2205, NodeID: 1, StdoutObjs: 1, StderrObjs: 1, IOKey: key}
	raw := appendInit(&w)
	m, err := jobcred.ParseIOInit(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(key, 2); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(m *jobcred.IOInit){
		"other key":     func(m *jobcred.IOInit) { m.IOKey = create(t, testBody(), t0.Add(time.Second), keyA).Signature },
		"key prefix":    func(m *jobcred.IOInit) { m.IOKey = m.IOKey[:len(m.IOKey)-1] },
		"empty key":     func(m *jobcred.IOInit) { m.IOKey = nil },
		"node id":       func(m *jobcred.IOInit) { m.NodeID = 2 },
		"old version":   func(m *jobcred.IOInit) { m.Version = 0xb001 },
		"older version": func(m *jobcred.IOInit) { m.Version = 0x2300 },
	} {
		m2 := *m
		mod(&m2)
		if err := m2.Validate(key, 2); !errors.Is(err, jobcred.ErrIOKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if jobcred.CheckIOKey(nil, nil) {
		t.Error("empty keys match")
	}
	if _, err := jobcred.ParseIOInit(append(raw, 0)); err == nil {
		t.Error("trailing byte accepted")
	}
}
