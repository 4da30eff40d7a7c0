package ctld

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// eslurmdKillJobAlreadyComplete is slurmd's answer to a kill of a job it
// no longer has: for the controller the node is done with the job.
const eslurmdKillJobAlreadyComplete = 4002

// killRetries is how often a kill is sent again to nodes that did not get
// it (Slurm's agent retries REQUEST_TERMINATE_JOB to non-responding nodes;
// a node that stays silent goes DOWN and jobs.NodeDown releases it).
const killRetries = 5

// carryOut performs a call's actions, in order, except that consecutive
// batch launches go out together (launchParallel at a time), as
// slurmctld's agent threads send them: each is a round trip to another
// job's batch host, and one after the other they delay the last job of a
// big scheduling pass by the sum of the others' round trips.
func (c *Controller) carryOut(acts []jobs.Action) {
	ag := &c.diag.agent
	ids := ag.enqueue(queuedRPCs(acts))
	next := 0
	// sent wraps the sending of a message for sdiag's agent figures.
	sent := func(f func()) {
		t := ag.begin(ids[next])
		next++
		defer ag.end(t)
		f()
	}
	var launches sync.WaitGroup
	slots := make(chan struct{}, launchParallel)
	for _, a := range acts {
		if l, ok := a.(jobs.LaunchBatch); ok {
			slots <- struct{}{}
			t := ag.begin(ids[next])
			next++
			launches.Go(func() {
				defer func() { <-slots }()
				defer ag.end(t)
				c.launchBatch(l)
			})
			continue
		}
		launches.Wait() // what follows a launch comes after it
		switch a := a.(type) {
		case jobs.NodeMessage:
			sent(func() { c.nodeMessage(a) })
		case jobs.SrunMessage:
			sent(func() { c.srunMessage(a) })
		case jobs.DrainNode:
			c.Update(func(_ []*Node, _ []*Partition) bool {
				n := c.nodeIndex[a.Node]
				if n == nil || n.IsDrain() {
					return false
				}
				c.drainNode(n, a.Reason, c.cfg.SlurmUID, c.now().Unix())
				return true
			})
		default:
			c.log.Error(fmt.Sprintf("job action %T not handled", a))
		}
	}
	launches.Wait()
}

// queuedRPCs are the messages among acts, in order, for the agent's queue
// (sdiag's pending RPCs).
func queuedRPCs(acts []jobs.Action) []queuedRPC {
	var out []queuedRPC
	for _, a := range acts {
		switch a := a.(type) {
		case jobs.LaunchBatch:
			out = append(out, queuedRPC{t: msgtype.REQUEST_BATCH_JOB_LAUNCH, hosts: []string{a.Node}})
		case jobs.NodeMessage:
			out = append(out, queuedRPC{t: a.MsgType, hosts: a.Nodes})
		case jobs.SrunMessage:
			out = append(out, queuedRPC{t: a.MsgType, hosts: []string{a.Host}})
		}
	}
	return out
}

// launchParallel bounds the batch launches in flight from one call, as
// the agent's thread count (AGENT_THREAD_COUNT) bounds slurmctld's.
const launchParallel = 10

func (c *Controller) sendTimeout() time.Duration {
	cfg := c.Config()
	return 2*cfg.MessageTimeout + cfg.TCPTimeout
}

// launchBatch sends REQUEST_BATCH_JOB_LAUNCH to the batch host. A refusal
// makes the job non-startable (jobs.LaunchFailed); a node that cannot be
// reached is left to the node manager (it goes DOWN, and the job with it).
func (c *Controller) launchBatch(a jobs.LaunchBatch) {
	data, err := c.encode(msgtype.REQUEST_BATCH_JOB_LAUNCH, a.Msg)
	if err != nil {
		c.log.Error(fmt.Sprintf("batch launch JobId=%d: %v", a.JobID, err))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.sendTimeout())
	defer cancel()
	perfEvent("launch-send", a.JobID, a.Node)
	res, err := c.Sender().Send(ctx, []string{a.Node}, forward.Request{
		MsgType: msgtype.REQUEST_BATCH_JOB_LAUNCH, Body: data, RUID: c.Config().SlurmdUID})
	perfEvent("launch-rc", a.JobID, err)
	if err != nil || len(res) != 1 {
		c.log.Error(fmt.Sprintf("batch launch JobId=%d on %s: %v", a.JobID, a.Node, err))
		return
	}
	r := res[0]
	switch {
	case r.Failed():
		c.log.Error(fmt.Sprintf("agent/is_node_resp: node:%s RPC:REQUEST_BATCH_JOB_LAUNCH : %s", a.Node, slurmerr.Message(r.Err)))
	case r.RC() != 0:
		c.log.Error(fmt.Sprintf("Launch of JobId=%d on %s failed: %s", a.JobID, a.Node, slurmerr.Message(r.RC())))
		out, err := c.jobOp(context.Background(), func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
			return m.LaunchFailed(a.JobID, r.RC(), cl, now)
		})
		if err != nil {
			c.log.Error(fmt.Sprintf("launch failure JobId=%d: %v", a.JobID, err))
		}
		c.carryOut(out.Actions)
	}
}

