package munge

import (
	"sync"
)

// DefaultReplayLimit bounds the in-process replay cache: about 64 bytes per
// entry, so some 130 MB when full. At the default TTL of 300 s it holds the
// credentials of a sustained 7,000 decodes per second.
const DefaultReplayLimit = 1 << 21

// replayKey identifies a decoded credential as munged's replay hash does:
// the first 16 bytes of its MAC (the shortest MAC munged allows) and the
// time it expires.
type replayKey struct {
	mac [16]byte
	exp int64
}

// replayCache remembers every credential decoded until it expires. It is
// sharded by the first MAC byte (uniformly random) so concurrent decodes
// rarely share a lock.
type replayCache struct {
	shards [replayShards]replayShard
}

const replayShards = 32

type replayShard struct {
	mu    sync.Mutex
	limit int
	seen  map[replayKey]struct{}
	// byExp lists the keys by the second they expire in, so a purge visits
	// expired entries only.
	byExp  map[int64][]replayKey
	purged int64 // the time of the last purge
}

func newReplayCache(limit int) *replayCache {
	if limit <= 0 {
		limit = DefaultReplayLimit
	}
	per := (limit + replayShards - 1) / replayShards
	c := &replayCache{}
	for i := range c.shards {
		c.shards[i].limit = per
		c.shards[i].seen = make(map[replayKey]struct{})
		c.shards[i].byExp = make(map[int64][]replayKey)
	}
	return c
}

// insert records the credential with this MAC and expiry time at time now
// (Unix seconds). It reports whether the credential was new; a full cache is
// an EMUNGE_NO_MEMORY error, since forgetting an unexpired credential would
// let it be replayed.
func (c *replayCache) insert(mac []byte, exp, now int64) (bool, error) {
	var k replayKey
	copy(k.mac[:], mac)
	k.exp = exp
	s := &c.shards[k.mac[0]%replayShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[k]; ok {
		return false, nil
	}
	if now > s.purged {
		s.purge(now)
	}
	if len(s.seen) >= s.limit {
		return false, &Error{Code: CodeNoMemory, Message: "replay cache full: too many unexpired credentials"}
	}
	s.seen[k] = struct{}{}
	s.byExp[exp] = append(s.byExp[exp], k)
	return true, nil
}

// purge drops the entries that expired before now: a credential past its
// expiry fails the time check before it is looked up here.
func (s *replayShard) purge(now int64) {
	s.purged = now
	for exp, keys := range s.byExp {
		if exp >= now {
			continue
		}
		for _, k := range keys {
			delete(s.seen, k)
		}
		delete(s.byExp, exp)
	}
}

// len returns the number of credentials remembered.
func (c *replayCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(s.seen)
		s.mu.Unlock()
	}
	return n
}
