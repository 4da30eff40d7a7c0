package stepd

// Test rig: the slurmstepd binary built once, a spool dir, a fake slurmctld
// that decodes REQUEST_COMPLETE_BATCH_SCRIPT with protocol/msg, and launch
// requests made from the captured real one.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/wire"
)

var stepdBin string

func TestMain(m *testing.M) {
	if os.Getenv(launcherEnv) != "" {
		os.Exit(launcherMain())
	}
	if os.Getenv(signalerEnv) != "" {
		os.Exit(signalerMain())
	}
	dir, err := os.MkdirTemp("", "stepd-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// World-searchable, so the exec helper (running as the job user) can
	// execute the binary.
	os.Chmod(dir, 0o755)
	// go test puts its own GOROOT/bin first in PATH.
	goBin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stepdBin = filepath.Join(dir, "slurmstepd")
	out, err := exec.Command(goBin, "build", "-o", stepdBin, "github.com/goslurm/goslurm/slurmd/slurmstepd").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build slurmstepd: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireRoot skips tests that change identity.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: the supervisor drops privileges to the job user")
	}
}

var nextJob atomic.Uint32

func init() { nextJob.Store(1000) }

type fakeCtld struct {
	l     net.Listener
	authn *slurmauth.Slurm
	got   chan msg.CompleteBatchScript
	ids   chan auth.Identity
	errs  chan error
	steps chan msg.StepComplete
}

func startCtld(t testing.TB, keyPath string) *fakeCtld {
	t.Helper()
	key, err := slurmauth.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &fakeCtld{l: l, authn: &slurmauth.Slurm{Key: key, Cluster: "stepdtest"},
		got: make(chan msg.CompleteBatchScript, 16), ids: make(chan auth.Identity, 16), errs: make(chan error, 16), steps: make(chan msg.StepComplete, 16)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			c.serve(conn)
		}
	}()
	t.Cleanup(func() { l.Close(); wg.Wait() })
	return c
}

func (c *fakeCtld) serve(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	f, err := wire.ReadFrame(conn, testCodec, wire.DefaultMaxSize)
	if err != nil {
		c.errs <- fmt.Errorf("fake slurmctld: read: %w", err)
		return
	}
	ctx := context.Background()
	id, err := c.authn.Verify(ctx, &f)
	if err != nil || (f.Header.MsgType != msgtype.REQUEST_COMPLETE_BATCH_SCRIPT && f.Header.MsgType != msgtype.REQUEST_STEP_COMPLETE) {
		c.errs <- fmt.Errorf("fake slurmctld: %v %v", f.Header.MsgType, err)
		return
	}
	bc, _ := msg.Registry().Lookup(f.Header.MsgType)
	r := pack.NewReader(f.Body)
	v, err := bc.Decode(r, f.Header.Version)
	if err != nil || r.Done() != nil {
		c.errs <- fmt.Errorf("fake slurmctld: decode: %v", err)
		return
	}
	reply := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, []byte{0, 0, 0, 0})
	if err := c.authn.Sign(ctx, &reply, auth.UIDAny); err != nil {
		c.errs <- fmt.Errorf("fake slurmctld: sign: %w", err)
		return
	}
	if err := wire.WriteFrame(conn, testCodec, &reply); err != nil {
		c.errs <- fmt.Errorf("fake slurmctld: write: %w", err)
		return
	}
	if sc, ok := v.(msg.StepComplete); ok {
		c.steps <- sc
		return
	}
	c.ids <- id
	c.got <- v.(msg.CompleteBatchScript)
}

// wait returns the next completion report.
func (c *fakeCtld) wait(t testing.TB) msg.CompleteBatchScript {
	t.Helper()
	select {
	case m := <-c.got:
		<-c.ids
		return m
	case err := <-c.errs:
		t.Fatal(err)
	case <-time.After(60 * time.Second):
		t.Fatal("no REQUEST_COMPLETE_BATCH_SCRIPT within 60 s")
	}
	return msg.CompleteBatchScript{}
}

