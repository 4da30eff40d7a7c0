package daemon

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
)

// fakeAuth is auth/none: the sender's uid travels in the frame, so tests
// can speak as any user without munged. Signing uses UID.
type fakeAuth struct{ UID uint32 }

func (a fakeAuth) Sign(ctx context.Context, f *codec.Frame, rUID uint32) error {
	return a.SignHash(ctx, f, rUID, authhash.Default)
}

func (a fakeAuth) SignHash(_ context.Context, f *codec.Frame, _ uint32, _ authhash.Type) error {
	f.Auth = codec.NoneAuth(a.UID, a.UID, "test")
	return nil
}

func (fakeAuth) Verify(_ context.Context, f *codec.Frame) (auth.Identity, error) {
	if f.Auth.PluginID != codec.AuthNone {
		return auth.Identity{}, slurmerr.Error{Code: slurmerr.ESLURM_AUTH_CRED_INVALID}
	}
	return auth.Identity{UID: f.Auth.UID, GID: f.Auth.GID}, nil
}

var credKey = jobcred.HMACKey{ID: "k", Secret: bytes.Repeat([]byte{0x5a}, 32)}

// fakeCtld records what reaches the controller and answers registrations
// with a TRES list.
type fakeCtld struct {
	addr string
	mu   sync.Mutex
	regs []msg.NodeRegistration
	epi  []msg.EpilogComplete
	// prologs are the REQUEST_COMPLETE_PROLOG received.
	prologs []msg.CompleteProlog
	got     chan msgtype.Type
}

func startCtld(t *testing.T) *fakeCtld {
	t.Helper()
	c := &fakeCtld{got: make(chan msgtype.Type, 100)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.addr = ln.Addr().String()
	s := &server.Server{Auth: fakeAuth{}, Codec: &codec.Codec{Bodies: msg.Registry()}, Log: quiet(),
		Handler: server.Mux{
			msgtype.MESSAGE_NODE_REGISTRATION_STATUS: server.HandlerFunc(func(_ context.Context, r *server.Request) *server.Response {
				c.mu.Lock()
				c.regs = append(c.regs, r.Body.(msg.NodeRegistration))
				c.mu.Unlock()
				c.got <- r.Header.MsgType
				return &server.Response{MsgType: msgtype.RESPONSE_NODE_REGISTRATION, Body: msg.NodeRegResponse{
					Tres: []msg.TresRec{{ID: 1, Type: msg.Str("cpu"), Count: 2}, {ID: 2, Type: msg.Str("mem"), Count: 1000}}}}
			}),
			msgtype.REQUEST_COMPLETE_PROLOG: server.HandlerFunc(func(_ context.Context, r *server.Request) *server.Response {
				c.mu.Lock()
				c.prologs = append(c.prologs, r.Body.(msg.CompleteProlog))
				c.mu.Unlock()
				c.got <- r.Header.MsgType
				return server.RC(0)
			}),
			msgtype.REQUEST_JOB_REQUEUE: server.HandlerFunc(func(_ context.Context, r *server.Request) *server.Response {
				c.got <- r.Header.MsgType
				return server.RC(0)
			}),
			msgtype.MESSAGE_EPILOG_COMPLETE: server.HandlerFunc(func(_ context.Context, r *server.Request) *server.Response {
				c.mu.Lock()
				c.epi = append(c.epi, r.Body.(msg.EpilogComplete))
				c.mu.Unlock()
				c.got <- r.Header.MsgType
				return nil // one-way
			}),
		}}
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return c
}

// wait returns the next message type the controller got.
func (c *fakeCtld) wait(t *testing.T) msgtype.Type {
	t.Helper()
	select {
	case mt := <-c.got:
		return mt
	case <-time.After(20 * time.Second):
		t.Fatal("nothing reached the controller")
		return 0
	}
}

// waitFor skips to the next message of type want.
func (c *fakeCtld) waitFor(t *testing.T, want msgtype.Type) {
	t.Helper()
	for c.wait(t) != want {
	}
}

func (c *fakeCtld) epilogs() []msg.EpilogComplete {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]msg.EpilogComplete(nil), c.epi...)
}

