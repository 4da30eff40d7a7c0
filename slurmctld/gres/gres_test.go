package gres

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/goslurm/goslurm/protocol/pack"
)

func TestPick(t *testing.T) {
	untyped := Layout{Name: "gpu", Count: 4, Bits: true, DevType: []string{"", "", "", ""}}
	typed := Layout{Name: "gpu", Count: 3, Bits: true, DevType: []string{"a", "b", "a"}, Types: []string{"a", "b"}}
	counts := Layout{Name: "gpu", Count: 2}
	tests := []struct {
		name string
		l    Layout
		used []bool
		typ  string
		want uint64
		out  []Alloc
	}{
		{"lowest free", untyped, nil, "", 2, []Alloc{{Name: "gpu", Count: 2, Bits: true, Idx: []int{0, 1}}}},
		{"skips used", untyped, []bool{true, false, true}, "", 2, []Alloc{{Name: "gpu", Count: 2, Bits: true, Idx: []int{1, 3}}}},
		{"too few", untyped, []bool{true, true, true}, "", 2, nil},
		{"type match", typed, []bool{true}, "a", 1, []Alloc{{Name: "gpu", Type: "a", Count: 1, Bits: true, Idx: []int{2}}}},
		{"type short", typed, []bool{true, false, true}, "a", 1, nil},
		{"any type split", typed, nil, "", 3, []Alloc{{Name: "gpu", Type: "a", Count: 2, Bits: true, Idx: []int{0, 2}}, {Name: "gpu", Type: "b", Count: 1, Bits: true, Idx: []int{1}}}},
		{"any type, none of one", typed, []bool{true, false, true}, "", 1, []Alloc{{Name: "gpu", Type: "a", Bits: true}, {Name: "gpu", Type: "b", Count: 1, Bits: true, Idx: []int{1}}}},
		{"counts only", counts, nil, "", 1, []Alloc{{Name: "gpu", Count: 1}}},
		{"none wanted", untyped, nil, "", 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.out, Pick(&tc.l, tc.used, tc.typ, tc.want)); d != "" {
				t.Errorf("Pick (-want +got):\n%s", d)
			}
		})
	}
}

func TestPickSubset(t *testing.T) {
	tests := []struct {
		have  []int
		taken []bool
		want  uint64
		out   []int
		ok    bool
	}{
		{[]int{0, 1}, nil, 1, []int{0}, true},
		{[]int{0, 1}, []bool{true}, 1, []int{1}, true},
		{[]int{0, 1}, []bool{true, true}, 1, nil, false},
		{[]int{2, 3}, nil, 0, []int{2, 3}, true},
	}
	for _, tc := range tests {
		got, ok := PickSubset(tc.have, tc.taken, tc.want)
		if !cmp.Equal(got, tc.out) || ok != tc.ok {
			t.Errorf("PickSubset(%v, %v, %d) = %v, %v; want %v, %v", tc.have, tc.taken, tc.want, got, ok, tc.out, tc.ok)
		}
	}
}

