package cli

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Reservation flags the create/update parser sets (slurm.h).
const (
	resvMaint       = 1 << 0
	resvNoMaint     = 1 << 1
	resvDaily       = 1 << 2
	resvNoDaily     = 1 << 3
	resvWeekly      = 1 << 4
	resvNoWeekly    = 1 << 5
	resvIgnJobs     = 1 << 6
	resvNoIgnJob    = 1 << 7
	resvAnyNodes    = 1 << 8
	resvNoAnyNodes  = 1 << 9
	resvStatic      = 1 << 10
	resvNoStatic    = 1 << 11
	resvPartNodes   = 1 << 12
	resvNoPartNodes = 1 << 13
	resvOverlap     = 1 << 14
	resvFirstCores  = 1 << 16
	resvTimeFloat   = 1 << 17
	resvReplace     = 1 << 18
	resvPurgeComp   = 1 << 20
	resvWeekday     = 1 << 21
	resvNoWeekday   = 1 << 22
	resvWeekend     = 1 << 23
	resvNoWeekend   = 1 << 24
	resvFlex        = 1 << 25
	resvNoFlex      = 1 << 26
	resvDurPlus     = 1 << 27
	resvDurMinus    = 1 << 28
	resvNoHoldJobs  = 1 << 29
	resvReplaceDown = 1 << 30
	resvNoPurgeComp = 1 << 31
	resvMagnetic    = 1 << 32
	resvNoMagnetic  = 1 << 33
	resvSkip        = 1 << 34
	resvHourly      = 1 << 35
	resvNoHourly    = 1 << 36

	noVal64 = 0xfffffffffffffffe
)

// resvDesc is resv_desc_msg_t as 22.05 packs it; nil strings are NULL.
type resvDesc struct {
	name                            *string
	startTime, endTime              int64
	duration                        uint32
	flags                           uint64
	nodeCnt, coreCnt                []uint32
	nodeList, features, licenses    *string
	maxStartDelay                   uint32
	partition                       *string
	purgeCompTime, watts            uint32
	users, accounts, burstBuf, grps *string
}

// newResvDesc is slurm_init_resv_desc_msg.
func newResvDesc() *resvDesc {
	return &resvDesc{startTime: noVal, endTime: noVal, duration: noVal, flags: noVal64,
		maxStartDelay: noVal, purgeCompTime: noVal, watts: noVal}
}

func optStr(p *string) msg.NullString {
	if p == nil {
		return msg.NullString{}
	}
	return msg.Str(*p)
}

// countList is a count list as ReservationDesc takes it: none is nil.
func countList(l []uint32) []uint32 {
	if len(l) == 0 {
		return nil
	}
	return l
}

// body is the descriptor as REQUEST_CREATE/UPDATE_RESERVATION send it.
func (d *resvDesc) body() msg.ReservationDesc {
	return msg.ReservationDesc{
		Name: optStr(d.name), StartTime: d.startTime, EndTime: d.endTime, Duration: d.duration,
		Flags: d.flags, NodeCnt: countList(d.nodeCnt), CoreCnt: countList(d.coreCnt),
		NodeList: optStr(d.nodeList), Features: optStr(d.features), Licenses: optStr(d.licenses),
		MaxStartDelay: d.maxStartDelay, Partition: optStr(d.partition), PurgeCompTime: d.purgeCompTime,
		Watts: d.watts, Users: optStr(d.users), Accounts: optStr(d.accounts), BurstBuffer: optStr(d.burstBuf),
		Groups: optStr(d.grps),
	}
}

// plusMinus is _process_plus_minus: "a,b" with '+' becomes "+a,+b".
func plusMinus(sign byte, v string) string {
	return string(sign) + strings.ReplaceAll(v, ",", ","+string(sign))
}

func empty(s *string) bool { return s == nil || *s == "" }

