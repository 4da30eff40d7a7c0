package cli

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func (s *state) loadReservations() (int64, []msg.Reservation, error) {
	m, err := s.ctl().LoadReservations(s.ctx(), 0)
	if err != nil {
		return 0, nil, err
	}
	return m.LastUpdate, m.Reservations, nil
}

// showReservations is scontrol_print_res: "show reservation [NAME]".
func showReservations(s *state, _ []string, val *string) {
	last, res, err := s.loadReservations()
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_load_reservations error", err)
		}
		return
	}
	if s.quietFlag == -1 {
		fmt.Fprintf(s.stdout, "last_update_time=%s, records=%d\n", s.timeStr(last), len(res))
	}
	printed := 0
	for i := range res {
		if val != nil && (!res[i].Name.Valid || res[i].Name.Value != *val) {
			continue
		}
		printed++
		s.stdout.WriteString(s.sprintReservation(&res[i], s.oneLiner))
		if val != nil {
			break
		}
	}
	if printed > 0 {
		return
	}
	if val != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			fmt.Fprintf(s.stdout, "Reservation %s not found\n", *val)
		}
	} else if s.quietFlag != 1 {
		s.stdout.WriteString("No reservations in the system\n")
	}
}

var resvFlagNames = []bitName{{1 << 0, "MAINT"}, {1 << 1, "NO_MAINT"}, {1 << 25, "FLEX"}, {1 << 14, "OVERLAP"},
	{1 << 6, "IGNORE_JOBS"}, {1 << 35, "HOURLY"}, {1 << 36, "NO_HOURLY"}, {1 << 2, "DAILY"}, {1 << 3, "NO_DAILY"},
	{1 << 21, "WEEKDAY"}, {1 << 23, "WEEKEND"}, {1 << 4, "WEEKLY"}, {1 << 5, "NO_WEEKLY"}, {1 << 15, "SPEC_NODES"},
	{1 << 19, "ALL_NODES"}, {1 << 8, "ANY_NODES"}, {1 << 9, "NO_ANY_NODES"}, {1 << 10, "STATIC"},
	{1 << 11, "NO_STATIC"}, {1 << 12, "PART_NODES"}, {1 << 13, "NO_PART_NODES"}, {1 << 16, "FIRST_CORES"},
	{1 << 17, "TIME_FLOAT"}, {1 << 18, "REPLACE"}, {1 << 30, "REPLACE_DOWN"}, {1 << 20, "PURGE_COMP"},
	{1 << 29, "NO_HOLD_JOBS_AFTER_END"}, {1 << 32, "MAGNETIC"}, {1 << 33, "NO_MAGNETIC"}}

// resvFlagsString is reservation_flags_string.
func resvFlagsString(r *msg.Reservation) string {
	var parts []string
	for _, f := range resvFlagNames {
		if r.Flags&f.bit == 0 {
			continue
		}
		if f.name == "PURGE_COMP" && r.PurgeCompTime != 0 {
			parts = append(parts, "PURGE_COMP="+secs2time(int64(r.PurgeCompTime)))
			continue
		}
		parts = append(parts, f.name)
	}
	return strings.Join(parts, ",")
}

func wattsString(w uint32) string {
	switch {
	case w == noVal || w == 0:
		return "n/a"
	case w == infinite:
		return "INFINITE"
	case w%1000000 == 0:
		return fmt.Sprintf("%dM", w/1000000)
	case w%1000 == 0:
		return fmt.Sprintf("%dK", w/1000)
	}
	return fmt.Sprint(w)
}

