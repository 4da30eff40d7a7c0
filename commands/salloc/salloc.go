package main

import (
	"context"
	_ "embed"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/launch"
	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

type procIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	environ        []string
	cwd            string
	now            func() time.Time
}

func sysIO() *procIO {
	cwd, _ := os.Getwd()
	return &procIO{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, environ: os.Environ(), cwd: cwd, now: time.Now}
}

type salloc struct {
	io        *procIO
	log       *jobopt.Log
	env       *jobopt.Env
	errorExit int
	noShell   bool
	killSig   syscall.Signal // --kill-command: sent to the command when the allocation is revoked; 0: none
	argv0     string
}

func run(args []string, pio *procIO) int {
	s := &salloc{io: pio, log: &jobopt.Log{Prog: "salloc", W: pio.stderr}, env: jobopt.NewEnv(pio.environ),
		errorExit: 1, argv0: "salloc"}
	if len(args) > 0 {
		s.argv0 = args[0]
	}
	if v, ok := s.env.Get("SLURM_EXIT_ERROR"); ok {
		if n, _ := strconv.Atoi(v); n == 0 {
			s.log.Errorf("SLURM_EXIT_ERROR has zero value")
		} else {
			s.errorExit = n
		}
	}
	code, err := s.main(args)
	return launch.ExitStatus(code, err, s.log, s.errorExit)
}

func (s *salloc) custom(name, arg string, has bool) error {
	switch name {
	case "no-shell":
		s.noShell = true
	case "kill-command":
		s.killSig = syscall.SIGTERM
		if has {
			n := jobopt.SignalNumber(arg)
			if n <= 0 {
				s.log.Errorf("Invalid --kill-command specification")
				return &jobopt.ExitError{Code: jobopt.ExitOption}
			}
			s.killSig = syscall.Signal(n)
		}
	case "bell", "no-bell", "wait-all-nodes", "get-user-env":
		// Accepted; no effect in goslurm's salloc yet.
	default:
		s.log.Errorf("--%s is not supported by goslurm's salloc yet", name)
		return &jobopt.ExitError{Code: jobopt.ExitOption}
	}
	return nil
}

