package msg

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// Property and edge tests for the job bodies (job.go, jobdesc.go,
// jobinfo.go, step.go, alloc.go). They reuse small_test.go's helpers
// (checkRoundTrip, encodeBody, decodeExact, lookup) with a generator that
// knows the job records' pointers, addresses and cross-field rules.

var jobBodyTypes = map[msgtype.Type]any{
	msgtype.REQUEST_SUBMIT_BATCH_JOB:     JobDesc{},
	msgtype.REQUEST_RESOURCE_ALLOCATION:  JobDesc{},
	msgtype.REQUEST_JOB_WILL_RUN:         JobDesc{},
	msgtype.REQUEST_UPDATE_JOB:           JobDesc{},
	msgtype.REQUEST_HET_JOB_ALLOCATION:   JobDescList{},
	msgtype.REQUEST_SUBMIT_BATCH_HET_JOB: JobDescList{},
	msgtype.RESPONSE_SUBMIT_BATCH_JOB:    SubmitResponse{},
	msgtype.RESPONSE_JOB_INFO:            JobInfoMsg{},
	msgtype.RESPONSE_JOB_STEP_INFO:       StepInfoMsg{},
	msgtype.RESPONSE_RESOURCE_ALLOCATION: Allocation{},
	msgtype.RESPONSE_JOB_ALLOCATION_INFO: Allocation{},
	msgtype.RESPONSE_HET_JOB_ALLOCATION:  HetAllocation{},
}

