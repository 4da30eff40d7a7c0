// Package gres is slurmctld's view of generic resources by device index:
// how a node's GRES of one name are laid out (from slurm.conf's Gres= and
// the gres.conf records slurmd reports at registration), which indices a
// job gets on a node, and the strings scontrol shows for them.
//
// Facts are from Slurm 22.05.8: src/common/gres.c (_node_config_validate,
// _node_gres_used, gres_node_config_pack), src/slurmctld/gres_ctld.c
// (_job_alloc, _step_alloc) and cons_common's gres_select_filter.c
// (_set_node_bits). The package is pure: no I/O, no clock.
//
// Cores= binding is decided by the scheduler (slurmctld/sched's
// gresbind.go) on the records Bound lists; PickBound turns its per-record
// counts into indices. What is not modelled: Links= and shared GRES
// (mps, shard). --gpus-per-task and --gpus-per-socket become counts
// (slurmctld/jobs) before Pick sees them: --gpus-per-socket's per-socket
// placement is not modelled.
package gres

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/pack"
)

// GresMagic starts every registration record (GRES_MAGIC).
const gresMagic uint32 = 0x438a34d4

// config_flags bits of a registration record (GRES_CONF_*).
const (
	confHasFile uint32 = 1 << 1
	confHasType uint32 = 1 << 2
)

// ErrMalformed is a registration GRES blob that does not decode.
var ErrMalformed = errors.New("gres: malformed registration GRES records")

// MaxBitmap is MAX_GRES_BITMAP: the most devices of one GRES a node can
// have by index.
const MaxBitmap = 1024

// Record is one gres.conf record as slurmd reports it at registration
// (gres_node_config_pack).
type Record struct {
	Name    string
	Type    string
	Count   uint64
	Cores   string // Cores= as written ("" = none)
	HasFile bool
}

// ParseRegistration decodes the GRES blob of REQUEST_NODE_REGISTRATION_STATUS
// (u16 protocol version, u16 record count, records). An empty blob is no
// records.
func ParseRegistration(blob []byte) ([]Record, error) {
	if len(blob) == 0 {
		return nil, nil
	}
	r := pack.NewReader(blob)
	r.U16() // protocol version
	n := int(r.U16())
	// The smallest record: magic, count, cpu count, flags, plugin id and
	// five absent strings (u32 each).
	if n > r.Remaining()/(4+8+4+4+4+5*4) {
		return nil, fmt.Errorf("%w: %d records in %d bytes", ErrMalformed, n, r.Remaining())
	}
	out := make([]Record, 0, n)
	for range n {
		if m := r.U32(); r.Err() == nil && m != gresMagic {
			return nil, fmt.Errorf("%w: magic %#x", ErrMalformed, m)
		}
		var rec Record
		rec.Count = r.U64()
		r.U32() // cpu_cnt
		flags := r.U32()
		r.U32() // plugin_id
		rec.Cores, _ = r.OptStr()
		r.OptStr() // links
		rec.Name, _ = r.OptStr()
		rec.Type, _ = r.OptStr()
		r.OptStr() // unique_id
		rec.HasFile = flags&confHasFile != 0
		if flags&confHasType == 0 {
			rec.Type = ""
		}
		if r.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, r.Err())
		}
		out = append(out, rec)
	}
	return out, nil
}

// Topo is one topology record of a node's GRES (a gres.conf line):
// devices [First, First+Count) of one type.
type Topo struct {
	Type         string
	First, Count int
	Cores        string // Cores= as registered, "" = none
}

// Layout is one GRES name on one node.
type Layout struct {
	Name  string
	Count uint64 // configured count (slurm.conf Gres=), gres_cnt_avail
	// Bits: the GRES have device files, so jobs get them by index
	// (gres_bit_alloc); otherwise only counts are kept.
	Bits bool
	// DevType is each device's type ("" = none), len Count when Bits.
	DevType []string
	// Topo is set when a gres.conf record of the name has a Type or
	// Cores (topo_cnt > 0): GresUsed then lists the records.
	Topo []Topo
	// Types are slurm.conf's types of the name, in order (type_cnt),
	// and TypeCounts their counts.
	Types      []string
	TypeCounts []uint64
}

