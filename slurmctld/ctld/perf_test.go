package ctld

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// launchNodes is a set of fake slurmd nodes that hold every batch launch
// until want launches are in flight at once (or a generous bound passes),
// and record what arrives in which order.
type launchNodes struct {
	want int

	mu        sync.Mutex
	inFlight  int
	maxFlight int
	launched  int
	order     []string // "launch" / "terminate after N launches replied"
	all       chan struct{}
}

func (f *launchNodes) Serve(_ context.Context, r *server.Request) *server.Response {
	switch r.Header.MsgType {
	case msgtype.REQUEST_BATCH_JOB_LAUNCH:
		f.mu.Lock()
		f.inFlight++
		f.maxFlight = max(f.maxFlight, f.inFlight)
		if f.inFlight == f.want {
			close(f.all)
		}
		f.order = append(f.order, "launch")
		f.mu.Unlock()
		select {
		case <-f.all:
		case <-time.After(30 * time.Second): // serial sending: never all at once
		}
		f.mu.Lock()
		f.inFlight--
		f.launched++
		f.mu.Unlock()
	case msgtype.REQUEST_TERMINATE_JOB:
		f.mu.Lock()
		f.order = append(f.order, fmt.Sprintf("terminate after %d launches", f.launched))
		f.mu.Unlock()
	}
	return server.RC(0)
}

// TestCarryOutLaunchesInParallel: consecutive batch launches of one call
// are in flight together, and an action after them waits for them.
func TestCarryOutLaunchesInParallel(t *testing.T) {
	a := &auth.Munge{Client: mungetest.Start(t, mungetest.Options{}).Client()}
	const n = 3
	f := &launchNodes{want: n, all: make(chan struct{})}
	text := "ClusterName=t\nSlurmctldHost=localhost\nSlurmUser=root\nSelectType=select/cons_tres\n"
	for i := 1; i <= n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &server.Server{Auth: a, Handler: f, Codec: &codec.Codec{Bodies: msg.Registry()}, Log: quietLog()}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
		text += fmt.Sprintf("NodeName=n%d NodeAddr=127.0.0.1 Port=%d CPUs=4 RealMemory=1000\n", i, ln.Addr().(*net.TCPAddr).Port)
	}
	text += "PartitionName=debug Nodes=ALL Default=YES\n"
	c, err := conf.Parse("slurm.conf", []byte(text), conf.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := NewConfig(c, "/etc/slurm/slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	ctl, err := New(Options{Config: cfg, Auth: a, Log: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	jcfg, err := jobs.ConfigFromConf(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	cred := func(id uint32) *jobcred.Credential {
		cr, err := jobcred.Create(context.Background(), jobcred.Body{UID: 0, GID: 0,
			StepID: jobcred.StepID{JobID: id, StepID: jobcred.StepBatch, StepHetComp: noVal}},
			jobcred.Version2205, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return cr
	}
	var acts []jobs.Action
	for i := 1; i <= n; i++ {
		acts = append(acts, jobs.LaunchBatch{JobID: uint32(i), Node: fmt.Sprintf("n%d", i),
			Msg: &msg.BatchJobLaunch{JobID: uint32(i), Cred: cred(uint32(i)), SelectJobinfo: jcfg.Select}})
	}
	acts = append(acts, jobs.NodeMessage{JobID: 1, Nodes: []string{"n1"}, MsgType: msgtype.REQUEST_TERMINATE_JOB,
		Msg: &msg.KillJob{StepID: msg.StepID{JobID: 1, StepID: noVal, StepHetComp: noVal}, Nodes: msg.Str("n1"),
			Cred: cred(1), SelectJobinfo: jcfg.Select}})
	ctl.carryOut(acts)

	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() {
		if t.Failed() {
			t.Logf("controller log:\n%s", logBuf.String())
		}
	}()
	if f.maxFlight != n {
		t.Errorf("launches in flight at once: %d, want %d", f.maxFlight, n)
	}
	want := []string{"launch", "launch", "launch", fmt.Sprintf("terminate after %d launches", n)}
	if fmt.Sprint(f.order) != fmt.Sprint(want) {
		t.Errorf("order %q, want %q", f.order, want)
	}
}
