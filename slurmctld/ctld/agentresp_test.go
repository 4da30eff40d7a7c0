package ctld

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

type answerAll struct{}

func (answerAll) Serve(context.Context, *server.Request) *server.Response { return server.RC(0) }

// A reply to a job message vouches for the node as the agent's
// node_did_resp does: a node an admin set DOWN whose slurmd answers comes
// back under ReturnToService=2, not under 1 (its reason is not "Not
// responding").
func TestNodeMessageReplyReturnsNodeToService(t *testing.T) {
	a := &auth.Munge{Client: mungetest.Start(t, mungetest.Options{}).Client()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &server.Server{Auth: a, Handler: answerAll{}, Codec: &codec.Codec{Bodies: msg.Registry()}, Log: quietLog()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	for _, tc := range []struct {
		r2s  int
		want uint32
	}{{2, msg.NodeStateIdle}, {1, msg.NodeStateDown}} {
		text := fmt.Sprintf("ClusterName=t\nSlurmctldHost=localhost\nSlurmUser=root\nReturnToService=%d\n"+
			"NodeName=n1 NodeAddr=127.0.0.1 Port=%d CPUs=4 RealMemory=1000\nPartitionName=debug Nodes=ALL Default=YES\n",
			tc.r2s, ln.Addr().(*net.TCPAddr).Port)
		c, err := conf.Parse("slurm.conf", []byte(text), conf.MapFS{})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := NewConfig(c, "/etc/slurm/slurm.conf")
		if err != nil {
			t.Fatal(err)
		}
		ctl, err := New(Options{Config: cfg, Auth: a, Log: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		ctl.mu.Lock()
		n := ctl.nodeIndex["n1"]
		n.State, n.Reason = msg.NodeStateDown, "test"
		ctl.mu.Unlock()
		ctl.carryOut([]jobs.Action{jobs.NodeMessage{JobID: 1, Nodes: []string{"n1"}, MsgType: msgtype.REQUEST_TERMINATE_TASKS,
			Msg: &msg.SignalTasks{StepID: msg.StepID{JobID: 1, StepID: 0, StepHetComp: noVal}, Signal: 9}}})
		ctl.mu.RLock()
		got := n.State & msg.NodeStateBase
		ctl.mu.RUnlock()
		if got != tc.want {
			t.Errorf("ReturnToService=%d: state %#x, want %#x", tc.r2s, got, tc.want)
		}
	}
}