// parseResvFlags is parse_resv_flags; ok false after its error.
func (s *state) parseResvFlags(str, msgText string, d *resvDesc) bool {
	const (
		opNew = iota
		opAdd
		opRem
	)
	op := opNew
	var out uint64
	cur := str
	for cur != "" {
		switch cur[0] {
		case '+':
			op = opAdd
			cur = cur[1:]
		case '-':
			op = opRem
			cur = cur[1:]
		}
		n := strings.IndexAny(cur, ",=")
		if n < 0 {
			n = len(cur)
		}
		tag := cur[:n]
		m := func(kw string, min int) bool { return hasPrefixFold(tag, kw, max(n, min)) }
		pick := func(set, clr uint64) {
			if op == opRem {
				out |= clr
			} else {
				out |= set
			}
		}
		adv := n
		switch {
		case m("Maintenance", 3):
			pick(resvMaint, resvNoMaint)
		case m("Overlap", 1) && op != opRem:
			out |= resvOverlap
		case m("Flex", 1):
			pick(resvFlex, resvNoFlex)
		case m("Ignore_Jobs", 1):
			pick(resvIgnJobs, resvNoIgnJob)
		case m("Hourly", 1):
			pick(resvHourly, resvNoHourly)
		case m("Daily", 1):
			pick(resvDaily, resvNoDaily)
		case m("Weekday", 1):
			pick(resvWeekday, resvNoWeekday)
		case m("Weekend", 1):
			pick(resvWeekend, resvNoWeekend)
		case m("Weekly", 1):
			pick(resvWeekly, resvNoWeekly)
		case m("Any_Nodes", 1), m("License_Only", 1):
			pick(resvAnyNodes, resvNoAnyNodes)
		case m("Static_Alloc", 1):
			pick(resvStatic, resvNoStatic)
		case m("Part_Nodes", 2):
			pick(resvPartNodes, resvNoPartNodes)
		case m("magnetic", 3), m("promiscuous", 2):
			pick(resvMagnetic, resvNoMagnetic)
		case m("PURGE_COMP", 2):
			if n < len(cur) && cur[n] == '=' {
				end := strings.IndexByte(cur[n+1:], ',')
				val := cur[n+1:]
				if end >= 0 {
					val = val[:end]
				}
				d.purgeCompTime = timeStr2Secs(val)
				adv = n + 1 + len(val)
			}
			pick(resvPurgeComp, resvNoPurgeComp)
		case m("First_Cores", 1) && op != opRem:
			out |= resvFirstCores
		case m("Time_Float", 1) && op == opNew:
			out |= resvTimeFloat
		case m("Replace", 1) && op != opRem:
			out |= resvReplace
		case m("Replace_Down", 8) && op != opRem:
			out |= resvReplaceDown
		case m("NO_HOLD_JOBS_AFTER_END", 1) && op != opRem:
			out |= resvNoHoldJobs
		default:
			s.errorf("Error parsing flags %s.  %s", str, msgText)
			return false
		}
		cur = cur[adv:]
		cur = strings.TrimPrefix(cur, ",")
	}
	if d.flags == noVal64 {
		d.flags = out
	} else {
		d.flags |= out
	}
	return true
}

