package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/pack"
	"golang.org/x/sys/unix"
)

// Version is what srun and salloc print for --version (Debian's build,
// the oracle here, says slurm-wlm).
const Version = "slurm-wlm 22.05.8"

// CLI is how srun and salloc start alike: the controller connection and
// the options from the input environment and the command line. What
// differs between them is named here; their own options go through Custom.
type CLI struct {
	Cmd      jobopt.Command  // jobopt.Srun or jobopt.Salloc
	EnvTable []jobopt.EnvVar // the command's input environment variables
	Usage    string          // printed for --usage (and --help when Help is empty)
	Help     string          // printed for --help
	Custom   func(name, arg string, has bool) error

	Log            *jobopt.Log
	Env            *jobopt.Env
	Stdout, Stderr io.Writer
	Cwd            string
	Now            func() time.Time
}

// Parse connects to slurmctld and reads the options. It returns the
// controller link, the validated options and the operands (the command
// to run). --help, --usage and --version, and a configuration that
// cannot be read, end the command through a *jobopt.ExitError once their
// text is written.
func (c *CLI) Parse(args []string) (*Ctl, *jobopt.Opts, []string, error) {
	conn, err := slurmcli.Dial(c.Env.Lookup)
	if err != nil {
		c.Log.Fatalf("Could not establish a configuration source")
		return nil, nil, nil, &jobopt.ExitError{Code: 1}
	}
	conn.Prog, conn.Log = c.Cmd.Name(), c.Stderr
	o := jobopt.NewOpts(c.Cmd, c.Log)
	o.Getenv = c.Env.Lookup
	o.Now = c.Now
	o.Cwd = c.Cwd
	o.RealUID, o.RealGID = uint32(os.Getuid()), uint32(os.Getgid())
	o.Reset(true)
	o.AllowSpecResources = conn.Conf.AllowSpecResourcesUsage
	o.Custom = c.Custom
	if err := o.ApplyEnv(c.EnvTable); err != nil {
		return nil, nil, nil, err
	}
	n, err := o.ParseArgs(args, jobopt.FromCLI, false, c.Stderr)
	switch {
	case errors.Is(err, jobopt.ErrHelp) && c.Help != "":
		fmt.Fprint(c.Stdout, c.Help)
		return nil, nil, nil, &jobopt.ExitError{Code: 0}
	case errors.Is(err, jobopt.ErrHelp), errors.Is(err, jobopt.ErrUsage):
		fmt.Fprint(c.Stdout, c.Usage)
		return nil, nil, nil, &jobopt.ExitError{Code: 0}
	case errors.Is(err, jobopt.ErrVersion):
		fmt.Fprintln(c.Stdout, Version)
		return nil, nil, nil, &jobopt.ExitError{Code: 0}
	case err != nil:
		return nil, nil, nil, err
	}
	c.Log.Verbose = o.Verbose - o.Quiet
	if err := o.ValidateCommon(); err != nil {
		return nil, nil, nil, err
	}
	return &Ctl{Conn: conn, Log: c.Log}, o, args[n:], nil
}

// ExitStatus is the process exit status for a command's result: an
// ExitError's code (its messages are already written), errorExit after
// logging any other error, else code.
func ExitStatus(code int, err error, log *jobopt.Log, errorExit int) int {
	if err == nil {
		return code
	}
	var ee *jobopt.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	log.Errorf("%v", err)
	return errorExit
}

// JobDesc is the allocation request srun and salloc both make from the
// options: the job descriptor plus the session, working directory and
// cluster of the submitting shell. The caller adds its own fields (name,
// user, argv).
func (c *Ctl) JobDesc(o *jobopt.Opts, submitLine string) (*msg.JobDesc, error) {
	desc, err := o.CreateJobDesc(submitLine)
	if err != nil {
		return nil, err
	}
	if sid, err := unix.Getsid(0); err == nil {
		desc.AllocSID = uint32(sid)
	}
	desc.WorkDir = msg.Str(o.Chdir)
	desc.OriginCluster = nstr(c.Conn.Conf.ClusterName)
	desc.SetDefaultBits()
	return desc, nil
}

// InterruptedError means a signal ended the wait for a pending
// allocation; the job has been given up (completed with NO_VAL).
type InterruptedError struct{ JobID uint32 }

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("allocation request for job %d interrupted", e.JobID)
}

