package ctld

import (
	"slices"
	"strings"
	"sync"
)

// Group membership as slurmctld reads it (get_groups_members of
// slurmctld/groups.c), for reservations' Groups=: the members of a group
// are the names its entry lists, the names listed by every other entry
// with the same gid, and the users whose primary group it is. The
// lookups go through the system's user and group database (NSS: files,
// LDAP, sssd) when the binary is built with cgo, as the controller's
// other user lookups (os/user) do; without cgo the files are read.

// groupDB is the user and group database one group's members are read
// from.
type groupDB interface {
	// group is getgrnam_r: the gid and listed members of the group
	// named; found is false when there is no such group.
	group(name string) (gid uint32, members []string, found bool)
	// eachGroup is a getgrent_r walk: every group entry. Where the
	// database does not enumerate (sssd's default), it sees none.
	eachGroup(fn func(gid uint32, members []string))
	// eachUser is a getpwent_r walk: every user's uid and primary gid.
	eachUser(fn func(uid, gid uint32))
	// uid is uid_from_string: a user name, or a number that is a
	// user's uid.
	uid(name string) (uint32, bool)
}

// groupCache keeps each group's members once read, as slurmctld's group
// cache does, until clear: the periodic refresh (GroupUpdateTime, when
// the group file changed or GroupUpdateForce=1) and reconfigure empty
// it. Safe for concurrent use.
type groupCache struct {
	mu      sync.Mutex
	db      groupDB
	members map[string][]uint32
	// lists are membersOf's answers by group list (a partition's
	// AllowGroups is asked on every scheduling pass).
	lists map[string][]uint32
	// cfg is the configuration the members were read under.
	cfg *Config
}

// sysGroups is the controller's group cache over the system database
// (a process has one group database, as slurmctld has one cache).
var sysGroups = &groupCache{db: systemGroupDB()}

func (gc *groupCache) clear() {
	gc.mu.Lock()
	gc.members, gc.lists = nil, nil
	gc.mu.Unlock()
}

// configured empties the cache when the controller's configuration is
// not the one it was filled under: a reconfigure reads the groups again
// (read_slurm_conf reloads the allow lists with force).
func (gc *groupCache) configured(cfg *Config) {
	gc.mu.Lock()
	if gc.cfg != cfg {
		gc.cfg, gc.members, gc.lists = cfg, nil, nil
	}
	gc.mu.Unlock()
}

// setDB replaces the database and empties the cache (tests).
func (gc *groupCache) setDB(db groupDB) {
	gc.mu.Lock()
	gc.db, gc.members, gc.lists = db, nil, nil
	gc.mu.Unlock()
}

// one is _get_group_members: the uids of one group; found is false when
// it does not exist. Listed root members are left out, but a user of
// uid 0 whose primary group it is ends the list there (the C list is
// 0-terminated). Called with gc.mu held.
func (gc *groupCache) one(name string) ([]uint32, bool) {
	if uids, ok := gc.members[name]; ok {
		return uids, true
	}
	gid, listed, found := gc.db.group(name)
	if !found {
		// Its lists are kept (membersOf) until the next refresh.
		return nil, false
	}
	var uids []uint32
	add := func(names []string) {
		for _, m := range names {
			if uid, ok := gc.db.uid(m); ok && uid != 0 {
				uids = append(uids, uid)
			}
		}
	}
	add(listed)
	gc.db.eachGroup(func(g uint32, names []string) {
		if g == gid {
			add(names)
		}
	})
	gc.db.eachUser(func(uid, g uint32) {
		if g == gid {
			uids = append(uids, uid)
		}
	})
	if i := slices.Index(uids, 0); i >= 0 {
		uids = uids[:i]
	}
	if gc.members == nil {
		gc.members = map[string][]uint32{}
	}
	gc.members[name] = uids
	return uids, true
}

// membersOf is get_groups_members: the uids of the members of every
// group of the comma list, largest first, each once; nil when there are
// none. The slice is shared: callers do not change it.
func (gc *groupCache) membersOf(groups string) []uint32 {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if uids, ok := gc.lists[groups]; ok {
		return uids
	}
	var uids []uint32
	for _, name := range strings.Split(groups, ",") {
		if name != "" {
			one, _ := gc.one(name)
			uids = append(uids, one...)
		}
	}
	slices.SortFunc(uids, func(a, b uint32) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	uids = slices.Compact(uids)
	// Kept even when a group is missing, as slurmctld keeps allow_uids
	// until the next reconfigure or GroupUpdateTime refresh: the lists
	// are asked for on every scheduling pass, and a lookup may be an LDAP
	// round trip.
	if gc.lists == nil {
		gc.lists = map[string][]uint32{}
	}
	gc.lists[groups] = uids
	return uids
}

// GroupMembers returns the uids of the members of the groups of a comma
// list, through the controller's group cache (for partitions'
// AllowGroups, whose allow list slurmctld builds the same way as a
// reservation's): never nil, shared, not to be changed.
func GroupMembers(groups string) []uint32 {
	if uids := sysGroups.membersOf(groups); uids != nil {
		return uids
	}
	return noUIDs
}

var noUIDs = []uint32{}
