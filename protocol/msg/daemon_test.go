package msg

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/pcap"
)

// Property tests, hostile input and fuzz targets for the daemon bodies
// (daemon_*.go). A generated value encodes, decodes to the same value,
// re-encodes to the same bytes, and no strict prefix of its bytes decodes.

var daemonBodyTypes = map[msgtype.Type]any{
	msgtype.REQUEST_NODE_REGISTRATION_STATUS: Empty{},
	msgtype.REQUEST_HEALTH_CHECK:             Empty{},
	msgtype.REQUEST_ACCT_GATHER_UPDATE:       Empty{},
	msgtype.REQUEST_DAEMON_STATUS:            Empty{},
	msgtype.MESSAGE_NODE_REGISTRATION_STATUS: NodeRegistration{},
	msgtype.RESPONSE_NODE_REGISTRATION:       NodeRegResponse{},
	msgtype.RESPONSE_PING_SLURMD:             PingSlurmdResponse{},
	msgtype.RESPONSE_ACCT_GATHER_UPDATE:      AcctGatherNodeResponse{},
	msgtype.REQUEST_ACCT_GATHER_ENERGY:       AcctGatherEnergyRequest{},
	msgtype.REQUEST_BATCH_JOB_LAUNCH:         BatchJobLaunch{},
	msgtype.REQUEST_LAUNCH_TASKS:             LaunchTasksRequest{},
	msgtype.REQUEST_LAUNCH_PROLOG:            PrologLaunch{},
	msgtype.REQUEST_REATTACH_TASKS:           ReattachTasks{},
	msgtype.REQUEST_TERMINATE_JOB:            KillJob{},
	msgtype.REQUEST_KILL_TIMELIMIT:           KillJob{},
	msgtype.REQUEST_KILL_PREEMPTED:           KillJob{},
	msgtype.REQUEST_ABORT_JOB:                KillJob{},
	msgtype.MESSAGE_EPILOG_COMPLETE:          EpilogComplete{},
	msgtype.REQUEST_SIGNAL_TASKS:             SignalTasks{},
	msgtype.REQUEST_TERMINATE_TASKS:          SignalTasks{},
	msgtype.REQUEST_COMPLETE_BATCH_SCRIPT:    CompleteBatchScript{},
	msgtype.REQUEST_STEP_COMPLETE:            StepComplete{},
	msgtype.REQUEST_COMPLETE_PROLOG:          CompleteProlog{},
	msgtype.RESPONSE_LAUNCH_TASKS:            LaunchTasksResponse{},
	msgtype.MESSAGE_TASK_EXIT:                TaskExit{},
	msgtype.RESPONSE_REATTACH_TASKS:          ReattachTasksResponse{},
}

// testCreds are credentials in their decoded form (so that a decode of their
// bytes is DeepEqual to them): one signed, one unsigned.
var testCreds = sync.OnceValue(func() []*jobcred.Credential {
	body := jobcred.Body{
		StepID: jobcred.StepID{JobID: 7, StepID: 0, StepHetComp: pack.NoVal}, UID: 1000, GID: 100,
		PwName: jobcred.Str("alice"), GIDs: []uint32{100}, GrNames: []string{"users"},
		JobCoreSpec: pack.NoVal16, JobPartition: jobcred.Str("debug"),
		StepHostlist: jobcred.Str("n[1-2]"), JobHostlist: jobcred.Str("n[1-2]"), JobNHosts: 2, JobNTasks: 2,
		JobCoreBitmap: jobcred.BitmapOf(32, 0, 16), StepCoreBitmap: jobcred.BitmapOf(32, 0, 16),
		SocketGroups: []jobcred.SocketGroup{{CoresPerSocket: 16, SocketsPerNode: 1, RepCount: 2}},
		CPUGroups:    []jobcred.CPUGroup{{CPUs: 1, Reps: 2}},
		JobMem:       []jobcred.MemGroup{{MB: 1024, Reps: 2}}, StepMem: []jobcred.MemGroup{{MB: 512, Reps: 2}},
	}
	signer, err := jobcred.NewHMACSigner(jobcred.HMACKey{ID: "k1", Secret: bytes.Repeat([]byte{0xa5}, 32)})
	if err != nil {
		panic(err)
	}
	var out []*jobcred.Credential
	for _, s := range []jobcred.Signer{signer, nil} {
		c, err := jobcred.Create(context.Background(), body, jobcred.Version2205, s, time.Unix(1795240390, 0))
		if err != nil {
			panic(err)
		}
		d, err := jobcred.Decode(c.Bytes(), jobcred.Version2205)
		if err != nil {
			panic(err)
		}
		out = append(out, d)
	}
	return out
})

