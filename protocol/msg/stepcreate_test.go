package msg

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// Property tests, exact bytes, hostile input and a fuzz target for
// stepcreate.go. The helpers (checkRoundTrip, dgen, testCreds, fuzzBody,
// daemonCaptureBodies) are small_test.go's and daemon_test.go's.

var stepCreateTypes = []msgtype.Type{msgtype.REQUEST_JOB_STEP_CREATE, msgtype.RESPONSE_JOB_STEP_CREATE}

// genStepCreate returns a random body of mt in decoded form: a response
// always has a credential and supported plugin ids, and a layout one time
// in four is absent.
func genStepCreate(r *rand.Rand, mt msgtype.Type) any {
	if mt == msgtype.REQUEST_JOB_STEP_CREATE {
		var b StepCreateRequest
		dgen(r, reflect.ValueOf(&b).Elem(), false, 0)
		return b
	}
	var b StepCreateResponse
	v := reflect.ValueOf(&b).Elem()
	for i := 0; i < v.NumField(); i++ {
		switch v.Field(i).Addr().Interface().(type) {
		case **StepLayout, **jobcred.Credential:
		default:
			dgen(r, v.Field(i), false, 1)
		}
	}
	if r.IntN(4) != 0 {
		b.Layout = new(StepLayout)
		dgen(r, reflect.ValueOf(b.Layout).Elem(), false, 1)
	}
	b.Cred = testCreds()[r.IntN(len(testCreds()))]
	b.SwitchJobinfo = SwitchNone
	return b
}

func TestStepCreatePropertyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 1))
	iters := 300
	if testing.Short() {
		iters = 30
	}
	for _, mt := range stepCreateTypes {
		t.Run(mt.String(), func(t *testing.T) {
			layouts, nodes := 0, 0
			for i := 0; i < iters; i++ {
				x := genStepCreate(r, mt)
				checkRoundTrip(t, mt, x, 8)
				if p, ok := x.(StepCreateResponse); ok && p.Layout != nil {
					layouts++
					nodes += len(p.Layout.TIDs)
				}
			}
			if mt == msgtype.RESPONSE_JOB_STEP_CREATE && (layouts < iters/2 || nodes < iters/2) {
				t.Errorf("generator produced %d layouts with %d nodes in %d bodies", layouts, nodes, iters)
			}
		})
	}
}

func TestStepCreateVersions(t *testing.T) {
	protos := map[msgtype.Type]any{
		msgtype.REQUEST_JOB_STEP_CREATE:  StepCreateRequest{},
		msgtype.RESPONSE_JOB_STEP_CREATE: StepCreateResponse{Cred: testCreds()[0], SelectJobinfo: SelectConsTres, SwitchJobinfo: SwitchNone},
	}
	for mt, proto := range protos {
		c := lookup(t, mt)
		var w pack.Writer
		if err := c.Encode(&w, codec.Version2205, proto); err != nil {
			t.Errorf("%v: encoding at 22.05: %v", mt, err)
		}
		if err := c.Encode(&w, codec.Version2205, 42); !errors.Is(err, codec.ErrEncode) {
			t.Errorf("%v: encoding an int: %v", mt, err)
		}
		for _, v := range []codec.Version{codec.Version2011, codec.Version2108, codec.Version2302, codec.Version2405, codec.Version2511} {
			if err := c.Encode(&w, v, proto); !errors.Is(err, codec.ErrVersion) {
				t.Errorf("%v: encoding at %v: %v", mt, v, err)
			}
			if b, err := c.Decode(pack.NewReader(make([]byte, 1024)), v); !errors.Is(err, codec.ErrVersion) || b != nil {
				t.Errorf("%v: decoding at %v: %v", mt, v, err)
			}
		}
	}
}