func (s *salloc) main(args []string) (int, error) {
	cli := launch.CLI{Cmd: jobopt.Salloc, EnvTable: jobopt.SallocEnv, Usage: usageText, Help: helpText, Custom: s.custom,
		Log: s.log, Env: s.env, Stdout: s.io.stdout, Stderr: s.io.stderr, Cwd: s.io.cwd, Now: s.io.now}
	ctl, o, command, err := cli.Parse(args)
	if err != nil {
		return 0, err
	}
	conn := ctl.Conn
	// A ":" after the options starts the next het job component's.
	opts := []*jobopt.Opts{o}
	// Each component's submit line is the command line from its ":" on
	// (salloc moves argv there), the first's the whole.
	submitLines := []string{strings.Join(args, " ")}
	for len(command) > 0 && command[0] == ":" {
		submitLines = append(submitLines, strings.Join(command, " "))
		po, n, err := cli.ParseComponent(ctl, opts[len(opts)-1], jobopt.SallocEnv, command)
		if err != nil {
			return 0, err
		}
		opts = append(opts, po)
		command = command[n:]
	}
	if len(command) == 0 && !s.noShell {
		command = s.defaultCommand(conn.Conf, o.UID, s.argv0)
	}

	jc, err := newJobControl(s.io.stdin, s.noShell)
	if err != nil {
		s.log.Errorf("%v", err)
		return s.errorExit, nil
	}
	defer jc.restore()

	if s.log.Verbose >= 1 {
		for _, l := range o.SetOptionLines() {
			s.log.Infof("%s", l)
		}
		// Real salloc loads every select plugin at -v and says so.
		s.log.Verbosef("select/cons_res: common_init: select/cons_res loaded")
		s.log.Verbosef("select/cons_tres: common_init: select/cons_tres loaded")
		s.log.Verbosef("select/cray_aries: init: Cray/Aries node selection plugin loaded")
		s.log.Verbosef("select/linear: init: Linear node selection plugin loaded with argument 4")
	}
	var descs []*msg.JobDesc
	for i, o := range opts {
		if o.NtasksPerNode != jobopt.NoVal && o.NtasksPerNode > 0 && !o.NtasksSet {
			o.Ntasks, o.NtasksSet = o.MinNodes*o.NtasksPerNode, true
		}
		if !o.NtasksSet && o.NodesSet && o.MinNodes > 0 {
			o.Ntasks = o.MinNodes
		}
		if o.Chdir == "" {
			o.Chdir = s.io.cwd
		}
		desc, err := ctl.JobDesc(o, submitLines[i])
		if err != nil {
			return 0, err
		}
		if o.JobName == nil {
			desc.Name = msg.Str("interactive")
			if s.noShell {
				desc.Name = msg.Str("no-shell")
			}
		}
		desc.UserID, desc.GroupID = o.UID, o.GID
		descs = append(descs, desc)
	}
	desc := descs[0]
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGTSTP,
		syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)

	var (
		mu      sync.Mutex
		child   *os.Process
		revoked bool
	)
	hooks := launch.AllocHooks{
		Pending: func(id uint32) { s.log.Infof("Pending job allocation %d", id) },
		JobComplete: func() {
			mu.Lock()
			defer mu.Unlock()
			if !revoked {
				revoked = true
				s.log.Infof("Job allocation %s has been revoked.", jobIDOf(desc))
				if child != nil && s.killSig != 0 {
					syscall.Kill(-child.Pid, s.killSig)
				}
			}
		},
		UserMsg:     func(t string) { s.log.Infof("%s", t) },
		NodeFail:    func(n string) { s.log.Errorf("Node failure on %s", n) },
		NoOtherPort: s.noShell,
	}
	// Only the signals that end salloc give up a pending request.
	cancels := func(sig os.Signal) bool {
		return sig == syscall.SIGINT || sig == syscall.SIGTERM || sig == syscall.SIGHUP || sig == syscall.SIGQUIT
	}
	allocs, err := ctl.AllocateHetInteractive(context.Background(), descs, sigs, cancels, hooks)
	if err != nil {
		var ie *launch.InterruptedError
		switch {
		case errors.As(err, &ie):
			s.log.Infof("Job aborted due to signal")
		case o.Immediate != 0 && slurmerr.Code(err) == slurmerr.ESLURM_NODES_BUSY:
			s.log.Errorf("Unable to allocate resources: %s", launch.Strerror(err))
		default:
			s.log.Errorf("Job submit/allocate failed: %s", launch.Strerror(err))
		}
		return s.errorExit, nil
	}
	a := allocs[0]
	defer a.Close()
	desc.JobID = a.JobID
	s.log.Infof("Granted job allocation %d", a.JobID)
	jc.granted()
	for _, c := range allocs {
		slow := false
		if err := c.WaitReady(context.Background(), func() {
			slow = true
			s.log.Infof("Waiting for resource configuration")
		}); err != nil {
			s.log.Errorf("Job allocation %d has been revoked", c.JobID)
			return s.errorExit, nil
		}
		if slow {
			s.log.Infof("Nodes %s are ready for job", c.NodeList.Value)
		}
	}
	if len(allocs) != len(descs) {
		s.log.Errorf("Job component count mismatch, submit/response count mismatch (%d != %d)", len(descs), len(allocs))
		if err := a.Release(context.Background(), 0); err != nil {
			s.log.Errorf("Unable to clean up job allocation %d: %s", a.JobID, launch.Strerror(err))
		}
		return s.errorExit, nil
	}
	if s.noShell {
		// The allocation stays for later steps (srun --jobid).
		return 0, nil
	}

	status := 0
	ran := false
	if len(command) > 0 {
		env := s.jobEnv(conn, opts, allocs)
		path, err := exec.LookPath(command[0])
		if err != nil {
			s.log.Errorf("_fork_command: Unable to find command \"%s\"", command[0])
		} else {
			cmd := exec.Command(path, command[1:]...)
			cmd.Args[0] = command[0]
			cmd.Env = env
			cmd.Dir = o.Chdir
			cmd.Stdin, cmd.Stdout, cmd.Stderr = s.io.stdin, s.io.stdout, s.io.stderr
			cmd.SysProcAttr = jc.childAttr()
			mu.Lock()
			err = cmd.Start()
			if err == nil {
				child = cmd.Process
			}
			mu.Unlock()
			if err != nil {
				s.log.Errorf("_fork_command: Unable to exec command \"%s\": %v", command[0], err)
			} else {
				ran = true
				// Keyboard signals reach the command through the terminal;
				// salloc itself waits them out (it forwards TERM and HUP).
				fwdDone := make(chan struct{})
				go func() {
					for {
						select {
						case sig := <-sigs:
							if sig == syscall.SIGTERM || sig == syscall.SIGHUP || sig == syscall.SIGUSR1 || sig == syscall.SIGUSR2 {
								syscall.Kill(-cmd.Process.Pid, sig.(syscall.Signal))
							}
						case <-fwdDone:
							return
						}
					}
				}()
				// The status is read from ProcessState; Wait's error only
				// repeats it.
				_ = cmd.Wait()
				jc.commandDone()
				close(fwdDone)
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
					status = int(ws)
				}
			}
		}
	}
	mu.Lock()
	already := revoked
	revoked = true
	mu.Unlock()
	if !already {
		s.log.Infof("Relinquishing job allocation %d", a.JobID)
		if err := a.Release(context.Background(), uint32(status)); err != nil && slurmerr.Code(err) != slurmerr.ESLURM_ALREADY_DONE {
			s.log.Errorf("Unable to clean up job allocation %d: %s", a.JobID, launch.Strerror(err))
		}
	}
	if !ran {
		if len(command) == 0 {
			return 0, nil
		}
		return 1, nil
	}
	ws := syscall.WaitStatus(status)
	switch {
	case ws.Exited():
		return ws.ExitStatus(), nil
	case ws.Signaled():
		switch ws.Signal() {
		case syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGKILL:
			return 0, nil
		}
	}
	return 1, nil
}

