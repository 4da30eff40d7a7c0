package slurmauth

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// SackSocketPaths returns the sockets a client tries, in order, as Slurm
// 25.11 does: only $SLURM_SACK_SOCKET when set; else
// /run/slurm-<cluster>/sack.socket (when cluster is known), then
// /run/slurm, /run/slurmctld and /run/slurmdbd's sack.socket. getenv may be
// nil.
func SackSocketPaths(cluster string, getenv func(string) string) []string {
	if getenv != nil {
		if p := getenv(EnvSocket); p != "" {
			return []string{p}
		}
	}
	var out []string
	if cluster != "" {
		out = append(out, "/run/slurm-"+cluster+"/sack.socket")
	}
	return append(out, SackSocketSlurmd, SackSocketSlurmctld, SackSocketSlurmdbd)
}

// SackClient asks the local token service for tokens (what our commands use
// instead of the key, which they cannot read).
type SackClient struct {
	// Paths are the sockets tried in order; use SackSocketPaths.
	Paths []string
	// Version is the protocol version sent; 0 means codec.Current.
	Version codec.Version
	// Timeout bounds one exchange; 0 means DefaultSackTimeout.
	Timeout time.Duration
	// TrustedUIDs, when not empty, are the uids the service must run as
	// (root, SlurmUser): the server's SO_PEERCRED is checked before a
	// request is sent, so an impostor socket is refused.
	TrustedUIDs []uint32
}

func sackErr(cause error, format string, args ...any) error {
	return newErr(ErrSack, slurmerr.ESLURM_AUTH_NET_ERROR, cause, format, args...)
}

func (c *SackClient) dial(ctx context.Context) (*net.UnixConn, error) {
	if len(c.Paths) == 0 {
		return nil, sackErr(nil, "no sack socket configured")
	}
	var errs []error
	var d net.Dialer
	for _, p := range c.Paths {
		conn, err := d.DialContext(ctx, "unix", p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uc := conn.(*net.UnixConn)
		if len(c.TrustedUIDs) > 0 {
			uid, _, _, err := peerCred(uc)
			if err != nil || !slices.Contains(c.TrustedUIDs, uid) {
				uc.Close()
				errs = append(errs, fmt.Errorf("%s: served by uid %d, not a trusted uid (%v)", p, uid, err))
				continue
			}
		}
		return uc, nil
	}
	return nil, sackErr(errors.Join(errs...), "failed to connect to any sack sockets")
}

func (c *SackClient) exchange(ctx context.Context, req *SackRequest) (*net.UnixConn, error) {
	t := c.Timeout
	if t <= 0 {
		t = DefaultSackTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	dl, _ := ctx.Deadline()
	_ = conn.SetDeadline(dl)
	if req.Version == 0 {
		req.Version = uint16(codec.Current)
		if c.Version != 0 {
			req.Version = uint16(c.Version)
		}
	}
	if _, err := conn.Write(AppendSackRequest(nil, req)); err != nil {
		conn.Close()
		return nil, sackErr(err, "send")
	}
	return conn, nil
}

// Create asks for a token restricted to rUID carrying payload (the authhash
// blob). The token asserts the caller's own uid and gid.
func (c *SackClient) Create(ctx context.Context, rUID uint32, payload []byte) (string, error) {
	if len(payload) > MaxSackPayload {
		return "", sackErr(nil, "payload of %d bytes, at most %d", len(payload), MaxSackPayload)
	}
	conn, err := c.exchange(ctx, &SackRequest{RPC: SackCreate, RUID: rUID, Payload: payload})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	var n [4]byte
	if _, err := io.ReadFull(conn, n[:]); err != nil {
		return "", sackErr(err, "create: reading reply")
	}
	l := binary.BigEndian.Uint32(n[:])
	if l == 0 {
		return "", sackErr(nil, "create: refused by the service")
	}
	if l > MaxTokenLen+1 {
		return "", sackErr(nil, "create: token of %d bytes", l)
	}
	b := make([]byte, l)
	if _, err := io.ReadFull(conn, b); err != nil {
		return "", sackErr(err, "create: reading token")
	}
	if b[l-1] != 0 {
		return "", sackErr(nil, "create: token not NUL-terminated")
	}
	return string(b[:l-1]), nil
}

// Verify asks the service whether token is valid for the caller (signature,
// expiry, ruid = caller or any, context, cluster). A refusal wraps
// ErrCredInvalid and the service's Slurm code.
func (c *SackClient) Verify(ctx context.Context, token string) error {
	if len(token) > MaxTokenLen {
		return credErr(ErrMalformed, "token of %d bytes", len(token))
	}
	conn, err := c.exchange(ctx, &SackRequest{RPC: SackVerify, Token: token})
	if err != nil {
		return err
	}
	defer conn.Close()
	var n [4]byte
	if _, err := io.ReadFull(conn, n[:]); err != nil {
		return sackErr(err, "verify: reading reply")
	}
	if rc := int(int32(binary.BigEndian.Uint32(n[:]))); rc != 0 {
		return credErr(slurmerr.Error{Code: rc}, "refused by the token service")
	}
	return nil
}