// isKill reports the messages whose 4002 reply means "done with the job".
func isKill(t msgtype.Type) bool {
	return t == msgtype.REQUEST_TERMINATE_JOB || t == msgtype.REQUEST_KILL_TIMELIMIT ||
		t == msgtype.REQUEST_KILL_PREEMPTED || t == msgtype.REQUEST_ABORT_JOB
}

// nodeMessage sends one message to many nodes through the forwarding
// tree. For the kill family, nodes that answer 4002 have finished the
// job (EpilogComplete for them) and unreachable ones are tried again.
func (c *Controller) nodeMessage(a jobs.NodeMessage) {
	data, err := c.encode(a.MsgType, a.Msg)
	if err != nil {
		c.log.Error(fmt.Sprintf("%s JobId=%d: %v", a.MsgType, a.JobID, err))
		return
	}
	nodes := a.Nodes
	for try := 0; len(nodes) > 0; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), c.sendTimeout())
		perfEvent("node-send", a.JobID, a.MsgType)
		res, err := c.Sender().Send(ctx, nodes, forward.Request{MsgType: a.MsgType, Body: data, RUID: c.Config().SlurmdUID})
		perfEvent("node-rc", a.JobID, a.MsgType)
		cancel()
		if err != nil {
			c.log.Error(fmt.Sprintf("%s JobId=%d: %v", a.MsgType, a.JobID, err))
			return
		}
		var failed []string
		for _, r := range res {
			if r.Failed() {
				failed = append(failed, r.Node)
				continue
			}
			// Any reply vouches for the node, as the agent's
			// node_did_resp does: a DOWN node with a live slurmd returns
			// to service under ReturnToService=2.
			c.nodeDidResp(r)
			switch {
			case isKill(a.MsgType) && r.RC() == eslurmdKillJobAlreadyComplete:
				c.epilogComplete(context.Background(), a.JobID, r.Node, jobs.Caller{UID: c.Config().SlurmUID})
			case r.RC() != 0:
				c.log.Debug(fmt.Sprintf("agent/is_node_resp: node:%s RPC:%s : %s", r.Node, a.MsgType, slurmerr.Message(r.RC())))
			}
		}
		if !isKill(a.MsgType) || try >= killRetries || len(failed) == 0 {
			if len(failed) > 0 {
				c.log.Error(fmt.Sprintf("%s JobId=%d: nodes %v not responding", a.MsgType, a.JobID, failed))
			}
			return
		}
		nodes = c.stillCompleting(a.JobID, failed)
		select {
		case <-c.jobs.stop:
			return
		case <-time.After(5 * time.Second):
		}
	}
}

// stillCompleting keeps the nodes the job still waits on.
func (c *Controller) stillCompleting(jobID uint32, nodes []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	j := c.jobs.m.Job(jobID)
	if j == nil {
		return nil
	}
	var out []string
	for _, n := range nodes {
		for _, w := range j.Completing {
			if w == n {
				out = append(out, n)
			}
		}
	}
	return out
}

// srunMessage connects to an srun/salloc and sends it a message,
// restricted to the job's user, at the job's protocol version. Only the
// allocation grant and SRUN_PING wait for the RESPONSE_SLURM_RC answer.
func (c *Controller) srunMessage(a jobs.SrunMessage) {
	err := c.sendSrun(a)
	if err != nil && a.MsgType != msgtype.SRUN_JOB_COMPLETE {
		c.log.Info(fmt.Sprintf("%s JobId=%d to %s:%d: %v", a.MsgType, a.JobID, a.Host, a.Port, err))
	}
}

func (c *Controller) sendSrun(a jobs.SrunMessage) error {
	v := codec.Version(a.ProtocolVersion)
	if v == 0 {
		v = codec.Current
	}
	bc, ok := c.cd.Bodies.Lookup(a.MsgType)
	if !ok {
		return fmt.Errorf("no codec for %v", a.MsgType)
	}
	w := pack.NewWriter(nil)
	if err := bc.Encode(w, v, a.Msg); err != nil {
		return err
	}
	f := codec.NewFrame(a.MsgType, codec.AuthBlob{}, w.Bytes())
	f.Header.Version = v
	timeout := c.Config().MessageTimeout
	ctx, cancel := context.WithTimeout(context.Background(), timeout+c.Config().TCPTimeout)
	defer cancel()
	if err := c.opts.Auth.Sign(ctx, &f, a.UID); err != nil {
		return err
	}
	d := net.Dialer{Timeout: c.Config().TCPTimeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a.Host, strconv.Itoa(int(a.Port))))
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if err := wire.WriteFrame(conn, c.cd, &f); err != nil {
		return err
	}
	if a.MsgType != msgtype.RESPONSE_RESOURCE_ALLOCATION && a.MsgType != msgtype.RESPONSE_HET_JOB_ALLOCATION &&
		a.MsgType != msgtype.SRUN_PING {
		return nil
	}
	rf, err := wire.ReadFrame(conn, c.cd, 1<<20)
	if err != nil {
		return err
	}
	if rf.Header.MsgType != msgtype.RESPONSE_SLURM_RC {
		return fmt.Errorf("unexpected reply %v", rf.Header.MsgType)
	}
	return nil
}