// TestStepCreateRequestBytes pins the request's size with every string NULL
// and the offsets of a few fields.
func TestStepCreateRequestBytes(t *testing.T) {
	b := encodeBody(t, msgtype.REQUEST_JOB_STEP_CREATE, StepCreateRequest{})
	if len(b) != 154 {
		t.Fatalf("all-NULL request is %d bytes, want 154 (39 fields)", len(b))
	}
	req := StepCreateRequest{
		StepID: StepID{JobID: 7, StepID: pack.NoVal, StepHetComp: pack.NoVal}, Container: Str("c"),
		Port: 0xabcd, Flags: 0x01020304, Host: Str("vm"), TresPerTask: Str("cpu:1"),
	}
	b = encodeBody(t, msgtype.REQUEST_JOB_STEP_CREATE, req)
	want := map[int][]byte{
		0:  {0, 0, 0, 7, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xfe},
		24: {0, 0, 0, 2, 'c', 0},      // container after three u32
		72: {0xab, 0xcd},              // port: 12+12+6+20+8+4+2+2+4+2
		82: {1, 2, 3, 4},              // flags, after immediate, resv_port_cnt, srun_pid
		86: {0, 0, 0, 3, 'v', 'm', 0}, // host
	}
	for off, w := range want {
		if !bytes.Equal(b[off:off+len(w)], w) {
			t.Errorf("offset %d: %x, want %x", off, b[off:off+len(w)], w)
		}
	}
	if !bytes.HasSuffix(b, []byte{0, 0, 0, 6, 'c', 'p', 'u', ':', '1', 0}) {
		t.Errorf("tres_per_task is not last: %x", b[len(b)-12:])
	}
	got, err := decodeExact(msgtype.REQUEST_JOB_STEP_CREATE, b)
	if err != nil || !reflect.DeepEqual(got, req) {
		t.Errorf("decoded %#v, %v", got, err)
	}
}

// TestStepCreateResponseBytes: the layout and the credential sit where
// pack_slurm_step_layout and slurm_cred_pack put them, the credential
// unchanged and without a length prefix.
func TestStepCreateResponseBytes(t *testing.T) {
	cred := testCreds()[0]
	resp := StepCreateResponse{
		DefCPUBindType: 0x11, ResvPorts: Str("1-2"), JobStepID: 3,
		Layout: &StepLayout{NodeList: Str("n[1-2]"), StartProtocolVer: 0x2600, TaskCnt: 3, TaskDist: 2,
			TIDs: [][]uint32{{0, 2}, {1}}},
		Cred: cred, SelectJobinfo: SelectConsTres, SwitchJobinfo: SwitchNone, UseProtocolVer: 0x2600,
	}
	var w pack.Writer
	w.U32(0x11)
	w.OptStr("1-2", true)
	w.U32(3)
	w.U16(1)
	w.OptStr("", false)
	w.OptStr("n[1-2]", true)
	w.U32(2)
	w.U16(0x2600)
	w.U32(3)
	w.U32(2)
	w.U32(2)
	w.U32(0)
	w.U32(2)
	w.U32(1)
	w.U32(1)
	cred.AppendTo(&w)
	w.U32(109)
	w.U32(100)
	w.U16(0x2600)
	if b := encodeBody(t, msgtype.RESPONSE_JOB_STEP_CREATE, resp); !bytes.Equal(b, w.Bytes()) {
		t.Errorf("response\n got %x\nwant %x", b, w.Bytes())
	}
	got, err := decodeExact(msgtype.RESPONSE_JOB_STEP_CREATE, w.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	g := got.(StepCreateResponse)
	if !bytes.Equal(g.Cred.Signed(), cred.Signed()) || !bytes.Equal(g.Cred.Signature, cred.Signature) || !reflect.DeepEqual(g, resp) {
		t.Errorf("decoded %#v", g)
	}
	// No layout is a lone u16 0 in front of the credential.
	resp.Layout = nil
	b := encodeBody(t, msgtype.RESPONSE_JOB_STEP_CREATE, resp)
	if !bytes.Equal(b[4+8+4:4+8+4+2], []byte{0, 0}) || !bytes.HasPrefix(b[4+8+4+2:], cred.Bytes()) {
		t.Errorf("response without layout: %x", b[:32])
	}
	// An empty layout carries node_cnt 0 and no task arrays.
	resp.Layout = &StepLayout{}
	b = encodeBody(t, msgtype.RESPONSE_JOB_STEP_CREATE, resp)
	if want := []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}; !bytes.Equal(b[16:16+len(want)], want) ||
		!bytes.HasPrefix(b[16+len(want):], cred.Bytes()) {
		t.Errorf("empty layout: %x", b[16:48])
	}
}

