package ctld

import (
	"os"
	"slices"
	"strings"

	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Groups= of reservations (get_groups_members of slurmctld/groups.c):
// the users who may use the reservation are the members of the groups,
// read through the controller's group cache (groups.go).

// groupFile is the file whose modification time tells the periodic
// refresh that the groups changed (get_group_tlm stats it even where
// the groups come from another NSS source); tests point it elsewhere.
var groupFile = "/etc/group"

// groupMembers is get_groups_members for a reservation: nobody at all is
// an error, ESLURM_GROUP_ID_MISSING.
func groupMembers(groups string) ([]uint32, error) {
	uids := sysGroups.membersOf(groups)
	if len(uids) == 0 {
		return nil, resvErr(slurmerr.ESLURM_GROUP_ID_MISSING)
	}
	// The reservation's list is its own (Users= updates change it).
	return slices.Clone(uids), nil
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

// resvGroupRefresh is the group part of slurmctld's periodic work, every
// GroupUpdateTime seconds: with GroupUpdateForce=1, or when the group
// file changed, the group cache is emptied (load_part_uid_allow_list)
// and the members of Groups= reservations are read again
// (reservation_update_groups). A reconfigure empties the cache too, as
// read_slurm_conf's forced reload does. A group that has lost every
// member keeps its old list here, where Slurm would empty it and so open
// the reservation to everybody. It reports whether a list changed.
// Called under the write lock.
func (c *Controller) resvGroupRefresh(now int64) bool {
	sysGroups.configured(c.cfg)
	period := int64(c.cfg.Conf.GroupUpdateTime)
	if period == 0 || now-c.resv.groupCheck < period {
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
	sysGroups.clear()
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
