package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCredStateFileChecks(t *testing.T) {
	clock := func() time.Time { return time.Unix(1800000000, 0) }
	tests := []struct {
		name  string
		setup func(dir string) error
		ok    bool
	}{
		{"missing is empty", func(string) error { return nil }, true},
		{"valid", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, CredStateFile), []byte(`{"version":1,"seen":null,"jobs":{"5":{"revoked":1800000000,"start":1,"expiration":0}}}`), 0o600)
		}, true},
		{"garbage", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, CredStateFile), []byte("{"), 0o600)
		}, false},
		{"other version", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, CredStateFile), []byte(`{"version":9}`), 0o600)
		}, false},
		{"world writable", func(dir string) error {
			p := filepath.Join(dir, CredStateFile)
			if err := os.WriteFile(p, []byte(`{"version":1}`), 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o666)
		}, false},
		{"symlink", func(dir string) error {
			if err := os.WriteFile(filepath.Join(dir, "x"), []byte(`{"version":1}`), 0o600); err != nil {
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

// FuzzCredStateRestore: no saved state, however malformed, panics the
// loader, and a state that fails to decode leaves nothing behind.
func FuzzCredStateRestore(f *testing.F) {
	f.Add([]byte(`{"version":1,"seen":[{"Job":1,"Step":0,"Het":4294967294,"CTime":1800000000,"expires":1800000120}],"jobs":{"1":{"revoked":0,"start":0,"expiration":0,"seen":true}}}`))
	f.Add([]byte(`{"version":1,"jobs":{"7":{"revoked":5,"start":9,"expiration":1}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := newCredState(mustHMAC(t), func() time.Time { return time.Unix(1800000000, 0) }, 120*time.Second, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.restore(data); err != nil && (len(cs.seen) != 0 || len(cs.jobs) != 0) {
			t.Errorf("failed restore left state: %v", err)
		}
	})
}
