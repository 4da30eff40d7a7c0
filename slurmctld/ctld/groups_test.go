package ctld

import (
	"slices"
	"testing"
)

// fakeGroupDB is a group database in memory that counts its lookups.
type fakeGroupDB struct {
	groups []fakeGroup
	users  []fakeUser
	asks   int
}

type fakeGroup struct {
	name    string
	gid     uint32
	members []string
}

type fakeUser struct {
	name     string
	uid, gid uint32
}

func (f *fakeGroupDB) group(name string) (uint32, []string, bool) {
	f.asks++
	for _, g := range f.groups {
		if g.name == name {
			return g.gid, g.members, true
		}
	}
	return 0, nil, false
}

func (f *fakeGroupDB) eachGroup(fn func(uint32, []string)) {
	for _, g := range f.groups {
		fn(g.gid, g.members)
	}
}

func (f *fakeGroupDB) eachUser(fn func(uid, gid uint32)) {
	for _, u := range f.users {
		fn(u.uid, u.gid)
	}
}

func (f *fakeGroupDB) uid(name string) (uint32, bool) {
	for _, u := range f.users {
		if u.name == name {
			return u.uid, true
		}
	}
	return 0, false
}

func newFakeGroups() *fakeGroupDB {
	return &fakeGroupDB{
		groups: []fakeGroup{
			{"root", 0, nil},
			{"hpc", 100, []string{"alice", "bob", "root", "ghost"}},
			// Another name of gid 100 (the MH-CEA case): its members count.
			{"hpc-alias", 100, []string{"carol"}},
			{"lab", 200, []string{"bob"}},
			{"nobodyhere", 300, nil},
			{"rootprim", 400, []string{"dave"}},
		},
		users: []fakeUser{
			{"root", 0, 0}, {"alice", 1001, 1001}, {"bob", 1002, 1002},
			{"carol", 1003, 1003}, {"dave", 1004, 1004}, {"erin", 1005, 200},
			{"toor", 0, 400}, {"frank", 1006, 400},
		},
	}
}

func TestGroupCacheMembers(t *testing.T) {
	for _, tc := range []struct {
		groups string
		want   []uint32
	}{
		// Listed members (root and unknown names left out), the members
		// of other entries with the gid, largest uid first.
		{"hpc", []uint32{1003, 1002, 1001}},
		// Users whose primary group it is.
		{"lab", []uint32{1005, 1002}},
		{"hpc,lab", []uint32{1005, 1003, 1002, 1001}},
		{"lab,,hpc", []uint32{1005, 1003, 1002, 1001}},
		{"nobodyhere", nil},
		{"missing", nil},
		{"", nil},
		// A uid 0 user of the primary group ends that group's list (a
		// 0-terminated list in slurmctld): dave is listed, frank is cut.
		{"rootprim", []uint32{1004}},
		{"root,lab", []uint32{1005, 1002}},
	} {
		gc := &groupCache{db: newFakeGroups()}
		if got := gc.membersOf(tc.groups); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.groups, got, tc.want)
		}
	}
}

// TestGroupCacheRefresh: a group's members are read once, until the
// cache is emptied (periodic refresh) or the configuration changes.
func TestGroupCacheRefresh(t *testing.T) {
	db := newFakeGroups()
	gc := &groupCache{db: db}
	cfg1, cfg2 := &Config{}, &Config{}
	gc.configured(cfg1)
	gc.membersOf("lab")
	db.users = append(db.users, fakeUser{"gina", 1007, 200})
	for _, step := range []struct {
		what string
		do   func()
		want []uint32
		asks int
	}{
		{"cached", func() {}, []uint32{1005, 1002}, 1},
		{"same configuration", func() { gc.configured(cfg1) }, []uint32{1005, 1002}, 1},
		{"reconfigure", func() { gc.configured(cfg2) }, []uint32{1007, 1005, 1002}, 2},
		{"cached again", func() {}, []uint32{1007, 1005, 1002}, 2},
		{"cleared", func() { db.users = db.users[:len(db.users)-1]; gc.clear() }, []uint32{1005, 1002}, 3},
	} {
		step.do()
		if got := gc.membersOf("lab"); !slices.Equal(got, step.want) || db.asks != step.asks {
			t.Errorf("%s: %v after %d lookups, want %v after %d", step.what, got, db.asks, step.want, step.asks)
		}
	}
	// A group that does not exist is remembered as empty until the next
	// refresh, as slurmctld's allow_uids (no lookup per scheduling pass).
	gc.membersOf("new")
	db.groups = append(db.groups, fakeGroup{"new", 500, []string{"alice"}})
	if got := gc.membersOf("new"); len(got) != 0 {
		t.Errorf("new group before a refresh: %v", got)
	}
	gc.clear()
	if got := gc.membersOf("new"); !slices.Equal(got, []uint32{1001}) {
		t.Errorf("new group after a refresh: %v", got)
	}
}

// TestFilesGroupDB: the files fallback reads the same entries as the
// fake.
func TestFilesGroupDB(t *testing.T) {
	withGroupFiles(t, testGroups+"+nis:x:80:\n", testPasswd)
	db := sysGroups.db
	gid, mem, ok := db.group("staff")
	if !ok || gid != 50 || !slices.Equal(mem, []string{"daemon", "bin", "root"}) {
		t.Errorf("staff: %d %v %v", gid, mem, ok)
	}
	if _, _, ok := db.group("+nis"); ok {
		t.Error("a NIS compat line is a group")
	}
	for name, want := range map[string]uint32{"sys": 3, "4242": 4242} {
		if uid, ok := db.uid(name); !ok || uid != want {
			t.Errorf("uid(%s) = %d %v", name, uid, ok)
		}
	}
	if _, ok := db.uid("9999"); ok {
		t.Error("uid 9999 is nobody's")
	}
}