// dgen is gen (small_test.go) extended to the daemon bodies' field types:
// credentials, jobacct, addresses, raw blobs and nested slices.
func dgen(r *rand.Rand, v reflect.Value, nullable bool, depth int) {
	switch x := v.Addr().Interface().(type) {
	case *NullString, *HexBitmap, *SelectPlugin:
		gen(r, v, nullable, depth)
		return
	case **jobcred.Credential:
		creds := testCreds()
		*x = creds[r.IntN(len(creds))]
		if r.IntN(4) == 0 {
			*x = nil
		}
		return
	case **JobAcct:
		*x = nil
		if r.IntN(2) == 0 {
			*x = &JobAcct{}
			dgen(r, reflect.ValueOf(*x).Elem(), false, depth+1)
		}
		return
	case *codec.Addr:
		switch r.IntN(3) {
		case 0:
			*x = codec.Addr{}
		case 1:
			*x = codec.Addr{Family: codec.AFInet, IP: [16]byte{10, 0, 0, byte(r.IntN(256))}, Port: uint16(r.Uint32())}
		default:
			*x = codec.Addr{Family: codec.AFInet6, Port: uint16(r.Uint32())}
			for i := range x.IP {
				x.IP[i] = byte(r.Uint32())
			}
		}
		return
	case *[]byte:
		*x = nil
		if n := r.IntN(6); n > 0 {
			*x = make([]byte, n)
			for i := range *x {
				(*x)[i] = byte(r.Uint32())
			}
		}
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			dgen(r, v.Field(i), t.Field(i).Tag.Get("slurm") == "nullable", depth+1)
		}
	case reflect.Slice:
		n := r.IntN(4)
		if nullable {
			switch r.IntN(3) {
			case 0:
				v.SetZero()
				return
			case 1:
				v.Set(reflect.MakeSlice(v.Type(), 0, 0))
				return
			}
			n = 1 + r.IntN(3)
		}
		if n == 0 {
			v.SetZero()
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			dgen(r, s.Index(i), false, depth+1)
		}
		v.Set(s)
	default:
		gen(r, v, nullable, depth)
	}
}

func resizeTo[T any](s []T, n int) []T {
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	copy(out, s)
	return out
}

func fixGres(r *rand.Rand, l []GresJobAlloc) {
	for i := range l {
		g := &l[i]
		g.NodeCnt = uint32(r.IntN(3))
		g.CntNodeAlloc, g.BitAlloc = nil, nil
		if g.HasCntNodeAlloc && g.NodeCnt > 0 {
			g.CntNodeAlloc = make([]uint64, g.NodeCnt)
			for j := range g.CntNodeAlloc {
				g.CntNodeAlloc[j] = r.Uint64()
			}
		}
		if g.HasBitAlloc && g.NodeCnt > 0 {
			g.BitAlloc = make([]HexBitmap, g.NodeCnt)
			for j := range g.BitAlloc {
				g.BitAlloc[j] = BitmapOf(1+r.IntN(9), r.IntN(9))
			}
		}
	}
}

