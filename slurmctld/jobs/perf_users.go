package jobs

import (
	"sync"
	"time"
)

// CachedUsers wraps a passwd/group lookup with a cache whose entries live
// ttl (slurmctld's group cache keeps getgrouplist results for
// GroupUpdateTime, 600 s by default). The manager asks for a job's user on
// every scheduling pass (AllowGroups) and every launch; uncached, each ask
// is a getgrouplist walk of the group database and a read of /etc/passwd,
// which made user lookups most of the controller's CPU when many short
// jobs turn over. Unknown uids are not cached: a user added meanwhile is
// found at once. ttl <= 0 turns the cache off. Safe for concurrent use.
func CachedUsers(lookup func(uint32) (User, bool), ttl time.Duration, now func() time.Time) func(uint32) (User, bool) {
	if lookup == nil || ttl <= 0 {
		return lookup
	}
	type entry struct {
		u   User
		exp time.Time
	}
	var (
		mu    sync.Mutex
		cache = map[uint32]entry{}
	)
	return func(uid uint32) (User, bool) {
		t := now()
		mu.Lock()
		e, ok := cache[uid]
		mu.Unlock()
		if ok && t.Before(e.exp) {
			return e.u, true
		}
		u, found := lookup(uid)
		mu.Lock()
		defer mu.Unlock()
		if !found {
			delete(cache, uid)
			return u, false
		}
		// Expired entries of other users go when this one is stored, so
		// the map stays as big as the set of recent users.
		for k, o := range cache {
			if !t.Before(o.exp) {
				delete(cache, k)
			}
		}
		cache[uid] = entry{u: u, exp: t.Add(ttl)}
		return u, true
	}
}
