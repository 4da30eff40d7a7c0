package ctld

import (
	"context"
	"fmt"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Event triggers (strigger): the RPCs. The table and its rules are
// slurmctld/trigger; trigger_run.go notes events, runs the passes and
// the programs, and saves the table.

// rpcTriggerGet is _slurm_rpc_trigger_get: anyone may list every
// trigger (strigger filters).
func (c *Controller) rpcTriggerGet(context.Context, *server.Request) *server.Response {
	return &server.Response{MsgType: msgtype.RESPONSE_TRIGGER_GET, Body: &msg.TriggerInfo{Triggers: c.trig.Get()}}
}

// rpcTriggerSet is _slurm_rpc_trigger_set: SlurmUser/root only, unless
// SlurmctldParameters has allow_user_triggers; then trigger_set's own
// rules. The table is saved before the reply.
func (c *Controller) rpcTriggerSet(ctx context.Context, r *server.Request) *server.Response {
	cfg := c.Config()
	if !cfg.SlurmUser(r.Identity.UID) && !cfg.Conf.SlurmctldParameters.Has("allow_user_triggers") {
		c.log.Error(fmt.Sprintf("Security violation, REQUEST_TRIGGER_SET RPC from uid=%d", r.Identity.UID))
		return server.RC(slurmerr.ESLURM_ACCESS_DENIED)
	}
	req := bodyOf[msg.TriggerInfo](r.Body)
	c.mu.RLock()
	rc := c.trig.Set(c.triggerSetRequest(cfg, r.Identity.UID, r.Identity.GID, req.Triggers), c.trigCluster(), func(s string) { c.log.Info(s) })
	c.mu.RUnlock()
	c.saveTriggers(ctx)
	return server.RC(rc)
}

// rpcTriggerClear is _slurm_rpc_trigger_clear: anyone, for their own
// triggers (root for all).
func (c *Controller) rpcTriggerClear(ctx context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.TriggerInfo](r.Body)
	rc := c.trig.Clear(r.Identity.UID, req.Triggers)
	c.saveTriggers(ctx)
	return server.RC(rc)
}

// rpcTriggerPull is _slurm_rpc_trigger_pull: SlurmUser/root only.
func (c *Controller) rpcTriggerPull(_ context.Context, r *server.Request) *server.Response {
	if !c.Config().SlurmUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, REQUEST_TRIGGER_PULL RPC from uid=%d", r.Identity.UID))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	req := bodyOf[msg.TriggerInfo](r.Body)
	return server.RC(c.trig.Pull(req.Triggers))
}
