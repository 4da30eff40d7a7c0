package jobs

import (
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Action is something the controller must send or do after the call
// returns (and after the journal ticket is durable).
type Action interface{ isAction() }

// LaunchBatch: send REQUEST_BATCH_JOB_LAUNCH to Node. A reply other than
// 0 (and other than a forwarding failure) makes the job non-startable:
// the controller calls LaunchFailed.
type LaunchBatch struct {
	JobID uint32
	Node  string
	Msg   *msg.BatchJobLaunch
}

// NodeMessage: send MsgType with Msg to every node in Nodes (through the
// forwarding tree). Used for REQUEST_TERMINATE_JOB, REQUEST_KILL_TIMELIMIT
// (Msg *msg.KillJob) and REQUEST_SIGNAL_TASKS / REQUEST_TERMINATE_TASKS
// (Msg *msg.SignalTasks). For the kill family, a node replying
// ESLURMD_KILL_JOB_ALREADY_COMPLETE (4002) has finished: the controller calls
// EpilogComplete for it.
type NodeMessage struct {
	JobID   uint32
	Nodes   []string
	MsgType msgtype.Type
	Msg     any
}

// SrunMessage: connect to Host:Port and send MsgType with Msg, restricted
// to the job's user UID, at ProtocolVersion. RESPONSE_RESOURCE_ALLOCATION
// (a pending salloc/srun was granted) expects a RESPONSE_SLURM_RC back; the
// SRUN_* ones are fire and forget.
type SrunMessage struct {
	JobID           uint32
	Host            string
	Port            uint16
	UID             uint32
	ProtocolVersion uint16
	MsgType         msgtype.Type
	Msg             any
}

// DrainNode: drain Node with Reason (a batch job completion with a
// slurmd-side failure, as Slurm's "batch job complete failure").
type DrainNode struct {
	Node   string
	Reason string
}

func (LaunchBatch) isAction() {}
func (NodeMessage) isAction() {}
func (SrunMessage) isAction() {}
func (DrainNode) isAction()   {}
