package bcast

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
)

// Credential check failures. Every one is answered
// ESLURMD_INVALID_JOB_CREDENTIAL, as slurmd does.
var (
	ErrCredExpired    = errors.New("sbcast credential expired")
	ErrCredReplayed   = errors.New("credential replayed")
	ErrCredNotCached  = errors.New("signature not in cache")
	ErrCredWrongNode  = errors.New("node not in the credential's host list")
	ErrCredWrongUser  = errors.New("credential for another uid/gid")
	ErrCredCacheFull  = errors.New("sbcast credential cache full")
	ErrCredBadNodeSet = errors.New("cannot parse the credential's host list")
)

// RestartWindow is how long after a start slurmd still verifies afresh a
// credential it has no record of for a block other than a file's first
// (real's 60 s: blocks of a transfer that began before a restart).
const RestartWindow = 60 * time.Second

// DefaultMaxCreds bounds the credentials remembered at once. A record
// lives until its credential expires or its job ends here; when the
// table is full of live records new transfers are refused (fail closed)
// rather than a record forgotten.
const DefaultMaxCreds = 1 << 16

// DefaultMaxCredsPerUser bounds the records of one user (the sender's
// uid), so that one user's sbcast runs, or many credentials of one user's
// jobs sent on purpose, cannot fill the table and refuse everyone else's
// transfers: each sbcast run is one credential, and a record lives until
// the job ends on the node, so this is thousands of sbcast runs by one
// user's running jobs on one node. It takes 16 users at their bound to
// fill DefaultMaxCreds.
const DefaultMaxCredsPerUser = DefaultMaxCreds / 16

// Caller is who sent a block, from the message's authentication.
type Caller struct {
	UID, GID uint32
}

// CredChecker is slurmd's sbcast credential verification
// (extract_sbcast_cred and _valid_sbcast_cred).
//
// A file's first block (not a shared object's) has its signature checked
// in full; the credential is then remembered, and every later block, and
// every shared object sent with --send-libs, must carry exactly that
// credential: the whole signed body and signature, not real's weak sum of
// signature bytes, so no field can be changed under a remembered
// signature. A first block whose credential is already remembered is a
// replay and is refused, whatever munged's replay policy (several slurmd
// sharing one munged accept munged's replay verdict).
type CredChecker struct {
	Sigs    jobcred.SignatureVerifier
	Clock   func() time.Time
	Started time.Time // the daemon's start (RestartWindow)
	Node    string    // this node's name
	Version codec.Version
	Max     int // 0 means DefaultMaxCreds
	MaxUser int // 0 means DefaultMaxCredsPerUser

	mu      sync.Mutex
	seen    map[[sha256.Size]byte]credRecord
	perUser map[uint32]int // records per sender uid
}

type credRecord struct {
	uid     uint32 // the sender's
	job     uint32
	expires int64 // the credential's expiration
	// sigExpires is when the signature itself stops verifying (munge's
	// TTL), 0 when it never does.
	sigExpires int64
}

// credKey identifies a credential by everything in it.
func credKey(signed, sig []byte) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(signed)))
	h.Write(n[:])
	h.Write(signed)
	h.Write(sig)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (c *CredChecker) now() time.Time {
	if c.Clock == nil {
		return time.Now()
	}
	return c.Clock()
}

// Check verifies the credential of one block sent by caller and returns
// the identity and groups to write with. The uid and gid must be the
// caller's; a credential without groups (LaunchParameters=disable_send_gids)
// leaves them to the caller to look up.
func (c *CredChecker) Check(ctx context.Context, req *msg.FileBcast, caller Caller) (*msg.SbcastCred, error) {
	cred := &req.Cred
	now := c.now()
	if now.Unix() > cred.Expiration {
		return nil, ErrCredExpired
	}
	signed, err := cred.SignedBytes(c.Version)
	if err != nil {
		return nil, err
	}
	key := credKey(signed, cred.Signature)
	if req.BlockNo == 1 && req.Flags&msg.FileBcastSO == 0 {
		if c.remembered(key) {
			return nil, ErrCredReplayed
		}
		info, err := c.verify(ctx, signed, cred.Signature, now, false)
		if err != nil {
			return nil, err
		}
		// Checked again with the record made: two first blocks with
		// one credential may both have got this far.
		if err := c.remember(key, cred, caller.UID, info, now, true); err != nil {
			return nil, err
		}
	} else if !c.remembered(key) {
		if now.Sub(c.Started) > RestartWindow {
			return nil, ErrCredNotCached
		}
		// Freshly restarted: the first block may have come before.
		info, err := c.verify(ctx, signed, cred.Signature, now, true)
		if err != nil {
			return nil, err
		}
		if err := c.remember(key, cred, caller.UID, info, now, false); err != nil {
			return nil, err
		}
	}
	nodes, err := hostlist.Expand(cred.Nodes.Value)
	if err != nil || !cred.Nodes.Valid {
		return nil, fmt.Errorf("%w %s", ErrCredBadNodeSet, cred.Nodes.Value)
	}
	if !slices.Contains(nodes, c.Node) {
		return nil, fmt.Errorf("%w: %s", ErrCredWrongNode, cred.Nodes.Value)
	}
	out := *cred
	if out.UID == noVal {
		out.UID = caller.UID
	}
	if out.GID == noVal {
		out.GID = caller.GID
	}
	if out.UID != caller.UID || out.GID != caller.GID {
		return nil, fmt.Errorf("%w: sbcast cred from %d/%d but rpc from %d/%d",
			ErrCredWrongUser, out.UID, out.GID, caller.UID, caller.GID)
	}
	return &out, nil
}

