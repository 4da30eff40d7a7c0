package stepd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/wire"
)

// fakeSrun is the srun side of a step: a response port taking
// RESPONSE_LAUNCH_TASKS and MESSAGE_TASK_EXIT, and an I/O port that checks
// the io init and collects the output streams.
type fakeSrun struct {
	resp, io net.Listener
	key      []byte
	uid      uint32
	stdin    string
	msgs     chan any
	ioErr    chan error

	mu      sync.Mutex
	stdout  map[uint16]*bytes.Buffer
	stderr  map[uint16]*bytes.Buffer
	ioDone  chan struct{}
	initMsg *jobcred.IOInit
}

func startSrun(t *testing.T, ctld *fakeCtld, key []byte, uid uint32, stdin string) *fakeSrun {
	t.Helper()
	s := &fakeSrun{key: key, uid: uid, stdin: stdin, msgs: make(chan any, 16), ioErr: make(chan error, 4),
		stdout: map[uint16]*bytes.Buffer{}, stderr: map[uint16]*bytes.Buffer{}, ioDone: make(chan struct{})}
	var err error
	if s.resp, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if s.io, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			c, err := s.resp.Accept()
			if err != nil {
				return
			}
			s.serveResp(c, ctld)
		}
	}()
	go func() {
		defer wg.Done()
		c, err := s.io.Accept()
		if err != nil {
			return
		}
		s.serveIO(c)
	}()
	t.Cleanup(func() { s.resp.Close(); s.io.Close(); wg.Wait() })
	return s
}

func (s *fakeSrun) serveResp(c net.Conn, ctld *fakeCtld) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	f, err := wire.ReadFrame(c, testCodec, wire.DefaultMaxSize)
	if err != nil {
		return
	}
	ctx := context.Background()
	// srun runs as the job user: the stepd's credential must be restricted
	// to that uid (srun would refuse anything else).
	token, err := slurmauth.TokenOf(&f.Auth)
	if err != nil {
		s.msgs <- err
		return
	}
	claims, err := ctld.authn.Key.Parse(token, slurmauth.VerifyParams{Now: time.Now(), DecoderUID: s.uid, Cluster: "stepdtest"})
	if err != nil || claims.UID != 0 {
		s.msgs <- fmt.Errorf("token from uid %v: %v", claims, err)
		return
	}
	bc, _ := msg.Registry().Lookup(f.Header.MsgType)
	v, err := bc.Decode(pack.NewReader(f.Body), f.Header.Version)
	if err != nil {
		s.msgs <- err
		return
	}
	reply := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, []byte{0, 0, 0, 0})
	ctld.authn.Sign(ctx, &reply, auth.UIDAny)
	wire.WriteFrame(c, testCodec, &reply)
	s.msgs <- v
}

func (s *fakeSrun) serveIO(c net.Conn) {
	defer close(s.ioDone)
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	var lb [4]byte
	if _, err := io.ReadFull(c, lb[:]); err != nil {
		s.ioErr <- err
		return
	}
	n := int(lb[0])<<24 | int(lb[1])<<16 | int(lb[2])<<8 | int(lb[3])
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		s.ioErr <- err
		return
	}
	init, err := jobcred.ParseIOInit(append(lb[:], body...))
	if err != nil || !jobcred.CheckIOKey(s.key, init.IOKey) {
		s.ioErr <- fmt.Errorf("io init %+v: %v", init, err)
		return
	}
	s.initMsg = init
	// All tasks' stdin, then EOF, as srun does with --input=all.
	c.Write(appendIOHeader(nil, ioHeader{ioAllStdin, 0xffff, 0xffff, uint32(len(s.stdin))}))
	c.Write([]byte(s.stdin))
	c.Write(appendIOHeader(nil, ioHeader{ioAllStdin, 0xffff, 0xffff, 0}))
	open := init.StdoutObjs + init.StderrObjs
	for open > 0 {
		h, err := readIOHeader(c)
		if err != nil {
			s.ioErr <- fmt.Errorf("after %d open streams: %w", open, err)
			return
		}
		data := make([]byte, h.length)
		if _, err := io.ReadFull(c, data); err != nil {
			s.ioErr <- err
			return
		}
		if h.length == 0 {
			open--
			continue
		}
		s.mu.Lock()
		m := s.stdout
		if h.typ == ioStderr {
			m = s.stderr
		}
		if m[h.gtid] == nil {
			m[h.gtid] = &bytes.Buffer{}
		}
		m[h.gtid].Write(data)
		s.mu.Unlock()
	}
}

