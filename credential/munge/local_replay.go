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
	// cutoff: entries expiring at or before it were dropped to make room
	// (a full shard), so a credential expiring then may have been seen:
	// it counts as replayed.
	cutoff int64
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
// (Unix seconds). It reports whether the credential was new. A full shard
// forgets the entries that expire first and from then on counts every
// credential expiring no later than they did as replayed: old credentials
// are refused, never accepted twice, and new ones still pass (an error
// here would let anyone who can mint credentials, any local user, shut the
// controller out by filling the cache).
func (c *replayCache) insert(mac []byte, exp, now int64) (bool, error) {
	var k replayKey
	copy(k.mac[:], mac)
	k.exp = exp
	s := &c.shards[k.mac[0]%replayShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[k]; ok || exp <= s.cutoff {
		return false, nil
	}
	if now > s.purged {
		s.purge(now)
	}
	for len(s.seen) >= s.limit {
		s.evictFirst()
	}
	if exp <= s.cutoff {
		return false, nil
	}
	s.seen[k] = struct{}{}
	s.byExp[exp] = append(s.byExp[exp], k)
	return true, nil
}

// evictFirst drops the entries that expire first and raises the cutoff to
// their expiry.
func (s *replayShard) evictFirst() {
	first, found := int64(0), false
	for exp := range s.byExp {
		if !found || exp < first {
			first, found = exp, true
		}
	}
	if !found {
		return
	}
	for _, k := range s.byExp[first] {
		delete(s.seen, k)
	}
	delete(s.byExp, first)
	s.cutoff = max(s.cutoff, first)
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
