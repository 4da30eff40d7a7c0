package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/launch"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
)

// procIO is the process's environment, injectable for tests.
type procIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	environ        []string
	cwd            string
	now            func() time.Time
}

// srunOpts are the options only srun has (srun_opt_t), set through
// jobopt's Custom hook.
type srunOpts struct {
	label, multiProg, unbuffered, killBadExit bool
	exact, quitOnIntr, disableStatus          bool
	pty                                       bool
	overlap                                   bool // --overlap: SSF_OVERLAP_FORCE
	jobID                                     uint32
	maxWait                                   int
	relative                                  int // -r; -1: not given
	mpi                                       string
	hetGroup                                  string // --het-group as given
}

type srun struct {
	io        *procIO
	log       *jobopt.Log
	env       *jobopt.Env
	errorExit int
	sopt      srunOpts
	pty       *ptySession // --pty with a terminal, once the step exists
	ownHet    bool        // the het job is srun's own (allocate_het_job_nodes)
}

func run(args []string, pio *procIO) int {
	s := &srun{sopt: srunOpts{relative: -1}, io: pio, log: &jobopt.Log{Prog: "srun", W: pio.stderr}, env: jobopt.NewEnv(pio.environ), errorExit: 1}
	if v, ok := s.env.Get("SLURM_EXIT_ERROR"); ok {
		if n, _ := strconv.Atoi(v); n != 0 {
			s.errorExit = n
		}
	}
	code, err := s.main(args)
	return launch.ExitStatus(code, err, s.log, s.errorExit)
}

// custom handles srun's own options.
func (s *srun) custom(name, arg string, has bool) error {
	switch name {
	case "label":
		s.sopt.label = true
	case "multi-prog":
		s.sopt.multiProg = true
	case "unbuffered":
		s.sopt.unbuffered = true
	case "kill-on-bad-exit":
		s.sopt.killBadExit = !has || arg != "0"
	case "exact":
		s.sopt.exact = true
	case "quit-on-interrupt":
		s.sopt.quitOnIntr = true
	case "disable-status":
		s.sopt.disableStatus = true
	case "pty":
		s.sopt.pty = true
	case "jobid":
		n, err := strconv.ParseUint(arg, 10, 32)
		if err != nil || n == 0 {
			s.log.Errorf("Invalid --jobid specification")
			return &jobopt.ExitError{Code: jobopt.ExitOption}
		}
		s.sopt.jobID = uint32(n)
	case "mpi":
		s.sopt.mpi = arg
		if arg != "none" {
			s.log.Errorf("--mpi=%s is not supported by goslurm's srun yet", arg)
			return &jobopt.ExitError{Code: jobopt.ExitOption}
		}
	case "":
		// An environment-only input (SLURM_JOB_NODELIST): the allocation
		// itself is asked for by job id.
	case "het-group":
		s.sopt.hetGroup = arg
	case "wait":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			s.log.Errorf("Invalid --wait specification")
			return &jobopt.ExitError{Code: jobopt.ExitOption}
		}
		s.sopt.maxWait = n
	case "relative":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			s.log.Errorf("Invalid --relative specification")
			return &jobopt.ExitError{Code: jobopt.ExitOption}
		}
		s.sopt.relative = n
	case "overlap":
		s.sopt.overlap = true
	case "whole", "msg-timeout", "slurmd-debug", "propagate", "preserve-env":
		// Accepted; goslurm's srun does not change its behaviour for them yet.
	default:
		s.log.Errorf("--%s is not supported by goslurm's srun yet", name)
		return &jobopt.ExitError{Code: jobopt.ExitOption}
	}
	return nil
}