const noVal = 0xfffffffe

func (c *CredChecker) verify(ctx context.Context, signed, sig []byte, now time.Time, replayOK bool) (jobcred.SigInfo, error) {
	info, err := c.Sigs.VerifySignature(ctx, signed, sig)
	if err != nil {
		if replayOK && errors.Is(err, jobcred.ErrSignatureReplayed) {
			return jobcred.SigInfo{}, nil
		}
		return info, err
	}
	if !info.Expires.IsZero() && now.After(info.Expires) {
		return info, fmt.Errorf("%w: signature expired at %s", ErrCredExpired, info.Expires.Format(time.RFC3339))
	}
	return info, nil
}

func (c *CredChecker) remembered(key [sha256.Size]byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.seen[key]
	return ok
}

// remember records a verified credential; first (a file's first block)
// refuses one already recorded as a replay, in the same critical section
// as the record. The record counts against uid, the sender.
func (c *CredChecker) remember(key [sha256.Size]byte, cred *msg.SbcastCred, uid uint32, info jobcred.SigInfo, now time.Time, first bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[[sha256.Size]byte]credRecord{}
		c.perUser = map[uint32]int{}
	}
	if _, ok := c.seen[key]; ok {
		if first {
			return ErrCredReplayed
		}
		return nil // a later block recorded by a concurrent one
	}
	max := c.Max
	if max <= 0 {
		max = DefaultMaxCreds
	}
	maxUser := c.MaxUser
	if maxUser <= 0 {
		maxUser = DefaultMaxCredsPerUser
	}
	if len(c.seen) >= max || c.perUser[uid] >= maxUser {
		c.purgeLocked(now.Unix())
		if len(c.seen) >= max {
			return ErrCredCacheFull
		}
		if c.perUser[uid] >= maxUser {
			return fmt.Errorf("%w: uid %d has %d live sbcast credentials", ErrCredCacheFull, uid, c.perUser[uid])
		}
	}
	r := credRecord{uid: uid, job: cred.JobID, expires: cred.Expiration}
	if !info.Expires.IsZero() {
		r.sigExpires = info.Expires.Unix()
	}
	c.seen[key] = r
	c.perUser[uid]++
	return nil
}

func (c *CredChecker) forgetLocked(k [sha256.Size]byte, r credRecord) {
	delete(c.seen, k)
	if c.perUser[r.uid]--; c.perUser[r.uid] <= 0 {
		delete(c.perUser, r.uid)
	}
}

func (c *CredChecker) purgeLocked(now int64) {
	for k, r := range c.seen {
		if r.expires < now {
			c.forgetLocked(k, r)
		}
	}
}

// JobEnded shortens the records of a job that ended on this node (its
// epilog ran): no block of it is expected any more, so a record is kept
// only while its signature would still verify (to refuse a replay), and
// dropped at once when the signature never expires (a replay is then
// refused by the job's revocation, which the caller checks).
func (c *CredChecker) JobEnded(job uint32) {
	now := c.now().Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, r := range c.seen {
		if r.job != job {
			continue
		}
		if r.sigExpires >= now {
			r.expires = min(r.expires, r.sigExpires)
			c.seen[k] = r
		} else {
			c.forgetLocked(k, r)
		}
	}
}

// Purge drops expired records.
func (c *CredChecker) Purge() {
	now := c.now().Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.purgeLocked(now)
}
