package ctld

import (
	"context"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// rpcLicenseInfo is _slurm_rpc_dump_licenses: every configured license
// with its total, the count jobs hold and the count the active
// reservations hold (scontrol show licenses; scontrol picks one name out
// of the full list itself). Anyone may ask.
//
// Slurm stamps last_license_update whenever a job takes or returns
// licenses and when the configuration is read. The counts here come from
// the job table, so the job table's last change stands for the former:
// it is never older than the true change, so a client is never told
// "no change" when something changed (at worst it is sent the same
// counts again).
func (c *Controller) rpcLicenseInfo(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.InfoRequest](r.Body)
	c.mu.RLock()
	defer c.mu.RUnlock()
	// Reserved counts follow the reservations, which may start or end
	// with no change of their own: their last change bounds the former.
	changed := max(c.boot, c.confUpdate, c.resv.lastUpdate)
	if c.jobs != nil {
		changed = max(changed, c.jobs.m.LastUpdate())
	}
	if noChange(req.LastUpdate, changed) {
		return server.RC(slurmerr.SLURM_NO_CHANGE_IN_DATA)
	}
	configured := c.cfg.Conf.LicenseList
	counts := jobs.ConfiguredLicenses(configured)
	if c.jobs != nil {
		counts = c.jobs.m.LicenseUsage(configured).Counts()
	}
	now := c.now().Unix()
	reserved := c.reservedLicenses(now)
	resp := &msg.LicenseInfoResponse{LastUpdate: now}
	for _, l := range counts {
		resp.Licenses = append(resp.Licenses, msg.License{Name: msg.Str(l.Name), Total: l.Total, InUse: l.Used, Reserved: reserved[l.Name]})
	}
	return &server.Response{MsgType: msgtype.RESPONSE_LICENSE_INFO, Body: resp}
}