// AllocateInteractive is Allocate as srun and salloc wait for it: a
// signal on sigs for which cancels is true (any signal when cancels is
// nil) ends the wait; the first signal is the only one looked at. A job
// left pending is then given up and an *InterruptedError returned. The
// "queued and waiting" and "has been allocated resources" lines are
// logged here, after hooks.Pending.
func (c *Ctl) AllocateInteractive(ctx context.Context, desc *msg.JobDesc, sigs <-chan os.Signal,
	cancels func(os.Signal) bool, hooks AllocHooks) (*Allocation, error) {
	as, err := c.AllocateHetInteractive(ctx, []*msg.JobDesc{desc}, sigs, cancels, hooks)
	if err != nil {
		return nil, err
	}
	return as[0], nil
}

// AllocateHetInteractive is AllocateInteractive for a heterogeneous job
// (one descriptor per component; one descriptor is a plain job): the
// records come back in component order, the leader first.
func (c *Ctl) AllocateHetInteractive(ctx context.Context, descs []*msg.JobDesc, sigs <-chan os.Signal,
	cancels func(os.Signal) bool, hooks AllocHooks) ([]*Allocation, error) {
	actx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case sig := <-sigs:
			if cancels == nil || cancels(sig) {
				stop()
			}
		case <-actx.Done():
		}
	}()
	// A job given up after a signal: slurmctld's SRUN_JOB_COMPLETE for it
	// is waited for (briefly) so the caller's JobComplete hook sees it,
	// as srun's "Force Terminated" does.
	completed := make(chan struct{})
	var completeOnce sync.Once
	userComplete := hooks.JobComplete
	hooks.JobComplete = func() {
		completeOnce.Do(func() { close(completed) })
		if userComplete != nil {
			userComplete()
		}
	}
	pending := false
	userPending := hooks.Pending
	hooks.Pending = func(id uint32) {
		pending = true
		if userPending != nil {
			userPending(id)
		}
		c.Log.Infof("job %d queued and waiting for resources", id)
	}
	as, err := c.allocate(actx, descs, hooks)
	stop()
	if err != nil {
		if len(as) > 0 {
			a := as[0]
			a.Release(context.Background(), pack.NoVal)
			select {
			case <-completed:
			case <-time.After(2 * time.Second):
			}
			a.Close()
			return nil, &InterruptedError{JobID: a.JobID}
		}
		return nil, err
	}
	if pending {
		c.Log.Infof("job %d has been allocated resources", as[0].JobID)
	}
	return as, nil
}

// SetAssocEnv sets SLURM_JOB_ACCOUNT, SLURM_JOB_QOS and
// SLURM_JOB_RESERVATION for those the allocation has.
func (a *Allocation) SetAssocEnv(set func(name, value string)) {
	if a.Account.Value != "" {
		set("SLURM_JOB_ACCOUNT", a.Account.Value)
	}
	if a.QOS.Value != "" {
		set("SLURM_JOB_QOS", a.QOS.Value)
	}
	if a.ResvName.Value != "" {
		set("SLURM_JOB_RESERVATION", a.ResvName.Value)
	}
}

// ParseComponent reads the options of a further het job component (srun
// or salloc "a : b"): the options carried over from the previous
// component prev (jobopt.Opts.NextPass; nil starts afresh, as the first
// pass does), then the input environment (table, already in the
// component's form, see jobopt.HetEnvTable) and args, which start after
// the ":". It returns the options and how many of args they used.
func (c *CLI) ParseComponent(ctl *Ctl, prev *jobopt.Opts, table []jobopt.EnvVar, args []string) (*jobopt.Opts, int, error) {
	var o *jobopt.Opts
	if prev != nil {
		o = prev.NextPass()
	} else {
		o = jobopt.NewOpts(c.Cmd, c.Log)
		o.Getenv = c.Env.Lookup
		o.Now = c.Now
		o.Cwd = c.Cwd
		o.RealUID, o.RealGID = uint32(os.Getuid()), uint32(os.Getgid())
		o.Reset(true)
		o.AllowSpecResources = ctl.Conn.Conf.AllowSpecResourcesUsage
	}
	o.Custom = c.Custom
	if err := o.ApplyEnv(table); err != nil {
		return nil, 0, err
	}
	n, err := o.ParseArgs(args, jobopt.FromCLI, false, c.Stderr)
	if err != nil {
		return nil, 0, err
	}
	if err := o.ValidateCommon(); err != nil {
		return nil, 0, err
	}
	return o, n, nil
}