// ConfGres is one item of slurm.conf's Gres= of a node.
type ConfGres struct {
	Name, Type string
	Count      uint64
}

// NewLayouts builds a node's layouts from its slurm.conf Gres= items and
// the records its slurmd registered (nil before it registered: then no
// indices are known and bits says, per name, whether jobs already hold
// indices of it, which only a node with device files gives).
func NewLayouts(conf []ConfGres, recs []Record, bits map[string]bool) []Layout {
	var out []Layout
	find := func(name string) *Layout {
		for i := range out {
			if out[i].Name == name {
				return &out[i]
			}
		}
		out = append(out, Layout{Name: name})
		return &out[len(out)-1]
	}
	for _, g := range conf {
		l := find(g.Name)
		l.Count += g.Count
		if g.Type != "" {
			if k := slices.Index(l.Types, g.Type); k >= 0 {
				l.TypeCounts[k] += g.Count
			} else {
				l.Types = append(l.Types, g.Type)
				l.TypeCounts = append(l.TypeCounts, g.Count)
			}
		}
	}
	for i := range out {
		l := &out[i]
		var mine []Record
		for _, r := range recs {
			if r.Name == l.Name {
				mine = append(mine, r)
			}
		}
		if recs == nil {
			l.Bits = bits[l.Name]
		}
		topo := false
		for _, r := range mine {
			l.Bits = l.Bits || r.HasFile
			topo = topo || r.Type != "" || r.Cores != ""
		}
		if l.Count > MaxBitmap {
			// gres.c refuses device files past MAX_GRES_BITMAP; a count
			// that large is tracked as a count, never as a device list.
			l.Bits = false
		}
		if !l.Bits {
			continue
		}
		l.DevType = make([]string, l.Count)
		if recs == nil {
			// Not registered yet: slurm.conf's types in order.
			k := 0
			for _, g := range conf {
				for n := uint64(0); g.Name == l.Name && n < g.Count && k < len(l.DevType); n++ {
					l.DevType[k] = g.Type
					k++
				}
			}
			continue
		}
		k := 0
		for _, r := range mine {
			first := k
			for n := uint64(0); n < r.Count && k < len(l.DevType); n++ {
				l.DevType[k] = r.Type
				k++
			}
			if topo {
				l.Topo = append(l.Topo, Topo{Type: r.Type, First: first, Count: k - first, Cores: r.Cores})
			}
		}
	}
	return out
}

// Find is the layout of name, nil when the node has none.
func Find(ls []Layout, name string) *Layout {
	for i := range ls {
		if ls[i].Name == name {
			return &ls[i]
		}
	}
	return nil
}

// Req is one GRES request per node ("gpu:tesla:2"); Type "" is any type.
type Req struct {
	Name, Type string
	Count      uint64
}

// ParseTresPerNode reads a job's or step's tres_per_node string
// ("gres:gpu:1,gres:nic:tesla:2"; a missing count is 1). Items that are
// not GRES (other TRES) are skipped.
func ParseTresPerNode(s string) ([]Req, error) {
	var out []Req
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		rest, ok := strings.CutPrefix(item, "gres:")
		if !ok {
			rest, ok = strings.CutPrefix(item, "gres/")
		}
		if !ok {
			continue
		}
		parts := strings.Split(rest, ":")
		r := Req{Name: parts[0], Count: 1}
		if r.Name == "" {
			return nil, fmt.Errorf("gres: invalid specification %q", item)
		}
		switch len(parts) {
		case 1:
		case 2:
			if n, err := parseCount(parts[1]); err == nil {
				r.Count = n
			} else {
				r.Type = parts[1]
			}
		case 3:
			n, err := parseCount(parts[2])
			if err != nil {
				return nil, fmt.Errorf("gres: invalid count in %q", item)
			}
			r.Type, r.Count = parts[1], n
		default:
			return nil, fmt.Errorf("gres: invalid specification %q", item)
		}
		out = append(out, r)
	}
	return out, nil
}

