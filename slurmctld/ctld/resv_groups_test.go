package ctld

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// withGroupFiles points the group cache at a database of test files
// (and the refresh's group file at the test group file).
func withGroupFiles(t *testing.T, group, passwd string) {
	t.Helper()
	dir := t.TempDir()
	g, p := filepath.Join(dir, "group"), filepath.Join(dir, "passwd")
	for f, s := range map[string]string{g: group, p: passwd} {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	og, odb := groupFile, sysGroups.db
	groupFile = g
	sysGroups.setDB(filesGroupDB{groupPath: g, passwdPath: p})
	t.Cleanup(func() {
		groupFile = og
		sysGroups.setDB(odb)
	})
}

const testGroups = `root:x:0:
staff:x:50:daemon,bin,root
alias:x:50:sys
empty:x:60:
prim:x:70:
`

const testPasswd = `root:x:0:0:root:/root:/bin/sh
daemon:x:1:1::/:/bin/sh
bin:x:2:2::/:/bin/sh
sys:x:3:3::/:/bin/sh
primuser:x:4242:70::/:/bin/sh
`

func TestGroupMembers(t *testing.T) {
	withGroupFiles(t, testGroups, testPasswd)
	for _, tc := range []struct {
		groups string
		want   []uint32
		rc     int
	}{
		// Members of every entry with the gid, root left out, largest
		// uid first.
		{"staff", []uint32{3, 2, 1}, 0},
		{"prim", []uint32{4242}, 0},
		{"prim,staff,nope", []uint32{4242, 3, 2, 1}, 0},
		// root's list ends at once, the next group's members follow.
		{"root,staff", []uint32{3, 2, 1}, 0},
		{"staff,root", []uint32{3, 2, 1}, 0},
		{"empty", nil, slurmerr.ESLURM_GROUP_ID_MISSING},
		{"nope", nil, slurmerr.ESLURM_GROUP_ID_MISSING},
		// root's primary group: the root entry ends the list.
		{"root", nil, slurmerr.ESLURM_GROUP_ID_MISSING},
	} {
		got, err := groupMembers(tc.groups)
		if rc := slurmerr.Code(err); rc != tc.rc || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v rc %d, want %v rc %d", tc.groups, got, rc, tc.want, tc.rc)
		}
	}
}

func TestUpdateGroups(t *testing.T) {
	for _, tc := range []struct {
		cur, expr, want string
		rc              int
	}{
		{"a", "b,c", "b,c", 0},
		{"a", "+b", "a,b", 0},
		{"a,b", "-a", "b", 0},
		{"a,b", "-a,+c", "b,c", 0},
		{"a", "+b,c", "", slurmerr.ESLURM_GROUP_ID_MISSING},
		{"a", "", "a", 0},
	} {
		got, err := updateGroups(tc.cur, tc.expr)
		if rc := slurmerr.Code(err); rc != tc.rc || (rc == 0 && got != tc.want) {
			t.Errorf("%q %q: %q rc %d, want %q rc %d", tc.cur, tc.expr, got, rc, tc.want, tc.rc)
		}
	}
}