// daemonFixup makes a generated body consistent: counts that travel twice
// agree, required credentials are present, plugin ids are supported.
func daemonFixup(r *rand.Rand, v reflect.Value) {
	cred := func(c **jobcred.Credential) {
		if *c == nil {
			*c = testCreds()[0]
		}
	}
	switch b := v.Addr().Interface().(type) {
	case *BatchJobLaunch:
		cred(&b.Cred)
		b.CPUCountReps = resizeTo(b.CPUCountReps, len(b.CPUsPerNode))
	case *LaunchTasksRequest:
		cred(&b.Cred)
		b.NNodes = uint32(len(b.GlobalTaskIDs))
		if b.HetJobNNodes = uint32(len(b.HetJobTIDs)); r.IntN(2) == 0 {
			b.HetJobNNodes, b.HetJobTIDs = pack.NoVal, nil
		}
		if b.HetJobNTasks = uint32(len(b.HetJobTIDOffsets)); r.IntN(2) == 0 {
			b.HetJobNTasks, b.HetJobTIDOffsets = pack.NoVal, nil
		}
		b.SwitchJobinfo = SwitchNone
	case *PrologLaunch:
		cred(&b.Cred)
		fixGres(r, b.JobGres)
	case *ReattachTasks:
		cred(&b.Cred)
	case *KillJob:
		fixGres(r, b.JobGres)
	case *LaunchTasksResponse:
		b.TaskIDs = resizeTo(b.TaskIDs, len(b.LocalPIDs))
	case *ReattachTasksResponse:
		b.LocalPIDs = resizeTo(b.LocalPIDs, len(b.GTIDs))
		b.Executables = resizeTo(b.Executables, len(b.GTIDs))
		for i := range b.Executables {
			b.Executables[i] = Str("/bin/x")
		}
	}
}

func genDaemonBody(r *rand.Rand, mt msgtype.Type) any {
	v := reflect.New(reflect.TypeOf(daemonBodyTypes[mt])).Elem()
	dgen(r, v, false, 0)
	daemonFixup(r, v)
	return v.Interface()
}

func TestDaemonPropertyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	iters := 300
	if testing.Short() {
		iters = 30
	}
	for mt := range daemonBodyTypes {
		t.Run(mt.String(), func(t *testing.T) {
			for i := 0; i < iters; i++ {
				checkRoundTrip(t, mt, genDaemonBody(r, mt), 8)
			}
		})
	}
}

func TestDaemonVersions(t *testing.T) {
	for mt, proto := range daemonBodyTypes {
		c := lookup(t, mt)
		var w pack.Writer
		if err := c.Encode(&w, codec.Version2205, 42); !errors.Is(err, codec.ErrEncode) {
			t.Errorf("%v: encoding an int: %v", mt, err)
		}
		for _, v := range []codec.Version{codec.Version2011, codec.Version2108, codec.Version2302, codec.Version2405, codec.Version2511} {
			if err := c.Encode(&w, v, proto); !errors.Is(err, codec.ErrVersion) {
				t.Errorf("%v: encoding at %v: %v", mt, v, err)
			}
			if b, err := c.Decode(pack.NewReader(make([]byte, 64)), v); !errors.Is(err, codec.ErrVersion) || b != nil {
				t.Errorf("%v: decoding at %v: %v", mt, v, err)
			}
		}
	}
}