func jobIDOf(d *msg.JobDesc) string { return strconv.FormatUint(uint64(d.JobID), 10) }

// jobEnv is the command's environment: salloc's own plus
// env_array_for_job (per component of a het job) and the submit
// variables.
func (s *salloc) jobEnv(conn *slurmcli.Conn, opts []*jobopt.Opts, allocs []*launch.Allocation) []string {
	env := jobopt.NewEnv(s.env.List())
	set := func(k, v string) { env.Set(k, v, true) }
	set("SLURM_SUBMIT_DIR", s.io.cwd)
	h, _ := os.Hostname()
	if i := strings.IndexByte(h, '.'); i >= 0 {
		h = h[:i]
	}
	set("SLURM_SUBMIT_HOST", h)
	if len(allocs) == 1 {
		s.jobEnvFor(env, opts[0], allocs[0], -1)
	} else {
		n := strconv.Itoa(len(allocs))
		set("SLURM_PACK_SIZE", n)
		set("SLURM_HET_SIZE", n)
		// The job-wide task count, when every component has one.
		ntasks, all := 0, true
		for i, a := range allocs {
			o := opts[i]
			s.jobEnvFor(env, o, a, i)
			if !o.NtasksSet {
				all = false
				continue
			}
			ntasks += hetTasks(o, a)
		}
		if all && ntasks > 0 {
			set("SLURM_NTASKS", strconv.Itoa(ntasks))
			set("SLURM_NPROCS", strconv.Itoa(ntasks))
		}
	}
	set("SLURM_CLUSTER_NAME", conn.Conf.ClusterName)
	return env.List()
}