// sprintReservation is slurm_sprint_reservation_info.
func (s *state) sprintReservation(r *msg.Reservation, oneLiner bool) string {
	nl := "\n   "
	if oneLiner {
		nl = " "
	}
	var b strings.Builder
	dur := "N/A"
	if r.EndTime >= r.StartTime {
		dur = secs2time(int64(uint32(r.EndTime - r.StartTime)))
	}
	fmt.Fprintf(&b, "ReservationName=%s StartTime=%s EndTime=%s Duration=%s%s", cs(r.Name),
		s.timeStr(r.StartTime), s.timeStr(r.EndTime), dur, nl)
	nodeCnt := r.NodeCnt
	if nodeCnt == noVal {
		nodeCnt = 0
	}
	fmt.Fprintf(&b, "Nodes=%s NodeCnt=%d CoreCnt=%d Features=%s PartitionName=%s Flags=%s%s", cs(r.NodeList),
		nodeCnt, r.CoreCnt, cs(r.Features), cs(r.Partition), resvFlagsString(r), nl)
	for _, c := range r.CoreSpec {
		fmt.Fprintf(&b, "  NodeName=%s CoreIDs=%s%s", cs(c.NodeName), cs(c.CoreID), nl)
	}
	fmt.Fprintf(&b, "TRES=%s%s", cs(r.TRES), nl)
	state := "INACTIVE"
	now := s.now().Unix()
	if r.StartTime <= now && r.EndTime >= now {
		state = "ACTIVE"
	}
	fmt.Fprintf(&b, "Users=%s Groups=%s Accounts=%s Licenses=%s State=%s BurstBuffer=%s Watts=%s%s",
		cs(r.Users), cs(r.Groups), cs(r.Accounts), cs(r.Licenses), state, cs(r.BurstBuffer), wattsString(r.Watts), nl)
	delay := "(null)"
	if r.MaxStartDelay != 0 {
		delay = secs2time(int64(r.MaxStartDelay))
	}
	fmt.Fprintf(&b, "MaxStartDelay=%s", delay)
	if oneLiner {
		b.WriteString("\n")
	} else {
		b.WriteString("\n\n")
	}
	return b.String()
}

// showTopology is scontrol_print_topo: "show topology [SWITCH|NODES]".
func showTopology(s *state, _ []string, val *string) {
	v, err := s.rpc(msgtype.REQUEST_TOPO_INFO, msg.Empty{}, msgtype.RESPONSE_TOPO_INFO)
	if err == nil && v == nil {
		err = slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
	}
	if err != nil {
		s.perror("slurm_load_topo error", err)
		return
	}
	recs := v.(msg.TopoInfoResponse).Switches
	limit := -1
	if v, ok := s.getenv("SLURM_TOPO_LEN"); ok {
		limit, _ = strtolInt(v)
	}
	printRec := func(t *msg.TopoSwitch) {
		line := fmt.Sprintf("SwitchName=%s Level=%d LinkSpeed=%d", cs(t.Name), t.Level, t.LinkSpeed)
		if t.Nodes.Valid {
			line += " Nodes=" + t.Nodes.Value
		}
		if t.Switches.Valid {
			line += " Switches=" + t.Switches.Value
		}
		if limit >= 0 && limit < len(line) {
			line = line[:limit]
		}
		s.stdout.WriteString(line + "\n")
	}
	if val == nil || *val == "" {
		if len(recs) == 0 {
			s.errorf("No topology information available")
			return
		}
		for i := range recs {
			printRec(&recs[i])
		}
		return
	}
	for i := range recs {
		if recs[i].Name.Valid && recs[i].Name.Value == *val {
			printRec(&recs[i])
			return
		}
	}
	matches := 0
	for i := range recs {
		if recs[i].Nodes.Value == "" || !hostsWithin(recs[i].Nodes.Value, *val) {
			continue
		}
		matches++
		printRec(&recs[i])
	}
	if matches == 0 {
		s.errorf("Topology information contains no switch or node named %s", *val)
	}
}

// hostsWithin is hostset_within: every host of list is in set.
func hostsWithin(set, list string) bool {
	hs, err := hostlist.Parse(set)
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, h := range hs.Hosts() {
		have[h] = true
	}
	hl, err := hostlist.Parse(list)
	if err != nil {
		return false
	}
	for _, h := range hl.Hosts() {
		if !have[h] {
			return false
		}
	}
	return true
}