// parseCount reads a GRES count with an optional k/m/g suffix (x1024).
func parseCount(s string) (uint64, error) {
	orig := s
	mult := uint64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1024
		case 'm', 'M':
			mult = 1024 * 1024
		case 'g', 'G':
			mult = 1024 * 1024 * 1024
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if n > math.MaxUint64/mult {
		return 0, fmt.Errorf("gres: count %q out of range", orig)
	}
	return n * mult, nil
}

// Alloc is what a job (or step) holds of one GRES name and type on one
// node. Bits says it is held by index (Idx, possibly none: a type the job
// got none of); a node without device files has counts only.
type Alloc struct {
	Name  string `json:"N"`
	Type  string `json:"T,omitempty"`
	Count uint64 `json:"C"`
	Bits  bool   `json:"B,omitempty"`
	Idx   []int  `json:"I,omitempty"`
}

// Pick chooses the devices of l for want of them of type typ ("" = any):
// the lowest free indices of a matching type, as _set_node_bits and
// _job_alloc do without socket preferences. used marks the indices other
// jobs hold (len may be short). It returns the allocation split by device
// type in index order, or nil when too few are free. Asked for any type
// on a node whose slurm.conf names types, it has one allocation per type
// in slurm.conf's order, those it got none of included (_job_alloc makes
// a gres_list_alloc record for each).
func Pick(l *Layout, used []bool, typ string, want uint64) []Alloc {
	if want == 0 {
		return nil
	}
	if !l.Bits {
		return []Alloc{{Name: l.Name, Type: typ, Count: want}}
	}
	var got []int
	for i, t := range l.DevType {
		if uint64(len(got)) == want {
			break
		}
		if (i < len(used) && used[i]) || (typ != "" && t != typ) {
			continue
		}
		got = append(got, i)
	}
	if uint64(len(got)) < want {
		return nil
	}
	return allocsOf(l, got, typ)
}

// allocsOf is Pick's answer for the devices got of l.
func allocsOf(l *Layout, got []int, typ string) []Alloc {
	var out []Alloc
	for _, i := range got {
		t := l.DevType[i]
		k := slices.IndexFunc(out, func(a Alloc) bool { return a.Type == t })
		if k < 0 {
			out = append(out, Alloc{Name: l.Name, Type: t, Bits: true})
			k = len(out) - 1
		}
		out[k].Count++
		out[k].Idx = append(out[k].Idx, i)
	}
	if typ != "" || len(l.Types) == 0 {
		return out
	}
	var byType []Alloc
	for _, t := range l.Types {
		if k := slices.IndexFunc(out, func(a Alloc) bool { return a.Type == t }); k >= 0 {
			byType = append(byType, out[k])
		} else {
			byType = append(byType, Alloc{Name: l.Name, Type: t, Bits: true})
		}
	}
	for _, a := range out {
		if !slices.Contains(l.Types, a.Type) {
			byType = append(byType, a)
		}
	}
	return byType
}

// PickSubset chooses want of the job's indices have (in order) that are
// not in taken, for a step (_set_step_gres_bit_alloc: the lowest first).
// want 0 takes them all. It reports false when too few are left.
func PickSubset(have []int, taken []bool, want uint64) ([]int, bool) {
	var got []int
	for _, i := range have {
		if want != 0 && uint64(len(got)) == want {
			break
		}
		if i < len(taken) && taken[i] {
			continue
		}
		got = append(got, i)
	}
	return got, want == 0 || uint64(len(got)) == want
}