// jobEnvFor is env_array_for_job for one allocation: het is the het job
// component (-1 for a job that is not heterogeneous), which suffixes
// every name (SLURM_JOB_ID stays the leader's, unsuffixed).
func (s *salloc) jobEnvFor(env *jobopt.Env, o *jobopt.Opts, a *launch.Allocation, het int) {
	set := func(k, v string) { env.SetHet(k, het, v) }
	id := strconv.Itoa(int(a.JobID))
	if het < 1 {
		env.Set("SLURM_JOB_ID", id, true)
	}
	set("SLURM_JOB_ID", id)
	set("SLURM_JOBID", id)
	name := "interactive"
	if o.JobName != nil {
		name = *o.JobName
	}
	set("SLURM_JOB_NAME", name)
	set("SLURM_JOB_NODELIST", a.NodeList.Value)
	set("SLURM_NODELIST", a.NodeList.Value)
	nn := strconv.Itoa(int(a.NodeCnt))
	set("SLURM_JOB_NUM_NODES", nn)
	set("SLURM_NNODES", nn)
	set("SLURM_JOB_CPUS_PER_NODE", a.CPUsPerNodeString())
	set("SLURM_JOB_PARTITION", a.Partition.Value)
	alias := a.AliasList.Value
	if !a.AliasList.Valid {
		alias = "(null)"
	}
	set("SLURM_NODE_ALIASES", alias)
	a.SetAssocEnv(set)
	set("SLURM_TASKS_PER_NODE", tasksPerNode(a, o))
	if o.NtasksSet {
		n := o.Ntasks
		if het >= 0 {
			n = hetTasks(o, a)
		}
		set("SLURM_NTASKS", strconv.Itoa(n))
		set("SLURM_NPROCS", strconv.Itoa(n))
	}
	if o.CPUsSet {
		set("SLURM_CPUS_PER_TASK", strconv.Itoa(o.CPUsPerTask))
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"SLURM_NTASKS_PER_NODE", o.NtasksPerNode}, {"SLURM_NTASKS_PER_SOCKET", o.NtasksPerSocket}} {
		if _, ok := s.env.Get(v.name); !ok && v.n != jobopt.NoVal && v.n > 0 {
			set(v.name, strconv.Itoa(v.n))
		}
	}
	if a.PnMinMemory != 0 && a.PnMinMemory != pack.NoVal64 {
		const memPerCPU = 0x8000000000000000
		if a.PnMinMemory&memPerCPU != 0 {
			set("SLURM_MEM_PER_CPU", strconv.FormatUint(a.PnMinMemory&^memPerCPU, 10))
		} else {
			set("SLURM_MEM_PER_NODE", strconv.FormatUint(a.PnMinMemory, 10))
		}
	}
}

// hetTasks is a het job component's task count as salloc puts it in the
// environment: per node times the nodes granted, else at least a task
// per node.
func hetTasks(o *jobopt.Opts, a *launch.Allocation) int {
	if o.NtasksPerNode != jobopt.NoVal && o.NtasksPerNode > 0 {
		return int(a.NodeCnt) * o.NtasksPerNode
	}
	return max(o.Ntasks, int(a.NodeCnt))
}

// tasksPerNode is SLURM_TASKS_PER_NODE: a block layout of the requested
// tasks over the allocated CPUs, or one task per CPU (per cpus-per-task)
// when no task count was asked for.
func tasksPerNode(a *launch.Allocation, o *jobopt.Opts) string {
	var cpus []uint32
	for i, c := range a.Allocation.CPUsPerNode {
		for r := uint32(0); r < a.CPUCountReps[i]; r++ {
			cpus = append(cpus, uint32(c))
		}
	}
	cpt := uint32(1)
	if o.CPUsSet && o.CPUsPerTask > 0 {
		cpt = uint32(o.CPUsPerTask)
	}
	counts := make([]uint32, len(cpus))
	if !o.NtasksSet {
		for i, c := range cpus {
			counts[i] = max(c/cpt, 1)
		}
		return launch.CompressCounts(counts)
	}
	left := uint32(o.Ntasks)
	for i := range cpus {
		if left == 0 {
			break
		}
		counts[i] = 1
		left--
	}
	for left > 0 {
		progress := false
		for i, c := range cpus {
			if left > 0 && (counts[i]+1)*cpt <= c {
				counts[i]++
				left--
				progress = true
			}
		}
		if !progress {
			for i := range counts {
				if left == 0 {
					break
				}
				counts[i]++
				left--
			}
		}
	}
	return launch.CompressCounts(counts)
}

// usageText and helpText are what real 22.05 salloc prints for --usage
// and --help.
var (
	//go:embed usage.txt
	usageText string
	//go:embed help.txt
	helpText string
)