func (s *srun) main(args []string) (int, error) {
	cli := launch.CLI{Cmd: jobopt.Srun, EnvTable: jobopt.HetEnvTable(jobopt.SrunEnv, 0), Usage: usageText, Help: helpText, Custom: s.custom,
		Log: s.log, Env: s.env, Stdout: s.io.stdout, Stderr: s.io.stderr, Cwd: s.io.cwd, Now: s.io.now}
	ctl, o, operands, err := cli.Parse(args)
	if err != nil {
		return 0, err
	}
	if slices.Contains(operands, ":") || s.hetGroupStep() {
		return s.runHet(&cli, ctl, args, o, operands)
	}
	if s.sopt.pty {
		s.sopt.unbuffered = true // implicit, as in srun's _opt_verify
		if o.Efname != "" || o.Ifname != "" || o.Ofname != "" {
			s.log.Errorf("--error/--input/--output are incompatible with --pty")
			return s.errorExit, nil
		}
	}
	argv := append([]string(nil), operands...)
	if len(argv) == 0 {
		s.log.Fatalf("No command given to execute.")
		return s.errorExit, nil
	}
	if s.sopt.multiProg {
		data, err := readMultiProg(argv[0])
		if err != nil {
			s.log.Errorf("Could not open multi_prog config file %s", argv[0])
			return s.errorExit, nil
		}
		if err := verifyMultiProg(argv[0], data, o); err != nil {
			for _, l := range strings.Split(err.Error(), "\n") {
				s.log.Errorf("%s", l)
			}
			return s.errorExit, nil
		}
		argv = append([]string{argv[0], string(data)}, argv[1:]...)
	}

	if s.log.Verbose >= 1 {
		for _, l := range o.SetOptionLines() {
			s.log.Infof("%s", l)
		}
	}
	s.verifyCounts(o)
	if s.sopt.relative >= 0 && (o.Exclude != "" || o.Nodelist != "") {
		s.log.Errorf("-r,--relative not allowed with -w,--nodelist or -x,--exclude.")
		return s.errorExit, nil
	}
	submitLine := strings.Join(args, " ")
	if o.TestOnly {
		return s.testOnly(ctl, o, argv, submitLine), nil
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT, syscall.SIGALRM)
	defer signal.Stop(sigs)

	jobID := s.sopt.jobID
	if jobID == 0 {
		for _, name := range []string{"SLURM_JOB_ID", "SLURM_JOBID"} {
			if v, ok := s.env.Get(name); ok {
				if n, err := strconv.ParseUint(v, 10, 32); err == nil {
					jobID = uint32(n)
					break
				}
			}
		}
	}
	var alloc *launch.Allocation
	ownAlloc := jobID == 0
	if ownAlloc {
		alloc, err = s.allocate(ctx, ctl, o, argv, submitLine, sigs)
		if err != nil {
			return s.errorExit, nil
		}
		defer alloc.Close()
	} else {
		alloc, err = ctl.ExistingAllocation(ctx, jobID)
		if err != nil {
			s.log.Errorf("Unable to confirm allocation for job %d: %s", jobID, launch.Strerror(err))
			s.log.Infof("Check SLURM_JOB_ID environment variable. Expired or invalid job %d", jobID)
			return s.errorExit, nil
		}
	}

	nhosts := int(alloc.NodeCnt)
	if !ownAlloc && s.sopt.relative >= 0 && s.sopt.relative+o.MinNodes > nhosts {
		// _validate_relative.
		what := "SLURM_JOB_NUM_NODES"
		if o.SetBy('N') == jobopt.FromCLI {
			what = "--nodes"
		}
		s.log.Errorf("--relative and %s option incompatible with count of allocated nodes (%d+%d>%d)",
			what, s.sopt.relative, o.MinNodes, nhosts)
		return s.errorExit, nil
	}
	if !ownAlloc && o.Exclude != "" {
		// job_step_create_allocation: the excluded nodes leave the
		// allocation's list.
		n, ok := s.excludeNodes(o, alloc)
		if !ok {
			return s.errorExit, nil
		}
		nhosts = n
	}
	if !ownAlloc && nhosts < o.MinNodes {
		// _job_create_structure.
		s.log.Errorf("Only allocated %d nodes asked for %d", nhosts, o.MinNodes)
		if o.Exclude != "" {
			s.log.Errorf("Are required nodes explicitly excluded?")
		}
		return s.errorExit, nil
	}
	if s.log.Verbose >= 1 {
		// _print_job_information.
		var counts []string
		for i, c := range alloc.Allocation.CPUsPerNode {
			counts = append(counts, fmt.Sprintf("%d(x%d)", c, alloc.CPUCountReps[i]))
		}
		s.log.Verbosef("jobid %d: nodes(%d):`%s', cpu counts: %s", alloc.JobID, alloc.NodeCnt, alloc.NodeList.Value, strings.Join(counts, ","))
	}
	rc, err := s.runStep(ctx, ctl, o, alloc, argv, submitLine, ownAlloc, sigs)
	if ownAlloc {
		if err := alloc.Release(context.Background(), rc); err != nil {
			s.log.Debugf("complete job allocation: %s", launch.Strerror(err))
		}
	}
	if err != nil {
		return s.errorExit, nil
	}
	return launch.ExitCode(rc), nil
}

