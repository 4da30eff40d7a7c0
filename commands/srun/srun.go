package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	jobID                                     uint32
	mpi                                       string
}

type srun struct {
	io        *procIO
	log       *jobopt.Log
	env       *jobopt.Env
	errorExit int
	sopt      srunOpts
	pty       *ptySession // --pty with a terminal, once the step exists
}

func run(args []string, pio *procIO) int {
	s := &srun{io: pio, log: &jobopt.Log{Prog: "srun", W: pio.stderr}, env: jobopt.NewEnv(pio.environ), errorExit: 1}
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
	case "overlap", "whole", "wait", "msg-timeout", "relative", "slurmd-debug", "propagate", "preserve-env":
		// Accepted; goslurm's srun does not change its behaviour for them yet.
	default:
		s.log.Errorf("--%s is not supported by goslurm's srun yet", name)
		return &jobopt.ExitError{Code: jobopt.ExitOption}
	}
	return nil
}

func (s *srun) main(args []string) (int, error) {
	cli := launch.CLI{Cmd: jobopt.Srun, EnvTable: jobopt.SrunEnv, Usage: usageText, Custom: s.custom,
		Log: s.log, Env: s.env, Stdout: s.io.stdout, Stderr: s.io.stderr, Cwd: s.io.cwd, Now: s.io.now}
	ctl, o, operands, err := cli.Parse(args)
	if err != nil {
		return 0, err
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
		data, err := os.ReadFile(argv[0])
		if err != nil {
			s.log.Errorf("Could not open multi_prog config file %s", argv[0])
			return s.errorExit, nil
		}
		argv = append([]string{argv[0], string(data)}, argv[1:]...)
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
	submitLine := strings.Join(args, " ")
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

// allocate gets srun's own allocation.
func (s *srun) allocate(ctx context.Context, ctl *launch.Ctl, o *jobopt.Opts, argv []string, submitLine string, sigs chan os.Signal) (*launch.Allocation, error) {
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
	desc.Argv = nil
	for _, a := range argv {
		desc.Argv = append(desc.Argv, msg.Str(a))
	}
	desc.UserID, desc.GroupID = uint32(os.Getuid()), uint32(os.Getgid())
	a, err := ctl.AllocateInteractive(ctx, desc, sigs, nil, launch.AllocHooks{})
	if err != nil {
		var ie *launch.InterruptedError
		if errors.As(err, &ie) {
			// Interrupted while pending: the job went away with us.
			s.log.Errorf("Job allocation %d has been revoked", ie.JobID)
		} else {
			s.log.Errorf("Unable to allocate resources: %s", launch.Strerror(err))
		}
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
		KillBadExit: s.sopt.killBadExit, StdinTask: -1, PTY: s.sopt.pty,
		Stdin: s.io.stdin, Stdout: s.io.stdout, Stderr: s.io.stderr,
		Alloc: &alloc.Allocation,
		Env:   func(st *launch.Step) []string { return s.taskEnv(ctl, o, alloc, st, ownAlloc, u) },
	}
	if o.CPUsSet {
		so.CPUsPerTask = uint16(o.CPUsPerTask)
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	// stdio per srun's fname_create: a stream to srun, a task rank, a
	// per-task pattern or /dev/null opened on the node, or a file srun
	// opens itself.
	for _, io := range []struct {
		spec   string
		remote *string
		input  bool
		local  func(*os.File)
	}{
		{o.Ifname, &so.Ifname, true, func(f *os.File) { so.Stdin = f }},
		{o.Ofname, &so.Ofname, false, func(f *os.File) { so.Stdout = f }},
		{o.Efname, &so.Efname, false, func(f *os.File) { so.Stderr = f }},
	} {
		kind, task := classifyIO(io.spec, step.NTasks)
		switch kind {
		case ioStream:
		case ioRemote:
			*io.remote = io.spec
			if io.input && task >= 0 {
				so.StdinTask = task
			}
		case ioLocal:
			var f *os.File
			var err error
			if io.input {
				f, err = os.Open(io.spec)
			} else {
				f, err = os.OpenFile(io.spec, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
			}
			if err != nil {
				what := map[bool]string{true: "stdin", false: "stdout"}[io.input]
				if io.remote == &so.Efname {
					what = "stderr"
				}
				s.log.Errorf("Could not open %s file: %v", what, err)
				return 1 << 8, err
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
	var done sync.WaitGroup
	stopSig := make(chan struct{})
	done.Add(1)
	go func() {
		defer done.Done()
		s.signals(ctx, step, sigs, stopSig)
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
func (s *srun) signals(ctx context.Context, step *launch.Step, sigs chan os.Signal, stop chan struct{}) {
	var last time.Time
	killSent := 0
	force := func() {
		if killSent == 0 {
			s.log.Infof("forcing job termination")
			step.Cancelled()
			step.Abort(ctx)
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
					step.Signal(ctx, int(syscall.SIGINT))
					force()
				} else if s.sopt.disableStatus {
					s.log.Infof("sending Ctrl-C to StepId=%d.%d", step.JobID, step.Resp.JobStepID)
					step.Signal(ctx, int(syscall.SIGINT))
				} else {
					s.log.Infof("interrupt (one more within 1 sec to abort)")
					step.PrintStatus()
				}
				last = now
			case syscall.SIGQUIT:
				s.log.Infof("Quit")
				fallthrough
			case syscall.SIGTERM, syscall.SIGHUP:
				s.log.Infof("forcing job termination")
				step.Cancelled()
				step.Abort(ctx)
			case syscall.SIGCONT:
				s.log.Infof("got SIGCONT")
			default:
				step.Signal(ctx, int(sig.(syscall.Signal)))
			}
		}
	}
}

const usageText = `Usage: srun [-N nnodes] [-n ntasks] [-i in] [-o out] [-e err]
            [-c ncpus] [-r n] [-p partition] [--hold] [-t minutes]
            [-D path] [--immediate[=secs]] [--overcommit] [--no-kill]
            [--label] [--unbuffered] [-m dist] [-J jobname]
            [--jobid=id] [--verbose] [--slurmd_debug=#] [--mpi=type]
            [--core=type] [-T threads] [-W sec] [--checkpoint=time]
            [--export=env_vars] [--multi-prog] [--cpu-bind=type]
            [--mem-bind=type] [--ntasks-per-node=n] [--exact]
            executable [args...]
`

type ioKind int

const (
	ioStream ioKind = iota
	ioRemote
	ioLocal
)

// classifyIO is srun's fname_create: "", "all" and "-..." stream through
// srun; "none" (/dev/null), a task rank below ntasks and a pattern with %
// are handed to the step daemons; any other name is a file srun opens.
func classifyIO(spec string, ntasks uint32) (ioKind, int) {
	switch {
	case spec == "" || strings.HasPrefix(strings.ToLower(spec), "all") || strings.HasPrefix(spec, "-"):
		return ioStream, -1
	case spec == "/dev/null" || strings.EqualFold(spec, "none"):
		return ioRemote, -1
	}
	if n, err := strconv.ParseUint(spec, 10, 32); err == nil && uint32(n) < ntasks {
		return ioRemote, int(n)
	}
	if strings.Contains(spec, "%") && !strings.Contains(spec, "\\") {
		return ioRemote, -1
	}
	return ioLocal, -1
}
