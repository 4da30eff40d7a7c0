package sched

import "testing"

// TestAllowUIDs: with the members of AllowGroups given (the controller's
// allow_uids), a user passes when listed or when the primary group is
// allowed, whatever the supplementary groups; without them, the groups
// decide.
func TestAllowUIDs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		uids   []uint32
		gid    uint32
		groups []uint32
		start  bool
	}{
		{"member", []uint32{3000, 2000}, 100, nil, true},
		{"primary group allowed", []uint32{3000}, 500, nil, true},
		{"not a member", []uint32{3000}, 100, []uint32{500}, false},
		{"no member list: supplementary group", nil, 100, []uint32{500}, true},
		{"no member list, no group", nil, 100, []uint32{600}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(mkNodes(1, 4, 1000))
			s.Partitions[0].AllowGroups = []string{"staff"}
			s.Partitions[0].AllowGIDs = []uint32{500}
			s.Partitions[0].AllowUIDs = tc.uids
			j := mkJob(1, tasks(1), user(2000))
			j.GroupID, j.Groups = tc.gid, tc.groups
			s.Pending = []Job{j}
			p := Schedule(s)
			if got := startOf(p, 1) != nil; got != tc.start {
				t.Errorf("started %v, want %v (%+v)", got, tc.start, p.Pending)
			}
		})
	}
}