// FormatIdx is bit_fmt of a set of indices: "0-1,3".
func FormatIdx(idx []int) string {
	s := slices.Clone(idx)
	slices.Sort(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Used is a node's GresUsed= (_node_gres_used) for its layouts, given
// what its jobs hold.
func Used(ls []Layout, held []Alloc) string {
	var parts []string
	for i := range ls {
		l := &ls[i]
		if len(l.Topo) > 0 {
			var inUse []bool
			if l.Bits {
				inUse = make([]bool, len(l.DevType))
				for _, a := range held {
					for _, k := range a.Idx {
						if a.Name == l.Name && k < len(inUse) {
							inUse[k] = true
						}
					}
				}
			}
			printed := make([]bool, len(l.Topo))
			for ti, t := range l.Topo {
				if printed[ti] {
					continue
				}
				var idx []int
				for tj := ti; tj < len(l.Topo); tj++ {
					if printed[tj] || l.Topo[tj].Type != t.Type {
						continue
					}
					printed[tj] = true
					for k := l.Topo[tj].First; k < l.Topo[tj].First+l.Topo[tj].Count; k++ {
						if k < len(inUse) && inUse[k] {
							idx = append(idx, k)
						}
					}
				}
				typ := t.Type
				if typ == "" {
					typ = "(null)"
				}
				s := "N/A"
				if len(idx) > 0 {
					s = FormatIdx(idx)
				}
				parts = append(parts, fmt.Sprintf("%s:%s:%d(IDX:%s)", l.Name, typ, len(idx), s))
			}
			continue
		}
		if len(l.Types) == 0 {
			var n uint64
			for _, a := range held {
				if a.Name == l.Name {
					n += a.Count
				}
			}
			parts = append(parts, fmt.Sprintf("%s:%d", l.Name, n))
			continue
		}
		for _, t := range l.Types {
			var n uint64
			for _, a := range held {
				if a.Name == l.Name && a.Type == t {
					n += a.Count
				}
			}
			parts = append(parts, fmt.Sprintf("%s:%s:%d", l.Name, t, n))
		}
	}
	return strings.Join(parts, ",")
}

// Detail is one node's GRES= of scontrol show job -d
// (gres_job_build_details: "gpu:2(IDX:0-1)", "gpu:tesla:1(IDX:0)", or
// "gpu(CNT:1)" without device files), the allocations comma-joined.
func Detail(as []Alloc) string {
	var parts []string
	for _, a := range as {
		s := a.Name
		if a.Type != "" {
			s += ":" + a.Type
		}
		switch {
		case a.Bits:
			s += ":" + strconv.FormatUint(a.Count, 10) + "(IDX:" + FormatIdx(a.Idx) + ")"
		case a.Count > 0:
			s += "(CNT:" + strconv.FormatUint(a.Count, 10) + ")"
		default:
			continue
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// NodeString is the node's Gres= once its slurmd registered
// (_build_node_gres_str): with topology records, each type's count with
// the sockets its cores are on ("gpu:2(S:0-1)"); else slurm.conf's types
// or the count; counts that are multiples of 1024 with a K/M/G/T/P
// suffix.
func NodeString(ls []Layout, coresPerSocket, sockets int) string {
	var parts []string
	for i := range ls {
		l := &ls[i]
		switch {
		case l.Count == 0:
		case len(l.Topo) > 0:
			done := make([]bool, len(l.Topo))
			for ti, t := range l.Topo {
				if done[ti] {
					continue
				}
				var sum uint64
				var cores []int
				withCores := false
				for tj := ti; tj < len(l.Topo); tj++ {
					if done[tj] || l.Topo[tj].Type != t.Type {
						continue
					}
					done[tj] = true
					sum += uint64(l.Topo[tj].Count)
					if l.Topo[tj].Cores != "" {
						withCores = true
						cores = append(cores, parseIdx(l.Topo[tj].Cores)...)
					}
				}
				s := l.Name
				if t.Type != "" {
					s += ":" + t.Type
				}
				s += ":" + scaled(sum)
				if withCores {
					s += socketsOf(cores, coresPerSocket, sockets)
				}
				parts = append(parts, s)
			}
		case len(l.Types) > 0:
			for k, t := range l.Types {
				parts = append(parts, l.Name+":"+t+":"+scaled(l.TypeCounts[k]))
			}
		default:
			parts = append(parts, l.Name+":"+scaled(l.Count))
		}
	}
	return strings.Join(parts, ",")
}

// scaled is a count with Slurm's suffix for multiples of 1024.
func scaled(n uint64) string {
	suffix := ""
	for _, s := range []string{"K", "M", "G", "T", "P"} {
		if n == 0 || n%1024 != 0 {
			break
		}
		n /= 1024
		suffix = s
	}
	return strconv.FormatUint(n, 10) + suffix
}

// socketsOf is _core_bitmap2str: "(S:0-1)" for the sockets holding any
// of cores, "" when none.
func socketsOf(cores []int, coresPerSocket, sockets int) string {
	if coresPerSocket <= 0 {
		return ""
	}
	var socks []int
	for _, c := range cores {
		s := c / coresPerSocket
		if s < sockets && !slices.Contains(socks, s) {
			socks = append(socks, s)
		}
	}
	if len(socks) == 0 {
		return ""
	}
	return "(S:" + FormatIdx(socks) + ")"
}

// parseIdx reads a bit_unfmt list ("0-1,4"); what does not parse is left
// out.
func parseIdx(s string) []int {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, ok := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			continue
		}
		b := a
		if ok {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a || b-a > 1<<16 {
				continue
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out
}

// CountReason is the first GRES problem of a registration
// (_node_config_validate's reason_down): a GRES name configured with more
// than the node's records report ("gres/gpu count reported lower than
// configured (0 < 2)"); "" when none.
func CountReason(conf []ConfGres, recs []Record) string {
	var names []string
	want := map[string]uint64{}
	for _, g := range conf {
		if _, ok := want[g.Name]; !ok {
			names = append(names, g.Name)
		}
		want[g.Name] += g.Count
	}
	for _, name := range names {
		var got uint64
		for _, r := range recs {
			if r.Name == name {
				got += r.Count
			}
		}
		if want[name] > got {
			return fmt.Sprintf("gres/%s count reported lower than configured (%d < %d)", name, got, want[name])
		}
	}
	return ""
}

// BoundRec is one topology record of a GRES name some of whose devices
// are bound to cores (gres.conf Cores=): devices [First, First+Count) of
// Name and Type, near Cores (nil = bound to none).
type BoundRec struct {
	Name, Type   string
	First, Count int
	Cores        []int
}

// Bound lists the records of the names of ls that have a record with
// Cores=, in layout order; nil when there are none. Only names whose
// devices are known by index count.
func Bound(ls []Layout) []BoundRec {
	var out []BoundRec
	for i := range ls {
		l := &ls[i]
		if !l.Bits || !slices.ContainsFunc(l.Topo, func(t Topo) bool { return t.Cores != "" }) {
			continue
		}
		for _, t := range l.Topo {
			var cores []int
			if t.Cores != "" {
				cores = parseIdx(t.Cores)
			}
			out = append(out, BoundRec{Name: l.Name, Type: t.Type, First: t.First, Count: t.Count, Cores: cores})
		}
	}
	return out
}

// BoundHeld counts, for each of recs, the devices held holds of it.
func BoundHeld(recs []BoundRec, held []Alloc) []uint64 {
	out := make([]uint64, len(recs))
	for k, r := range recs {
		for _, a := range held {
			if a.Name != r.Name {
				continue
			}
			for _, i := range a.Idx {
				if i >= r.First && i < r.First+r.Count {
					out[k]++
				}
			}
		}
	}
	return out
}

// PickBound chooses want devices of l of type typ ("" = any) as the
// scheduler split them over recs (counts, by record; a record of another
// name or type is skipped): the lowest free indices of each record. It
// returns Pick's form, or nil when the records do not give want.
func PickBound(l *Layout, used []bool, typ string, want uint64, recs []BoundRec, counts []uint64) []Alloc {
	if want == 0 || !l.Bits {
		return nil
	}
	var got []int
	for k, r := range recs {
		if r.Name != l.Name || (typ != "" && r.Type != typ) || k >= len(counts) {
			continue
		}
		n := counts[k]
		for i := r.First; i < r.First+r.Count && i < len(l.DevType) && n > 0 && uint64(len(got)) < want; i++ {
			if i < len(used) && used[i] {
				continue
			}
			got = append(got, i)
			n--
		}
	}
	if uint64(len(got)) < want {
		return nil
	}
	slices.Sort(got)
	return allocsOf(l, got, typ)
}
