package slurmauth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// DefaultReplayEntries bounds a ReplayCache whose Max is 0.
const DefaultReplayEntries = 1 << 18

// ReplayCache remembers verified tokens until they expire, so each is
// accepted once by this verifier (what munged's replay cache gives
// auth/munge). A forwarded message carries its sender's token to several
// daemons; each has its own cache, so forwarding still works.
//
// When full of unexpired tokens it refuses new ones (fail closed) rather
// than forget one that could then be replayed.
type ReplayCache struct {
	// Max is the number of tokens remembered; 0 means
	// DefaultReplayEntries.
	Max int

	mu   sync.Mutex
	seen map[[sha256.Size]byte]int64 // token digest -> exp
}

// Check records tok (expiring at exp, Unix seconds) and fails with
// ErrReplayed if it was recorded before.
func (c *ReplayCache) Check(tok string, exp int64, now time.Time) error {
	d := sha256.Sum256([]byte(tok))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = make(map[[sha256.Size]byte]int64)
	}
	if _, ok := c.seen[d]; ok {
		return credErr(ErrReplayed, "seen before")
	}
	max := c.Max
	if max <= 0 {
		max = DefaultReplayEntries
	}
	if len(c.seen) >= max {
		t := now.Unix()
		for k, e := range c.seen {
			if e < t {
				delete(c.seen, k)
			}
		}
		if len(c.seen) >= max {
			return credErr(ErrReplayed, "replay cache full (%d unexpired tokens)", max)
		}
	}
	c.seen[d] = exp
	return nil
}
