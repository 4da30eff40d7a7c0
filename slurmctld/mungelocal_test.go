package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/slurmctld/ctld"
)

// TestLocalMunge: the in-process codec only when GOSLURM_MUNGE_KEY names
// a key file munged would accept; it acts as SlurmUser.
func TestLocalMunge(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.key")
	loose := filepath.Join(dir, "loose.key")
	short := filepath.Join(dir, "short.key")
	secret := []byte(strings.Repeat("0123456789abcdef", 4))
	for path, c := range map[string]struct {
		data []byte
		mode os.FileMode
	}{good: {secret, 0o600}, loose: {secret, 0o644}, short: {[]byte("tiny"), 0o600}} {
		if err := os.WriteFile(path, c.data, c.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
	}
	uid := uint32(os.Geteuid())
	cfg := &ctld.Config{SlurmUID: uid, Conf: &conf.Config{}}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == MungeKeyEnv {
				return v
			}
			return ""
		}
	}
	if c, err := localMunge(cfg, env("")); c != nil || err != nil {
		t.Errorf("unset: %v, %v; want nil, nil", c, err)
	}
	for _, bad := range []string{loose, short, filepath.Join(dir, "missing.key")} {
		if _, err := localMunge(cfg, env(bad)); err == nil || !strings.Contains(err.Error(), MungeKeyEnv) {
			t.Errorf("%s: err %v, want a refusal naming %s", bad, err, MungeKeyEnv)
		}
	}
	c, err := localMunge(cfg, env(good))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cred, err := c.Encode(ctx, []byte("payload"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := munge.NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	peer, err := munge.NewLocal(key, munge.LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := peer.Decode(ctx, cred)
	if err != nil {
		t.Fatal(err)
	}
	if d.UID != uid || string(d.Payload) != "payload" {
		t.Errorf("decoded uid %d payload %q, want %d %q", d.UID, d.Payload, uid, "payload")
	}

	// A credential of an hour lives 300 s here (AuthInfo has no ttl), and
	// one made before the codec was (a previous controller's) is refused
	// as replayed.
	long, err := peer.Encode(ctx, nil, munge.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := c.Decode(ctx, long); err != nil || d.TTL != munge.DefaultTTL {
		t.Errorf("an hour's credential: %v, TTL %v; want %v", err, d.TTL, munge.DefaultTTL)
	}
	old, err := peer.EncodeAt(nil, 0, 0, 0, time.Now().Add(-10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decode(ctx, old); !errors.Is(err, munge.ErrCredReplayed) {
		t.Errorf("a credential from before the start: %v, want replayed", err)
	}
}