func TestDaemonNullVersusEmpty(t *testing.T) {
	for _, name := range []NullString{{}, Str("")} {
		e := EpilogComplete{JobID: 5, NodeName: name}
		b := encodeBody(t, msgtype.MESSAGE_EPILOG_COMPLETE, e)
		want := []byte{0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0}
		if name.Valid {
			want = append(want[:8], 0, 0, 0, 1, 0)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%#v packs as %x, want %x", name, b, want)
		}
		got, err := decodeExact(msgtype.MESSAGE_EPILOG_COMPLETE, b)
		if err != nil || got.(EpilogComplete) != e {
			t.Errorf("%#v: decoded %#v, %v", name, got, err)
		}
	}
	// NO_VAL TRES list versus an empty one.
	b := encodeBody(t, msgtype.RESPONSE_NODE_REGISTRATION, NodeRegResponse{})
	if !bytes.Equal(b, []byte{0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0}) {
		t.Errorf("no TRES list: %x", b)
	}
	b = encodeBody(t, msgtype.RESPONSE_NODE_REGISTRATION, NodeRegResponse{Tres: []TresRec{}})
	if !bytes.Equal(b, []byte{0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("empty TRES list: %x", b)
	}
	// No jobacct is one 0 byte.
	b = encodeBody(t, msgtype.REQUEST_STEP_COMPLETE, StepComplete{})
	if len(b) != 12+12+1 || b[24] != 0 {
		t.Errorf("step complete without jobacct: %x", b)
	}
}

func TestDaemonRegistrationBytes(t *testing.T) {
	// The GRES blob's size appears twice; an empty blob is the size alone.
	reg := NodeRegistration{NodeName: Str("n1"), GresInfo: []byte{0, 1, 0, 0}}
	b := encodeBody(t, msgtype.MESSAGE_NODE_REGISTRATION_STATUS, reg)
	if !bytes.Contains(b, []byte{0, 0, 0, 4, 0, 0, 0, 4, 0, 1, 0, 0}) {
		t.Errorf("GRES blob not packed twice-counted: %x", b)
	}
	reg.GresInfo = []byte{}
	b2 := encodeBody(t, msgtype.MESSAGE_NODE_REGISTRATION_STATUS, reg)
	if len(b2) != len(b)-8 {
		t.Errorf("empty GRES blob: %d bytes, with blob %d", len(b2), len(b))
	}
	// Steps are pack_step_id triples after job_count.
	reg = NodeRegistration{Steps: []StepID{{7, StepIDBatch, pack.NoVal}, {7, StepIDExtern, pack.NoVal}}}
	got, err := decodeExact(msgtype.MESSAGE_NODE_REGISTRATION_STATUS, encodeBody(t, msgtype.MESSAGE_NODE_REGISTRATION_STATUS, reg))
	if err != nil || !reflect.DeepEqual(got, reg) {
		t.Errorf("steps: %#v, %v", got, err)
	}
}

// TestDaemonCredentialKept: a credential's bytes are carried unchanged, and
// they sit where Slurm puts them (after u16 cred_version for batch launch).
func TestDaemonCredentialKept(t *testing.T) {
	c := testCreds()[0]
	b := encodeBody(t, msgtype.REQUEST_BATCH_JOB_LAUNCH, BatchJobLaunch{Cred: c, SelectJobinfo: SelectConsTres})
	i := bytes.Index(b, c.Bytes())
	if i < 2 || b[i-2] != 0x26 || b[i-1] != 0 {
		t.Fatalf("credential at %d not preceded by cred_version 0x2600", i)
	}
	v, err := decodeExact(msgtype.REQUEST_BATCH_JOB_LAUNCH, b)
	if err != nil {
		t.Fatal(err)
	}
	got := v.(BatchJobLaunch).Cred
	if !bytes.Equal(got.Signed(), c.Signed()) || !bytes.Equal(got.Signature, c.Signature) {
		t.Errorf("credential bytes changed")
	}
	// The kill message puts a u8 1 in front and no cred_version.
	b = encodeBody(t, msgtype.REQUEST_TERMINATE_JOB, KillJob{Cred: testCreds()[1], SelectJobinfo: SelectConsTres})
	if b[0] != 1 || !bytes.HasPrefix(b[1:], testCreds()[1].Bytes()) {
		t.Errorf("kill credential: %x", b[:8])
	}
	b = encodeBody(t, msgtype.REQUEST_TERMINATE_JOB, KillJob{SelectJobinfo: SelectConsTres})
	if b[0] != 0 {
		t.Errorf("kill without credential: %x", b[:8])
	}
}

// mutateBody encodes body and lets f change the bytes.
func mutateBody(t *testing.T, mt msgtype.Type, body any, f func([]byte) []byte) []byte {
	t.Helper()
	return f(bytes.Clone(encodeBody(t, mt, body)))
}

func put32(b []byte, off int, v uint32) []byte {
	b[off], b[off+1], b[off+2], b[off+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	return b
}

func TestDaemonBadInput(t *testing.T) {
	cred := testCreds()[0]
	batch := BatchJobLaunch{Cred: cred, SelectJobinfo: SelectConsTres, Argv: []NullString{Str("a")}}
	batchBytes := encodeBody(t, msgtype.REQUEST_BATCH_JOB_LAUNCH, batch)
	// Offset of argc: the fixed prefix up to std_out, all strings NULL.
	argc := 4*4 + 4 + 4 + 4 + 4 + 8 + 2 + 4 + 4 + 4 + 4 + 2*4 + 4 + 8*4
	launch := LaunchTasksRequest{Cred: cred, NNodes: 1, GlobalTaskIDs: [][]uint32{{0}}, HetJobNNodes: pack.NoVal,
		HetJobNTasks: pack.NoVal, SwitchJobinfo: SwitchNone, SelectJobinfo: SelectConsTres, Argv: []NullString{Str("hostname")}}
	launchBytes := encodeBody(t, msgtype.REQUEST_LAUNCH_TASKS, launch)
	credAt := bytes.Index(launchBytes, cred.Bytes())
	afterCred := credAt + len(cred.Bytes())
	nnodesAt := 12 + 14*4 + 4*2 + 8 + 8 // step id, 14 u32-sized fields, 4 x u16, two u64

	cases := []struct {
		name string
		mt   msgtype.Type
		data []byte
	}{
		{"argc disagrees with argv", msgtype.REQUEST_BATCH_JOB_LAUNCH, put32(bytes.Clone(batchBytes), argc, 2)},
		{"huge argv count", msgtype.REQUEST_BATCH_JOB_LAUNCH, put32(put32(bytes.Clone(batchBytes), argc, 0x7fffffff), argc+4, 0x7fffffff)},
		{"corrupt credential", msgtype.REQUEST_BATCH_JOB_LAUNCH, mutateBody(t, msgtype.REQUEST_BATCH_JOB_LAUNCH, batch, func(b []byte) []byte {
			i := bytes.Index(b, cred.Bytes())
			return put32(b, i+12+8, 0xfffffff0) // pw_name's length, after step id, uid and gid
		})},
		{"byte after the body", msgtype.REQUEST_BATCH_JOB_LAUNCH, append(bytes.Clone(batchBytes), 0)},
		{"cred version 0x2500", msgtype.REQUEST_BATCH_JOB_LAUNCH, mutateBody(t, msgtype.REQUEST_BATCH_JOB_LAUNCH, batch, func(b []byte) []byte {
			i := bytes.Index(b, cred.Bytes())
			b[i-2] = 0x25
			return b
		})},
		{"nnodes NO_VAL", msgtype.REQUEST_LAUNCH_TASKS, put32(bytes.Clone(launchBytes), nnodesAt, pack.NoVal)},
		{"nnodes beyond the body", msgtype.REQUEST_LAUNCH_TASKS, put32(bytes.Clone(launchBytes), nnodesAt, 1<<24)},
		{"tasks_to_launch disagrees", msgtype.REQUEST_LAUNCH_TASKS, mutateBody(t, msgtype.REQUEST_LAUNCH_TASKS, launch, func(b []byte) []byte {
			b[afterCred+1] = 2
			return b
		})},
		{"resp ports NO_VAL16", msgtype.REQUEST_LAUNCH_TASKS, mutateBody(t, msgtype.REQUEST_LAUNCH_TASKS, launch, func(b []byte) []byte {
			b[afterCred+10], b[afterCred+11] = 0xff, 0xfe
			return b
		})},
		{"het nnodes huge", msgtype.REQUEST_LAUNCH_TASKS, put32(bytes.Clone(launchBytes), 12+4+4+4+4+4+4, 0x10000000)},
		{"job options tag", msgtype.REQUEST_LAUNCH_TASKS, mutateBody(t, msgtype.REQUEST_LAUNCH_TASKS, launch, func(b []byte) []byte {
			i := bytes.Index(b, []byte("job_options"))
			b[i] = 'J'
			return b
		})},
		{"switch plugin", msgtype.REQUEST_LAUNCH_TASKS, mutateBody(t, msgtype.REQUEST_LAUNCH_TASKS, launch, func(b []byte) []byte {
			i := bytes.Index(b, []byte("\x00\x00\x00\x0cjob_options"))
			return put32(b, i-4, 101)
		})},
		{"kill cred flag 2", msgtype.REQUEST_TERMINATE_JOB, mutateBody(t, msgtype.REQUEST_TERMINATE_JOB, KillJob{SelectJobinfo: SelectConsTres}, func(b []byte) []byte {
			b[0] = 2
			return b
		})},
		{"kill cred flag without cred", msgtype.REQUEST_TERMINATE_JOB, mutateBody(t, msgtype.REQUEST_TERMINATE_JOB, KillJob{SelectJobinfo: SelectConsTres}, func(b []byte) []byte {
			b[0] = 1
			return b
		})},
		{"GRES magic", msgtype.REQUEST_TERMINATE_JOB, mutateBody(t, msgtype.REQUEST_TERMINATE_JOB,
			KillJob{SelectJobinfo: SelectConsTres, JobGres: []GresJobAlloc{{NodeCnt: 1}}}, func(b []byte) []byte {
				return put32(b, 1+4+4+4+2, 0x12345678)
			})},
		{"GRES records beyond the body", msgtype.REQUEST_TERMINATE_JOB, mutateBody(t, msgtype.REQUEST_TERMINATE_JOB,
			KillJob{SelectJobinfo: SelectConsTres}, func(b []byte) []byte {
				b[1+4+4+4], b[1+4+4+4+1] = 0xff, 0xff
				return b
			})},
		{"GRES counts disagree", msgtype.REQUEST_TERMINATE_JOB, mutateBody(t, msgtype.REQUEST_TERMINATE_JOB,
			KillJob{SelectJobinfo: SelectConsTres, JobGres: []GresJobAlloc{{NodeCnt: 1, HasCntNodeAlloc: true, CntNodeAlloc: []uint64{3}}}}, func(b []byte) []byte {
				return put32(b, 1+4+4+4+2+8, 2)
			})},
		{"jobacct flag 2", msgtype.REQUEST_STEP_COMPLETE, mutateBody(t, msgtype.REQUEST_STEP_COMPLETE, StepComplete{}, func(b []byte) []byte {
			b[24] = 2
			return b
		})},
		{"jobacct truncated", msgtype.REQUEST_COMPLETE_BATCH_SCRIPT, mutateBody(t, msgtype.REQUEST_COMPLETE_BATCH_SCRIPT, CompleteBatchScript{}, func(b []byte) []byte {
			b[0] = 1
			return b
		})},
		{"task exit count", msgtype.MESSAGE_TASK_EXIT, mutateBody(t, msgtype.MESSAGE_TASK_EXIT, TaskExit{TaskIDs: []uint32{1}}, func(b []byte) []byte {
			return put32(b, 4, 2)
		})},
		{"launch response count", msgtype.RESPONSE_LAUNCH_TASKS, mutateBody(t, msgtype.RESPONSE_LAUNCH_TASKS, LaunchTasksResponse{LocalPIDs: []uint32{9}, TaskIDs: []uint32{0}}, func(b []byte) []byte {
			return put32(b, 12+4+4, 0)
		})},
		{"registration GRES sizes", msgtype.MESSAGE_NODE_REGISTRATION_STATUS, mutateBody(t, msgtype.MESSAGE_NODE_REGISTRATION_STATUS, NodeRegistration{GresInfo: []byte{1, 2, 3, 4}}, func(b []byte) []byte {
			i := bytes.Index(b, []byte{0, 0, 0, 4, 0, 0, 0, 4, 1, 2, 3, 4})
			return put32(b, i, 3)
		})},
		{"registration step count", msgtype.MESSAGE_NODE_REGISTRATION_STATUS, mutateBody(t, msgtype.MESSAGE_NODE_REGISTRATION_STATUS, NodeRegistration{}, func(b []byte) []byte {
			return put32(b, 8+8+4+7*4+5*2+8+4*4+8, 0xfffffff0)
		})},
		{"energy sensors beyond the body", msgtype.RESPONSE_ACCT_GATHER_UPDATE, []byte{0, 0, 0, 0, 0xff, 0xff}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decodeExact(tc.mt, tc.data)
			if err == nil {
				t.Fatalf("decoded: %#v", v)
			}
			if v != nil {
				t.Fatalf("error %v with a body", err)
			}
			if b, err2 := lookup(t, tc.mt).Decode(pack.NewReader(tc.data), codec.Version2205); err2 == nil {
				// Every fault here is inside the body (a credential body
				// checks its own end), so Decode alone must fail too.
				t.Fatalf("codec decode without Done succeeded: %#v", b)
			}
		})
	}
}

func TestDaemonEncodeErrors(t *testing.T) {
	cred := testCreds()[0]
	cases := []struct {
		name string
		mt   msgtype.Type
		body any
	}{
		{"batch without credential", msgtype.REQUEST_BATCH_JOB_LAUNCH, BatchJobLaunch{SelectJobinfo: SelectConsTres}},
		{"cpu group lengths", msgtype.REQUEST_BATCH_JOB_LAUNCH, BatchJobLaunch{Cred: cred, SelectJobinfo: SelectConsTres, CPUsPerNode: []uint16{1}}},
		{"launch without credential", msgtype.REQUEST_LAUNCH_TASKS, LaunchTasksRequest{HetJobNNodes: pack.NoVal, HetJobNTasks: pack.NoVal, SwitchJobinfo: SwitchNone, SelectJobinfo: SelectConsTres}},
		{"nnodes vs task ids", msgtype.REQUEST_LAUNCH_TASKS, LaunchTasksRequest{Cred: cred, NNodes: 2, GlobalTaskIDs: [][]uint32{{0}},
			HetJobNNodes: pack.NoVal, HetJobNTasks: pack.NoVal, SwitchJobinfo: SwitchNone, SelectJobinfo: SelectConsTres}},
		{"het tids with NO_VAL count", msgtype.REQUEST_LAUNCH_TASKS, LaunchTasksRequest{Cred: cred, HetJobNNodes: pack.NoVal, HetJobTIDs: [][]uint32{{1}},
			HetJobNTasks: pack.NoVal, SwitchJobinfo: SwitchNone, SelectJobinfo: SelectConsTres}},
		{"switch plugin", msgtype.REQUEST_LAUNCH_TASKS, LaunchTasksRequest{Cred: cred, HetJobNNodes: pack.NoVal, HetJobNTasks: pack.NoVal, SelectJobinfo: SelectConsTres}},
		{"too many tasks on a node", msgtype.REQUEST_LAUNCH_TASKS, LaunchTasksRequest{Cred: cred, NNodes: 1, GlobalTaskIDs: [][]uint32{make([]uint32, 70000)},
			HetJobNNodes: pack.NoVal, HetJobNTasks: pack.NoVal, SwitchJobinfo: SwitchNone, SelectJobinfo: SelectConsTres}},
		{"prolog without credential", msgtype.REQUEST_LAUNCH_PROLOG, PrologLaunch{}},
		{"GRES counts", msgtype.REQUEST_TERMINATE_JOB, KillJob{SelectJobinfo: SelectConsTres, JobGres: []GresJobAlloc{{NodeCnt: 2, HasCntNodeAlloc: true, CntNodeAlloc: []uint64{1}}}}},
		{"GRES bitmaps unflagged", msgtype.REQUEST_TERMINATE_JOB, KillJob{SelectJobinfo: SelectConsTres, JobGres: []GresJobAlloc{{NodeCnt: 1, BitAlloc: []HexBitmap{NullBitmap}}}}},
		{"pids vs task ids", msgtype.RESPONSE_LAUNCH_TASKS, LaunchTasksResponse{LocalPIDs: []uint32{1}}},
		{"reattach lengths", msgtype.RESPONSE_REATTACH_TASKS, ReattachTasksResponse{GTIDs: []uint32{1}, LocalPIDs: []uint32{1}}},
		{"too many ports", msgtype.REQUEST_REATTACH_TASKS, ReattachTasks{Cred: cred, RespPorts: make([]uint16, 0xfffe)}},
	}
	for _, tc := range cases {
		var w pack.Writer
		if err := lookup(t, tc.mt).Encode(&w, codec.Version2205, tc.body); !errors.Is(err, codec.ErrEncode) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// ---------------------------------------------------------------------------
// Fuzz targets, one per family: the first byte picks the message type.

// daemonCaptureBodies returns the bodies of the frames of type mt in the
// pcaps of testsuite/captures.
func daemonCaptureBodies(tb testing.TB, mt msgtype.Type) [][]byte {
	files, _ := filepath.Glob("../../testsuite/captures/testdata/*.pcap")
	var out [][]byte
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		conns, err := pcap.ReadConns(f)
		f.Close()
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		for _, c := range conns {
			for _, u := range pcap.SlurmUnits(c, codec.Default) {
				if u.Kind == pcap.UnitRPC && u.Frame.Header.MsgType == mt {
					out = append(out, u.Frame.Body)
				}
			}
		}
	}
	return out
}

func fuzzDaemonFamily(f *testing.F, types ...msgtype.Type) {
	r := rand.New(rand.NewPCG(uint64(types[0]), 11))
	for i, mt := range types {
		for k := 0; k < 6; k++ {
			f.Add(append([]byte{byte(i)}, encodeBody(f, mt, genDaemonBody(r, mt))...))
		}
		for _, b := range daemonCaptureBodies(f, mt) {
			f.Add(append([]byte{byte(i)}, b...))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		fuzzBody(t, types[int(data[0])%len(types)], data[1:])
	})
}

func FuzzDaemonRegister(f *testing.F) {
	fuzzDaemonFamily(f, msgtype.MESSAGE_NODE_REGISTRATION_STATUS, msgtype.RESPONSE_NODE_REGISTRATION,
		msgtype.RESPONSE_PING_SLURMD, msgtype.RESPONSE_ACCT_GATHER_UPDATE)
}

func FuzzDaemonLaunch(f *testing.F) {
	fuzzDaemonFamily(f, msgtype.REQUEST_BATCH_JOB_LAUNCH, msgtype.REQUEST_LAUNCH_TASKS,
		msgtype.REQUEST_LAUNCH_PROLOG, msgtype.REQUEST_REATTACH_TASKS)
}

func FuzzDaemonKill(f *testing.F) {
	fuzzDaemonFamily(f, msgtype.REQUEST_TERMINATE_JOB, msgtype.MESSAGE_EPILOG_COMPLETE, msgtype.REQUEST_SIGNAL_TASKS)
}

func FuzzDaemonComplete(f *testing.F) {
	fuzzDaemonFamily(f, msgtype.REQUEST_COMPLETE_BATCH_SCRIPT, msgtype.REQUEST_STEP_COMPLETE, msgtype.REQUEST_COMPLETE_PROLOG)
}

func FuzzDaemonTasks(f *testing.F) {
	fuzzDaemonFamily(f, msgtype.RESPONSE_LAUNCH_TASKS, msgtype.MESSAGE_TASK_EXIT, msgtype.RESPONSE_REATTACH_TASKS)
}
