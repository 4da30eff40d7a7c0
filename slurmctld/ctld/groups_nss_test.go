//go:build cgo && linux

package ctld

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// getent runs getent(1) on a database: its entries, split at colons.
func getent(t *testing.T, db string) [][]string {
	t.Helper()
	path, err := exec.LookPath("getent")
	if err != nil {
		t.Skip("no getent here")
	}
	out, err := exec.Command(path, db).Output()
	if err != nil {
		t.Fatalf("getent %s: %v", db, err)
	}
	var recs [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			recs = append(recs, strings.Split(l, ":"))
		}
	}
	return recs
}

// TestNSSGroupDB compares the NSS lookups with getent, which asks the
// same NSS sources (here the files): every group's gid and members, the
// group and user walks, and the members a group is given.
func TestNSSGroupDB(t *testing.T) {
	groups, users := getent(t, "group"), getent(t, "passwd")
	db := nssGroupDB{}
	type entry struct {
		gid uint32
		mem string
	}
	var want, got []entry
	for _, g := range groups {
		gid, ok := parseID(g[2])
		if !ok || len(g) < 4 {
			t.Fatalf("getent group line %q", strings.Join(g, ":"))
		}
		want = append(want, entry{gid, g[3]})
		id, mem, found := db.group(g[0])
		if !found || id != gid || strings.Join(mem, ",") != g[3] {
			t.Errorf("group %s: gid %d members %v found %v; getent: %s", g[0], id, mem, found, strings.Join(g, ":"))
		}
	}
	db.eachGroup(func(gid uint32, mem []string) { got = append(got, entry{gid, strings.Join(mem, ",")}) })
	if !slices.Equal(got, want) {
		t.Errorf("group walk:\n%v\ngetent:\n%v", got, want)
	}
	type pw struct{ uid, gid uint32 }
	var wantPw, gotPw []pw
	for _, u := range users {
		uid, _ := parseID(u[2])
		gid, _ := parseID(u[3])
		wantPw = append(wantPw, pw{uid, gid})
	}
	db.eachUser(func(uid, gid uint32) { gotPw = append(gotPw, pw{uid, gid}) })
	if !slices.Equal(gotPw, wantPw) {
		t.Errorf("user walk:\n%v\ngetent:\n%v", gotPw, wantPw)
	}
	if _, _, found := db.group("no-such-group-h10"); found {
		t.Error("a group that does not exist is found")
	}

	// The members of each group, from getent's answers by the rules of
	// get_groups_members, against what the cache reads through NSS.
	uidOf := map[string]uint32{}
	for _, u := range users {
		uid, _ := parseID(u[2])
		uidOf[u[0]] = uid
	}
	gc := &groupCache{db: db}
	for _, g := range groups {
		gid, _ := parseID(g[2])
		var uids []uint32
		for _, o := range groups {
			if o[2] != g[2] && o[0] != g[0] {
				continue
			}
			for _, m := range memberList(o[3]) {
				if uid, ok := uidOf[m]; ok && uid != 0 {
					uids = append(uids, uid)
				}
			}
		}
		// The group's own listed members come twice (getgrnam_r, then
		// the walk), which the sort and compaction fold.
		for _, u := range users {
			if pg, _ := parseID(u[3]); pg == gid {
				uid, _ := parseID(u[2])
				uids = append(uids, uid)
			}
		}
		if i := slices.Index(uids, 0); i >= 0 {
			uids = uids[:i]
		}
		slices.Sort(uids)
		slices.Reverse(uids)
		uids = slices.Compact(uids)
		if got := gc.membersOf(g[0]); !slices.Equal(got, uids) {
			t.Errorf("members of %s: %v, from getent %v", g[0], got, uids)
		}
	}
}

// TestLoginShell compares LoginShell with getent passwd's shell field,
// and the files reader with it too (here NSS serves the files).
func TestLoginShell(t *testing.T) {
	for _, u := range getent(t, "passwd") {
		if len(u) != 7 {
			continue
		}
		if got := LoginShell(u[0]); got != u[6] {
			t.Errorf("LoginShell(%s) = %q, getent says %q", u[0], got, u[6])
		}
		if got := filesShell("/etc/passwd", u[0]); got != u[6] {
			t.Errorf("filesShell(%s) = %q, getent says %q", u[0], got, u[6])
		}
	}
	if got := LoginShell("no-such-user-h10"); got != "" {
		t.Errorf("unknown user: shell %q", got)
	}
}