// parseCounts is parse_resv_nodecnt / the core count parser: comma
// separated numbers (node counts may end in k or m).
func parseCounts(val string, suffixes bool) ([]uint32, bool) {
	var out []uint32
	for _, tok := range strings.Split(val, ",") {
		if tok == "" {
			continue
		}
		n, rest := strtolInt(tok)
		if n < 0 {
			return nil, false
		}
		v := uint32(n)
		switch {
		case suffixes && (strings.HasPrefix(rest, "k") || strings.HasPrefix(rest, "K")):
			v *= 1024
		case suffixes && (strings.HasPrefix(rest, "m") || strings.HasPrefix(rest, "M")):
			v *= 1024 * 1024
		case rest != "":
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// parseResvOptions is _parse_res_options; ok false after an error (the
// exit code is already 1).
func (s *state) parseResvOptions(argv []string, msgText string, d *resvDesc) bool {
	fail := func(format string, a ...any) bool {
		s.exitCode = 1
		s.errorf(format, a...)
		return false
	}
	for _, arg := range argv {
		eq := strings.IndexByte(arg, '=')
		if eq < 0 && hasPrefixFold(arg, "res", 3) {
			continue
		}
		var tag, val string
		var sign byte
		if eq >= 0 {
			tag, val = arg[:eq], arg[eq+1:]
			if eq > 0 && (arg[eq-1] == '+' || arg[eq-1] == '-') {
				sign = arg[eq-1]
				tag = arg[:eq-1]
			}
		} else if hasPrefixFold(arg, "Skip", max(len(arg), 2)) {
			if d.flags == noVal64 {
				d.flags = resvSkip
			} else {
				d.flags |= resvSkip
			}
			continue
		} else {
			return fail("Misformatted parameter '%s', most options have a parameter after '='.  %s", arg, msgText)
		}
		m := func(kw string, min int) bool { return hasPrefixFold(tag, kw, max(len(tag), min)) }
		list := func(dst **string) bool {
			if *dst != nil {
				return fail("Parameter %s specified more than once", arg)
			}
			v := val
			if sign != 0 {
				v = plusMinus(sign, val)
				sign = 0
			}
			*dst = &v
			return true
		}
		v := val
		switch {
		case m("Accounts", 1):
			if !list(&d.accounts) {
				return false
			}
		case m("Flags", 2):
			f := val
			if sign != 0 {
				f = plusMinus(sign, val)
				sign = 0
			}
			if !s.parseResvFlags(f, msgText, d) {
				s.exitCode = 1
				return false
			}
		case m("Groups", 1):
			if !list(&d.grps) {
				return false
			}
		case m("Users", 1):
			if !list(&d.users) {
				return false
			}
		case m("ReservationName", 1):
			d.name = &v
		case m("BurstBuffer", 2):
			d.burstBuf = &v
		case m("StartTime", 2), m("EndTime", 1):
			t, pos, ok := jobopt.ParseTime(val, s.now())
			if !ok {
				s.stdout.Flush()
				s.eprintf("Invalid time specification (pos=%d): %s\n", pos, val)
				what := "start"
				if m("EndTime", 1) && !m("StartTime", 2) {
					what = "end"
				}
				return fail("Invalid %s time %s.  %s", what, arg, msgText)
			}
			if m("StartTime", 2) {
				d.startTime = t
			} else {
				d.endTime = t
			}
		case m("Duration", 1):
			dur := timeStr2Mins(val)
			if dur == noVal {
				return fail("Invalid duration %s.  %s", arg, msgText)
			}
			d.duration = dur
			if sign != 0 {
				pm := uint64(resvDurPlus)
				if sign == '-' {
					pm = resvDurMinus
				}
				if d.flags == noVal64 {
					d.flags = pm
				} else {
					d.flags |= pm
				}
				sign = 0
			}
		case m("MaxStartDelay", 2):
			sec := timeStr2Secs(val)
			if sec == noVal || sec == infinite {
				return fail("Invalid duration %s.  %s", arg, msgText)
			}
			d.maxStartDelay = sec
		case m("NodeCnt", 5), m("NodeCount", 5):
			c, ok := parseCounts(val, true)
			if !ok {
				return fail("Invalid node count %s", val)
			}
			d.nodeCnt = c
		case m("CoreCnt", 5), m("CoreCount", 5), m("CPUCnt", 5), m("CPUCount", 5):
			c, ok := parseCounts(val, false)
			if !ok {
				return fail("Invalid core count %s", val)
			}
			d.coreCnt = c
		case m("Nodes", 5):
			d.nodeList = &v
		case m("Features", 2):
			d.features = &v
		case m("Licenses", 2):
			d.licenses = &v
		case m("PartitionName", 1):
			d.partition = &v
		case m("TRES", 1), m("Watts", 1):
			return fail("%s: not implemented yet by this scontrol.  %s", tag, msgText)
		case hasPrefixFold(tag, "res", 3):
			continue
		default:
			return fail("Unknown parameter %s.  %s", arg, msgText)
		}
		if sign != 0 {
			return fail("The +=/-= notation is not supported when updating %s.  %s", tag, msgText)
		}
	}
	return true
}

// createReservation is scontrol_create_res.
func (s *state) createReservation(argv []string) {
	d := newResvDesc()
	if !s.parseResvOptions(argv, "No reservation created.", d) {
		return
	}
	fail := func(text string) {
		s.exitCode = 1
		s.errorf("%s", text)
	}
	switch {
	case d.startTime == noVal:
		fail("A start time must be given.  No reservation created.")
		return
	case d.endTime == noVal && d.duration == noVal:
		fail("An end time or duration must be given.  No reservation created.")
		return
	case d.endTime != noVal && d.duration != noVal && d.startTime+int64(d.duration)*60 != d.endTime:
		fail("StartTime + Duration does not equal EndTime.  No reservation created.")
		return
	case d.startTime > d.endTime && d.endTime != noVal:
		fail("Start time cannot be after end time.  No reservation created.")
		return
	}
	if d.partition != nil && d.nodeList != nil && strings.EqualFold(*d.nodeList, "ALL") {
		if d.flags == noVal64 {
			d.flags = resvPartNodes
		} else {
			d.flags |= resvPartNodes
		}
	}
	if d.flags != noVal64 && d.flags&resvPartNodes != 0 &&
		(d.partition == nil || d.nodeList == nil || !strings.EqualFold(*d.nodeList, "ALL")) {
		fail("PART_NODES flag requires specifying a Partition and ALL nodes.  No reservation created.")
		return
	}
	if len(d.coreCnt) == 0 && empty(d.burstBuf) && (len(d.nodeCnt) == 0 || d.nodeCnt[0] == 0) &&
		empty(d.nodeList) && empty(d.licenses) && d.watts == noVal {
		if d.partition == nil {
			fail("CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified.  No reservation created.")
			return
		}
		if d.flags == noVal64 {
			d.flags = resvPartNodes
		} else {
			d.flags |= resvPartNodes
		}
		all := "ALL"
		d.nodeList = &all
	}
	if empty(d.users) && empty(d.grps) && empty(d.accounts) {
		fail("Either Users/Groups and/or Accounts must be specified.  No reservation created.")
		return
	} else if d.users != nil && d.grps != nil {
		fail("Users and Groups are mutually exclusive.  You can have one or the other, but not both.  No reservation created.")
		return
	}
	name, err := s.sendCreateReservation(d)
	if err != nil {
		s.exitCode = 1
		s.perror("Error creating the reservation", err)
		if c := errCode(err); c == slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE || c == slurmerr.ESLURM_NODES_BUSY {
			s.stdout.WriteString("Note, unless nodes are directly requested a reservation must exist in a single partition.\n" +
				"If no partition is requested the default partition is assumed.\n")
		}
		return
	}
	fmt.Fprintf(s.stdout, "Reservation created: %s\n", name)
}

func (s *state) sendCreateReservation(d *resvDesc) (string, error) {
	v, err := s.rpc(msgtype.REQUEST_CREATE_RESERVATION, d.body(), msgtype.RESPONSE_CREATE_RESERVATION)
	if err != nil {
		return "", err
	}
	if v == nil {
		return "", slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
	}
	return v.(msg.ReservationName).Name.Value, nil
}

// updateReservation is scontrol_update_res; a non-nil result is what
// "update" then reports as "slurm_update error".
func (s *state) updateReservation(argv []string) error {
	d := newResvDesc()
	if !s.parseResvOptions(argv, "No reservation update.", d) {
		return noError{}
	}
	if d.name == nil {
		s.exitCode = 1
		s.errorf("Reservation must be given.  No reservation update.")
		return nil
	}
	if err := s.rpcRC(msgtype.REQUEST_UPDATE_RESERVATION, d.body()); err != nil {
		s.exitCode = 1
		s.perror("Error updating the reservation", err)
		return err
	}
	s.stdout.WriteString("Reservation updated.\n")
	return nil
}
