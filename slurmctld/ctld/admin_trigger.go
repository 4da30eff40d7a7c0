package ctld

import (
	"context"
	"fmt"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Event triggers (strigger). This controller does not implement them: it
// keeps no trigger, so a listing is empty, setting one is refused with
// ESLURM_NOT_SUPPORTED after 22.05's permission check, and clearing or
// pulling finds nothing, with 22.05's answers for an empty table.

// triggerResTypeJob is TRIGGER_RES_TYPE_JOB.
const triggerResTypeJob = 1

// rpcTriggerGet is _slurm_rpc_trigger_get: anyone may list.
func (c *Controller) rpcTriggerGet(context.Context, *server.Request) *server.Response {
	return &server.Response{MsgType: msgtype.RESPONSE_TRIGGER_GET, Body: &msg.TriggerInfo{}}
}

// rpcTriggerSet is _slurm_rpc_trigger_set: SlurmUser/root only, unless
// SlurmctldParameters has allow_user_triggers.
func (c *Controller) rpcTriggerSet(_ context.Context, r *server.Request) *server.Response {
	cfg := c.Config()
	if !cfg.SlurmUser(r.Identity.UID) && !cfg.Conf.SlurmctldParameters.Has("allow_user_triggers") {
		c.log.Error(fmt.Sprintf("Security violation, REQUEST_TRIGGER_SET RPC from uid=%d", r.Identity.UID))
		return server.RC(slurmerr.ESLURM_ACCESS_DENIED)
	}
	c.log.Error("REQUEST_TRIGGER_SET: event triggers are not supported by goslurm's slurmctld")
	return server.RC(slurmerr.ESLURM_NOT_SUPPORTED)
}

// rpcTriggerClear is trigger_clear on an empty trigger table: the request
// is validated as 22.05 does, then nothing matches (ESRCH).
func (c *Controller) rpcTriggerClear(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.TriggerInfo](r.Body)
	if len(req.Triggers) != 1 {
		return server.RC(errnoESRCH)
	}
	t := req.Triggers[0]
	if t.ResType == triggerResTypeJob {
		if atol(t.ResID.Value) == 0 {
			return server.RC(slurmerr.ESLURM_INVALID_JOB_ID)
		}
	} else if t.TrigID == 0 && t.UserID == noVal {
		return server.RC(errnoEINVAL)
	}
	return server.RC(errnoESRCH)
}

// rpcTriggerPull is _slurm_rpc_trigger_pull: SlurmUser/root only; with no
// trigger there is nothing to fire.
func (c *Controller) rpcTriggerPull(_ context.Context, r *server.Request) *server.Response {
	if !c.Config().SlurmUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, REQUEST_TRIGGER_PULL RPC from uid=%d", r.Identity.UID))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	return server.RC(0)
}

// atol is C's atol: leading blanks and sign, digits up to the first
// other character, 0 when there are none.
func atol(s string) int64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	var v int64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		v = v*10 + int64(s[i]-'0')
	}
	if neg {
		return -v
	}
	return v
}
