package slurmauth

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// DefaultTTL is auth/slurm's token lifetime when AuthInfo has no ttl=.
const DefaultTTL = 60 * time.Second

// MaxTTL bounds AuthInfo=ttl= (a day): a longer-lived bearer token is a
// mistake, not a setting.
const MaxTTL = 24 * time.Hour

// Environment variables Slurm 23.11+ reads for auth/slurm.
const (
	EnvKey    = "SLURM_SACK_KEY"    // key file path, overrides the default
	EnvSocket = "SLURM_SACK_SOCKET" // sack socket for clients, tried first
)

// Options are the AuthInfo settings auth/slurm uses.
type Options struct {
	// TTL is ttl=SECONDS; 0 means DefaultTTL.
	TTL time.Duration
	// KeyFile is key=PATH (a goslurm extension; Slurm has only
	// $SLURM_SACK_KEY and the default next to slurm.conf).
	KeyFile string
	// SackSocket is sack_socket=PATH (a goslurm extension): where daemons
	// listen and clients connect, e.g. for a non-root demo cluster.
	SackSocket string
	// DisableSack is disable_sack: the daemon runs no token service.
	DisableSack bool
}

// ParseAuthInfo reads the options auth/slurm knows from AuthInfo; the others
// (socket= of auth/munge, use_client_ids, ...) are left alone, as Slurm
// does.
func ParseAuthInfo(o conf.Options) (Options, error) {
	var out Options
	for _, x := range o {
		switch strings.ToLower(x.Name) {
		case "ttl":
			n, err := strconv.ParseUint(strings.TrimSpace(x.Value), 10, 32)
			if err != nil || n == 0 || time.Duration(n)*time.Second > MaxTTL {
				return Options{}, newErr(ErrConfig, slurmerr.ESLURM_AUTH_BADARG, err,
					"AuthInfo ttl=%q: want whole seconds in 1..%d", x.Value, int(MaxTTL/time.Second))
			}
			out.TTL = time.Duration(n) * time.Second
		case "key":
			if !filepath.IsAbs(x.Value) {
				return Options{}, newErr(ErrConfig, slurmerr.ESLURM_AUTH_BADARG, nil,
					"AuthInfo key=%q: want an absolute path", x.Value)
			}
			out.KeyFile = x.Value
		case "sack_socket":
			if !filepath.IsAbs(x.Value) {
				return Options{}, newErr(ErrConfig, slurmerr.ESLURM_AUTH_BADARG, nil,
					"AuthInfo sack_socket=%q: want an absolute path", x.Value)
			}
			out.SackSocket = x.Value
		case "disable_sack":
			out.DisableSack = true
		}
	}
	return out, nil
}

// KeyPath returns the key file a daemon loads: AuthInfo key=, else
// $SLURM_SACK_KEY (getenv may be nil), else slurm.key in slurm.conf's
// directory.
func KeyPath(o Options, slurmConf string, getenv func(string) string) string {
	if o.KeyFile != "" {
		return o.KeyFile
	}
	if getenv != nil {
		if p := getenv(EnvKey); p != "" {
			return p
		}
	}
	return filepath.Join(filepath.Dir(slurmConf), KeyFileName)
}

func (o Options) ttl() time.Duration {
	if o.TTL > 0 {
		return o.TTL
	}
	return DefaultTTL
}
