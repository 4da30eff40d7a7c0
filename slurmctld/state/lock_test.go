package state

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLocked: Locked sees the lock an open store holds, and does not take
// it away.
func TestLocked(t *testing.T) {
	dir := t.TempDir()
	if held, err := Locked(dir); err != nil || held {
		t.Fatalf("no lock file: %v %v", held, err)
	}
	f, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if held, err := Locked(dir); err != nil || !held {
		t.Fatalf("while held: %v %v", held, err)
	}
	f.Close()
	if held, err := Locked(dir); err != nil || held {
		t.Fatalf("after release: %v %v", held, err)
	}
	// The probe left it free.
	f, err = lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := os.Stat(filepath.Join(dir, LockFileName)); err != nil {
		t.Fatal(err)
	}
}