// jobDesc is the job srun asks for when it makes its own allocation.
func (s *srun) jobDesc(ctl *launch.Ctl, o *jobopt.Opts, argv []string, submitLine string) (*msg.JobDesc, error) {
	// srun's _opt_verify: the task count follows the node count and
	// --ntasks-per-node, and -c raises the per-node CPU minimum.
	if !o.NtasksSet && o.NodesSet && o.MinNodes > 0 {
		o.Ntasks = o.MinNodes
		if o.NtasksPerNode != jobopt.NoVal && o.NtasksPerNode > 0 {
			o.Ntasks, o.NtasksSet = o.MinNodes*o.NtasksPerNode, true
		}
	}
	if o.CPUsSet && o.PnMinCPUs < o.CPUsPerTask {
		o.PnMinCPUs = o.CPUsPerTask
	}
	desc, err := ctl.JobDesc(o, submitLine)
	if err != nil {
		return nil, err
	}
	if o.JobName == nil {
		desc.Name = msg.Str(filepath.Base(argv[0]))
	}
	if !o.NodesSet && o.Nodelist != "" {
		if hosts, err := hostlist.Expand(o.Nodelist); err == nil {
			desc.MinNodes = uint32(len(hosts))
		}
	}
	desc.WaitAllNodes = 1
	// The job's command is the program alone, as given (allocate.c).
	desc.Argv = []msg.NullString{msg.Str(argv[0])}
	desc.UserID, desc.GroupID = uint32(os.Getuid()), uint32(os.Getgid())
	return desc, nil
}

// allocFailed reports an allocation that did not come: interrupted while
// pending (the job went away with us; completed when the controller had
// already ended it) or refused.
func (s *srun) allocFailed(err error, completed bool) {
	var ie *launch.InterruptedError
	if errors.As(err, &ie) {
		if completed {
			s.log.Infof("Force Terminated JobId=%d", ie.JobID)
		}
		s.log.Errorf("Job allocation %d has been revoked", ie.JobID)
		return
	}
	s.log.Errorf("Unable to allocate resources: %s", launch.Strerror(err))
}

