package daemon

import (
	"context"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// StepRef names a live step on this node and its owner. Registration lists
// every one of them (batch and extern steps included), and signal requests
// are authorized against Owner.
type StepRef struct {
	ID    msg.StepID
	Owner uint32 // the job's uid
}

// Steps is the seam between the daemon and step supervision (package
// slurmd/stepd implements it; main wires it in). The daemon calls it only
// after every check slurmd makes has passed: the sender is authorized, the
// credential is verified (signature, expiry, replay, revocation, uid,
// this node in its host lists) and recorded.
//
// Implementations must be safe for concurrent use.
type Steps interface {
	// LaunchBatch starts the batch script of req (REQUEST_BATCH_JOB_LAUNCH).
	// from is the authenticated sender (root or SlurmUser). It returns
	// once the step is started or has failed to start; the reply to
	// slurmctld carries the error's Slurm code (slurmerr.Code).
	LaunchBatch(ctx context.Context, req *msg.BatchJobLaunch, from auth.Identity) error
	// LaunchTasks starts this node's tasks of req (REQUEST_LAUNCH_TASKS).
	// srun is the address of the launching srun (the header orig_addr),
	// whose IP the response and I/O connections go to.
	LaunchTasks(ctx context.Context, req *msg.LaunchTasksRequest, from auth.Identity, srun codec.Addr) error
	// Signal sends sig (a signal number, or one of Slurm's pseudo-signals
	// such as SIG_TIME_LIMIT 996) to one step, or to every step of the job
	// when step is NoVal. flags are REQUEST_SIGNAL_TASKS' (KILL_JOB_BATCH:
	// the batch shell only), for the step supervisor; from is the
	// requester's uid, already authorized. A job or step not running here
	// is slurmerr ESLURM_INVALID_JOB_ID.
	Signal(ctx context.Context, job, step uint32, sig int, flags uint16, from uint32) error
	// Terminate ends every step of job: SIGCONT, SIGTERM, KillWait, then
	// SIGKILL, and returns when no process of the job is left.
	Terminate(ctx context.Context, job uint32) error
	// Running lists the live steps on this node.
	Running() []StepRef
}

// NoVal is Slurm's NO_VAL (a whole job in step ids).
const NoVal uint32 = 0xfffffffe

// ErrNoStepSupport is what launch requests get while no Steps
// implementation is wired in: the reply carries ESLURM_NOT_SUPPORTED.
var ErrNoStepSupport error = noStepSupport{}

type noStepSupport struct{}

func (noStepSupport) Error() string {
	return "slurmd: this node has no step supervisor; launch refused"
}

func (noStepSupport) Unwrap() error { return slurmerr.Error{Code: slurmerr.ESLURM_NOT_SUPPORTED} }

// noSteps is the Steps of a daemon built without step supervision: it
// refuses launches and has nothing to signal or terminate.
type noSteps struct{}

func (noSteps) LaunchBatch(context.Context, *msg.BatchJobLaunch, auth.Identity) error {
	return ErrNoStepSupport
}

func (noSteps) LaunchTasks(context.Context, *msg.LaunchTasksRequest, auth.Identity, codec.Addr) error {
	return ErrNoStepSupport
}

func (noSteps) Signal(context.Context, uint32, uint32, int, uint16, uint32) error { return errNoJob }
func (noSteps) Terminate(context.Context, uint32) error                           { return nil }
func (noSteps) Running() []StepRef                                                { return nil }