type rig struct {
	dir   string // 0755, holds spool/ and work/
	spool string
	work  string // owned by the job user
	ctld  *fakeCtld
	mgr   *Manager
	uid   uint32
	gid   uint32
	user  string
}

// newRig prepares a node for jobs of the given user name.
func newRig(t testing.TB, userName string) *rig {
	t.Helper()
	u, err := user.Lookup(userName)
	if err != nil {
		t.Skipf("no user %s: %v", userName, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "stepd-rig-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	r := &rig{dir: dir, spool: filepath.Join(dir, "spool"), work: filepath.Join(dir, "work"),
		uid: uint32(uid), gid: uint32(gid), user: userName}
	for _, d := range []string{r.spool, r.work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(r.work, uid, gid); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "slurm.key")
	if _, err := slurmauth.GenerateKey(keyPath); err != nil {
		t.Fatal(err)
	}
	r.ctld = startCtld(t, keyPath)
	r.mgr = &Manager{StepdPath: stepdBin, Config: Config{
		NodeName: "n1", SpoolDir: r.spool, ClusterName: "stepdtest", ConfPath: "/etc/slurm/slurm.conf",
		Controllers: []string{r.ctld.l.Addr().String()}, SelectPluginID: 109,
		KillWait: 2 * time.Second, AuthType: "auth/slurm", AuthKeyFile: keyPath,
		CompleteRetries: 3, CompleteRetryDelay: 100 * time.Millisecond,
		LogFile: filepath.Join(dir, "stepd.log"),
	}}
	t.Cleanup(func() {
		// Stop anything a failed test left running.
		for _, s := range r.mgr.Running() {
			r.mgr.Kill(s.JobID)
		}
		if t.Failed() {
			if b, err := os.ReadFile(r.mgr.Config.LogFile); err == nil {
				t.Logf("supervisor log:\n%s", b)
			}
		}
	})
	return r
}

// launch builds a batch launch for script from the captured real one,
// with a fresh job id, this rig's user and paths.
func (r *rig) launch(t testing.TB, script string, edit func(*msg.BatchJobLaunch)) *msg.BatchJobLaunch {
	t.Helper()
	req := capturedLaunch(t)
	req.JobID = nextJob.Add(1)
	req.UID, req.GID = r.uid, r.gid
	req.Script = msg.Str(script)
	req.WorkDir = msg.Str(r.work)
	req.StdOut = msg.Str(filepath.Join(r.work, "slurm-%j.out"))
	body := req.Cred.Body
	body.StepID.JobID = req.JobID
	body.UID, body.GID = r.uid, r.gid
	body.GIDs = []uint32{r.gid}
	body.GrNames = nil
	body.PwName = jobcred.Str(r.user)
	node := r.mgr.Config.NodeName
	body.JobHostlist, body.StepHostlist = jobcred.Str(node), jobcred.Str(node)
	req.Nodes = msg.Str(node)
	cred, err := jobcred.Create(context.Background(), body, jobcred.Version2205, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req.Cred = cred
	if edit != nil {
		edit(&req)
	}
	return &req
}

func (r *rig) start(t testing.TB, req *msg.BatchJobLaunch) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.mgr.LaunchBatch(ctx, req, auth.Identity{UID: 0}); err != nil {
		t.Fatalf("LaunchBatch: %v", err)
	}
}

// waitState polls the step socket until the step reaches state (no timing
// assertion: the bound is only there to fail instead of hanging).
func (r *rig) waitState(t testing.TB, jobID uint32, state int32) StepRef {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range r.mgr.Running() {
			if s.JobID == jobID && s.State == state {
				return s
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("job %d never reached state %d", jobID, state)
	return StepRef{}
}

// waitOutput polls the job's output file for text (the script's way of
// saying its traps are in place).
func (r *rig) waitOutput(t testing.TB, jobID uint32, text string) {
	t.Helper()
	path := filepath.Join(r.work, fmt.Sprintf("slurm-%d.out", jobID))
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), text) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("job %d never wrote %q", jobID, text)
}

func (r *rig) output(t testing.TB, jobID uint32) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.work, fmt.Sprintf("slurm-%d.out", jobID)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var testCodec = &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: true}
