package main

import (
	"context"
	"fmt"
	"time"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/launch"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// verifyCounts is the node and task count part of srun's _opt_verify: a
// node list longer than the maximum node count is cut to it; a task
// count below the node count lowers the node count (with a warning),
// and --ntasks-per-node that does not match -n over -N is dropped.
func (s *srun) verifyCounts(o *jobopt.Opts) {
	if o.MaxNodes > 0 && o.Nodelist != "" && o.Distribution&distStateBase != distArbitrary {
		// A -w list longer than the maximum node count loses its last
		// nodes.
		if hosts, err := hostlist.Expand(o.Nodelist); err == nil && len(hosts) > o.MaxNodes {
			s.log.Errorf("Required nodelist includes more nodes than permitted by max-node count (%d > %d). Eliminating nodes from the nodelist.",
				len(hosts), o.MaxNodes)
			o.Nodelist = hostlist.Compress(hosts[:o.MaxNodes])
		}
	}
	if !o.NodesSet || !o.NtasksSet {
		return
	}
	if o.MaxNodes > 0 && o.Ntasks < o.MaxNodes {
		o.MaxNodes = o.Ntasks
	}
	if o.Ntasks < o.MinNodes && o.Ntasks > 0 {
		s.log.Infof("Warning: can't run %d processes on %d nodes, setting nnodes to %d", o.Ntasks, o.MinNodes, o.Ntasks)
		o.MinNodes = o.Ntasks
		if o.MaxNodes > 0 && o.MinNodes > o.MaxNodes {
			o.MaxNodes = o.MinNodes
		}
		// srun sets -N anew, as if given on the command line (what
		// _validate_relative's message names).
		o.MarkCLI('N')
	}
	if o.NtasksPerNode != jobopt.NoVal && o.MinNodes > 0 && o.NtasksPerNode != o.Ntasks/o.MinNodes {
		if o.Ntasks > o.NtasksPerNode {
			s.log.Infof("Warning: can't honor --ntasks-per-node set to %d which doesn't match the requested tasks %d with the number of requested nodes %d. Ignoring --ntasks-per-node.",
				o.NtasksPerNode, o.Ntasks, o.MinNodes)
		}
		o.NtasksPerNode = jobopt.NoVal
	}
}

// Task distribution bits verifyCounts reads.
const (
	distStateBase = 0xffff
	distArbitrary = 0x0003
)

// testOnly is srun --test-only: slurm_job_will_run on the job srun would
// ask for, and its answer.
func (s *srun) testOnly(ctl *launch.Ctl, o *jobopt.Opts, argv []string, submitLine string) int {
	o.TestOnly = false
	desc, err := s.jobDesc(ctl, o, argv, submitLine)
	if err != nil {
		return s.errorExit
	}
	ctx := context.Background()
	// slurm_job_will_run first asks whether the cluster is federated.
	_, _ = ctl.Conn.Client.Call(ctx, msgtype.REQUEST_FED_INFO, nil)
	v, err := ctl.Call(ctx, msgtype.REQUEST_JOB_WILL_RUN, *desc, msgtype.RESPONSE_JOB_WILL_RUN)
	if err != nil {
		fmt.Fprintf(s.io.stderr, "allocation failure: %s\n", launch.Strerror(err))
		return 1
	}
	wr := v.(msg.WillRunResponse)
	if wr.JobSubmitUserMsg.Value != "" {
		s.log.Infof("%s", wr.JobSubmitUserMsg.Value)
	}
	s.log.Infof("Job %d to start at %s using %d processors on nodes %s in partition %s",
		wr.JobID, time.Unix(wr.StartTime, 0).Format("2006-01-02T15:04:05"),
		wr.ProcCnt, wr.NodeList.Value, wr.PartName.Value)
	return 0
}