func TestParseTresPerNode(t *testing.T) {
	tests := []struct {
		in  string
		out []Req
		err bool
	}{
		{"gres:gpu:1", []Req{{Name: "gpu", Count: 1}}, false},
		{"gres:gpu", []Req{{Name: "gpu", Count: 1}}, false},
		{"gres:gpu:tesla:2,gres:nic:1", []Req{{Name: "gpu", Type: "tesla", Count: 2}, {Name: "nic", Count: 1}}, false},
		{"gres:gpu:tesla", []Req{{Name: "gpu", Type: "tesla", Count: 1}}, false},
		{"gres/gpu:2k", []Req{{Name: "gpu", Count: 2048}}, false},
		{"license:foo:1", nil, false},
		{"gres:gpu:a:b", nil, true},
		{"gres::1", nil, true},
	}
	for _, tc := range tests {
		got, err := ParseTresPerNode(tc.in)
		if (err != nil) != tc.err || !cmp.Equal(got, tc.out) {
			t.Errorf("ParseTresPerNode(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.out, tc.err)
		}
	}
}

func TestNewLayouts(t *testing.T) {
	conf := []ConfGres{{Name: "gpu", Type: "a", Count: 1}, {Name: "gpu", Type: "b", Count: 1}, {Name: "nic", Count: 2}}
	recs := []Record{{Name: "gpu", Type: "b", Count: 1, HasFile: true}, {Name: "gpu", Type: "a", Count: 1, HasFile: true}, {Name: "nic", Count: 2}}
	got := NewLayouts(conf, recs, nil)
	want := []Layout{
		{Name: "gpu", Count: 2, Bits: true, DevType: []string{"b", "a"}, Types: []string{"a", "b"}, TypeCounts: []uint64{1, 1},
			Topo: []Topo{{Type: "b", First: 0, Count: 1}, {Type: "a", First: 1, Count: 1}}},
		{Name: "nic", Count: 2},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("NewLayouts (-want +got):\n%s", d)
	}
	// Not registered: bits from what jobs hold, slurm.conf's order.
	got = NewLayouts(conf[:2], nil, map[string]bool{"gpu": true})
	want = []Layout{{Name: "gpu", Count: 2, Bits: true, DevType: []string{"a", "b"}, Types: []string{"a", "b"}, TypeCounts: []uint64{1, 1}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("NewLayouts unregistered (-want +got):\n%s", d)
	}
}

func TestUsedAndDetail(t *testing.T) {
	untyped := []Layout{{Name: "gpu", Count: 2, Bits: true, DevType: []string{"", ""}}}
	typed := []Layout{{Name: "gpu", Count: 2, Bits: true, DevType: []string{"a", "b"}, Types: []string{"a", "b"},
		Topo: []Topo{{Type: "a", First: 0, Count: 1}, {Type: "b", First: 1, Count: 1}}}}
	held := []Alloc{{Name: "gpu", Type: "b", Count: 1, Bits: true, Idx: []int{1}}}
	tests := []struct {
		ls   []Layout
		held []Alloc
		want string
	}{
		{untyped, nil, "gpu:0"},
		{untyped, []Alloc{{Name: "gpu", Count: 1, Bits: true, Idx: []int{1}}}, "gpu:1"},
		{typed, nil, "gpu:a:0(IDX:N/A),gpu:b:0(IDX:N/A)"},
		{typed, held, "gpu:a:0(IDX:N/A),gpu:b:1(IDX:1)"},
	}
	for _, tc := range tests {
		if got := Used(tc.ls, tc.held); got != tc.want {
			t.Errorf("Used(%v) = %q, want %q", tc.held, got, tc.want)
		}
	}
	if got, want := Detail([]Alloc{{Name: "gpu", Type: "a", Count: 2, Bits: true, Idx: []int{0, 1}}, {Name: "gpu", Type: "b", Bits: true}, {Name: "nic", Count: 1}}), "gpu:a:2(IDX:0-1),gpu:b:0(IDX:),nic(CNT:1)"; got != want {
		t.Errorf("Detail = %q, want %q", got, want)
	}
	if got, want := FormatIdx([]int{5, 0, 1, 2, 7}), "0-2,5,7"; got != want {
		t.Errorf("FormatIdx = %q, want %q", got, want)
	}
}

func TestParseRegistration(t *testing.T) {
	w := pack.NewWriter(nil)
	w.U16(0x2600)
	w.U16(2)
	for _, r := range []struct {
		flags       uint32
		cores, typ  string
		count       uint64
		name        string
		wantTypeSet bool
	}{{flags: confHasFile | confHasType, typ: "tesla", count: 1, name: "gpu"}, {flags: 0, cores: "0-1", count: 2, name: "nic"}} {
		w.U32(gresMagic)
		w.U64(r.count)
		w.U32(0)
		w.U32(r.flags)
		w.U32(0)
		w.OptStr(r.cores, r.cores != "")
		w.OptStr("", false)
		w.OptStr(r.name, true)
		w.OptStr(r.typ, r.typ != "")
		w.OptStr("", false)
	}
	got, err := ParseRegistration(w.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{{Name: "gpu", Type: "tesla", Count: 1, HasFile: true}, {Name: "nic", Count: 2, Cores: "0-1"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ParseRegistration (-want +got):\n%s", d)
	}
	if _, err := ParseRegistration(w.Bytes()[:20]); err == nil {
		t.Error("truncated blob decoded")
	}
}

func TestNodeString(t *testing.T) {
	conf := []ConfGres{{Name: "gpu", Count: 2}}
	typed := []ConfGres{{Name: "gpu", Type: "a", Count: 1}, {Name: "gpu", Type: "b", Count: 1}}
	tests := []struct {
		conf []ConfGres
		recs []Record
		want string
	}{
		{conf, []Record{{Name: "gpu", Count: 2, HasFile: true}}, "gpu:2"},
		{conf, []Record{{Name: "gpu", Count: 1, HasFile: true, Cores: "0-1"}, {Name: "gpu", Count: 1, HasFile: true, Cores: "2-3"}}, "gpu:2(S:0-3)"},
		{conf, []Record{{Name: "gpu", Count: 1, HasFile: true, Cores: "0"}, {Name: "gpu", Count: 1, HasFile: true}}, "gpu:2(S:0)"},
		{typed, []Record{{Name: "gpu", Type: "a", Count: 1, HasFile: true}, {Name: "gpu", Type: "b", Count: 1, HasFile: true, Cores: "2,3"}}, "gpu:a:1,gpu:b:1(S:2-3)"},
		{typed, nil, "gpu:a:1,gpu:b:1"},
		{[]ConfGres{{Name: "bw", Count: 2048}}, nil, "bw:2K"},
	}
	for _, tc := range tests {
		if got := NodeString(NewLayouts(tc.conf, tc.recs, nil), 1, 4); got != tc.want {
			t.Errorf("NodeString(%v) = %q, want %q", tc.recs, got, tc.want)
		}
	}
}

// A configured count past MAX_GRES_BITMAP is never laid out device by
// device (a huge slurm.conf count would be allocated on every call).
func TestLayoutsCapBitmap(t *testing.T) {
	ls := NewLayouts([]ConfGres{{Name: "gpu", Count: 1 << 40}},
		[]Record{{Name: "gpu", Count: 1 << 40, HasFile: true}}, nil)
	for _, l := range ls {
		if l.Bits || len(l.DevType) != 0 {
			t.Errorf("layout %s: Bits %v, %d devices; want a count only", l.Name, l.Bits, len(l.DevType))
		}
	}
}

// A count that does not fit in 64 bits once its suffix is applied is
// refused, not wrapped (gpu:18014398509481985k became 1024).
func TestParseCountOverflow(t *testing.T) {
	for _, s := range []string{"18014398509481985k", "18446744073709551615g", "99999999999999999999"} {
		if n, err := parseCount(s); err == nil {
			t.Errorf("parseCount(%q) = %d, want an error", s, n)
		}
	}
	if n, err := parseCount("2k"); err != nil || n != 2048 {
		t.Errorf("parseCount(2k) = %d, %v", n, err)
	}
}

// TestBound: records of a name with Cores= are listed (a record of it
// without Cores= too, bound to none); a name without any is not; held
// devices count by record; PickBound takes each record's share, lowest
// free index first.
func TestBound(t *testing.T) {
	ls := NewLayouts([]ConfGres{{Name: "gpu", Count: 4}, {Name: "nic", Count: 1}}, []Record{
		{Name: "gpu", Count: 2, Cores: "0-3", HasFile: true},
		{Name: "gpu", Count: 1, Cores: "4-7", HasFile: true},
		{Name: "gpu", Count: 1, HasFile: true},
		{Name: "nic", Count: 1, HasFile: true},
	}, nil)
	recs := Bound(ls)
	want := []BoundRec{
		{Name: "gpu", First: 0, Count: 2, Cores: []int{0, 1, 2, 3}},
		{Name: "gpu", First: 2, Count: 1, Cores: []int{4, 5, 6, 7}},
		{Name: "gpu", First: 3, Count: 1},
	}
	if d := cmp.Diff(want, recs); d != "" {
		t.Fatalf("Bound (-want +got):\n%s", d)
	}
	held := []Alloc{{Name: "gpu", Count: 2, Bits: true, Idx: []int{1, 2}}, {Name: "nic", Count: 1, Bits: true, Idx: []int{0}}}
	if got := BoundHeld(recs, held); !cmp.Equal(got, []uint64{1, 1, 0}) {
		t.Errorf("BoundHeld = %v, want [1 1 0]", got)
	}
	l := Find(ls, "gpu")
	used := []bool{false, true, false, false}
	got := PickBound(l, used, "", 2, recs, []uint64{1, 0, 1})
	if d := cmp.Diff([]Alloc{{Name: "gpu", Count: 2, Bits: true, Idx: []int{0, 3}}}, got); d != "" {
		t.Errorf("PickBound (-want +got):\n%s", d)
	}
	if got := PickBound(l, used, "", 2, recs, []uint64{2, 0, 0}); got != nil {
		t.Errorf("PickBound past a record's free devices = %v, want nil", got)
	}
	if got := Bound(NewLayouts([]ConfGres{{Name: "gpu", Count: 2}}, []Record{{Name: "gpu", Count: 2, HasFile: true}}, nil)); got != nil {
		t.Errorf("Bound without Cores= = %v, want nil", got)
	}
}