func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(discard{}, &slog.HandlerOptions{Level: slog.LevelError + 10}))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// fakeSteps is a Steps that records calls and pretends steps run.
type fakeSteps struct {
	mu         sync.Mutex
	running    []StepRef
	launched   []msg.StepID
	signals    []string
	terminated []uint32
}

func (f *fakeSteps) LaunchBatch(_ context.Context, req *msg.BatchJobLaunch, _ auth.Identity) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := msg.StepID{JobID: req.JobID, StepID: msg.StepIDBatch, StepHetComp: NoVal}
	f.launched = append(f.launched, id)
	f.running = append(f.running, StepRef{ID: id, Owner: req.UID})
	return nil
}

func (f *fakeSteps) LaunchTasks(_ context.Context, req *msg.LaunchTasksRequest, _ auth.Identity, _ codec.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.launched = append(f.launched, req.StepID)
	f.running = append(f.running, StepRef{ID: req.StepID, Owner: req.UID})
	return nil
}

func (f *fakeSteps) Signal(_ context.Context, job, step uint32, sig int, _ uint16, _ uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signals = append(f.signals, fmt.Sprintf("%d.%d:%d", job, int32(step), sig))
	return nil
}

func (f *fakeSteps) Terminate(_ context.Context, job uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.terminated = append(f.terminated, job)
	var keep []StepRef
	for _, s := range f.running {
		if s.ID.JobID != job {
			keep = append(keep, s)
		}
	}
	f.running = keep
	return nil
}

func (f *fakeSteps) Running() []StepRef {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]StepRef(nil), f.running...)
}

type rig struct {
	t     *testing.T
	d     *Daemon
	addr  string
	ctld  *fakeCtld
	spool string
	mu    sync.Mutex
	now   time.Time
	clock func() time.Time
}

func (r *rig) setNow(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = t
}

type rigOpts struct {
	steps Steps
	spool string
	ctld  *fakeCtld
	extra string
	// log and shutdown, when set, are the daemon's Log and Shutdown.
	log      *slog.Logger
	shutdown func()
}

// newRig starts a daemon for node n1 of a two-node slurm.conf whose
// controller is a fakeCtld, SlurmUser uid 500.
func newRig(t *testing.T, o rigOpts) *rig {
	t.Helper()
	if o.ctld == nil {
		o.ctld = startCtld(t)
	}
	if o.spool == "" {
		o.spool = t.TempDir()
	}
	if o.log == nil {
		o.log = quiet()
	}
	host, port, _ := net.SplitHostPort(o.ctld.addr)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, myPort, _ := net.SplitHostPort(ln.Addr().String())
	text := fmt.Sprintf(`ClusterName=test
SlurmctldHost=ctl(%s)
SlurmctldPort=%s
SlurmUser=500
SlurmdUser=root
SlurmdSpoolDir=%s
SlurmdParameters=config_overrides
MessageTimeout=5
%s
NodeName=n1 NodeHostname=h1 NodeAddr=127.0.0.1 Port=%s CPUs=4 RealMemory=1000
NodeName=n2 NodeHostname=h2 NodeAddr=127.0.0.1 Port=1 CPUs=4 RealMemory=1000
PartitionName=p Nodes=ALL Default=YES
`, host, port, o.spool, o.extra, myPort)
	c, err := conf.Parse("slurm.conf", []byte(text), conf.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := NewConfig(c, "/etc/slurm/slurm.conf", "n1", "h1")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jobcred.NewHMACVerifier(credKey)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ctld: o.ctld, spool: o.spool, now: time.Unix(1800000000, 0)}
	r.clock = func() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.now }
	d, err := New(Options{
		Config: cfg, Auth: fakeAuth{UID: 0}, CredVerifier: v, Steps: o.steps, Log: o.log,
		Clock: r.clock, Shutdown: o.shutdown,
		Hardware: func(string) (Hardware, error) {
			return Hardware{CPUs: 2, Boards: 1, Sockets: 1, Cores: 2, Threads: 1, RealMemory: 2048, TmpDisk: 100}, nil
		},
		Stats: func() Stats { return Stats{UpTime: 77, CPULoad: 12, FreeMem: 900} },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.d = d
	r.addr = ln.Addr().String()
	go d.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Shutdown(ctx)
	})
	return r
}