func TestStepCreateBadInput(t *testing.T) {
	cred := testCreds()[0]
	resp := StepCreateResponse{
		JobStepID: 1, Layout: &StepLayout{NodeList: Str("n1"), TaskCnt: 1, TIDs: [][]uint32{{0}}},
		Cred: cred, SelectJobinfo: SelectConsTres, SwitchJobinfo: SwitchNone, UseProtocolVer: 0x2600,
	}
	good := encodeBody(t, msgtype.RESPONSE_JOB_STEP_CREATE, resp)
	const flagAt = 4 + 4 + 4             // bind type, NULL resv_ports, step id
	const nodeCntAt = flagAt + 2 + 4 + 7 // flag, NULL front_end, "n1"
	credAt := bytes.Index(good, cred.Bytes())
	tail := credAt + len(cred.Bytes())
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name string
		data []byte
	}{
		{"layout flag 2", mut(func(b []byte) []byte { b[flagAt+1] = 2; return b })},
		{"layout flag 0x100", mut(func(b []byte) []byte { b[flagAt] = 1; return b })},
		{"node count beyond the body", put32(bytes.Clone(good), nodeCntAt, 1<<28)},
		{"node count NO_VAL", put32(bytes.Clone(good), nodeCntAt, pack.NoVal)},
		{"task ids beyond the body", put32(bytes.Clone(good), nodeCntAt+2+4+4+4, 0x7fffffff)},
		{"corrupt credential", put32(bytes.Clone(good), credAt+12+8, 0xfffffff0)},
		{"select plugin 999", put32(bytes.Clone(good), tail, 999)},
		{"switch plugin 101", put32(bytes.Clone(good), tail+4, 101)},
		{"byte after the body", append(bytes.Clone(good), 0)},
		{"truncated use_protocol_ver", good[:len(good)-1]},
		{"truncated in the layout", good[:nodeCntAt+2]},
		{"empty", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decodeExact(msgtype.RESPONSE_JOB_STEP_CREATE, tc.data)
			if err == nil {
				t.Fatalf("decoded: %#v", v)
			}
			if v != nil {
				t.Fatalf("error %v with a body", err)
			}
			// The response checks its own end (it carries a credential), so
			// Decode alone fails too.
			if b, err := lookup(t, msgtype.RESPONSE_JOB_STEP_CREATE).Decode(pack.NewReader(tc.data), codec.Version2205); err == nil || b != nil {
				t.Fatalf("codec decode without Done: %#v, %v", b, err)
			}
		})
	}
	// A request is fixed fields and strings: a string length beyond the
	// body fails.
	req := encodeBody(t, msgtype.REQUEST_JOB_STEP_CREATE, StepCreateRequest{})
	if v, err := decodeExact(msgtype.REQUEST_JOB_STEP_CREATE, put32(bytes.Clone(req), 24, 1000)); err == nil || v != nil {
		t.Errorf("container of 1000 bytes in a %d-byte body: %#v, %v", len(req), v, err)
	}
}

func TestStepCreateEncodeErrors(t *testing.T) {
	cred := testCreds()[0]
	old := *cred
	old.Version = 0x2500
	ok := StepCreateResponse{Cred: cred, SelectJobinfo: SelectConsTres, SwitchJobinfo: SwitchNone}
	cases := []struct {
		name string
		body any
	}{
		{"no credential", StepCreateResponse{SelectJobinfo: SelectConsTres, SwitchJobinfo: SwitchNone}},
		{"credential of another version", StepCreateResponse{Cred: &old, SelectJobinfo: SelectConsTres, SwitchJobinfo: SwitchNone}},
		{"select plugin 0", StepCreateResponse{Cred: cred, SwitchJobinfo: SwitchNone}},
		{"switch plugin 0", StepCreateResponse{Cred: cred, SelectJobinfo: SelectConsTres}},
		{"nil pointer", (*StepCreateResponse)(nil)},
		{"request body", StepCreateRequest{}},
	}
	for _, tc := range cases {
		var w pack.Writer
		if err := lookup(t, msgtype.RESPONSE_JOB_STEP_CREATE).Encode(&w, codec.Version2205, tc.body); !errors.Is(err, codec.ErrEncode) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	var w pack.Writer
	if err := lookup(t, msgtype.RESPONSE_JOB_STEP_CREATE).Encode(&w, codec.Version2205, ok); err != nil {
		t.Errorf("valid response: %v", err)
	}
	if err := lookup(t, msgtype.REQUEST_JOB_STEP_CREATE).Encode(&w, codec.Version2205, ok); !errors.Is(err, codec.ErrEncode) {
		t.Errorf("response as request: %v", err)
	}
}

// FuzzStepCreate: the first byte picks the request or the response; seeds
// are generated bodies and the captures' frames.
func FuzzStepCreate(f *testing.F) {
	r := rand.New(rand.NewPCG(5001, 5002))
	for i, mt := range stepCreateTypes {
		for k := 0; k < 8; k++ {
			f.Add(append([]byte{byte(i)}, encodeBody(f, mt, genStepCreate(r, mt))...))
		}
		for _, b := range daemonCaptureBodies(f, mt) {
			f.Add(append([]byte{byte(i)}, b...))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		fuzzBody(t, stepCreateTypes[int(data[0])%len(stepCreateTypes)], data[1:])
	})
}
