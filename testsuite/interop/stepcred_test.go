package interop

// A real slurmd 22.05 accepts a step credential that goslurm signed: the
// test plays slurmctld's part (credential body + cred/munge signature on
// the cluster's munged) and srun's part (REQUEST_LAUNCH_TASKS, the I/O
// listener that checks the I/O key, the response listener), and the real
// slurmd runs the task and streams its output back. A credential with one
// flipped byte and a replayed credential are both refused with the codes
// real slurmd uses.
//
// The job does not exist in the controller; slurmd does not ask it
// (credentials exist precisely so it need not), and the step's completion
// report, which the controller rejects, comes after what is checked here.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/jobcred/mungesign"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/pcap"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

func TestRealSlurmdAcceptsOurStepCredential(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	const cpus = 2
	c := realslurm.Start(t, realslurm.Options{Nodes: 1, CPUs: cpus, RealMemory: 1000})
	node := c.Nodes[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	tmpl := capturedLaunch(t)
	signer := &mungesign.Signer{Client: c.Munge.Client(), SlurmdUID: c.SlurmUserUID}
	slurmd := &client.Client{
		Controllers: []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(node.Port))},
		Auth:        &auth.Munge{Client: c.Munge.Client()},
		Sweeps:      1,
	}
	me := currentIDs(t)
	workDir := t.TempDir()

	// Job ids far above FirstJobId so they can never collide with a job the
	// controller hands out.
	jobID := uint32(4_000_000)
	newCred := func(jobID uint32, now time.Time) *jobcred.Credential {
		body := jobcred.Body{
			StepID:  jobcred.StepID{JobID: jobID, StepID: 0, StepHetComp: pack.NoVal},
			UID:     me.uid,
			GID:     me.gid,
			PwName:  jobcred.Str(me.name),
			PwDir:   jobcred.Str(me.home),
			PwShell: jobcred.Str("/bin/sh"),
			// slurmstepd refuses a credential without the user's groups
			// ("No gids given in the cred"): slurmctld always sends them
			// unless LaunchParameters=disable_send_gids.
			GIDs:           me.gids,
			GrNames:        me.groups,
			JobCoreSpec:    0xfffe, // NO_VAL16
			JobPartition:   jobcred.Str("debug"),
			StepHostlist:   jobcred.Str(node.Name),
			JobCoreBitmap:  jobcred.BitmapOf(cpus, 0),
			StepCoreBitmap: jobcred.BitmapOf(cpus, 0),
			// realslurm's node line gives only CPUs=2, which Slurm reads as
			// two one-core sockets.
			SocketGroups: []jobcred.SocketGroup{{CoresPerSocket: 1, SocketsPerNode: cpus, RepCount: 1}},
			CPUGroups:    []jobcred.CPUGroup{{CPUs: cpus, Reps: 1}},
			JobNHosts:    1,
			JobNTasks:    1,
			JobHostlist:  jobcred.Str(node.Name),
			JobMem:       []jobcred.MemGroup{{MB: 1000, Reps: 1}},
			StepMem:      []jobcred.MemGroup{{MB: 1000, Reps: 1}},
		}
		cred, err := jobcred.Create(ctx, body, jobcred.Version2205, signer, now)
		if err != nil {
			t.Fatalf("signing the credential: %v", err)
		}
		return cred
	}

	launch := func(cred *jobcred.Credential, marker string) (*launchListeners, error) {
		l := newLaunchListeners(t, slurmd.Auth)
		req := tmpl
		req.StepID = msg.StepID{JobID: cred.Body.StepID.JobID, StepID: 0, StepHetComp: pack.NoVal}
		req.UID, req.GID = me.uid, me.gid
		req.UserName = msg.Str(me.name)
		req.GIDs = nil
		req.Cred = cred
		req.NNodes, req.NTasks = 1, 1
		req.GlobalTaskIDs = [][]uint32{{0}}
		req.CompleteNodelist = msg.Str(node.Name)
		req.AliasList = msg.NullString{}
		req.NodeCPUs = cpus
		req.JobMemLim, req.StepMemLim = 1000, 1000
		req.RespPorts = []uint16{l.respPort()}
		req.IOPorts = []uint16{l.ioPort()}
		req.Cwd = msg.Str(workDir)
		req.Argv = []msg.NullString{msg.Str("/bin/echo"), msg.Str(marker)}
		// slurmstepd picks the MPI plugin from SLURM_MPI_TYPE, which srun
		// always exports.
		req.MPIPluginID = msg.MPINone
		req.Env = []msg.NullString{msg.Str("PATH=/usr/bin:/bin"), msg.Str("HOME=" + me.home), msg.Str("SLURM_MPI_TYPE=none")}
		req.SpankJobEnv = nil
		req.Flags = 0
		req.OFName, req.EFName, req.IFName = msg.NullString{}, msg.NullString{}, msg.NullString{}
		body := encodeBody(t, msgtype.REQUEST_LAUNCH_TASKS, &req)
		r, err := slurmd.CallTo(ctx, 0, msgtype.REQUEST_LAUNCH_TASKS, body, c.SlurmUserUID)
		if err != nil {
			l.close()
			return nil, err
		}
		if err := rcMsg(&r.Frame); err != nil {
			l.close()
			return nil, err
		}
		return l, nil
	}

	// (a) A credential we signed: slurmd launches, the I/O connection
	// presents our signature as the I/O key, and the task's output arrives.
	cred := newCred(jobID, time.Now())
	marker := fmt.Sprintf("goslurm-cred-%d", jobID)
	l, err := launch(cred, marker)
	if err != nil {
		t.Fatalf("real slurmd refused our credential: %v\n%s", err, c.Log("slurmd-"+node.Name))
	}
	out := l.readOutput(ctx, t, jobcred.IOKey(cred))
	if out != marker+"\n" {
		t.Fatalf("task output %q, want %q\n%s", out, marker+"\n", c.Log("slurmd-"+node.Name))
	}
	// slurmstepd's reports to srun, each with a valid munge credential.
	want := []string{msgtype.RESPONSE_LAUNCH_TASKS.String(), msgtype.MESSAGE_TASK_EXIT.String()}
	for !containsAll(l.responses(), want) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	if got := l.responses(); !containsAll(got, want) {
		t.Errorf("srun's response port got %q, want %q", got, want)
	}
	l.close()

	// (b) The same credential again: a replay.
	if _, err := launch(cred, marker); !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURMD_CREDENTIAL_REPLAYED}) {
		t.Errorf("replayed credential: got %v, want ESLURMD_CREDENTIAL_REPLAYED", err)
	}

	// (c) A fresh credential with one byte of the signed body changed
	// after signing (the partition name): the signature no longer covers
	// the body.
	forged := newCred(jobID+1, time.Now())
	raw := forged.Bytes()
	i := bytes.Index(raw, []byte("debug"))
	if i < 0 {
		t.Fatal("partition name not found in the credential bytes")
	}
	raw[i] = 'D'
	tampered, err := jobcred.Decode(raw, jobcred.Version2205)
	if err != nil {
		t.Fatalf("re-decoding the tampered credential: %v", err)
	}
	if _, err := launch(tampered, marker); !errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL}) {
		t.Errorf("tampered credential: got %v, want ESLURMD_INVALID_JOB_CREDENTIAL", err)
	}
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// capturedLaunch is the REQUEST_LAUNCH_TASKS real srun sent in
// srun-hostname.pcap: the defaults of every field the test does not set.
func capturedLaunch(t *testing.T) msg.LaunchTasksRequest {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "captures", "testdata", "srun-hostname.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	conns, err := pcap.ReadConns(f)
	if err != nil {
		t.Fatal(err)
	}
	g := msg.Registry()
	for _, cn := range conns {
		for _, u := range pcap.SlurmUnits(cn, codec.Default) {
			if u.Kind != pcap.UnitRPC || u.Frame.Header.MsgType != msgtype.REQUEST_LAUNCH_TASKS {
				continue
			}
			bc, _ := g.Lookup(msgtype.REQUEST_LAUNCH_TASKS)
			v, err := bc.Decode(pack.NewReader(u.Frame.Body), u.Frame.Header.Version)
			if err != nil {
				t.Fatalf("decoding the captured launch: %v", err)
			}
			return v.(msg.LaunchTasksRequest)
		}
	}
	t.Fatal("no REQUEST_LAUNCH_TASKS in srun-hostname.pcap")
	return msg.LaunchTasksRequest{}
}

