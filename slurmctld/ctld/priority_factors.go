package ctld

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// handlePriorityFactors installs the REQUEST_PRIORITY_FACTORS handler
// (sprio). AttachPriority calls it for either priority plugin.
func (c *Controller) handlePriorityFactors() {
	c.Handle(msgtype.REQUEST_PRIORITY_FACTORS, server.HandlerFunc(c.rpcPriorityFactors))
}

// rpcPriorityFactors is _slurm_rpc_get_priority_factors: anyone may ask;
// with PrivateData=jobs, users other than operators see their own jobs
// only. priority/basic answers an empty list (sprio does not even ask
// then); priority/multifactor no list when no job matches.
func (c *Controller) rpcPriorityFactors(_ context.Context, r *server.Request) *server.Response {
	req := bodyOf[msg.PriorityFactorsRequest](r.Body)
	uid := r.Identity.UID
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := &server.Response{MsgType: msgtype.RESPONSE_PRIORITY_FACTORS}
	m := c.jobs.m
	if m.Priority() == nil {
		resp.Body = &msg.PriorityFactorsResponse{Factors: []msg.PriorityFactors{}}
		return resp
	}
	cl, err := c.jobCluster()
	if err != nil {
		c.log.Error(fmt.Sprintf("priority factors: %v", err))
		resp.Body = &msg.PriorityFactorsResponse{}
		return resp
	}
	q := jobs.FactorsQuery{JobIDs: req.JobIDs, UIDs: req.UIDs}
	if req.Partitions.Valid {
		q.Partitions = []string{}
		for _, p := range strings.Split(req.Partitions.Value, ",") {
			if p != "" {
				q.Partitions = append(q.Partitions, p)
			}
		}
	}
	if c.cfg.Conf.PrivateDataFlags&conf.PrivateJobs != 0 && !c.privileged(uid) {
		q.Visible = func(j *jobs.Job) bool { return j.UserID == uid }
	}
	tres := tresTable(c.cfg.Conf)
	weights := m.TRESWeights(tres)
	list := m.PriorityFactors(cl, c.now().Unix(), tres, q)
	body := &msg.PriorityFactorsResponse{}
	for _, f := range list {
		body.Factors = append(body.Factors, factorsWire(f, tres, weights))
	}
	resp.Body = body
	return resp
}

// factorsWire is one priority_factors_object_t. Records carry the TRES
// table only when they have TRES factors (PriorityWeightTRES set).
func factorsWire(f jobs.JobFactors, tres []string, weights []float64) msg.PriorityFactors {
	w := msg.PriorityFactors{
		JobID: f.JobID, UserID: f.UserID,
		Age: msg.PackDouble(f.Age), Assoc: msg.PackDouble(f.Assoc), FairShare: msg.PackDouble(f.FairShare),
		JobSize: msg.PackDouble(f.JobSize), Partition: msg.PackDouble(f.Detail.Partition), QOS: msg.PackDouble(f.QOS),
		DirectPrio: msg.PackDouble(f.Direct), Site: f.Site, Nice: f.Nice,
		PartitionName: msg.Str(f.Partition),
	}
	if f.TRES != nil && weights != nil {
		w.TRESCount = uint32(len(tres))
		for i, n := range tres {
			w.TRES = append(w.TRES, msg.PackDouble(f.TRES[i]))
			w.TRESNames = append(w.TRESNames, msg.Str(n))
			w.TRESWeights = append(w.TRESWeights, msg.PackDouble(weights[i]))
		}
	}
	return w
}

// baseTRES are Slurm's built-in TRES, ids 1 to 8, always first in its
// TRES table.
var baseTRES = []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}

// tresTable is the controller's TRES table (assoc_mgr_tres_name_array):
// the built-in TRES, then those AccountingStorageTRES adds, in order.
func tresTable(c *conf.Config) []string {
	out := slices.Clone(baseTRES)
	for _, t := range c.AccountingStorageTRES {
		typ, name, ok := strings.Cut(t, "/")
		n := strings.ToLower(typ)
		if ok {
			n += "/" + name
		}
		if !slices.ContainsFunc(out, func(s string) bool { return strings.EqualFold(s, n) }) {
			out = append(out, n)
		}
	}
	return out
}
