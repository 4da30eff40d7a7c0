package launch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Job-ready bits of RESPONSE_JOB_READY (slurm.h READY_*).
const (
	readyNode   = 0x1
	readyJob    = 0x2
	readyProlog = 0x4
)

// ErrRevoked means the allocation went away while we waited for it.
var ErrRevoked = errors.New("allocation revoked")

// AllocHooks are the caller's reactions to the allocation's life, all
// optional. They run on listener goroutines.
type AllocHooks struct {
	// NoOtherPort leaves the job without a message port (salloc
	// --no-shell: the job outlives the command, so slurmctld must not
	// ping it).
	NoOtherPort bool
	Pending     func(jobID uint32) // the request was queued
	JobComplete func()             // SRUN_JOB_COMPLETE for the whole job
	Timeout     func(end time.Time)
	UserMsg     func(text string)
	NodeFail    func(nodes string)
}

// Allocation is a granted job allocation and its message port.
type Allocation struct {
	msg.Allocation
	ctl  *Ctl
	port *Listener
}

// Allocate sends REQUEST_RESOURCE_ALLOCATION for desc and waits until it is
// granted, as slurm_allocate_resources_blocking does: a pending job is
// reported through hooks.Pending and then waited for on the allocation
// response port, where slurmctld pushes RESPONSE_RESOURCE_ALLOCATION. With
// immediate the pending case is an error (slurmctld answers it that way).
// ctx ending while pending abandons the job (the caller cancels it).
func (c *Ctl) Allocate(ctx context.Context, desc *msg.JobDesc, hooks AllocHooks) (*Allocation, error) {
	as, err := c.allocate(ctx, []*msg.JobDesc{desc}, hooks)
	if len(as) == 0 {
		return nil, err
	}
	return as[0], err
}

// AllocateHet is Allocate for a heterogeneous job
// (slurm_allocate_het_job_blocking): REQUEST_HET_JOB_ALLOCATION with a
// descriptor per component, answered by RESPONSE_HET_JOB_ALLOCATION with
// a record per component, the leader first. The leader holds the message
// port every component shares.
func (c *Ctl) AllocateHet(ctx context.Context, descs []*msg.JobDesc, hooks AllocHooks) ([]*Allocation, error) {
	return c.allocate(ctx, descs, hooks)
}