func encodeBody(t *testing.T, mt msgtype.Type, body any) []byte {
	t.Helper()
	bc, ok := msg.Registry().Lookup(mt)
	if !ok {
		t.Fatalf("no codec for %v", mt)
	}
	var w pack.Writer
	if err := bc.Encode(&w, codec.Current, body); err != nil {
		t.Fatalf("encoding %v: %v", mt, err)
	}
	return w.Bytes()
}

// rcMsg reads the RESPONSE_SLURM_RC_MSG slurmd answers a launch with.
func rcMsg(f *codec.Frame) error {
	if f.Header.MsgType == msgtype.RESPONSE_SLURM_RC {
		return client.ReturnCode(f)
	}
	if f.Header.MsgType != msgtype.RESPONSE_SLURM_RC_MSG {
		return fmt.Errorf("reply %v, want RESPONSE_SLURM_RC_MSG", f.Header.MsgType)
	}
	r := pack.NewReader(f.Body)
	rc := r.U32()
	text := r.Str()
	if err := r.Done(); err != nil {
		return fmt.Errorf("RESPONSE_SLURM_RC_MSG body: %w", err)
	}
	if err := slurmerr.FromRC(rc); err != nil {
		return fmt.Errorf("%w (%q)", err, text)
	}
	return nil
}