// jobGen fills v with random values that respect the wire conventions.
func jobGen(r *rand.Rand, v reflect.Value, depth int) {
	switch x := v.Addr().Interface().(type) {
	case *NullString:
		switch r.IntN(4) {
		case 0:
			*x = NullString{}
		case 1:
			*x = Str("")
		default:
			b := make([]byte, r.IntN(12))
			for i := range b {
				b[i] = byte(r.UintN(256))
			}
			*x = Str(string(b))
		}
		return
	case *HexBitmap:
		switch r.IntN(4) {
		case 0:
			*x = NullBitmap
		case 1:
			*x = BitmapOf(0)
		default:
			n := 1 + r.IntN(130)
			var set []int
			for i := 0; i < n; i++ {
				if r.IntN(3) == 0 {
					set = append(set, i)
				}
			}
			*x = BitmapOf(n, set...)
		}
		return
	case *SelectPlugin:
		*x = []SelectPlugin{SelectConsRes, SelectLinear, SelectConsTres}[r.IntN(3)]
		return
	case *codec.Addr:
		switch r.IntN(4) {
		case 0:
			*x = codec.Addr{}
		case 1:
			*x = codec.Addr{Family: 1} // a family that carries nothing
		case 2:
			*x = codec.AddrIPv4([4]byte{byte(r.UintN(256)), byte(r.UintN(256)), 0, 1}, uint16(r.UintN(65536)))
		default:
			var ip [16]byte
			for i := range ip {
				ip[i] = byte(r.UintN(256))
			}
			*x = codec.AddrIPv6(ip, uint16(r.UintN(65536)))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 3 || r.IntN(2) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		jobGen(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			jobGen(r, v.Field(i), depth+1)
		}
	case reflect.Slice:
		max := 3
		if depth > 2 {
			max = 2
		}
		n := r.IntN(max + 1)
		if n == 0 {
			v.SetZero()
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			jobGen(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		all := ^uint64(0) >> (64 - v.Type().Bits())
		switch r.IntN(5) {
		case 0:
			v.SetUint(0)
		case 1:
			v.SetUint(all)
		case 2:
			v.SetUint(all - 1)
		default:
			v.SetUint(r.Uint64() >> (64 - v.Type().Bits()))
		}
	case reflect.Int64:
		v.SetInt(int64(r.Uint64()))
	default:
		panic("jobGen: unhandled kind " + v.Kind().String() + " in " + v.Type().String())
	}
}

// jobFixup applies the cross-field rules Slurm's unpackers check, so that a
// generated value is one a peer could send.
func jobFixup(r *rand.Rand, x any) {
	switch b := x.(type) {
	case *JobDesc:
		for i := range b.Environment {
			b.Environment[i].Valid = true
		}
		for i := range b.SpankJobEnv {
			b.SpankJobEnv[i].Valid = true
		}
	case *JobDescList:
		for i := range b.Jobs {
			jobFixup(r, &b.Jobs[i])
		}
	case *JobInfoMsg:
		for i := range b.Jobs {
			if jr := b.Jobs[i].JobResrcs; jr != nil {
				jr.CPUArrayValue = resize(r, jr.CPUArrayValue, len(jr.CPUArrayReps))
			}
		}
	case *Allocation:
		if b.NodeAddrs != nil {
			if r.IntN(4) == 0 {
				b.NodeAddrs = []codec.Addr{}
			}
			b.NodeCnt = uint32(len(b.NodeAddrs))
		} else if r.IntN(2) == 0 {
			b.NodeAddrs = nil
		}
		b.CPUCountReps = resize(r, b.CPUCountReps, len(b.CPUsPerNode))
	case *HetAllocation:
		for i := range b.Jobs {
			jobFixup(r, &b.Jobs[i])
		}
	}
}

func resize[T any](r *rand.Rand, s []T, n int) []T {
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	copy(out, s)
	for i := len(s); i < n; i++ {
		jobGen(r, reflect.ValueOf(&out[i]).Elem(), 5)
	}
	return out
}

func genJobBody(r *rand.Rand, proto any) any {
	p := reflect.New(reflect.TypeOf(proto))
	jobGen(r, p.Elem(), 0)
	jobFixup(r, p.Interface())
	return p.Elem().Interface()
}

func TestJobPropertyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	iters := 300
	if testing.Short() {
		iters = 30
	}
	for mt, proto := range jobBodyTypes {
		t.Run(mt.String(), func(t *testing.T) {
			for i := 0; i < iters; i++ {
				checkRoundTrip(t, mt, genJobBody(r, proto), 6)
			}
		})
	}
}

// Zero values with the select plugin and NULL bitmaps set round-trip, and
// are exactly as small as the bounds the decoders use.
func TestJobMinimalRecords(t *testing.T) {
	checkRoundTrip(t, msgtype.REQUEST_SUBMIT_BATCH_JOB, *NewJobDesc(), 4)
	checkRoundTrip(t, msgtype.REQUEST_SUBMIT_BATCH_JOB, JobDesc{SelectJobinfo: SelectLinear}, 4)
	checkRoundTrip(t, msgtype.RESPONSE_SUBMIT_BATCH_JOB, SubmitResponse{}, 4)
	checkRoundTrip(t, msgtype.RESPONSE_JOB_INFO, JobInfoMsg{}, 4)
	checkRoundTrip(t, msgtype.RESPONSE_JOB_STEP_INFO, StepInfoMsg{}, 4)
	checkRoundTrip(t, msgtype.RESPONSE_HET_JOB_ALLOCATION, HetAllocation{}, 4)
	checkRoundTrip(t, msgtype.REQUEST_HET_JOB_ALLOCATION, JobDescList{}, 4)

	minInfo := JobInfo{SelectJobinfo: SelectConsTres, NodeInx: NullBitmap, ReqNodeInx: NullBitmap, ExcNodeInx: NullBitmap}
	b := encodeBody(t, msgtype.RESPONSE_JOB_INFO, JobInfoMsg{Jobs: []JobInfo{minInfo}})
	if len(b)-20 != minJobInfoSize() {
		t.Errorf("minimal job record %d bytes, minJobInfoSize %d", len(b)-20, minJobInfoSize())
	}
	b = encodeBody(t, msgtype.RESPONSE_JOB_STEP_INFO, StepInfoMsg{Steps: []StepInfo{{SelectJobinfo: SelectConsTres, NodeInx: NullBitmap}}})
	if len(b)-12 != minStepInfoSize() {
		t.Errorf("minimal step record %d bytes, minStepInfoSize %d", len(b)-12, minStepInfoSize())
	}
	b = encodeBody(t, msgtype.REQUEST_SUBMIT_BATCH_JOB, JobDesc{SelectJobinfo: SelectConsTres})
	if len(b) < minJobDescSize {
		t.Errorf("minimal job_desc %d bytes < minJobDescSize %d", len(b), minJobDescSize)
	}
	b = encodeBody(t, msgtype.RESPONSE_RESOURCE_ALLOCATION, Allocation{SelectJobinfo: SelectConsTres})
	if len(b) < minAllocationSize {
		t.Errorf("minimal allocation %d bytes < minAllocationSize %d", len(b), minAllocationSize)
	}
}

func TestNewJobDescDefaults(t *testing.T) {
	j := NewJobDesc()
	if j.MinNodes != pack.NoVal || j.PnMinMemory != pack.NoVal64 || j.Overcommit != pack.NoVal8 ||
		j.Shared != pack.NoVal16 || j.Account.Valid || j.SelectJobinfo != SelectConsTres {
		t.Errorf("defaults %#v", j)
	}
	j.SetDefaultBits()
	if j.Bitflags != UseDefaultAcct|UseDefaultPart|UseDefaultQOS|UseDefaultWCKey {
		t.Errorf("bitflags %#x", j.Bitflags)
	}
	j = NewJobDesc()
	j.Account, j.Partition, j.QOS, j.WCKey = Str(""), Str("p"), Str("q"), Str("w")
	j.SetDefaultBits()
	if j.Bitflags != 0 {
		t.Errorf("all set: bitflags %#x", j.Bitflags)
	}
}

// The submit response of sbatch.pcap, byte for byte.
func TestSubmitResponseBytes(t *testing.T) {
	b := encodeBody(t, msgtype.RESPONSE_SUBMIT_BATCH_JOB, SubmitResponse{JobID: 1, StepID: StepIDBatch})
	want := []byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfb, 0, 0, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(b, want) {
		t.Errorf("got %x want %x", b, want)
	}
	b = encodeBody(t, msgtype.RESPONSE_SUBMIT_BATCH_JOB, SubmitResponse{JobSubmitUserMsg: Str("")})
	if !bytes.Equal(b[12:], []byte{0, 0, 0, 1, 0}) {
		t.Errorf(`"" message packs as %x`, b[12:])
	}
}

// The composite blocks have the wire forms of reference §3.
func TestJobCompositeBytes(t *testing.T) {
	enc := func(walk func(fieldWalker)) []byte {
		var w pack.Writer
		e := &encoder{w: &w}
		walk(e)
		if e.e != nil {
			t.Fatal(e.e)
		}
		return w.Bytes()
	}
	mc := &MultiCore{1, 2, 3, 4, 5, 6, 7, 8, 9}
	got := enc(func(w fieldWalker) { walkMultiCore(w, &mc) })
	want := []byte{0xff, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8, 0, 9}
	if !bytes.Equal(got, want) {
		t.Errorf("multi_core %x", got)
	}
	var none *MultiCore
	if got := enc(func(w fieldWalker) { walkMultiCore(w, &none) }); !bytes.Equal(got, []byte{0}) {
		t.Errorf("absent multi_core %x", got)
	}
	ce := &CronEntry{Flags: 1, Minute: BitmapOf(60, 0, 30), Hour: NullBitmap, DayOfMonth: NullBitmap,
		Month: NullBitmap, DayOfWeek: NullBitmap, Cronspec: Str("0,30 * * * *"), LineStart: 3, LineEnd: 4}
	got = enc(func(w fieldWalker) { walkCronEntry(w, &ce) })
	// 1, flags, minute = u32 60 + mem "0x000000040000001" (15 digits), 4 x NO_VAL, spec, lines.
	wantHex := "0x000000040000001"
	if len(wantHex) != 2+15 || !bytes.Contains(got, []byte(wantHex+"\x00")) || got[0] != 1 {
		t.Errorf("cron entry %x", got)
	}
	jr := &JobResources{CPUs: []uint16{4, 4}, CoreBitmap: BitmapOf(8, 0, 1, 4, 5), CoreBitmapUsed: NullBitmap}
	got = enc(func(w fieldWalker) { walkJobResources(w, &jr) })
	if !bytes.HasPrefix(got, []byte{0, 0, 0, 2}) || !bytes.Contains(got, []byte{0, 0, 0, 8, 0, 0, 0, 5, '0', 'x', '3', '3', 0}) {
		t.Errorf("job_resources %x", got)
	}
	var nojr *JobResources
	if got := enc(func(w fieldWalker) { walkJobResources(w, &nojr) }); !bytes.Equal(got, []byte{0xff, 0xff, 0xff, 0xfe}) {
		t.Errorf("absent job_resources %x", got)
	}
	a := codec.AddrIPv4([4]byte{127, 0, 0, 1}, 47512)
	if got := enc(func(w fieldWalker) { walkSlurmAddr(w, &a) }); !bytes.Equal(got, []byte{0, 2, 1, 0, 0, 0x7f, 0x98, 0xb9}) {
		t.Errorf("addr %x", got)
	}
}

// mutate encodes body, lets f change the bytes, and returns them.
func mutate(t *testing.T, mt msgtype.Type, body any, f func([]byte) []byte) []byte {
	t.Helper()
	return f(bytes.Clone(encodeBody(t, mt, body)))
}

func TestJobBadInput(t *testing.T) {
	minInfo := JobInfo{SelectJobinfo: SelectConsTres, NodeInx: NullBitmap, ReqNodeInx: NullBitmap, ExcNodeInx: NullBitmap}
	infoLen := len(encodeBody(t, msgtype.RESPONSE_JOB_INFO, JobInfoMsg{Jobs: []JobInfo{minInfo}}))
	desc := NewJobDesc()
	descBytes := encodeBody(t, msgtype.REQUEST_SUBMIT_BATCH_JOB, desc)
	withMC := minInfo
	withMC.MultiCore = &MultiCore{}
	alloc := Allocation{SelectJobinfo: SelectConsTres, NodeCnt: 1, NodeAddrs: []codec.Addr{codec.AddrIPv4([4]byte{1, 2, 3, 4}, 5)}}
	allocBytes := encodeBody(t, msgtype.RESPONSE_RESOURCE_ALLOCATION, alloc)

	cases := []struct {
		name string
		mt   msgtype.Type
		body []byte
		is   error
	}{
		{"huge job count", msgtype.RESPONSE_JOB_INFO, []byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, pack.ErrTooLong},
		{"job count one too many", msgtype.RESPONSE_JOB_INFO, mutate(t, msgtype.RESPONSE_JOB_INFO, JobInfoMsg{Jobs: []JobInfo{minInfo}}, func(b []byte) []byte { b[3] = 2; return b }), pack.ErrTooLong},
		{"huge step count", msgtype.RESPONSE_JOB_STEP_INFO, []byte{0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0}, pack.ErrTooLong},
		{"het count 0xffff", msgtype.RESPONSE_HET_JOB_ALLOCATION, []byte{0xff, 0xff}, nil},
		{"het count beyond body", msgtype.REQUEST_HET_JOB_ALLOCATION, append([]byte{0, 2}, descBytes...), pack.ErrTooLong},
		{"truncated job record", msgtype.RESPONSE_JOB_INFO, encodeBody(t, msgtype.RESPONSE_JOB_INFO, JobInfoMsg{Jobs: []JobInfo{minInfo}})[:infoLen-1], pack.ErrShort},
		{"select plugin cray", msgtype.REQUEST_SUBMIT_BATCH_JOB, mutate(t, msgtype.REQUEST_SUBMIT_BATCH_JOB, desc, func(b []byte) []byte {
			i := bytes.LastIndex(b, []byte{0, 0, 0, 109})
			b[i+3] = 107
			return b
		}), ErrPlugin},
		{"multi_core flag 1", msgtype.RESPONSE_JOB_INFO, mutate(t, msgtype.RESPONSE_JOB_INFO, JobInfoMsg{Jobs: []JobInfo{withMC}}, func(b []byte) []byte {
			i := bytes.Index(b, append([]byte{0xff}, make([]byte, 18)...))
			b[i] = 1
			return b
		}), nil},
		{"cron flag 2", msgtype.REQUEST_SUBMIT_BATCH_JOB, mutate(t, msgtype.REQUEST_SUBMIT_BATCH_JOB, desc, func(b []byte) []byte {
			b[len(b)-1] = 2
			return b
		}), nil},
		{"cron entry cut", msgtype.REQUEST_SUBMIT_BATCH_JOB, mutate(t, msgtype.REQUEST_SUBMIT_BATCH_JOB, desc, func(b []byte) []byte {
			b[len(b)-1] = 1
			return b
		}), pack.ErrShort},
		{"NULL environment entry", msgtype.REQUEST_SUBMIT_BATCH_JOB, func() []byte {
			d := NewJobDesc()
			d.Environment = []NullString{Str("A=1"), Str("B=2")}
			return mutate(t, msgtype.REQUEST_SUBMIT_BATCH_JOB, d, func(b []byte) []byte {
				i := bytes.Index(b, []byte("B=2\x00"))
				// Replace "B=2" (u32 4 + 4 bytes) by NULL (u32 0) and move the tail.
				out := append(append(b[:i-4:i-4], 0, 0, 0, 0), b[i+4:]...)
				return out
			})
		}(), nil},
		{"container differs", msgtype.RESPONSE_JOB_INFO, mutate(t, msgtype.RESPONSE_JOB_INFO, JobInfoMsg{Jobs: []JobInfo{func() JobInfo {
			j := minInfo
			j.Container, j.Comment = Str("a"), Str("b")
			return j
		}()}}, func(b []byte) []byte {
			i := bytes.Index(b, []byte("b\x00"))
			b[i+6] = 'z' // the second container copy follows the comment
			return b
		}), nil},
		{"job_resources cpus short", msgtype.RESPONSE_JOB_INFO, mutate(t, msgtype.RESPONSE_JOB_INFO, JobInfoMsg{Jobs: []JobInfo{func() JobInfo {
			j := minInfo
			j.JobResrcs = &JobResources{CPUs: []uint16{7}, CoreBitmap: NullBitmap, CoreBitmapUsed: NullBitmap}
			return j
		}()}}, func(b []byte) []byte {
			i := bytes.Index(b, []byte{0, 0, 0, 1, 0, 7})
			b[i-29+3] = 2 // nhosts 1 -> 2 (29 bytes before the cpus array)
			return b
		}), nil},
		{"node_addr count", msgtype.RESPONSE_RESOURCE_ALLOCATION, mutate(t, msgtype.RESPONSE_RESOURCE_ALLOCATION, alloc, func(b []byte) []byte {
			i := bytes.Index(b, []byte{0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 2})
			b[i+3] = 2 // node_cnt 2, one address
			return b
		}), nil},
		{"working cluster", msgtype.RESPONSE_RESOURCE_ALLOCATION, append(allocBytes[:len(allocBytes)-1:len(allocBytes)-1], 1), ErrPlugin},
		{"lower-case hex bitmap bit beyond size", msgtype.RESPONSE_JOB_STEP_INFO, mutate(t, msgtype.RESPONSE_JOB_STEP_INFO,
			StepInfoMsg{Steps: []StepInfo{{SelectJobinfo: SelectConsTres, NodeInx: BitmapOf(2, 1)}}}, func(b []byte) []byte {
				i := bytes.Index(b, []byte("0x2\x00"))
				b[i+2] = 'f'
				return b
			}), nil},
	}
	for _, c := range cases {
		v, err := lookup(t, c.mt).Decode(pack.NewReader(c.body), codec.Version2205)
		if err == nil || v != nil {
			t.Errorf("%s: got %#v, %v", c.name, v, err)
			continue
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.is)
		}
		t.Logf("%s: %v", c.name, err)
	}
}

func TestJobEncodeErrors(t *testing.T) {
	cases := []struct {
		name string
		mt   msgtype.Type
		body any
	}{
		{"no select plugin", msgtype.REQUEST_SUBMIT_BATCH_JOB, JobDesc{}},
		{"NULL env entry", msgtype.REQUEST_SUBMIT_BATCH_JOB, JobDesc{SelectJobinfo: SelectConsTres, Environment: []NullString{{}}}},
		{"cpu_array lengths", msgtype.RESPONSE_JOB_INFO, JobInfoMsg{Jobs: []JobInfo{{SelectJobinfo: SelectConsTres,
			JobResrcs: &JobResources{CPUArrayReps: []uint32{1}}}}}},
		{"addr count", msgtype.RESPONSE_RESOURCE_ALLOCATION, Allocation{SelectJobinfo: SelectConsTres, NodeCnt: 2, NodeAddrs: []codec.Addr{{}}}},
		{"cpu groups", msgtype.RESPONSE_RESOURCE_ALLOCATION, Allocation{SelectJobinfo: SelectConsTres, CPUsPerNode: []uint16{1}}},
		{"inet6 bytes in inet", msgtype.RESPONSE_RESOURCE_ALLOCATION, Allocation{SelectJobinfo: SelectConsTres, NodeCnt: 1,
			NodeAddrs: []codec.Addr{{Family: codec.AFInet, IP: [16]byte{15: 1}}}}},
		{"wrong type", msgtype.RESPONSE_JOB_INFO, JobDesc{}},
		{"nil pointer", msgtype.RESPONSE_JOB_INFO, (*JobInfoMsg)(nil)},
	}
	for _, c := range cases {
		var w pack.Writer
		err := lookup(t, c.mt).Encode(&w, codec.Version2205, c.body)
		if !errors.Is(err, codec.ErrEncode) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	for mt, proto := range jobBodyTypes {
		var w pack.Writer
		if err := lookup(t, mt).Encode(&w, codec.Version2108, proto); !errors.Is(err, codec.ErrVersion) {
			t.Errorf("%v at 21.08: %v", mt, err)
		}
		if _, err := lookup(t, mt).Decode(pack.NewReader(nil), codec.Version2405); !errors.Is(err, codec.ErrVersion) {
			t.Errorf("%v at 24.05: %v", mt, err)
		}
	}
}

// NULL and "" stay apart in every string position of a job record, and in
// string arrays.
func TestJobNullVersusEmpty(t *testing.T) {
	j := JobInfo{SelectJobinfo: SelectConsTres, NodeInx: NullBitmap, ReqNodeInx: NullBitmap, ExcNodeInx: NullBitmap,
		Name: Str(""), Comment: NullString{}, GresDetailStr: []NullString{{}, Str(""), Str("gpu:1")}}
	checkRoundTrip(t, msgtype.RESPONSE_JOB_INFO, JobInfoMsg{Jobs: []JobInfo{j}}, 2)
	d := NewJobDesc()
	d.Argv = []NullString{Str("a"), {}, Str("")}
	d.Script = Str("")
	checkRoundTrip(t, msgtype.REQUEST_SUBMIT_BATCH_JOB, *d, 2)
	a := Allocation{SelectJobinfo: SelectConsTres, NodeAddrs: []codec.Addr{}}
	checkRoundTrip(t, msgtype.RESPONSE_RESOURCE_ALLOCATION, a, 2)
}
