package ctld

import (
	"context"
	"fmt"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

func rc0() *codec.ReturnCode { return &codec.ReturnCode{} }

// encode packs a message body at the current protocol version.
func (c *Controller) encode(t msgtype.Type, body any) ([]byte, error) {
	bc, ok := c.cd.Bodies.Lookup(t)
	if !ok {
		return nil, fmt.Errorf("no codec for %v", t)
	}
	w := pack.NewWriter(nil)
	if err := bc.Encode(w, codec.Current, body); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

// broadcast sends a message to every node broadcastNodes names
// (msg_to_slurmd), through forwarding trees, and logs the failures.
func (c *Controller) broadcast(t msgtype.Type, body any) {
	nodes := c.broadcastNodes()
	if len(nodes) == 0 {
		return
	}
	data, err := c.encode(t, body)
	if err != nil {
		c.log.Error(fmt.Sprintf("agent: %v", err))
		return
	}
	cfg := c.Config()
	ctx, cancel := context.WithTimeout(context.Background(), 2*cfg.MessageTimeout+cfg.TCPTimeout)
	defer cancel()
	res, err := c.sendAgent(ctx, nodes, forward.Request{MsgType: t, Body: data, RUID: cfg.SlurmdUID})
	if err != nil {
		c.log.Error(fmt.Sprintf("agent: %v", err))
		return
	}
	for _, r := range res {
		if r.Failed() {
			c.log.Debug(fmt.Sprintf("agent/is_node_resp: node:%s RPC:%s : %s", r.Node, t, r))
		}
	}
}

// broadcastNodes are the nodes a broadcast goes to: not FUTURE, not DOWN
// and not responding, and not a CLOUD node powered down or powering down
// (there is no slurmd to answer: msg_to_slurmd, push_reconfig_to_slurmd).
func (c *Controller) broadcastNodes() []string {
	var nodes []string
	c.View(func(ns []*Node, _ []*Partition) {
		for _, n := range ns {
			if n.IsFuture() || (n.IsDown() && n.IsNoRespond()) {
				continue
			}
			if n.Has(msg.NodeStateCloud) && (n.Has(msg.NodeStatePoweredDown) || n.Has(msg.NodeStatePoweringDown)) {
				continue
			}
			nodes = append(nodes, n.Name)
		}
	})
	return nodes
}

// ReconfigureNodes tells every slurmd to read its configuration again
// (REQUEST_RECONFIGURE, no reply expected), as slurmctld does after
// reading slurm.conf again.
func (c *Controller) ReconfigureNodes() {
	c.broadcast(msgtype.REQUEST_RECONFIGURE, &msg.Empty{})
}

// bodyOf returns a request's decoded body as *T (codecs return values).
func bodyOf[T any](b any) *T {
	switch v := b.(type) {
	case *T:
		return v
	case T:
		return &v
	}
	return new(T)
}