// allocate is Allocate (one descriptor) and AllocateHet (several). A
// pending job comes back with ctx's error and the records of the
// request's answer (the job ids), so that the caller can give it up.
func (c *Ctl) allocate(ctx context.Context, descs []*msg.JobDesc, hooks AllocHooks) ([]*Allocation, error) {
	het := len(descs) > 1
	granted := make(chan []msg.Allocation, 1)
	grant := func(a []msg.Allocation) {
		select {
		case granted <- a:
		default:
		}
	}
	port, err := Listen(c.Conn.Client.Auth, []msgtype.Type{
		msgtype.RESPONSE_RESOURCE_ALLOCATION, msgtype.RESPONSE_HET_JOB_ALLOCATION, msgtype.SRUN_PING,
		msgtype.SRUN_JOB_COMPLETE, msgtype.SRUN_TIMEOUT, msgtype.SRUN_USER_MSG, msgtype.SRUN_NODE_FAIL,
	}, func(mt msgtype.Type, body any) *server.Response {
		switch mt {
		case msgtype.RESPONSE_RESOURCE_ALLOCATION:
			grant([]msg.Allocation{body.(msg.Allocation)})
			return server.RC(0)
		case msgtype.RESPONSE_HET_JOB_ALLOCATION:
			grant(body.(msg.HetAllocation).Jobs)
			return server.RC(0)
		case msgtype.SRUN_PING:
			return server.RC(0)
		}
		allocMessage(mt, body, hooks)
		return nil
	})
	if err != nil {
		return nil, err
	}
	immediate := false
	for _, d := range descs {
		// Every component names the same message port (the first's).
		if !hooks.NoOtherPort {
			d.OtherPort = port.Port()
		}
		immediate = immediate || d.Immediate != 0
	}
	for _, d := range descs {
		if !immediate {
			d.AllocRespPort = port.Port()
		}
	}
	var recs []msg.Allocation
	if het {
		list := msg.JobDescList{}
		for _, d := range descs {
			list.Jobs = append(list.Jobs, *d)
		}
		v, err := c.Call(ctx, msgtype.REQUEST_HET_JOB_ALLOCATION, list, msgtype.RESPONSE_HET_JOB_ALLOCATION)
		if err != nil {
			port.Close()
			return nil, err
		}
		recs = v.(msg.HetAllocation).Jobs
		if len(recs) == 0 {
			port.Close()
			return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
		}
	} else {
		v, err := c.Call(ctx, msgtype.REQUEST_RESOURCE_ALLOCATION, *descs[0], msgtype.RESPONSE_RESOURCE_ALLOCATION)
		if err != nil {
			port.Close()
			return nil, err
		}
		a := v.(msg.Allocation)
		if a.NodeCnt == 0 && !immediate && a.ErrorCode != 0 {
			// Why the job pends (slurm_allocate_resources_blocking).
			c.Log.Infof("%s", slurmerr.Message(int(a.ErrorCode)))
		}
		recs = []msg.Allocation{a}
	}
	var nodes uint32
	for _, a := range recs {
		nodes += a.NodeCnt
		if a.JobSubmitUserMsg.Valid && a.JobSubmitUserMsg.Value != "" {
			c.Log.Infof("%s", a.JobSubmitUserMsg.Value)
		}
	}
	wrap := func(recs []msg.Allocation) []*Allocation {
		out := make([]*Allocation, len(recs))
		for i := range recs {
			out[i] = &Allocation{Allocation: recs[i], ctl: c}
		}
		out[0].port = port
		return out
	}
	if nodes == 0 {
		if hooks.Pending != nil {
			hooks.Pending(recs[0].JobID)
		}
		select {
		case g := <-granted:
			if len(g) == 0 {
				return wrap(recs), slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
			}
			recs = g
		case <-ctx.Done():
			return wrap(recs), ctx.Err()
		}
	}
	return wrap(recs), nil
}

func allocMessage(mt msgtype.Type, body any, hooks AllocHooks) {
	switch mt {
	case msgtype.SRUN_JOB_COMPLETE:
		if id := body.(msg.SrunJobCompleteMsg).StepID; id.StepID == pack.NoVal && hooks.JobComplete != nil {
			hooks.JobComplete()
		}
	case msgtype.SRUN_TIMEOUT:
		if hooks.Timeout != nil {
			hooks.Timeout(time.Unix(body.(msg.SrunTimeoutMsg).Timeout, 0))
		}
	case msgtype.SRUN_USER_MSG:
		if hooks.UserMsg != nil {
			hooks.UserMsg(body.(msg.SrunUserMsg).Msg.Value)
		}
	case msgtype.SRUN_NODE_FAIL:
		if hooks.NodeFail != nil {
			hooks.NodeFail(body.(msg.SrunNodeFailMsg).NodeList.Value)
		}
	}
}

// ExistingAllocation is REQUEST_HET_JOB_ALLOC_INFO for a job srun runs in
// (SLURM_JOB_ID or --jobid): the first component's record.
func (c *Ctl) ExistingAllocation(ctx context.Context, jobID uint32) (*Allocation, error) {
	req := msg.JobAllocInfoRequest{JobID: jobID, ReqCluster: nstr(c.Conn.Conf.ClusterName)}
	v, err := c.Call(ctx, msgtype.REQUEST_HET_JOB_ALLOC_INFO, req, msgtype.RESPONSE_HET_JOB_ALLOCATION)
	if err != nil {
		return nil, err
	}
	h := v.(msg.HetAllocation)
	if len(h.Jobs) == 0 {
		return nil, slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_ID}
	}
	return &Allocation{Allocation: h.Jobs[0], ctl: c}, nil
}