// TestLaunchTasksStreamsToSrun runs a two-task step: output and stdin over
// the I/O stream, the launch response with pids, one task-exit message per
// task with its raw status, and the node's step completion to slurmctld.
func TestLaunchTasksStreamsToSrun(t *testing.T) {
	requireRoot(t)
	r := newRig(t, "nobody")
	req, jobID, cred := signedLaunch(t, r)
	srun := startSrun(t, r.ctld, jobcred.IOKey(cred), r.uid, "hello\n")
	req.StepID.JobID = jobID
	req.UID, req.GID, req.GIDs = r.uid, r.gid, []uint32{0} // body gids must be ignored
	req.Cred = cred
	req.NTasks = 2
	req.GlobalTaskIDs = [][]uint32{{0, 1}}
	req.RespPorts = []uint16{uint16(srun.resp.Addr().(*net.TCPAddr).Port)}
	req.IOPorts = []uint16{uint16(srun.io.Addr().(*net.TCPAddr).Port)}
	req.Cwd = msg.Str(r.work)
	req.CompleteNodelist = msg.Str("n1")
	req.Argv = []msg.NullString{msg.Str("sh"), msg.Str("-c"),
		msg.Str("echo out-$SLURM_PROCID-$(id -u)-$(id -G); echo err-$SLURM_LOCALID >&2; read x; echo got-$x; exit $SLURM_PROCID")}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.mgr.LaunchTasks(ctx, &req, auth.Identity{UID: r.uid}, codec.AddrIPv4([4]byte{127, 0, 0, 1}, 0)); err != nil {
		t.Fatalf("LaunchTasks: %v", err)
	}
	var launched *msg.LaunchTasksResponse
	exits := map[uint32]uint32{}
	for len(exits) < 2 || launched == nil {
		select {
		case m := <-srun.msgs:
			switch m := m.(type) {
			case msg.LaunchTasksResponse:
				launched = &m
			case msg.TaskExit:
				for _, id := range m.TaskIDs {
					exits[id] = m.ReturnCode
				}
			default:
				t.Fatalf("srun got %#v", m)
			}
		case err := <-srun.ioErr:
			t.Fatalf("I/O stream: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatalf("srun heard launch %v exits %v", launched, exits)
		}
	}
	if launched.ReturnCode != 0 || len(launched.LocalPIDs) != 2 || fmt.Sprint(launched.TaskIDs) != "[0 1]" || launched.NodeName.Value != "n1" {
		t.Errorf("launch response %+v", launched)
	}
	if exits[0] != 0 || exits[1] != 1<<8 {
		t.Errorf("task exit statuses %v, want 0:0 1:256", exits)
	}
	select {
	case <-srun.ioDone:
	case err := <-srun.ioErr:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("I/O stream never ended")
	}
	if srun.initMsg.NodeID != 0 || srun.initMsg.StdoutObjs != 2 || srun.initMsg.StderrObjs != 2 {
		t.Errorf("io init %+v", srun.initMsg)
	}
	var outs []string
	for id, b := range srun.stdout {
		outs = append(outs, fmt.Sprintf("%d:%s", id, b))
	}
	sort.Strings(outs)
	ids := fmt.Sprintf("%d-%d", r.uid, r.gid)
	want := fmt.Sprintf("[0:out-0-%s\ngot-hello\n 1:out-1-%s\ngot-hello\n]", ids, ids)
	if fmt.Sprint(outs) != want {
		t.Errorf("stdout %q, want %q", fmt.Sprint(outs), want)
	}
	if srun.stderr[0].String() != "err-0\n" || srun.stderr[1].String() != "err-1\n" {
		t.Errorf("stderr %q %q", srun.stderr[0], srun.stderr[1])
	}
	select {
	case sc := <-r.ctld.steps:
		if sc.StepID.JobID != jobID || sc.RangeFirst != 0 || sc.RangeLast != 0 || sc.StepRC != 1<<8 {
			t.Errorf("step complete %+v", sc)
		}
	case err := <-r.ctld.errs:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("no REQUEST_STEP_COMPLETE")
	}
}

// TestTaskEnvMatchesRealSlurm compares a task's environment, built from
// the captured launch of `srun -N1 -w n1 hostname`, with what a real 22.05
// task printed for `srun -N1 -w n1 env` submitted the same way: same names
// in the same order, values equal except the per-run ones (masked).
func TestTaskEnvMatchesRealSlurm(t *testing.T) {
	req := capturedTaskLaunch(t)
	req.OrigAddr = codec.AddrIPv4([4]byte{127, 0, 0, 1}, 0)
	ts, err := newTaskStep(&Config{NodeName: "n1", ClusterName: "anchor", ConfPath: "/etc/slurm.conf",
		Controllers: []string{"localhost:6817"}, SelectPluginID: 109}, &req, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	env, lim := ts.taskEnv(0)
	env.Set("SLURM_TASK_PID", "1") // as the exec helper does

	b, err := os.ReadFile("testdata/real_task_env.txt")
	if err != nil {
		t.Fatal(err)
	}
	var real []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			real = append(real, l)
		}
	}
	masked := map[string]bool{"SLURM_CONF": true, "SLURM_CLUSTER_NAME": true, "SLURM_SUBMIT_DIR": true,
		"SLURM_JOB_NAME": true, "SLURM_JOB_ID": true, "SLURM_JOBID": true, "SLURM_WORKING_CLUSTER": true,
		"SLURM_STEP_LAUNCHER_PORT": true, "SLURM_SRUN_COMM_PORT": true, "SLURM_TASK_PID": true}
	mask := func(list []string) []string {
		var out []string
		for _, kv := range list {
			k, _, _ := strings.Cut(kv, "=")
			if masked[k] {
				kv = k + "=*"
			}
			out = append(out, kv)
		}
		return out
	}
	if d := cmp.Diff(mask(real), mask(env)); d != "" {
		t.Errorf("task env differs from a real task's (-real +ours):\n%s", d)
	}
	if lim.Umask != 0o022 || len(lim.RLimits) != 10 {
		t.Errorf("limits %+v", lim)
	}
}

