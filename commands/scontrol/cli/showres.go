package cli

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// reservation is one record of RESPONSE_RESERVATION_INFO (22.05 order).
type reservation struct {
	accounts, burstBuffer         msg.NullString
	coreCnt                       uint32
	endTime                       int64
	features                      msg.NullString
	flags                         uint64
	licenses                      msg.NullString
	maxStartDelay                 uint32
	name                          msg.NullString
	nodeCnt                       uint32
	nodeList, partition           msg.NullString
	purgeCompTime, watts          uint32
	startTime                     int64
	tres, users, groups           msg.NullString
	coreSpecNodes, coreSpecCoreID []msg.NullString
}

func optStr(rd *pack.Reader) msg.NullString {
	v, ok := rd.OptStr()
	return msg.NullString{Value: v, Valid: ok}
}

func (s *state) loadReservations() (int64, []reservation, error) {
	b, err := encode(msgtype.REQUEST_RESERVATION_INFO, msg.LastUpdateRequest{})
	if err != nil {
		return 0, nil, err
	}
	c := s.ctl()
	s.logAuth()
	r, err := c.Client.Call(s.ctx(), msgtype.REQUEST_RESERVATION_INFO, b)
	if err != nil {
		return 0, nil, err
	}
	f := r.Frame
	switch f.Header.MsgType {
	case msgtype.RESPONSE_RESERVATION_INFO:
	case msgtype.RESPONSE_SLURM_RC_MSG:
		return 0, nil, s.rcMsg(&f)
	default:
		if err := client.ReturnCode(&f); err != nil {
			return 0, nil, err
		}
		return 0, nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
	}
	rd := pack.NewReader(f.Body)
	n := rd.Count(60)
	last := rd.Time()
	out := make([]reservation, 0, n)
	for i := 0; i < n && rd.Err() == nil; i++ {
		var v reservation
		v.accounts = optStr(rd)
		v.burstBuffer = optStr(rd)
		v.coreCnt = rd.U32()
		v.endTime = rd.Time()
		v.features = optStr(rd)
		v.flags = rd.U64()
		v.licenses = optStr(rd)
		v.maxStartDelay = rd.U32()
		v.name = optStr(rd)
		v.nodeCnt = rd.U32()
		v.nodeList = optStr(rd)
		v.partition = optStr(rd)
		v.purgeCompTime = rd.U32()
		v.watts = rd.U32()
		v.startTime = rd.Time()
		v.tres = optStr(rd)
		v.users = optStr(rd)
		v.groups = optStr(rd)
		if rd.U32() != noVal { // node_inx: bit count, then hex text
			optStr(rd)
		}
		cnt := rd.Count(8)
		for k := 0; k < cnt && rd.Err() == nil; k++ {
			v.coreSpecNodes = append(v.coreSpecNodes, optStr(rd))
			v.coreSpecCoreID = append(v.coreSpecCoreID, optStr(rd))
		}
		out = append(out, v)
	}
	if err := rd.Err(); err != nil {
		return 0, nil, fmt.Errorf("%v: %w: %w", msgtype.RESPONSE_RESERVATION_INFO, client.ErrReceive, err)
	}
	return last, out, nil
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
		if val != nil && (!res[i].name.Valid || res[i].name.Value != *val) {
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
func resvFlagsString(r *reservation) string {
	var parts []string
	for _, f := range resvFlagNames {
		if r.flags&f.bit == 0 {
			continue
		}
		if f.name == "PURGE_COMP" && r.purgeCompTime != 0 {
			parts = append(parts, "PURGE_COMP="+secs2time(int64(r.purgeCompTime)))
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
func (s *state) sprintReservation(r *reservation, oneLiner bool) string {
	nl := "\n   "
	if oneLiner {
		nl = " "
	}
	var b strings.Builder
	dur := "N/A"
	if r.endTime >= r.startTime {
		dur = secs2time(int64(uint32(r.endTime - r.startTime)))
	}
	fmt.Fprintf(&b, "ReservationName=%s StartTime=%s EndTime=%s Duration=%s%s", cs(r.name),
		s.timeStr(r.startTime), s.timeStr(r.endTime), dur, nl)
	nodeCnt := r.nodeCnt
	if nodeCnt == noVal {
		nodeCnt = 0
	}
	fmt.Fprintf(&b, "Nodes=%s NodeCnt=%d CoreCnt=%d Features=%s PartitionName=%s Flags=%s%s", cs(r.nodeList),
		nodeCnt, r.coreCnt, cs(r.features), cs(r.partition), resvFlagsString(r), nl)
	for i := range r.coreSpecNodes {
		fmt.Fprintf(&b, "  NodeName=%s CoreIDs=%s%s", cs(r.coreSpecNodes[i]), cs(r.coreSpecCoreID[i]), nl)
	}
	fmt.Fprintf(&b, "TRES=%s%s", cs(r.tres), nl)
	state := "INACTIVE"
	now := s.now().Unix()
	if r.startTime <= now && r.endTime >= now {
		state = "ACTIVE"
	}
	fmt.Fprintf(&b, "Users=%s Groups=%s Accounts=%s Licenses=%s State=%s BurstBuffer=%s Watts=%s%s",
		cs(r.users), cs(r.groups), cs(r.accounts), cs(r.licenses), state, cs(r.burstBuffer), wattsString(r.watts), nl)
	delay := "(null)"
	if r.maxStartDelay != 0 {
		delay = secs2time(int64(r.maxStartDelay))
	}
	fmt.Fprintf(&b, "MaxStartDelay=%s", delay)
	if oneLiner {
		b.WriteString("\n")
	} else {
		b.WriteString("\n\n")
	}
	return b.String()
}

// topoRecord is one switch of RESPONSE_TOPO_INFO.
type topoRecord struct {
	level                   uint16
	linkSpeed               uint32
	name, nodes, switchList msg.NullString
}

// showTopology is scontrol_print_topo: "show topology [SWITCH|NODES]".
func showTopology(s *state, _ []string, val *string) {
	c := s.ctl()
	s.logAuth()
	r, err := c.Client.Call(s.ctx(), msgtype.REQUEST_TOPO_INFO, nil)
	var recs []topoRecord
	if err == nil {
		f := r.Frame
		switch f.Header.MsgType {
		case msgtype.RESPONSE_TOPO_INFO:
			rd := pack.NewReader(f.Body)
			n := rd.Count(18)
			for i := 0; i < n && rd.Err() == nil; i++ {
				recs = append(recs, topoRecord{level: rd.U16(), linkSpeed: rd.U32(),
					name: optStr(rd), nodes: optStr(rd), switchList: optStr(rd)})
			}
			err = rd.Err()
		case msgtype.RESPONSE_SLURM_RC_MSG:
			err = s.rcMsg(&f)
		default:
			if err = client.ReturnCode(&f); err == nil {
				err = slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
			}
		}
	}
	if err != nil {
		s.perror("slurm_load_topo error", err)
		return
	}
	limit := -1
	if v, ok := s.getenv("SLURM_TOPO_LEN"); ok {
		limit, _ = strtolInt(v)
	}
	printRec := func(t *topoRecord) {
		line := fmt.Sprintf("SwitchName=%s Level=%d LinkSpeed=%d", cs(t.name), t.level, t.linkSpeed)
		if t.nodes.Valid {
			line += " Nodes=" + t.nodes.Value
		}
		if t.switchList.Valid {
			line += " Switches=" + t.switchList.Value
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
		if recs[i].name.Valid && recs[i].name.Value == *val {
			printRec(&recs[i])
			return
		}
	}
	matches := 0
	for i := range recs {
		if recs[i].nodes.Value == "" || !hostsWithin(recs[i].nodes.Value, *val) {
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
