package daemon

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
)

// validState is a saved state holding job 5, revoked.
func validState(t *testing.T, clock func() time.Time) []byte {
	t.Helper()
	v, err := jobcred.NewVerifier(jobcred.Config{Signatures: mustHMAC(t), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Revoke(5, clock(), time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	return v.ExportState()
}

func TestCredStateFileChecks(t *testing.T) {
	clock := func() time.Time { return time.Unix(1800000000, 0) }
	valid := validState(t, clock)
	tests := []struct {
		name  string
		setup func(dir string) error
		ok    bool
	}{
		{"missing is empty", func(string) error { return nil }, true},
		{"valid", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, CredStateFile), valid, 0o600)
		}, true},
		{"garbage", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, CredStateFile), []byte("{"), 0o600)
		}, false},
		{"earlier JSON format", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, CredStateFile), []byte(`{"version":1}`), 0o600)
		}, false},
		{"other version", func(dir string) error {
			b := bytes.Clone(valid)
			b[9] = 9
			return os.WriteFile(filepath.Join(dir, CredStateFile), b, 0o600)
		}, false},
		{"world writable", func(dir string) error {
			p := filepath.Join(dir, CredStateFile)
			if err := os.WriteFile(p, valid, 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o666)
		}, false},
		{"symlink", func(dir string) error {
			if err := os.WriteFile(filepath.Join(dir, "x"), valid, 0o600); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(dir, "x"), filepath.Join(dir, CredStateFile))
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.setup(dir); err != nil {
				t.Fatal(err)
			}
			cs, err := newCredState(mustHMAC(t), clock, 120*time.Second, dir)
			if err != nil {
				t.Fatal(err)
			}
			err = cs.load(false)
			if (err == nil) != tc.ok {
				t.Errorf("load: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// The fuzz target for the saved state is jobcred's FuzzImportState: the
// daemon only reads the file (readStateFile's checks, tested above) and
// hands it to jobcred.Verifier.ImportState.