// capturedTaskLaunch is the REQUEST_LAUNCH_TASKS real srun 22.05 sent for
// `srun -N1 -w n1 hostname`.
func capturedTaskLaunch(t *testing.T) msg.LaunchTasksRequest {
	t.Helper()
	raw, err := os.ReadFile("testdata/launch_tasks_22.05.bin")
	if err != nil {
		t.Fatal(err)
	}
	bc, _ := msg.Registry().Lookup(msgtype.REQUEST_LAUNCH_TASKS)
	v, err := bc.Decode(pack.NewReader(raw), codec.Version2205)
	if err != nil {
		t.Fatal(err)
	}
	return v.(msg.LaunchTasksRequest)
}

// signedLaunch is capturedTaskLaunch for a new job id, with a credential for
// the rig's user signed with the test key.
func signedLaunch(t *testing.T, r *rig) (msg.LaunchTasksRequest, uint32, *jobcred.Credential) {
	t.Helper()
	req := capturedTaskLaunch(t)
	jobID := nextJob.Add(1)
	body := req.Cred.Body
	body.StepID.JobID = jobID
	body.UID, body.GID, body.GIDs, body.PwName = r.uid, r.gid, []uint32{r.gid}, jobcred.Str(r.user)
	signer, err := jobcred.NewHMACSigner(jobcred.HMACKey{Secret: bytes.Repeat([]byte("k"), 32)})
	if err != nil {
		t.Fatal(err)
	}
	cred, err := jobcred.Create(context.Background(), body, jobcred.Version2205, signer, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return req, jobID, cred
}