type ids struct {
	uid, gid   uint32
	name, home string
	gids       []uint32
	groups     []string
}

func currentIDs(t *testing.T) ids {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	me := ids{uid: uint32(uid), gid: uint32(gid), name: u.Username, home: u.HomeDir}
	gids, err := u.GroupIds()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gids {
		id, err := strconv.ParseUint(g, 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		grp, err := user.LookupGroupId(g)
		if err != nil {
			t.Fatal(err)
		}
		me.gids = append(me.gids, uint32(id))
		me.groups = append(me.groups, grp.Name)
	}
	return me
}

// launchListeners are srun's two listeners: responses (RESPONSE_LAUNCH_TASKS,
// MESSAGE_TASK_EXIT) and I/O.
type launchListeners struct {
	resp, io net.Listener
	auth     auth.Authenticator

	mu   sync.Mutex
	seen []string
}

func newLaunchListeners(t *testing.T, a auth.Authenticator) *launchListeners {
	t.Helper()
	resp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	iol, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		resp.Close()
		t.Fatal(err)
	}
	l := &launchListeners{resp: resp, io: iol, auth: a}
	go l.serveResponses()
	return l
}

func (l *launchListeners) respPort() uint16 { return uint16(l.resp.Addr().(*net.TCPAddr).Port) }
func (l *launchListeners) ioPort() uint16   { return uint16(l.io.Addr().(*net.TCPAddr).Port) }

func (l *launchListeners) close() {
	l.resp.Close()
	l.io.Close()
}

// serveResponses answers what slurmstepd sends srun's response port
// (RESPONSE_LAUNCH_TASKS, MESSAGE_TASK_EXIT) with RESPONSE_SLURM_RC 0, as
// srun does, after checking the sender's munge credential; it records the
// message types and the launch return codes.
func (l *launchListeners) serveResponses() {
	for {
		conn, err := l.resp.Accept()
		if err != nil {
			return
		}
		l.answer(conn)
	}
}

func (l *launchListeners) answer(conn net.Conn) {
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	req, err := wire.ReadFrame(conn, codec.Default, 0)
	if err != nil {
		l.record(fmt.Sprintf("bad frame: %v", err))
		return
	}
	if _, err := l.auth.Verify(ctx, &req); err != nil {
		l.record(fmt.Sprintf("%v: bad credential: %v", req.Header.MsgType, err))
		return
	}
	l.record(req.Header.MsgType.String())
	var w pack.Writer
	w.U32(0)
	reply := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, w.Bytes())
	reply.Header.Version = req.Header.Version
	if err := l.auth.Sign(ctx, &reply, auth.UIDAny); err != nil {
		l.record(fmt.Sprintf("signing the reply: %v", err))
		return
	}
	wire.WriteFrame(conn, codec.Default, &reply)
}

func (l *launchListeners) record(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, what)
}

func (l *launchListeners) responses() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// readOutput accepts the step's I/O connection, checks its init message
// carries key, and returns everything the task wrote to stdout.
func (l *launchListeners) readOutput(ctx context.Context, t *testing.T, key []byte) string {
	t.Helper()
	if d, ok := ctx.Deadline(); ok {
		l.io.(*net.TCPListener).SetDeadline(d)
	}
	conn, err := l.io.Accept()
	if err != nil {
		t.Fatalf("no I/O connection from slurmstepd: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var n [4]byte
	if _, err := io.ReadFull(conn, n[:]); err != nil {
		t.Fatalf("I/O init length: %v", err)
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > jobcred.MaxIOInitLen {
		t.Fatalf("I/O init of %d bytes", size)
	}
	init := make([]byte, 4+size)
	copy(init, n[:])
	if _, err := io.ReadFull(conn, init[4:]); err != nil {
		t.Fatalf("I/O init: %v", err)
	}
	m, err := jobcred.ParseIOInit(init)
	if err != nil {
		t.Fatalf("I/O init: %v", err)
	}
	if err := m.Validate(key, 1); err != nil {
		t.Fatalf("I/O init from real slurmstepd does not carry our credential's key: %v", err)
	}
	var out strings.Builder
	open := map[uint16]bool{pcap.IOStdout: true, pcap.IOStderr: true}
	for len(open) > 0 {
		var h [10]byte
		if _, err := io.ReadFull(conn, h[:]); err != nil {
			t.Fatalf("io_hdr: %v (stdout so far %q)", err, out.String())
		}
		typ := binary.BigEndian.Uint16(h[0:])
		length := binary.BigEndian.Uint32(h[6:])
		if length > 1<<20 {
			t.Fatalf("io_hdr length %d", length)
		}
		data := make([]byte, length)
		if _, err := io.ReadFull(conn, data); err != nil {
			t.Fatalf("io data: %v", err)
		}
		if length == 0 {
			delete(open, typ)
			continue
		}
		if typ == pcap.IOStdout {
			out.Write(data)
		}
	}
	return out.String()
}
