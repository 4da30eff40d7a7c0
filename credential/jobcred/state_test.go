package jobcred_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
)

var update = flag.Bool("update", false, "rewrite testdata/cred_state-v1.bin")

// stateFixture builds a verifier holding: job 7's launch credential
// accepted (replay entry plus job record), job 8 revoked with its purge
// timer running, job 9 revoked with no timer yet.
func stateFixture(t *testing.T, clk *clock) (*jobcred.Verifier, *jobcred.Credential) {
	t.Helper()
	v := newVerifier(t, clk)
	c := create(t, testBody(), t0, keyA)
	if _, err := v.VerifyLaunch(ctx, c, goodReq); err != nil {
		t.Fatal(err)
	}
	for _, job := range []uint32{8, 9} {
		if err := v.Revoke(job, t0, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.BeginExpiration(8); err != nil {
		t.Fatal(err)
	}
	return v, c
}

// TestStateSurvivesImport: what a verifier accepted and revoked is still
// refused by a fresh verifier that imported its state.
func TestStateSurvivesImport(t *testing.T) {
	clk := &clock{now: t0}
	old, c := stateFixture(t, clk)
	saved := old.ExportState()

	v := newVerifier(t, clk)
	if err := v.ImportState(saved); err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyLaunch(ctx, c, goodReq); !errors.Is(err, jobcred.ErrReplayed) {
		t.Errorf("relaunch after import: %v, want replayed", err)
	}
	b := testBody()
	b.StepID.JobID = 9
	req := goodReq
	req.StepID.JobID = 9
	if _, err := v.VerifyLaunch(ctx, create(t, b, t0, keyA), req); !errors.Is(err, jobcred.ErrRevoked) {
		t.Errorf("job 9 after import: %v, want revoked", err)
	}
	for _, job := range []uint32{7, 8, 9} {
		if !v.JobSeen(job) {
			t.Errorf("job %d not seen after import", job)
		}
	}
	if err := v.BeginExpiration(8); err == nil {
		t.Error("job 8's purge timer was not kept")
	}
	if got := v.ExportState(); !bytes.Equal(got, saved) {
		t.Errorf("export after import differs:\n got %x\nwant %x", got, saved)
	}

	// Golden file: the version 1 layout must keep reading.
	golden := filepath.Join("testdata", "cred_state-v1.bin")
	if *update {
		if err := os.WriteFile(golden, saved, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(saved, want) {
		t.Errorf("export differs from %s (run with -update only for a deliberate format change)", golden)
	}
}

// TestStateImportDropsExpired: entries past their expiration at import
// time are left out, as the purge would have dropped them.
func TestStateImportDropsExpired(t *testing.T) {
	clk := &clock{now: t0}
	old, _ := stateFixture(t, clk)
	saved := old.ExportState()

	clk.now = t0.Add(jobcred.DefaultExpirationWindow + time.Second)
	v := newVerifier(t, clk)
	if err := v.ImportState(saved); err != nil {
		t.Fatal(err)
	}
	// Job 8's timer ran out; job 7 (never revoked) and job 9 (revoked,
	// no timer) stay, as they do in a running verifier.
	for job, want := range map[uint32]bool{7: true, 8: false, 9: true} {
		if got := v.JobSeen(job); got != want {
			t.Errorf("job %d seen = %v, want %v", job, got, want)
		}
	}
	_, ncreds := stateCounts(t, v.ExportState())
	if ncreds != 0 {
		t.Errorf("%d replay entries survived their expiration", ncreds)
	}
}

// stateCounts reads the job and credential counts of a version 1 state.
func stateCounts(t *testing.T, b []byte) (jobs, creds int) {
	t.Helper()
	jobs = int(binary.BigEndian.Uint32(b[14:]))
	creds = int(binary.BigEndian.Uint32(b[18+jobs*20:]))
	return jobs, creds
}

func TestStateImportRefuses(t *testing.T) {
	clk := &clock{now: t0}
	good, _ := stateFixture(t, clk)
	saved := good.ExportState()
	jobs, _ := stateCounts(t, saved)
	credsAt := 18 + jobs*20

	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(saved)) }
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"json", []byte(`{"version":1}`)},
		{"magic", mod(func(b []byte) []byte { b[0] = 'X'; return b })},
		{"version", mod(func(b []byte) []byte { b[9] = 2; return b })},
		{"truncated", saved[:len(saved)-1]},
		{"trailing byte", append(bytes.Clone(saved), 0)},
		{"job count past the data", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[14:], 1000); return b })},
		{"job count huge", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[14:], 0xffffffff); return b })},
		{"cred count past the data", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[credsAt:], 2); return b })},
		{"duplicate job", mod(func(b []byte) []byte { copy(b[18+20:18+40], b[18:18+20]); return b })},
		{"negative revocation", mod(func(b []byte) []byte { binary.BigEndian.PutUint64(b[22:], 1<<63); return b })},
		{"expiration past MAX_TIME", mod(func(b []byte) []byte { binary.BigEndian.PutUint64(b[30:], 1<<40); return b })},
		{"credential expires before it was made", mod(func(b []byte) []byte {
			binary.BigEndian.PutUint64(b[credsAt+4+12+8:], 1)
			return b
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := stateFixture(t, clk)
			before := v.ExportState()
			err := v.ImportState(tc.data)
			if !errors.Is(err, jobcred.ErrState) {
				t.Fatalf("import: %v, want ErrState", err)
			}
			if after := v.ExportState(); !bytes.Equal(after, before) {
				t.Error("a refused import changed the state")
			}
		})
	}

	t.Run("over MaxCredStates", func(t *testing.T) {
		hv, _ := jobcred.NewHMACVerifier(keyA)
		small, err := jobcred.NewVerifier(jobcred.Config{Signatures: hv, Clock: clk.Now, MaxCredStates: 1})
		if err != nil {
			t.Fatal(err)
		}
		big := newVerifier(t, clk)
		for step := range uint32(2) {
			b := testBody()
			b.StepID.StepID = step
			req := goodReq
			req.StepID.StepID = step
			if _, err := big.VerifyLaunch(ctx, create(t, b, t0, keyA), req); err != nil {
				t.Fatal(err)
			}
		}
		if err := small.ImportState(big.ExportState()); !errors.Is(err, jobcred.ErrState) {
			t.Errorf("import of 2 entries into a cache of 1: %v", err)
		}
	})
}

