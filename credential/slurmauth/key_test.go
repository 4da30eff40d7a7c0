package slurmauth

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func wantKeyErr(t *testing.T, err error, text string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %q", text)
	}
	if !errors.Is(err, ErrKey) || slurmerr.Code(err) != slurmerr.ESLURM_AUTH_FOPEN_ERROR {
		t.Fatalf("error %q is not ErrKey/ESLURM_AUTH_FOPEN_ERROR", err)
	}
	if !strings.Contains(err.Error(), text) {
		t.Fatalf("error %q does not say %q", err, text)
	}
}

func TestGenerateLoadKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slurm.key")
	k, err := GenerateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || st.Size() != DefaultKeySize {
		t.Fatalf("key file %v %v", st.Mode(), err)
	}
	l, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(l.secret, k.secret) || l.Size() != DefaultKeySize {
		t.Fatal("loaded key differs")
	}
	if strings.Contains(l.String(), string(l.secret[:8])) {
		t.Fatal("String shows the secret")
	}
	// A token minted with one verifies with the other.
	if _, err := l.Parse(mustMint(t, k, mintParams()), verifyParams()); err != nil {
		t.Fatal(err)
	}
	if _, err := GenerateKey(path); err == nil {
		t.Fatal("GenerateKey overwrote an existing key")
	}
}

func writeKey(t *testing.T, mode os.FileMode, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "slurm.key")
	if err := os.WriteFile(path, bytes.Repeat([]byte{7}, n), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadKeyRefuses(t *testing.T) {
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644, 0o660, 0o602, 0o610, 0o666} {
		t.Run(mode.String(), func(t *testing.T) {
			_, err := LoadKey(writeKey(t, mode, 64))
			wantKeyErr(t, err, "insecure")
		})
	}
	t.Run("0400 is fine", func(t *testing.T) {
		if _, err := LoadKey(writeKey(t, 0o400, 64)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("short", func(t *testing.T) {
		_, err := LoadKey(writeKey(t, 0o600, MinKeySize-1))
		wantKeyErr(t, err, "need at least")
	})
	t.Run("empty", func(t *testing.T) {
		_, err := LoadKey(writeKey(t, 0o600, 0))
		wantKeyErr(t, err, "need at least")
	})
	t.Run("missing", func(t *testing.T) {
		_, err := LoadKey(filepath.Join(t.TempDir(), "none"))
		wantKeyErr(t, err, "cannot open")
	})
	t.Run("symlink", func(t *testing.T) {
		target := writeKey(t, 0o600, 64)
		link := filepath.Join(t.TempDir(), "slurm.key")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		_, err := LoadKey(link)
		wantKeyErr(t, err, "symbolic link")
	})
	t.Run("directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "d")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := LoadKey(dir)
		wantKeyErr(t, err, "not a regular file")
	})
	t.Run("other owner", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to chown")
		}
		path := writeKey(t, 0o600, 64)
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		_, err := LoadKey(path)
		wantKeyErr(t, err, "owned by uid 65534")
	})
	t.Run("NewKey short", func(t *testing.T) {
		_, err := NewKey(make([]byte, MinKeySize-1))
		wantKeyErr(t, err, "need at least")
	})
}

func TestAuthInfo(t *testing.T) {
	o, err := ParseAuthInfo(conf.Options{
		{Name: "socket", Value: "/run/munge/munge.socket.2", HasValue: true},
		{Name: "TTL", Value: "120", HasValue: true},
		{Name: "key", Value: "/etc/slurm/k", HasValue: true},
		{Name: "sack_socket", Value: "/tmp/demo/sack.socket", HasValue: true},
		{Name: "disable_sack"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{TTL: 120 * time.Second, KeyFile: "/etc/slurm/k", SackSocket: "/tmp/demo/sack.socket", DisableSack: true}
	if o != want {
		t.Fatalf("%+v", o)
	}
	for _, bad := range []conf.Option{
		{Name: "ttl", Value: "0", HasValue: true},
		{Name: "ttl", Value: "-5", HasValue: true},
		{Name: "ttl", Value: "1m", HasValue: true},
		{Name: "ttl", Value: "86401", HasValue: true},
		{Name: "key", Value: "relative/key", HasValue: true},
		{Name: "sack_socket", Value: "s", HasValue: true},
	} {
		if _, err := ParseAuthInfo(conf.Options{bad}); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == EnvKey {
				return v
			}
			return ""
		}
	}
	if p := KeyPath(Options{}, "/etc/slurm/slurm.conf", nil); p != "/etc/slurm/slurm.key" {
		t.Error(p)
	}
	if p := KeyPath(Options{}, "/etc/slurm/slurm.conf", env("/e/k")); p != "/e/k" {
		t.Error(p)
	}
	if p := KeyPath(Options{KeyFile: "/a/k"}, "/etc/slurm/slurm.conf", env("/e/k")); p != "/a/k" {
		t.Error(p)
	}
	if (Options{}).ttl() != DefaultTTL {
		t.Error("default ttl")
	}
}
