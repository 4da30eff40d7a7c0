package ctld

import (
	"context"
	"fmt"
	"slices"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// The reservation RPCs (_slurm_rpc_resv_create, _update, _delete,
// _show). Only root and SlurmUser change reservations: without an
// accounting database there are no operators, and SlurmctldParameters=
// user_resv_delete (which needs associations) is not supported.

func (c *Controller) rpcCreateResv(ctx context.Context, r *server.Request) *server.Response {
	d := bodyOf[msg.ReservationDesc](r.Body)
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, CREATE_RESERVATION RPC from uid=%d", r.Identity.UID))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	c.mu.Lock()
	name, err := c.createResv(d)
	c.mu.Unlock()
	if err != nil {
		rc := slurmerr.Code(err)
		if d.Name.Value != "" {
			c.log.Info(fmt.Sprintf("_slurm_rpc_resv_create reservation=%s: %s", d.Name.Value, slurmerr.Message(rc)))
		} else {
			c.log.Info(fmt.Sprintf("_slurm_rpc_resv_create: %s", slurmerr.Message(rc)))
		}
		return server.RC(rc)
	}
	c.saveResv(ctx)
	c.kickScheduler()
	return &server.Response{MsgType: msgtype.RESPONSE_CREATE_RESERVATION, Body: &msg.ReservationName{Name: msg.Str(name)}}
}

func (c *Controller) rpcUpdateResv(ctx context.Context, r *server.Request) *server.Response {
	d := bodyOf[msg.ReservationDesc](r.Body)
	if !c.Config().SuperUser(r.Identity.UID) {
		c.log.Error(fmt.Sprintf("Security violation, UPDATE_RESERVATION RPC from uid=%d", r.Identity.UID))
		return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
	}
	c.mu.Lock()
	err := c.updateResv(d)
	c.mu.Unlock()
	if err != nil {
		rc := slurmerr.Code(err)
		c.log.Info(fmt.Sprintf("_slurm_rpc_resv_update reservation=%s: %s", d.Name.Value, slurmerr.Message(rc)))
		return server.RC(rc)
	}
	c.saveResv(ctx)
	c.kickScheduler()
	return server.RC(0)
}

func (c *Controller) rpcDeleteResv(ctx context.Context, r *server.Request) *server.Response {
	d := bodyOf[msg.ReservationName](r.Body)
	rc := 0
	switch {
	case !c.Config().SuperUser(r.Identity.UID):
		rc = slurmerr.ESLURM_USER_ID_MISSING
		c.log.Error(fmt.Sprintf("Security violation, DELETE_RESERVATION RPC from uid=%d", r.Identity.UID))
	case !d.Name.Valid:
		rc = slurmerr.ESLURM_INVALID_PARTITION_NAME
	default:
		c.mu.Lock()
		rc = slurmerr.Code(c.deleteResv(d.Name.Value))
		c.mu.Unlock()
	}
	if rc != 0 {
		c.log.Info(fmt.Sprintf("_slurm_rpc_delete_reservation reservation=%s: %s", d.Name.Value, slurmerr.Message(rc)))
		return server.RC(rc)
	}
	c.log.Info(fmt.Sprintf("_slurm_rpc_delete_reservation complete for %s", d.Name.Value))
	c.saveResv(ctx)
	c.kickScheduler()
	return server.RC(0)
}

// rpcResvInfo is _slurm_rpc_resv_show (PrivateData=reservations is not
// applied: everybody sees every reservation).
func (c *Controller) rpcResvInfo(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.LastUpdateRequest](r.Body)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if noChange(req.LastUpdate, c.resv.lastUpdate) {
		return server.RC(slurmerr.SLURM_NO_CHANGE_IN_DATA)
	}
	now := c.now().Unix()
	resp := &msg.ReservationInfoResponse{LastUpdate: now, Reservations: make([]msg.Reservation, 0, len(c.resv.list))}
	idx := c.nodeIdx()
	for _, rv := range c.resv.list {
		resp.Reservations = append(resp.Reservations, c.resvRecord(rv, idx, now))
	}
	return &server.Response{MsgType: msgtype.RESPONSE_RESERVATION_INFO, Body: resp}
}

// resvRecord is _pack_resv for clients.
func (c *Controller) resvRecord(rv *resvRec, idx map[string]int, now int64) msg.Reservation {
	start, end := rv.StartFirst, rv.End
	if rv.Flags&resvTimeFloat != 0 {
		start, end = rv.relTimes(now)
	}
	cores, tres := c.resvTRES(rv)
	opt := func(s string) msg.NullString {
		if s == "" {
			return msg.NullString{}
		}
		return msg.Str(s)
	}
	out := msg.Reservation{
		Accounts: opt(rv.Accounts), BurstBuffer: opt(rv.BurstBuffer), CoreCnt: cores, EndTime: end,
		Features: opt(rv.Features), Flags: rv.Flags, Licenses: opt(rv.Licenses), MaxStartDelay: rv.MaxStartDelay,
		Name: msg.Str(rv.Name), NodeCnt: uint32(len(rv.Nodes)), NodeList: opt(hostlist.Compress(rv.Nodes)),
		Partition: opt(rv.Partition), PurgeCompTime: rv.PurgeCompTime, Watts: rv.Watts, StartTime: start,
		TRES: opt(tres), Users: opt(rv.Users), Groups: opt(rv.Groups), NodeInx: msg.NullBitmap,
		CoreSpec: rv.coreSpec(),
	}
	if len(rv.Nodes) > 0 {
		var set []int
		for _, n := range rv.Nodes {
			if i, ok := idx[n]; ok {
				set = append(set, i)
			}
		}
		slices.Sort(set)
		out.NodeInx = msg.BitmapOf(len(c.nodes), set...)
	}
	return out
}
