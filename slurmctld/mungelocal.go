package main

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/slurmctld/ctld"
)

// MungeKeyEnv names the munge key file for the in-process MUNGE codec. It
// is opt-in: the key file is normally readable by munged alone, and a
// controller holding it can mint credentials for any user. With it, the
// controller decodes requests and signs replies and job credentials itself
// (same credentials, same checks, a replay cache of its own) instead of two
// munged round trips per RPC.
const MungeKeyEnv = "GOSLURM_MUNGE_KEY"

// localMunge returns the in-process codec when MungeKeyEnv is set, nil
// otherwise. It runs as root, before the switch to SlurmUser, since the
// key is munge's; the codec then acts as SlurmUser, the identity munged
// would see on the controller's socket.
func localMunge(cfg *ctld.Config, getenv func(string) string) (munge.Codec, error) {
	path := getenv(MungeKeyEnv)
	if path == "" {
		return nil, nil
	}
	var owners []uint32
	if u, err := user.Lookup("munge"); err == nil {
		if n, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			owners = append(owners, uint32(n))
		}
	}
	owners = append(owners, cfg.SlurmUID)
	key, err := munge.LoadKey(path, owners...)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", MungeKeyEnv, path, err)
	}
	gid := uint32(os.Getegid())
	if uint32(os.Geteuid()) != cfg.SlurmUID {
		if gid, err = primaryGID(cfg.SlurmUID); err != nil {
			return nil, fmt.Errorf("%s: SlurmUser's group: %w", MungeKeyEnv, err)
		}
	}
	// NotBefore: the replay cache starts empty at each start, so the
	// credentials of before it (which the previous controller may have
	// decoded) are refused; Slurm's clients sign every send afresh.
	// MaxTTL: credentials live as long as AuthInfo's ttl (munged's default
	// 300 s when unset), not munged's one-hour maximum, which bounds both
	// what a captured frame is worth and the replay cache.
	lc := munge.LocalConfig{Identity: &munge.LocalIdentity{UID: cfg.SlurmUID, GID: gid},
		NotBefore: time.Now(), MaxTTL: munge.DefaultTTL}
	if v, ok := cfg.Conf.AuthInfo.Get("ttl"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			lc.MaxTTL = time.Duration(n) * time.Second
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// munged stamps its host's address; without one it stamps 0.0.0.0, as
	// munged does when the name does not resolve.
	if a, err := munge.HostOrigin(ctx); err == nil {
		lc.Origin = a
	}
	return munge.NewLocal(key, lc)
}
