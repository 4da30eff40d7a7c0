package jobopt

import (
	"fmt"
	"math"
	"os/user"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Task distribution values (slurm.h task_dist_states).
const (
	distCyclic     uint32 = 0x0001
	distBlock      uint32 = 0x0002
	distArbitrary  uint32 = 0x0003
	distPlane      uint32 = 0x0004
	distUnknown    uint32 = 0x2000
	distStateBase  uint32 = 0x00ffff
	distStateFlags uint32 = 0xff0000
	distPack       uint32 = 0x800000
	distNoPack     uint32 = 0x400000
)

// ParseMBytes is str_to_mbytes: a non-negative integer with an optional
// K, M, G or T suffix (and optional trailing B), in megabytes; K rounds up.
func ParseMBytes(s string) (uint64, bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	digits := strings.TrimPrefix(s[:i], "+")
	if digits == "" || digits == "-" {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	suffix := s[i:]
	if suffix == "" {
		return uint64(n), true
	}
	if len(suffix) > 2 || len(suffix) == 2 && suffix[1] != 'B' && suffix[1] != 'b' {
		return 0, false
	}
	switch suffix[0] {
	case 'k', 'K':
		return uint64((n + 1023) / 1024), true
	case 'm', 'M':
		return uint64(n), true
	case 'g', 'G':
		return uint64(n) * 1024, true
	case 't', 'T':
		return uint64(n) * 1024 * 1024, true
	}
	return 0, false
}

// parseNodeCount is verify_node_count: "N" or "min-max".
func (o *Opts) parseNodeCount(arg string) (int, int, error) {
	bad := func(s string) (int, int, error) {
		o.Log.Errorf("\"%s\" is not a valid node count", s)
		return 0, 0, exitErr(ExitOption)
	}
	if lo, hi, ok := strings.Cut(arg, "-"); ok {
		mn, okMin := strToNodes(lo)
		if !okMin {
			return bad(lo)
		}
		if mn < 0 {
			mn = 1
		}
		mx, okMax := strToNodes(hi)
		if !okMax {
			return bad(hi)
		}
		if mx != 0 && mx < mn {
			o.Log.Errorf("Maximum node count %d is less than minimum node count %d", mx, mn)
			return 0, 0, exitErr(ExitOption)
		}
		return mn, mx, nil
	}
	n, ok := strToNodes(arg)
	if !ok || n < 0 {
		return bad(arg)
	}
	return n, n, nil
}

// strToNodes reads a count with an optional k (x1024) or m (x1048576)
// suffix; trailing white space is allowed.
func strToNodes(s string) (int, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	rest := s[i:]
	if rest != "" {
		switch rest[0] {
		case 'k', 'K':
			n *= 1024
			rest = rest[1:]
		case 'm', 'M':
			n *= 1048576
			rest = rest[1:]
		}
	}
	if strings.TrimSpace(rest) != "" {
		return 0, false
	}
	return n, true
}

// ParseMailType is parse_mail_type; Infinite16 means invalid.
func ParseMailType(s string) uint16 {
	var rc uint16
	none := false
	for _, tok := range strings.Split(s, ",") {
		switch strings.ToUpper(tok) {
		case "NONE":
			rc, none = 0, true
		case "ARRAY_TASKS":
			rc |= 1 << 9
		case "BEGIN":
			rc |= 1 << 0
		case "END":
			rc |= 1 << 1
		case "FAIL":
			rc |= 1 << 2
		case "INVALID_DEPEND":
			rc |= 1 << 10
		case "REQUEUE":
			rc |= 1 << 3
		case "ALL":
			rc |= 1<<10 | 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<8
		case "STAGE_OUT":
			rc |= 1 << 8
		case "TIME_LIMIT":
			rc |= 1 << 4
		case "TIME_LIMIT_90":
			rc |= 1 << 5
		case "TIME_LIMIT_80":
			rc |= 1 << 6
		case "TIME_LIMIT_50":
			rc |= 1 << 7
		}
		if none {
			break
		}
	}
	if rc == 0 && !none {
		return Infinite16
	}
	return rc
}

// SignalNumber is sig_name2num: a number, or a name with or without SIG.
func SignalNumber(s string) int {
	i := 0
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 {
		if strings.TrimSpace(t[i:]) != "" {
			return 0
		}
		n, _ := strconv.Atoi(t[:i])
		return n
	}
	name := strings.ToUpper(strings.TrimSpace(t))
	name = strings.TrimPrefix(name, "SIG")
	if name == "" {
		return 0
	}
	return int(unix.SignalNum("SIG" + name))
}

// ParseSignal is get_signal_opts: [{R|B}:]<sig>[@<time>]; B only for
// sbatch. Without @time the warning comes 60 s before the end.
func ParseSignal(s string, sbatch bool) (sig, secs, flags uint16, ok bool) {
	if len(s) > 0 && (s[0] == 'R' || s[0] == 'r') {
		flags |= KillJobResv
		s = s[1:]
	}
	if sbatch {
		if len(s) > 0 && (s[0] == 'B' || s[0] == 'b') {
			flags |= KillJobBatch
			s = s[1:]
		}
		if len(s) > 0 && (s[0] == 'R' || s[0] == 'r') {
			flags |= KillJobResv
			s = s[1:]
		}
	}
	s = strings.TrimPrefix(s, ":")
	name, when, hasWhen := strings.Cut(s, "@")
	n := uint16(SignalNumber(name))
	if n < 1 {
		return 0, 0, 0, false
	}
	if !hasWhen {
		return n, 60, flags, true
	}
	i := 0
	for i < len(when) && when[i] >= '0' && when[i] <= '9' {
		i++
	}
	t, _ := strconv.Atoi(when[:i])
	if t > 0xffff || i < len(when) {
		return 0, 0, 0, false
	}
	return n, uint16(t), flags, true
}

var distNames = map[string]uint32{
	"cyclic": 0x0001, "block": 0x0002, "arbitrary": 0x0003, "hostfile": 0x0003,
	"cyclic:cyclic": 0x0011, "cyclic:block": 0x0021, "block:block": 0x0022,
	"block:cyclic": 0x0012, "block:fcyclic": 0x0032, "cyclic:fcyclic": 0x0031,
	"cyclic:cyclic:cyclic": 0x0111, "cyclic:cyclic:block": 0x0211, "cyclic:cyclic:fcyclic": 0x0311,
	"cyclic:block:cyclic": 0x0121, "cyclic:block:block": 0x0221, "cyclic:block:fcyclic": 0x0321,
	"cyclic:fcyclic:cyclic": 0x0131, "cyclic:fcyclic:block": 0x0231, "cyclic:fcyclic:fcyclic": 0x0331,
	"block:cyclic:cyclic": 0x0112, "block:cyclic:block": 0x0212, "block:cyclic:fcyclic": 0x0312,
	"block:block:cyclic": 0x0122, "block:block:block": 0x0222, "block:block:fcyclic": 0x0322,
	"block:fcyclic:cyclic": 0x0132, "block:fcyclic:block": 0x0232, "block:fcyclic:fcyclic": 0x0332,
}

// ParseDistribution is verify_dist_type: plane=<size>, or
// node[:socket[:core]] with "*" defaults, then ",pack" or ",nopack".
func ParseDistribution(s string, getenv func(string) (string, bool)) (dist, plane uint32, ok bool) {
	if len(s) >= 5 && strings.EqualFold(s[:5], "plane") {
		size, found := "", false
		if _, v, has := strings.Cut(s, "="); has {
			size, found = v, true
		} else if v, has := getenv("SLURM_DIST_PLANESIZE"); has && v != "" {
			size, found = v, true
		}
		n, err := strconv.ParseInt(size, 10, 64)
		if !found || err != nil || n <= 0 || n > math.MaxInt32 {
			return 0, 0, false
		}
		return distPlane, uint32(n), true
	}
	if s == "" || s[0] == ',' {
		return 0, 0, false
	}
	base, flag, _ := strings.Cut(s, ",")
	var parts []string
	sock := ""
	for i, tok := range strings.Split(base, ":") {
		if tok == "" {
			continue
		}
		if i > 2 {
			return 0, 0, false
		}
		if tok == "*" {
			switch i {
			case 0:
				tok = "block"
			case 1:
				tok, sock = "cyclic", "cyclic"
			case 2:
				tok = sock
			}
		} else if i == 1 {
			sock = tok
		}
		parts = append(parts, tok)
	}
	out := strings.ToLower(strings.Join(parts, ":"))
	d, found := distNames[out]
	if !found {
		d, ok = distFlag(out, distUnknown)
		if !ok {
			return 0, 0, false
		}
	}
	if flag != "" {
		d, ok = distFlag(flag, d)
		if !ok {
			return 0, 0, false
		}
	}
	return d, 0, true
}

func distFlag(s string, d uint32) (uint32, bool) {
	switch strings.ToLower(s) {
	case "nopack":
		return d | distNoPack, true
	case "pack":
		return d | distPack, true
	}
	return 0, false
}

// DistributionString is set_distribution: the SLURM_DISTRIBUTION text.
func DistributionString(d uint32) string {
	if d == 0 || d == distUnknown {
		return ""
	}
	var s string
	if base := d & distStateBase; base != distUnknown {
		if base == distPlane {
			s = "plane"
		} else {
			for name, v := range distNames {
				if v == base && name != "hostfile" {
					s = name
					break
				}
			}
		}
	}
	switch d & distStateFlags {
	case distPack:
		s += sep(s) + "pack"
	case distNoPack:
		s += sep(s) + "nopack"
	}
	return s
}

func sep(s string) string {
	if s == "" {
		return ""
	}
	return ","
}

// parseSocketCoreThread is verify_socket_core_thread_count for -B
// S[:C[:T]], each "min[-max]" or "*"; NoVal for a wildcard.
func parseSocketCoreThread(s string) (sock, core, thread int, ok bool) {
	parts := strings.SplitN(s, ":", 3)
	vals := []int{NoVal, NoVal, NoVal}
	for i := range 3 {
		p := ""
		if i < len(parts) {
			p = parts[i]
		}
		if p == "" || p == "*" {
			continue
		}
		lo, _, _ := strings.Cut(p, "-")
		n, err := strconv.Atoi(lo)
		if err != nil || n < 0 {
			return 0, 0, 0, false
		}
		vals[i] = n
	}
	return vals[0], vals[1], vals[2], true
}

// PrependTresType is gres_prepend_tres_type: "gpu:2,mps:1" becomes
// "gres:gpu:2,gres:mps:1".
func PrependTresType(s string) string {
	out := "gres:" + strings.ReplaceAll(s, ",", ",gres:")
	return strings.ReplaceAll(out, "gres:gres:", "gres:")
}

// ParseMemBind is slurm_verify_mem_bind's type part; on error msg is
// Slurm's complaint.
func ParseMemBind(s string) (flags uint32, msg string, ok bool) {
	const bindBits = 0x02 | 0x04 | 0x20 | 0x08 | 0x10
	for _, tok := range splitBindList(s) {
		lt := strings.ToLower(tok)
		switch {
		case lt == "p" || lt == "prefer":
			flags |= 0x80
		case lt == "nosort":
			flags &^= 0x40
		case lt == "sort":
			flags |= 0x40
		case lt == "q" || lt == "quiet":
			flags &^= 0x01
		case lt == "v" || lt == "verbose":
			flags |= 0x01
		case lt == "no" || lt == "none":
			flags = flags&^bindBits | 0x02
		case lt == "rank":
			flags = flags&^bindBits | 0x04
		case lt == "local":
			flags = flags&^bindBits | 0x20
		case strings.HasPrefix(lt, "map_mem") || strings.HasPrefix(lt, "mapmem"):
			flags = flags&^bindBits | 0x08
			if bindList(tok) == "" {
				return 0, "missing list for \"--mem-bind=map_mem:<list>\"", false
			}
		case strings.HasPrefix(lt, "mask_mem") || strings.HasPrefix(lt, "maskmem"):
			flags = flags&^bindBits | 0x10
			if bindList(tok) == "" {
				return 0, "missing list for \"--mem-bind=mask_mem:<list>\"", false
			}
		default:
			return 0, fmt.Sprintf("unrecognized --mem-bind argument \"%s\"", tok), false
		}
	}
	return flags, "", true
}

// splitBindList splits at commas not followed by a digit (those separate
// the values of a map or mask list).
func splitBindList(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ',' && (i+1 >= len(s) || !isValueChar(s[i+1])) {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func isValueChar(c byte) bool {
	return c >= '0' && c <= '9' || c == 'x' || c == 'X' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func bindList(tok string) string {
	i := strings.IndexAny(tok, ":=")
	if i < 0 {
		return ""
	}
	rest := tok[i+1:]
	if j := strings.IndexAny(rest, ":="); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// memBindList returns the map/mask list of a --mem-bind value, if any,
// expanded as _expand_mult does ("0x" dropped from masks, "v*n" repeated).
func memBindList(s string) string {
	list := ""
	for _, tok := range splitBindList(s) {
		lt := strings.ToLower(tok)
		switch {
		case strings.HasPrefix(lt, "map_mem"), strings.HasPrefix(lt, "mapmem"):
			list = expandMult(bindList(tok), false)
		case strings.HasPrefix(lt, "mask_mem"), strings.HasPrefix(lt, "maskmem"):
			list = expandMult(bindList(tok), true)
		case lt == "no" || lt == "none" || lt == "rank" || lt == "local":
			list = ""
		}
	}
	return list
}

func expandMult(list string, mask bool) string {
	var out []string
	for _, tok := range strings.Split(list, ",") {
		if tok == "" {
			continue
		}
		if mask {
			tok = strings.TrimPrefix(tok, "0x")
		}
		n := 1
		if v, count, ok := strings.Cut(tok, "*"); ok {
			c, err := strconv.Atoi(count)
			if err != nil || c <= 0 {
				return list
			}
			tok, n = v, c
		}
		for range n {
			out = append(out, tok)
		}
	}
	return strings.Join(out, ",")
}

// MemBindTypeString is slurm_xstr_mem_bind_type, for SLURM_MEM_BIND.
func MemBindTypeString(t uint32) string {
	var parts []string
	if t&0x01 != 0 {
		parts = append(parts, "verbose")
	}
	if t&0x80 != 0 {
		parts = append(parts, "prefer")
	}
	if t&0x40 != 0 {
		parts = append(parts, "sort")
	}
	for _, b := range []struct {
		bit  uint32
		name string
	}{{0x02, "none"}, {0x04, "rank"}, {0x08, "map_mem"}, {0x10, "mask_mem"}, {0x20, "local"}} {
		if t&b.bit != 0 {
			parts = append(parts, b.name)
		}
	}
	return strings.Join(parts, ",")
}

func parseProfile(s string) (uint32, bool) {
	l := strings.ToLower(s)
	var p uint32
	switch {
	case strings.Contains(l, "none"):
		p = 0x01
	case strings.Contains(l, "all"):
		p = 0xffffffff
	default:
		for name, bit := range map[string]uint32{"energy": 0x02, "task": 0x04, "lustre": 0x08, "network": 0x10} {
			if strings.Contains(l, name) {
				p |= bit
			}
		}
	}
	return p, p != 0
}

func powerFlags(s string) uint8 {
	if strings.Contains(strings.ToLower(s), "level") {
		return 1
	}
	return 0
}

// cpuFreq is cpu_freq_verify_cmdline: [min-]max[:governor] or a governor
// alone; values are kHz numbers or low, medium, high, highm1 (prefixes as
// Slurm matches them); the governor must be allowed by CpuFreqGovernors.
func (o *Opts) cpuFreq(arg string) (mn, mx, gov uint32, err error) {
	const noVal = 0xfffffffe
	mn, mx, gov = noVal, noVal, noVal
	fail := func() (uint32, uint32, uint32, error) {
		o.Log.Errorf("Invalid --cpu-freq argument")
		return 0, 0, 0, exitErr(ExitOption)
	}
	var p1, p2, p3 string
	hasP2, hasP3 := false, false
	if i := strings.IndexByte(arg, ':'); i >= 0 {
		p3, hasP3 = arg[i+1:], true
	}
	if i := strings.IndexByte(arg, '-'); i >= 0 {
		p1 = arg[:i]
		rest := arg[i+1:]
		if j := strings.IndexByte(rest, ':'); j >= 0 && hasP3 {
			rest = rest[:j]
		}
		p2, hasP2 = rest, true
	} else if i := strings.IndexByte(arg, ':'); i >= 0 {
		p1 = arg[:i]
	} else {
		p1 = arg
	}
	checkFreq := func(s string) uint32 {
		v := cpuFreqValue(s)
		if v == 0 {
			o.Log.Errorf("unrecognized --cpu-freq argument \"%s\"", s)
		}
		return v
	}
	if g := cpuGovernor(p1); g != 0 {
		if hasP3 {
			o.Log.Errorf("governor cannot be specified twice %s{-}:%s in --cpu-freq", p1, p3)
			return fail()
		}
		gov = g
	} else {
		f := checkFreq(p1)
		if f == 0 {
			return fail()
		}
		mx = f
	}
	if hasP2 {
		f := checkFreq(p2)
		if f == 0 {
			return fail()
		}
		mn, mx = mx, f
		if mx < mn {
			o.Log.Errorf("min cpu-frec (%s) must be < max cpu-freq (%s)", p1, p2)
			return fail()
		}
	}
	if hasP3 {
		if !hasP2 {
			o.Log.Errorf("gov on cpu-frec (%s) illegal without max", p3)
			return fail()
		}
		g := cpuGovernor(p3)
		if g == 0 {
			o.Log.Errorf("illegal governor: %s on --cpu-freq", p3)
			return fail()
		}
		gov = g
	}
	if gov != noVal {
		allowed := uint32(0)
		govs := o.CPUFreqGovernors
		if govs == nil {
			govs = []string{"OnDemand", "Performance", "UserSpace"}
		}
		for _, name := range govs {
			allowed |= cpuGovernor(name)
		}
		if gov&allowed&^0x80000000 == 0 {
			o.Log.Errorf("governor of %s is not allowed in slurm.conf", arg)
			return fail()
		}
	}
	return mn, mx, gov, nil
}

func hasPrefixFold(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

func cpuFreqValue(s string) uint32 {
	switch {
	case hasPrefixFold(s, "lo"):
		return 0x80000001
	case hasPrefixFold(s, "him1"), hasPrefixFold(s, "highm1"):
		return 0x80000004
	case hasPrefixFold(s, "hi"):
		return 0x80000003
	case hasPrefixFold(s, "med"):
		return 0x80000002
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.ParseUint(s[:i], 10, 32)
	return uint32(n)
}

func cpuGovernor(s string) uint32 {
	switch {
	case hasPrefixFold(s, "co"):
		return 0x88000000
	case hasPrefixFold(s, "perf"):
		return 0x82000000
	case hasPrefixFold(s, "pow"):
		return 0x81000000
	case hasPrefixFold(s, "user"):
		return 0x80800000
	case hasPrefixFold(s, "onde"):
		return 0x84000000
	case hasPrefixFold(s, "sche"):
		return 0x80400000
	}
	return 0
}

func lookupUID(s string) (uint32, bool) {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n), true
	}
	u, err := user.Lookup(s)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(u.Uid, 10, 32)
	return uint32(n), err == nil
}

func lookupGID(s string) (uint32, bool) {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n), true
	}
	g, err := user.LookupGroup(s)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(g.Gid, 10, 32)
	return uint32(n), err == nil
}
