package jobcred_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/pack"
)

func appendInit(m *jobcred.IOInit) []byte {
	var w pack.Writer
	jobcred.AppendIOInit(&w, m)
	return w.Bytes()
}

// fullBody sets every field, GRES records with every optional part, a NULL
// and an empty string, and multi-group run-length arrays.
func fullBody() jobcred.Body {
	b := testBody()
	b.PwGecos = jobcred.Str("") // "" is not NULL
	b.JobGres = []jobcred.JobGres{{
		PluginID: 7696487, CPUsPerGres: 2, Flags: 1, GresPerJob: 2, GresPerNode: 1, GresPerSocket: 0xfffffffffffffffe,
		GresPerTask: 3, MemPerGres: 4, NTasksPerGres: 0xfffe, TotalGres: 2, TypeName: jobcred.Str("a100"), NodeCnt: 2,
		HasCntNodeAlloc: true, CntNodeAlloc: []uint64{1, 1},
		HasBitAlloc: true, BitAlloc: []*jobcred.Bitmap{jobcred.BitmapOf(4, 1), nil},
		HasBitStepAlloc: true, BitStepAlloc: []*jobcred.Bitmap{nil, jobcred.BitmapOf(5, 4)},
		HasCntStepAlloc: true, CntStepAlloc: []uint64{9, 8},
	}, {PluginID: 1, NodeCnt: 3}}
	b.StepGres = []jobcred.StepGres{{
		PluginID: 7696487, GresPerStep: 2, TotalGres: 2, NodeCnt: 2, NodeInUse: jobcred.BitmapOf(2, 0, 1),
		HasCntNodeAlloc: true, CntNodeAlloc: []uint64{1, 1},
		HasBitAlloc: true, BitAlloc: []*jobcred.Bitmap{jobcred.BitmapOf(4, 1), jobcred.BitmapOf(4, 2)},
	}}
	b.JobAccount = jobcred.Str("acct")
	b.JobComment = jobcred.Str("c")
	b.JobConstraints = jobcred.Str("gpu&fast")
	b.JobStdOut = jobcred.Str("/tmp/%j.out")
	b.X11 = 3
	b.JobCoreBitmap = jobcred.BitmapOf(130, 0, 63, 64, 127, 128, 129)
	b.StepCoreBitmap = jobcred.BitmapOf(130, 129)
	b.SocketGroups = []jobcred.SocketGroup{{CoresPerSocket: 16, SocketsPerNode: 2, RepCount: 1}, {CoresPerSocket: 8, SocketsPerNode: 1, RepCount: 2}}
	b.CPUGroups = []jobcred.CPUGroup{{CPUs: 64, Reps: 1}, {CPUs: 8, Reps: 2}}
	b.JobMem = []jobcred.MemGroup{{MB: 4096, Reps: 1}, {MB: 1024, Reps: 2}}
	b.SELinuxContext = jobcred.Str("user_u:role_r:type_t")
	b.CTime = 1795240390
	return b
}

func TestBodyRoundTrip(t *testing.T) {
	for name, b := range map[string]jobcred.Body{"full": fullBody(), "zero": {}, "test": testBody()} {
		raw, err := jobcred.EncodeBody(&b, jobcred.Version2205)
		if err != nil {
			t.Fatal(err)
		}
		c, err := jobcred.Decode(append(bytes.Clone(raw), 0, 0, 0, 3, 'a', 'b', 0), jobcred.Version2205)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(normalize(c.Body), normalize(b)) {
			t.Errorf("%s: decoded body differs:\n got %+v\nwant %+v", name, c.Body, b)
		}
		again, _ := jobcred.EncodeBody(&c.Body, jobcred.Version2205)
		if !bytes.Equal(again, raw) || !bytes.Equal(c.Signed(), raw) || string(c.Signature) != "ab\x00" {
			t.Errorf("%s: re-encode differs", name)
		}
	}
}

// normalize maps empty slices to nil (the wire does not tell them apart).
func normalize(b jobcred.Body) jobcred.Body {
	if len(b.GIDs) == 0 {
		b.GIDs = nil
	}
	if len(b.GrNames) == 0 {
		b.GrNames = nil
	}
	return b
}

func TestBitmapHex(t *testing.T) {
	for _, c := range []struct {
		b    *jobcred.Bitmap
		want string
	}{
		{jobcred.BitmapOf(0), "0x0"},
		{jobcred.BitmapOf(1, 0), "0x1"},
		{jobcred.BitmapOf(16, 0), "0x0001"},
		{jobcred.BitmapOf(32, 0, 16), "0x00010001"},
		{jobcred.BitmapOf(5, 4), "0x10"},
		{jobcred.BitmapOf(66, 65, 3), "0x20000000000000008"},
		{jobcred.BitmapOf(8, 1, 2, 3, 5, 7), "0xAE"},
	} {
		if got := c.b.Hex(); got != c.want {
			t.Errorf("%v: %s, want %s", c.b, got, c.want)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good, _ := jobcred.EncodeBody(&jobcred.Body{}, jobcred.Version2205)
	good = append(good, 0, 0, 0, 0)
	if _, err := jobcred.Decode(good, jobcred.Version2205); err != nil {
		t.Fatal(err)
	}
	if _, err := jobcred.Decode(good, 0x2500); !errors.Is(err, jobcred.ErrVersion) {
		t.Errorf("21.08: %v", err)
	}
	if _, err := jobcred.Decode(append(bytes.Clone(good), 0), jobcred.Version2205); !errors.Is(err, jobcred.ErrMalformed) {
		t.Errorf("trailing byte: %v", err)
	}
	for i := range good {
		if _, _, err := jobcred.Unpack(good[:i], jobcred.Version2205); err == nil {
			t.Errorf("truncated at %d accepted", i)
		}
	}
	// Non-canonical bitmaps, a tot_core_cnt that disagrees, mismatched gr_names.
	b := jobcred.Body{JobCoreBitmap: jobcred.BitmapOf(8, 1)}
	raw, _ := jobcred.EncodeBody(&b, jobcred.Version2205)
	raw = append(raw, 0, 0, 0, 0)
	for name, mod := range map[string]func([]byte) []byte{
		"lower-case hex": func(p []byte) []byte { return bytes.Replace(p, []byte("0x02"), []byte("0x0a"), 1) },
		"bits past size": func(p []byte) []byte { return bytes.Replace(p, []byte("0x02"), []byte("0x0g"), 1) },
		"tot_core_cnt":   func(p []byte) []byte { i := bytes.Index(p, []byte{0, 0, 0, 8, 0, 0, 0, 8}); p[i+3] = 9; return p },
	} {
		if _, err := jobcred.Decode(mod(bytes.Clone(raw)), jobcred.Version2205); !errors.Is(err, jobcred.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	b = jobcred.Body{GIDs: []uint32{1, 2}, GrNames: []string{"a"}}
	if _, err := jobcred.EncodeBody(&b, jobcred.Version2205); err == nil {
		t.Error("gr_names/gids mismatch encoded")
	}
	// A huge count with no bytes behind it allocates nothing and fails.
	var w pack.Writer
	w.U32(1)
	w.U32(2)
	w.U32(3)
	w.U32(4)
	w.U32(5)
	w.NullStr()
	w.NullStr()
	w.NullStr()
	w.NullStr()
	w.U32(0x3fffffff) // gids
	if _, err := jobcred.Decode(w.Bytes(), jobcred.Version2205); !errors.Is(err, jobcred.ErrMalformed) {
		t.Errorf("huge gid count: %v", err)
	}
}