// TestResvGroups: Groups= reservations are open to the groups' members
// and exclude Users=, on create and on update, as 22.05.
func TestResvGroups(t *testing.T) {
	const now = 1_800_000_000
	withGroupFiles(t, testGroups, testPasswd)
	c, _ := resvController(t)
	create := func(name, users, groups, accounts string) int {
		b := resvDescT{name: name, nodes: "n1", users: users, accounts: accounts, start: now, dur: 60, flags: resvOverlap}.body()
		if groups != "" {
			b.Groups = msg.Str(groups)
		}
		return resvRC(resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, b))
	}
	for _, tc := range []struct {
		name, users, groups, accounts string
		rc                            int
	}{
		{"both", "root", "staff", "", slurmerr.ESLURM_RESERVATION_USER_GROUP},
		{"missing", "", "nope", "", slurmerr.ESLURM_GROUP_ID_MISSING},
		{"g", "", "staff", "", 0},
		{"u", "root", "", "", 0},
	} {
		if rc := create(tc.name, tc.users, tc.groups, tc.accounts); rc != tc.rc {
			t.Fatalf("%s: rc %d (%s), want %d", tc.name, rc, slurmerr.Message(rc), tc.rc)
		}
	}
	r := resvShow(t, c)["g"]
	if r.Groups.Value != "staff" || r.Users.Valid || r.Name.Value != "g" {
		t.Errorf("record: users %+v groups %+v", r.Users, r.Groups)
	}
	jr := c.jobReservations()
	i := slices.IndexFunc(jr, func(x jobs.Reservation) bool { return x.Name == "g" })
	if i < 0 || !slices.Equal(jr[i].Users, []uint32{3, 2, 1}) || jr[i].UsersNot {
		t.Errorf("job view of g: %+v", jr)
	}
	upd := func(name, users, groups string) int {
		b := resvDescT{name: name, users: users}.body()
		if groups != "" {
			b.Groups = msg.Str(groups)
		}
		return resvRC(resvServe(c, 0, msgtype.REQUEST_UPDATE_RESERVATION, b))
	}
	for _, tc := range []struct {
		name, users, groups string
		rc                  int
		wantGroups          string
	}{
		{"g", "root", "", slurmerr.ESLURM_RESERVATION_USER_GROUP, "staff"},
		{"u", "", "staff", slurmerr.ESLURM_RESERVATION_USER_GROUP, ""},
		{"g", "", "+prim", 0, "staff,prim"},
		{"g", "", "-staff", 0, "prim"},
		{"g", "", "nope", slurmerr.ESLURM_GROUP_ID_MISSING, "prim"},
	} {
		if rc := upd(tc.name, tc.users, tc.groups); rc != tc.rc {
			t.Fatalf("update %s %q %q: rc %d (%s), want %d", tc.name, tc.users, tc.groups, rc, slurmerr.Message(rc), tc.rc)
		}
		if got := resvShow(t, c)[tc.name].Groups.Value; got != tc.wantGroups {
			t.Errorf("update %s %q %q: groups %q, want %q", tc.name, tc.users, tc.groups, got, tc.wantGroups)
		}
	}
}

// TestResvFeatures: NodeCnt= reservations take nodes with the features
// (active first); the expression is checked as a job's constraint.
func TestResvFeatures(t *testing.T) {
	const now = 1_800_000_000
	c, _ := resvController(t)
	c.mu.Lock()
	for n, f := range map[string][2]string{
		"n1": {"fast", "fast"}, "n2": {"fast,big", "fast"}, "n3": {"big", "big"},
	} {
		c.nodeIndex[n].setFeatures(f[0], f[1])
	}
	c.mu.Unlock()
	for _, tc := range []struct {
		features string
		cnt      uint32
		rc       int
		nodes    string
		shown    string
	}{
		{"fast", 2, 0, "n[1-2]", "fast"},
		{"big", 1, 0, "n3", "big"},
		// Active features do not give 2 nodes; available ones do.
		{"big", 2, 0, "n[2-3]", "big"},
		{"fast,big", 1, 0, "n2", "fast&big"},
		{"fast&big", 2, slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, "", ""},
		{"(big|fast)&big", 2, 0, "n[2-3]", "(big|fast)&big"},
		{"fast|big", 3, 0, "n[1-3]", "fast|big"},
		{"nope", 1, slurmerr.ESLURM_INVALID_FEATURE, "", ""},
		{"[fast|big]", 1, slurmerr.ESLURM_INVALID_FEATURE, "", ""},
		{"[fast*1&big*1]", 2, slurmerr.ESLURM_NOT_SUPPORTED, "", ""},
		{"fast&", 1, 0, "n1", "fast&"}, // accepted by build_feature_list too
		{"(fast", 1, slurmerr.ESLURM_INVALID_FEATURE, "", ""},
	} {
		b := resvDescT{name: "f", cnt: tc.cnt, users: "root", start: now, dur: 60}.body()
		b.Features = msg.Str(tc.features)
		resp := resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, b)
		if rc := resvRC(resp); rc != tc.rc {
			t.Errorf("%q x%d: rc %d (%s), want %d", tc.features, tc.cnt, rc, slurmerr.Message(rc), tc.rc)
			continue
		}
		if tc.rc != 0 {
			continue
		}
		r := resvShow(t, c)["f"]
		if r.NodeList.Value != tc.nodes || r.Features.Value != tc.shown {
			t.Errorf("%q x%d: nodes %q features %q, want %q %q", tc.features, tc.cnt, r.NodeList.Value, r.Features.Value, tc.nodes, tc.shown)
		}
		c.mu.Lock()
		if err := c.deleteResv("f"); err != nil {
			t.Fatal(err)
		}
		c.mu.Unlock()
	}
	// With Nodes= the features are kept as given, not checked.
	b := resvDescT{name: "kept", nodes: "n1", users: "root", start: now, dur: 60}.body()
	b.Features = msg.Str("nope,other")
	if rc := resvRC(resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, b)); rc != 0 {
		t.Fatalf("Nodes= with features: rc %d", rc)
	}
	if got := resvShow(t, c)["kept"].Features.Value; got != "nope,other" {
		t.Errorf("features with Nodes=: %q", got)
	}
	upd := resvDescT{name: "kept"}.body()
	upd.Features = msg.Str("fast")
	if rc := resvRC(resvServe(c, 0, msgtype.REQUEST_UPDATE_RESERVATION, upd)); rc != slurmerr.ESLURM_NOT_SUPPORTED {
		t.Errorf("update of features: rc %d", rc)
	}
	upd.Features = msg.Str("")
	if rc := resvRC(resvServe(c, 0, msgtype.REQUEST_UPDATE_RESERVATION, upd)); rc != 0 || resvShow(t, c)["kept"].Features.Valid {
		t.Errorf("clearing features: rc %d, %+v", rc, resvShow(t, c)["kept"].Features)
	}
}