// ExistingAllocations is ExistingAllocation with every component of a
// het job, in component order (one record for a job that is not
// heterogeneous).
func (c *Ctl) ExistingAllocations(ctx context.Context, jobID uint32) ([]*Allocation, error) {
	req := msg.JobAllocInfoRequest{JobID: jobID, ReqCluster: nstr(c.Conn.Conf.ClusterName)}
	v, err := c.Call(ctx, msgtype.REQUEST_HET_JOB_ALLOC_INFO, req, msgtype.RESPONSE_HET_JOB_ALLOCATION)
	if err != nil {
		return nil, err
	}
	h := v.(msg.HetAllocation)
	if len(h.Jobs) == 0 {
		return nil, slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_ID}
	}
	out := make([]*Allocation, len(h.Jobs))
	for i := range h.Jobs {
		out[i] = &Allocation{Allocation: h.Jobs[i], ctl: c}
	}
	return out, nil
}

// WaitReady polls REQUEST_JOB_READY until the nodes are up and the prolog
// ran, as srun and salloc do before using an allocation. slow is called
// once if the first two polls did not find it ready (salloc's "Waiting for
// resource configuration").
func (a *Allocation) WaitReady(ctx context.Context, slow func()) error {
	delay := 100 * time.Millisecond
	for i := 0; ; i++ {
		v, err := a.ctl.Call(ctx, msgtype.REQUEST_JOB_READY, msg.JobIDShowRequest{JobID: a.JobID}, msgtype.RESPONSE_JOB_READY)
		if err != nil {
			return err
		}
		rc := v.(codec.ReturnCode).RC
		if rc&readyJob == 0 {
			return ErrRevoked
		}
		if rc&readyNode != 0 && rc&readyProlog != 0 {
			return nil
		}
		if i == 1 && slow != nil {
			slow()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

// Release is slurm_complete_job: REQUEST_COMPLETE_JOB_ALLOCATION with the
// job's exit status (a wait status; NO_VAL when cancelled).
func (a *Allocation) Release(ctx context.Context, rc uint32) error {
	return a.ctl.CallRC(ctx, msgtype.REQUEST_COMPLETE_JOB_ALLOCATION, msg.CompleteJobAllocationRequest{JobID: a.JobID, JobRC: rc})
}

// Close closes the allocation's message port.
func (a *Allocation) Close() {
	if a.port != nil {
		a.port.Close()
	}
}

// Port is the allocation's message port (0 for an existing allocation).
func (a *Allocation) Port() uint16 {
	if a.port == nil {
		return 0
	}
	return a.port.Port()
}

// CPUsPerNodeString is the compressed cpu count list ("2(x3),1") of SLURM_JOB_CPUS_PER_NODE.
func (a *Allocation) CPUsPerNodeString() string {
	var parts []string
	for i, c := range a.Allocation.CPUsPerNode {
		parts = append(parts, repCount(uint32(c), a.CPUCountReps[i]))
	}
	return strings.Join(parts, ",")
}

func repCount(v, reps uint32) string {
	if reps > 1 {
		return fmt.Sprintf("%d(x%d)", v, reps)
	}
	return strconv.FormatUint(uint64(v), 10)
}

// CompressCounts writes per-node counts in Slurm's compressed form.
func CompressCounts(counts []uint32) string {
	var parts []string
	for i := 0; i < len(counts); {
		j := i
		for j < len(counts) && counts[j] == counts[i] {
			j++
		}
		parts = append(parts, repCount(counts[i], uint32(j-i)))
		i = j
	}
	return strings.Join(parts, ",")
}

func nstr(s string) msg.NullString {
	if s == "" {
		return msg.NullString{}
	}
	return msg.Str(s)
}