// allocate gets srun's own allocation.
func (s *srun) allocate(ctx context.Context, ctl *launch.Ctl, o *jobopt.Opts, argv []string, submitLine string, sigs chan os.Signal) (*launch.Allocation, error) {
	desc, err := s.jobDesc(ctl, o, argv, submitLine)
	if err != nil {
		return nil, err
	}
	var completed atomic.Bool
	hooks := launch.AllocHooks{JobComplete: func() { completed.Store(true) }}
	a, err := ctl.AllocateInteractive(ctx, desc, sigs, nil, hooks)
	if err != nil {
		s.allocFailed(err, completed.Load())
		return nil, err
	}
	if c := ctl.Conn.Conf; c.SuspendTimeout != 0 && c.ResumeTimeout != 0 {
		if err := a.WaitReady(ctx, nil); err != nil {
			s.log.Errorf("Job allocation %d has been revoked.", a.JobID)
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// runStep creates the step, launches it and waits for it.
func (s *srun) runStep(ctx context.Context, ctl *launch.Ctl, o *jobopt.Opts, alloc *launch.Allocation, argv []string, submitLine string, ownAlloc bool, sigs chan os.Signal) (uint32, error) {
	req := s.stepRequest(o, alloc, argv, submitLine, ownAlloc)
	step, err := ctl.CreateStep(ctx, alloc.JobID, req)
	if err != nil {
		s.log.Errorf("Unable to create step for job %d: %s", alloc.JobID, launch.Strerror(err))
		return 1 << 8, err
	}
	defer step.Close()
	if s.sopt.pty {
		p, err := startPTY(s.io.stdin, s.io.stdout)
		var te *ttyError
		switch {
		case errors.As(err, &te):
			s.log.Errorf("ioctl(TIOCGWINSZ): %s", errnoText(te.err))
			s.log.Errorf("Not using a pseudo-terminal, disregarding --pty option")
			s.sopt.pty = false
		case err != nil:
			s.log.Errorf("init_msg_engine_port: %s", errnoText(err))
			s.sopt.pty = false
		default:
			s.pty = p
			defer p.close()
			s.log.W = crlfWriter{s.log.W}
		}
	}
	u, _ := user.Current()
	so := launch.StepOptions{
		Argv: argv, Cwd: o.Chdir, UID: uint32(os.Getuid()), GID: uint32(os.Getgid()),
		Label: s.sopt.label, MultiProg: s.sopt.multiProg, Unbuffered: s.sopt.unbuffered,
		KillBadExit: s.sopt.killBadExit, MaxWait: s.sopt.maxWait, StdinTask: -1, PTY: s.sopt.pty,
		Stdin: s.io.stdin, Stdout: s.io.stdout, Stderr: s.io.stderr,
		Alloc: &alloc.Allocation,
		Env:   func(st *launch.Step) []string { return s.taskEnv(ctl, o, alloc, st, ownAlloc, u) },
	}
	if o.CPUsSet {
		so.CPUsPerTask = uint16(o.CPUsPerTask)
	}
	vars := fnameVars{ntasks: step.NTasks, jobID: alloc.JobID, stepID: step.Resp.JobStepID}
	vars.jobName, _ = s.env.Get("SLURM_JOB_NAME")
	if ownAlloc {
		vars.jobName = step.Name
		if o.JobName != nil {
			vars.jobName = *o.JobName
		}
	}
	files, err := s.stdio(o, &so, vars)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if err != nil {
		return 1 << 8, err
	}
	var done sync.WaitGroup
	stopSig := make(chan struct{})
	done.Add(1)
	go func() {
		defer done.Done()
		s.signals(ctx, []*launch.Step{step}, sigs, stopSig)
	}()
	defer func() {
		close(stopSig)
		done.Wait()
	}()
	if err := step.Launch(ctx, so); err != nil {
		step.Abort(context.Background())
		return 1 << 8, err
	}
	return step.Wait(), nil
}

// signals is srun's signal thread: Ctrl-C once prints the task states,
// twice within a second kills the step; TERM/HUP/QUIT kill it; other
// signals are forwarded to the tasks.
func (s *srun) signals(ctx context.Context, steps []*launch.Step, sigs chan os.Signal, stop chan struct{}) {
	// A het step's signals go to every component (launch_p_fwd_signal);
	// the messages name the first.
	step := steps[0]
	each := func(f func(*launch.Step)) {
		for _, st := range steps {
			f(st)
		}
	}
	signal := func(sig int) { each(func(st *launch.Step) { st.Signal(ctx, sig) }) }
	abort := func() {
		each(func(st *launch.Step) {
			st.Cancelled()
			st.Abort(ctx)
		})
	}
	var last time.Time
	killSent := 0
	force := func() {
		if killSent == 0 {
			s.log.Infof("forcing job termination")
			abort()
		} else {
			s.log.Infof("job abort in progress")
		}
		killSent++
	}
	for {
		select {
		case <-stop:
			return
		case sig := <-sigs:
			switch sig {
			case syscall.SIGINT:
				now := s.io.now()
				if s.sopt.quitOnIntr || (!last.IsZero() && now.Sub(last) < time.Second) {
					s.log.Infof("sending Ctrl-C to StepId=%d.%d", step.JobID, step.Resp.JobStepID)
					signal(int(syscall.SIGINT))
					force()
				} else if s.sopt.disableStatus {
					s.log.Infof("sending Ctrl-C to StepId=%d.%d", step.JobID, step.Resp.JobStepID)
					signal(int(syscall.SIGINT))
				} else {
					s.log.Infof("interrupt (one more within 1 sec to abort)")
					each((*launch.Step).PrintStatus)
				}
				last = now
			case syscall.SIGQUIT:
				s.log.Infof("Quit")
				fallthrough
			case syscall.SIGTERM, syscall.SIGHUP:
				s.log.Infof("forcing job termination")
				abort()
			case syscall.SIGCONT:
				s.log.Infof("got SIGCONT")
			default:
				signal(int(sig.(syscall.Signal)))
			}
		}
	}
}

// usageText and helpText are what real 22.05 srun prints for --usage
// and --help.
var (
	//go:embed usage.txt
	usageText string
	//go:embed help.txt
	helpText string
)

// excludeNodes checks -x against an existing allocation: the nodes left,
// or false once the error is logged.
func (s *srun) excludeNodes(o *jobopt.Opts, alloc *launch.Allocation) (int, bool) {
	all, err := hostlist.Expand(alloc.NodeList.Value)
	if err != nil {
		return int(alloc.NodeCnt), true
	}
	exc, _ := hostlist.Expand(o.Exclude)
	var inc []string
	if o.Nodelist != "" {
		inc, _ = hostlist.Expand(o.Nodelist)
	}
	left := slices.Compact(slices.Sorted(slices.Values(all)))
	for _, name := range exc {
		if i := slices.Index(left, name); i >= 0 {
			left = slices.Delete(left, i, i+1)
		}
		if slices.Contains(inc, name) {
			s.log.Errorf("Requested node %s is also in the excluded list.", name)
			s.log.Errorf("Job not submitted.")
			return 0, false
		}
	}
	if len(left) == 0 {
		s.log.Errorf("Hostlist is empty!  Can't run job.")
		return 0, false
	}
	return len(left), true
}

// stdio applies -i, -o and -e to so, per srun's fname_create: a stream to
// srun, a task rank, a per-task pattern or /dev/null opened on the node,
// or a file srun opens itself (returned, for the caller to close).
func (s *srun) stdio(o *jobopt.Opts, so *launch.StepOptions, vars fnameVars) ([]*os.File, error) {
	var files []*os.File
	vars.arrayJobID, _ = s.env.Get("SLURM_ARRAY_JOB_ID")
	vars.arrayTaskID, _ = s.env.Get("SLURM_ARRAY_TASK_ID")
	so.OpenMode = o.OpenMode
	for _, io := range []struct {
		spec, what string
		remote     *string
		input      bool
		local      func(*os.File)
	}{
		{o.Ifname, "stdin", &so.Ifname, true, func(f *os.File) { so.Stdin = f }},
		{o.Ofname, "stdout", &so.Ofname, false, func(f *os.File) { so.Stdout = f }},
		{o.Efname, "stderr", &so.Efname, false, func(f *os.File) { so.Stderr = f }},
	} {
		fn := fnameCreate(io.spec, vars)
		switch fn.kind {
		case ioStream:
		case ioRemote:
			*io.remote = fn.name
			if io.input && fn.task >= 0 {
				so.StdinTask = fn.task
			}
		case ioLocal:
			var f *os.File
			var err error
			if io.input {
				f, err = os.Open(fn.name)
			} else {
				flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
				if o.OpenMode == jobopt.OpenModeAppend {
					flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
				}
				f, err = os.OpenFile(fn.name, flags, 0o644)
			}
			if err != nil {
				s.log.Errorf("Could not open %s file: %s", io.what, errnoText(err))
				return files, err
			}
			files = append(files, f)
			io.local(f)
		}
	}
	if o.Efname == "" && o.Ofname != "" {
		// stderr follows stdout when only -o is given.
		so.Efname = so.Ofname
		if so.Efname == "" {
			so.Stderr = so.Stdout
		}
	}
	return files, nil
}