// TestResvLicensesCoreCnt: Licenses= is checked as Slurm checks it
// (resv_lic_test.go has the rest); CoreCnt= is refused as with a select
// plugin that cannot reserve cores.
func TestResvLicensesCoreCnt(t *testing.T) {
	const now = 1_800_000_000
	c, _ := newTestController(t, "Licenses=foo:4,bar\n")
	for _, tc := range []struct {
		lic string
		rc  int
	}{
		{"nope:1", slurmerr.ESLURM_INVALID_LICENSES},
		{"foo:5", slurmerr.ESLURM_INVALID_LICENSES},
		{"foo:bad", slurmerr.ESLURM_INVALID_LICENSES},
		{"foo:2", 0},
		{"bar", slurmerr.ESLURM_RESERVATION_OVERLAP}, // n1 is foo:2's
	} {
		b := resvDescT{nodes: "n1", users: "root", start: now, dur: 60}.body()
		b.Licenses = msg.Str(tc.lic)
		if rc := resvRC(resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, b)); rc != tc.rc {
			t.Errorf("Licenses=%s: rc %d (%s), want %d", tc.lic, rc, slurmerr.Message(rc), tc.rc)
		}
	}
	b := resvDescT{nodes: "n1", users: "root", start: now, dur: 60}.body()
	b.CoreCnt = []uint32{2}
	// Cores of a node another reservation holds whole: refused as
	// overlapping (resv_cores_test.go tests core reservations).
	if rc := resvRC(resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, b)); rc != slurmerr.ESLURM_RESERVATION_OVERLAP {
		t.Errorf("CoreCnt=2: rc %d", rc)
	}
}

// TestResvGroupRefresh: the members of a Groups= reservation are read
// again every GroupUpdateTime seconds.
func TestResvGroupRefresh(t *testing.T) {
	const now = 1_800_000_000
	withGroupFiles(t, testGroups, testPasswd)
	c, clk := resvController(t)
	b := resvDescT{name: "g", nodes: "n1", start: now, dur: 600}.body()
	b.Groups = msg.Str("prim")
	if rc := resvRC(resvServe(c, 0, msgtype.REQUEST_CREATE_RESERVATION, b)); rc != 0 {
		t.Fatalf("create: %s", slurmerr.Message(rc))
	}
	users := func() []uint32 {
		for _, r := range c.jobReservations() {
			if r.Name == "g" {
				return r.Users
			}
		}
		return nil
	}
	if err := os.WriteFile(groupFile, []byte(testGroups+"prim2:x:70:daemon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		at   int64
		want []uint32
	}{
		{now, []uint32{4242, 1}}, // first look
		{now + 1, []uint32{4242, 1}},
	} {
		clk.t = time.Unix(step.at, 0)
		c.resvTick(context.Background())
		if got := users(); !slices.Equal(got, step.want) {
			t.Errorf("at +%d: users %v, want %v", step.at-now, got, step.want)
		}
	}
	if err := os.WriteFile(groupFile, []byte(testGroups), 0o644); err != nil {
		t.Fatal(err)
	}
	clk.t = time.Unix(now+599, 0)
	c.resvTick(context.Background())
	if got := users(); !slices.Equal(got, []uint32{4242, 1}) {
		t.Errorf("before GroupUpdateTime: users %v", got)
	}
	clk.t = time.Unix(now+600, 0)
	c.resvTick(context.Background())
	if got := users(); !slices.Equal(got, []uint32{4242}) {
		t.Errorf("after GroupUpdateTime: users %v, want [4242]", got)
	}
}
