package cli

import (
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// argCount checks "KEYWORD VALUE" arity as these commands do.
func (s *state) argCount(args []string) bool {
	switch {
	case len(args) > 2:
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.eprintf("too many arguments for keyword:%s\n", args[0])
		}
		return false
	case len(args) < 2:
		tooFew(s, args[0])
		return false
	}
	return true
}

// levelArg is a level by name or a number up to maxLevel (strtoul).
func levelArg(v string, names []string, maxLevel uint64) (uint32, bool) {
	for i, n := range names {
		if strings.EqualFold(v, n) {
			return uint32(i), true
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > maxLevel {
		return 0, false
	}
	return uint32(n), true
}

// cmdSetDebug is "setdebug LEVEL": slurmctld's log level.
func cmdSetDebug(s *state, args []string) {
	if !s.argCount(args) {
		return
	}
	lvl, ok := levelArg(args[1], []string{"quiet", "fatal", "error", "info", "verbose",
		"debug", "debug2", "debug3", "debug4", "debug5"}, 9)
	if !ok {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.eprintf("invalid debug level: %s\n", args[1])
		}
		return
	}
	if err := s.rpcRC(msgtype.REQUEST_SET_DEBUG_LEVEL, msg.SetDebugLevelRequest{Level: lvl}); err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_set_debug_level error", err)
		}
	}
}

// cmdSchedLogLevel is "schedloglevel disable|enable|0|1".
func cmdSchedLogLevel(s *state, args []string) {
	if !s.argCount(args) {
		return
	}
	lvl, ok := levelArg(args[1], []string{"disable", "enable"}, 1)
	if !ok {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.eprintf("invalid schedlog level: %s\n", args[1])
		}
		return
	}
	if err := s.rpcRC(msgtype.REQUEST_SET_SCHEDLOG_LEVEL, msg.SetDebugLevelRequest{Level: lvl}); err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_set_schedlog_level error", err)
		}
	}
}

// debugFlagBits maps DebugFlags names (debug_str2flags) to bits; names
// are matched case-insensitively.
var debugFlagBits = map[string]uint64{
	"accrue": 1 << 50, "agent": 1 << 52, "backfill": 1 << 12, "backfillmap": 1 << 27,
	"burstbuffer": 1 << 40, "cgroup": 1 << 55, "cpu_bind": 1 << 3, "data": 1 << 8,
	"db_archive": 1 << 44, "db_assoc": 1 << 30, "db_tres": 1 << 45, "db_event": 1 << 31,
	"db_job": 1 << 32, "db_qos": 1 << 33, "db_query": 1 << 34, "db_reservation": 1 << 35,
	"db_resource": 1 << 36, "db_step": 1 << 37, "db_usage": 1 << 38, "db_wckey": 1 << 39,
	"dependency": 1 << 53, "elasticsearch": 1 << 46, "energy": 1 << 18, "extsensors": 1 << 19,
	"federation": 1 << 48, "frontend": 1 << 15, "gang": 1 << 13, "gres": 1 << 6, "hetjob": 1 << 49,
	"interconnect": 1 << 22, "jobaccountgather": 1 << 54, "jag": 1 << 54, "jobcontainer": 1 << 24,
	"license": 1 << 20, "mpi": 1 << 7, "network": 1 << 10, "net": 1 << 10, "networkraw": 1 << 4,
	"netraw": 1 << 4, "no_conf_hash": 1 << 5, "nodefeatures": 1 << 47, "priority": 1 << 11,
	"profile": 1 << 21, "protocol": 1 << 26, "reservation": 1 << 14, "route": 1 << 29,
	"script": 1 << 56, "selecttype": 1 << 0, "steps": 1 << 1, "switch": 1 << 17,
	"tracejobs": 1 << 28, "trigger": 1 << 2, "triggers": 1 << 2, "cpufrequency": 1 << 41,
	"power": 1 << 42, "powersave": 1 << 42, "timecray": 1 << 43, "workqueue": 1 << 9, "workq": 1 << 9,
}

// debugStr2Flags is debug_str2flags: comma-separated names.
func (s *state) debugStr2Flags(v string) (uint64, bool) {
	var out uint64
	for _, tok := range strings.Split(v, ",") {
		if tok == "" {
			continue
		}
		if strings.EqualFold(tok, "Task") {
			s.errorf("DebugFlag Task has been removed, please use CPU_Bind")
			continue
		}
		b, ok := debugFlagBits[strings.ToLower(tok)]
		if !ok {
			s.errorf("Invalid DebugFlag: %s", tok)
			return 0, false
		}
		out |= b
	}
	return out, true
}

// cmdSetDebugFlags is "setdebugflags +NAME|-NAME".
func cmdSetDebugFlags(s *state, args []string) {
	if !s.argCount(args) {
		return
	}
	var plus, minus uint64
	a := args[1]
	mode := 0
	ok := false
	switch {
	case strings.HasPrefix(a, "+"):
		mode = 1
	case strings.HasPrefix(a, "-"):
		mode = -1
	}
	if mode != 0 {
		var flags uint64
		if flags, ok = s.debugStr2Flags(a[1:]); ok {
			if mode == 1 {
				plus = flags
			} else {
				minus = flags
			}
		}
	}
	if !ok {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.eprintf("invalid debug flag: %s\n", a)
			if mode == 0 {
				s.eprintf("Usage: setdebugflags [+|-]NAME\n")
			}
		}
		return
	}
	req := msg.SetDebugFlagsRequest{Minus: minus, Plus: plus}
	if err := s.rpcRC(msgtype.REQUEST_SET_DEBUG_FLAGS, req); err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_set_debug_flags error", err)
		}
	}
}

// cmdFSDampening is "fsdampeningfactor N".
func cmdFSDampening(s *state, args []string) {
	if !s.argCount(args) {
		return
	}
	n, err := strconv.ParseUint(args[1], 10, 64)
	if err != nil || uint16(n) == 0 {
		if s.quietFlag != 1 {
			s.eprintf("invalid dampening factor: %s\n", args[1])
		}
		return
	}
	req := msg.SetFSDampeningFactorRequest{Factor: uint16(n)}
	if err := s.rpcRC(msgtype.REQUEST_SET_FS_DAMPENING_FACTOR, req); err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_set_fs_dampeningfactor error", err)
		}
	}
}