// call sends a request as uid and returns the reply (or an error when
// none came).
func (r *rig) call(uid uint32, mt msgtype.Type, body any) (codec.Frame, error) {
	r.t.Helper()
	var data []byte
	if body != nil {
		bc, ok := msg.Registry().Lookup(mt)
		if !ok {
			r.t.Fatalf("no codec for %v", mt)
		}
		w := pack.NewWriter(nil)
		if err := bc.Encode(w, codec.Current, body); err != nil {
			r.t.Fatal(err)
		}
		data = w.Bytes()
	}
	f := codec.NewFrame(mt, codec.NoneAuth(uid, uid, "client"), data)
	conn, err := net.Dial("tcp", r.addr)
	if err != nil {
		r.t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	cd := &codec.Codec{Bodies: msg.Registry()}
	if err := wire.WriteFrame(conn, cd, &f); err != nil {
		r.t.Fatal(err)
	}
	return wire.ReadFrame(conn, cd, 0)
}

// rc sends a request and returns the return code of its RC reply.
func (r *rig) rc(uid uint32, mt msgtype.Type, body any) int {
	r.t.Helper()
	f, err := r.call(uid, mt, body)
	if err != nil {
		r.t.Fatalf("%v: %v", mt, err)
	}
	switch f.Header.MsgType {
	case msgtype.RESPONSE_SLURM_RC, msgtype.RESPONSE_SLURM_RC_MSG:
		return int(int32(binary.BigEndian.Uint32(f.Body)))
	}
	r.t.Fatalf("%v answered with %v", mt, f.Header.MsgType)
	return 0
}

// cred makes a credential for job.step, uid 1000, on hosts, created at
// ctime and signed with credKey (or signer when given).
func cred(t *testing.T, job, step uint32, hosts string, ctime time.Time, signer jobcred.Signer) *jobcred.Credential {
	t.Helper()
	if signer == nil {
		s, err := jobcred.NewHMACSigner(credKey)
		if err != nil {
			t.Fatal(err)
		}
		signer = s
	}
	body := jobcred.Body{
		StepID: jobcred.StepID{JobID: job, StepID: step, StepHetComp: NoVal}, UID: 1000, GID: 1000,
		JobCoreSpec: 0xfffe, StepHostlist: jobcred.Str(hosts), JobHostlist: jobcred.Str(hosts),
		JobNHosts: uint32(strings.Count(hosts, ",") + 1), JobNTasks: 1,
	}
	if strings.Contains(hosts, "[") {
		body.JobNHosts = 2
	}
	c, err := jobcred.Create(context.Background(), body, jobcred.Version2205, signer, ctime)
	if err != nil {
		t.Fatal(err)
	}
	// What travels is what the daemon decodes: round-trip the bytes.
	d, err := jobcred.Decode(c.Bytes(), jobcred.Version2205)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func launchReq(c *jobcred.Credential, uid uint32, nodes string) msg.LaunchTasksRequest {
	b := c.Body
	return msg.LaunchTasksRequest{
		StepID: msg.StepID{JobID: b.StepID.JobID, StepID: b.StepID.StepID, StepHetComp: b.StepID.StepHetComp},
		UID:    uid, GID: 1000, Cred: c, NNodes: 1, GlobalTaskIDs: [][]uint32{{0}},
		HetJobNodeOffset: NoVal, HetJobID: NoVal, HetJobNNodes: NoVal, HetJobNTasks: NoVal,
		SwitchJobinfo: msg.SwitchNone, SelectJobinfo: msg.SelectConsTres,
		Argv: []msg.NullString{msg.Str("hostname")}, CompleteNodelist: msg.Str(nodes),
	}
}

func killReq(job uint32, at time.Time) msg.KillJob {
	return msg.KillJob{StepID: msg.StepID{JobID: job, StepID: NoVal, StepHetComp: NoVal},
		HetJobID: NoVal, JobState: msg.JobComplete, JobUID: 1000, JobGID: 1000,
		Nodes: msg.Str("n1"), SelectJobinfo: msg.SelectConsTres, StartTime: at.Unix() - 10, Time: at.Unix()}
}
