package ctld

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Groups= of reservations (get_groups_members of slurmctld/groups.c):
// the users who may use the reservation are the members of the groups.
// Only the files are read: a group database served by another NSS
// source (LDAP, sssd) is not enumerated, so its members are not found.

// groupFile and passwdFile are the databases read; tests point them at
// their own files.
var (
	groupFile  = "/etc/group"
	passwdFile = "/etc/passwd"
)

// dbRecords reads a colon-separated database file; a missing file has
// no records.
func dbRecords(path string) [][]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		out = append(out, strings.Split(line, ":"))
	}
	return out
}

// groupMembers is get_groups_members: the uids of the members of every
// group in the comma list (listed members of each group entry with the
// group's gid, and users whose primary group it is), without root,
// largest first, each once. A group that does not exist adds nobody;
// nobody at all is an error, ESLURM_GROUP_ID_MISSING.
func groupMembers(groups string) ([]uint32, error) {
	grp := dbRecords(groupFile)
	pw := dbRecords(passwdFile)
	var uids []uint32
	for _, name := range strings.Split(groups, ",") {
		if name == "" {
			continue
		}
		uids = append(uids, oneGroup(name, grp, pw)...)
	}
	// The C list ends at its first 0: a root entry (from the primary
	// group scan, which does not skip it) cuts off what follows.
	if i := slices.Index(uids, 0); i >= 0 {
		uids = uids[:i]
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
	if len(uids) == 0 {
		return nil, resvErr(slurmerr.ESLURM_GROUP_ID_MISSING)
	}
	return uids, nil
}

func oneGroup(name string, grp, pw [][]string) []uint32 {
	gid := ""
	for _, g := range grp {
		if len(g) >= 3 && g[0] == name {
			gid = g[2]
			break
		}
	}
	if gid == "" {
		return nil
	}
	var uids []uint32
	members := func(list string) {
		for _, m := range strings.Split(list, ",") {
			if uid, ok := resvUID(m); ok && uid != 0 {
				uids = append(uids, uid)
			}
		}
	}
	for _, g := range grp {
		if len(g) >= 4 && g[2] == gid {
			members(g[3])
		}
	}
	for _, p := range pw {
		if len(p) >= 4 && p[3] == gid {
			if uid, err := strconv.ParseUint(p[2], 10, 32); err == nil {
				uids = append(uids, uint32(uid))
			}
		}
	}
	return uids
}

// setGroups installs a Groups= list on r: the users who may use it are
// the groups' members.
func (r *resvRec) setGroups(groups string) error {
	if groups == "" {
		if r.Users == "" {
			r.UIDs, r.UsersNot = nil, false
		}
		r.Groups = ""
		return nil
	}
	uids, err := groupMembers(groups)
	if err != nil {
		return err
	}
	r.Groups, r.UIDs, r.UsersNot = groups, uids, false
	return nil
}

// updateGroups is _update_group_uid_list: "a,b" replaces the groups,
// "+a" adds and "-a" removes one; a plain name after +/- is refused.
func updateGroups(cur, expr string) (string, error) {
	groups := cur
	plusMinus := false
	for _, tok := range strings.Split(expr, ",") {
		switch {
		case tok == "":
		case tok[0] == '-':
			names := splitNames(groups)
			groups = strings.Join(slices.DeleteFunc(names, func(n string) bool { return n == tok[1:] }), ",")
			plusMinus = true
		case tok[0] == '+':
			if !strings.Contains(groups, tok[1:]) {
				if groups != "" {
					groups += ","
				}
				groups += tok[1:]
			}
			plusMinus = true
		case plusMinus:
			return "", resvErr(slurmerr.ESLURM_GROUP_ID_MISSING)
		default:
			return expr, nil
		}
	}
	return groups, nil
}

// resvGroupRefresh is reservation_update_groups, every GroupUpdateTime
// seconds: the members of Groups= reservations are read again (with
// GroupUpdateForce=0 only when the group file changed). A group that
// has lost every member keeps its old list here, where Slurm would
// empty it and so open the reservation to everybody. It reports
// whether a list changed. Called under the write lock.
func (c *Controller) resvGroupRefresh(now int64) bool {
	some := false
	for _, r := range c.resv.list {
		some = some || r.Groups != ""
	}
	period := int64(c.cfg.Conf.GroupUpdateTime)
	if !some || period == 0 || now-c.resv.groupCheck < period {
		return false
	}
	c.resv.groupCheck = now
	var mtime int64
	if st, err := os.Stat(groupFile); err == nil {
		mtime = st.ModTime().UnixNano()
	}
	if c.cfg.Conf.GroupUpdateForce == 0 && mtime == c.resv.groupMtime {
		return false
	}
	c.resv.groupMtime = mtime
	changed := false
	for _, r := range c.resv.list {
		if r.Groups == "" {
			continue
		}
		uids, err := groupMembers(r.Groups)
		if err != nil || slices.Equal(uids, r.UIDs) {
			continue
		}
		r.UIDs = uids
		changed = true
	}
	if changed {
		c.resv.lastUpdate = now
		c.resv.seq++
	}
	return changed
}