// FuzzImportState: no input panics the importer or makes it allocate past
// its bounds, a refused input changes nothing, and an accepted one exports
// to bytes that import again to the same state.
func FuzzImportState(f *testing.F) {
	clk := &clock{now: t0}
	hv, err := jobcred.NewHMACVerifier(keyA)
	if err != nil {
		f.Fatal(err)
	}
	fresh := func() *jobcred.Verifier {
		v, err := jobcred.NewVerifier(jobcred.Config{Signatures: hv, Clock: clk.Now, MaxCredStates: 64})
		if err != nil {
			f.Fatal(err)
		}
		return v
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "cred_state-v1.bin")); err == nil {
		f.Add(b)
	}
	f.Add(fresh().ExportState())
	f.Add([]byte("GSLMCRED\x00\x01\x00\x00\x00\x78\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v := fresh()
		empty := v.ExportState()
		if err := v.ImportState(data); err != nil {
			if !bytes.Equal(v.ExportState(), empty) {
				t.Fatal("a refused import changed the state")
			}
			return
		}
		out := v.ExportState()
		w := fresh()
		if err := w.ImportState(out); err != nil {
			t.Fatalf("re-import of an export: %v", err)
		}
		if again := w.ExportState(); !bytes.Equal(again, out) {
			t.Fatalf("export not stable:\n%x\n%x", out, again)
		}
	})
}
