package jobs

import (
	"testing"
	"time"
)

func TestCachedUsers(t *testing.T) {
	calls := map[uint32]int{}
	known := map[uint32]User{1000: {Name: "alice", Groups: []uint32{1000, 27}}}
	lookup := func(uid uint32) (User, bool) {
		calls[uid]++
		u, ok := known[uid]
		return u, ok
	}
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	users := CachedUsers(lookup, 600*time.Second, clock)

	tests := []struct {
		name      string
		advance   time.Duration
		uid       uint32
		wantOK    bool
		wantName  string
		wantCalls int // lookups of uid so far
	}{
		{"first lookup asks the database", 0, 1000, true, "alice", 1},
		{"within ttl from the cache", 599 * time.Second, 1000, true, "alice", 1},
		{"expired: asked again", time.Second, 1000, true, "alice", 2},
		{"unknown uid", 0, 2000, false, "", 1},
		{"unknown uid is not cached", time.Second, 2000, false, "", 2},
	}
	for _, tc := range tests {
		now = now.Add(tc.advance)
		u, ok := users(tc.uid)
		if ok != tc.wantOK || u.Name != tc.wantName || calls[tc.uid] != tc.wantCalls {
			t.Errorf("%s: got (%q, %v) after %d lookups, want (%q, %v) after %d",
				tc.name, u.Name, ok, calls[tc.uid], tc.wantName, tc.wantOK, tc.wantCalls)
		}
	}
	// A user added to the database is found at once.
	known[2000] = User{Name: "bob"}
	if u, ok := users(2000); !ok || u.Name != "bob" {
		t.Errorf("new user: got (%q, %v)", u.Name, ok)
	}
}

func TestCachedUsersOff(t *testing.T) {
	n := 0
	lookup := func(uint32) (User, bool) { n++; return User{Name: "x"}, true }
	users := CachedUsers(lookup, 0, time.Now)
	users(1)
	users(1)
	if n != 2 {
		t.Errorf("ttl 0: %d lookups, want 2 (no cache)", n)
	}
	if CachedUsers(nil, time.Minute, time.Now) != nil {
		t.Error("nil lookup should stay nil")
	}
}
