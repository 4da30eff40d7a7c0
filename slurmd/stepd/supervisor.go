package stepd

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/cgroup"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmd/slurmlog"
)

// Main is slurmstepd's main: the supervisor of one step (its launch request
// arrives on stdin from slurmd), or, with the internal argument exec-batch,
// the exec helper that becomes the batch script.
func Main(args []string) int {
	if len(args) > 0 && args[0] == helperArg {
		return runHelper()
	}
	return runSupervisor(os.Stdin, os.Stdout)
}

func runSupervisor(in io.Reader, out *os.File) int {
	// Our own session, so signals aimed at slurmd's process group or its
	// terminal do not reach the step (slurmd normally starts us that way
	// already, and then this fails harmlessly).
	unix.Setsid()
	// Like slurmstepd, outlive stray SIGTERM/SIGINT/SIGHUP: the step ends
	// through its socket. A handler rather than SIG_IGN, because ignored
	// signals would stay ignored in the job across exec.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
	go func() {
		for range sigs {
		}
	}()
	cfg, mt, body, err := readInit(in)
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return 1
	}
	log := openLog(cfg)
	var (
		st   supervised
		path string
	)
	switch mt {
	case msgtype.REQUEST_BATCH_JOB_LAUNCH:
		req := body.(msg.BatchJobLaunch)
		st = newBatch(cfg, &req, log)
		path = SocketPath(cfg.SpoolDir, cfg.NodeName, req.JobID, StepIDBatch)
	case msgtype.REQUEST_LAUNCH_TASKS:
		req := body.(msg.LaunchTasksRequest)
		ts, err := newTaskStep(cfg, &req, log)
		if err != nil {
			fmt.Fprintf(out, "error: %v\n", err)
			return 1
		}
		st = ts
		path = SocketPath(cfg.SpoolDir, cfg.NodeName, req.StepID.JobID, req.StepID.StepID)
	default:
		fmt.Fprintf(out, "error: stepd: cannot supervise %v\n", mt)
		return 1
	}
	l, err := listenStep(path)
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return 1
	}
	go serveStep(l, st)
	// slurmd may go away from here on: it reads this line and forgets us.
	fmt.Fprintln(out, "ok")
	out.Close()
	os.Stdin.Close()

	st.run()
	l.Close()
	os.Remove(path)
	return 0
}

// supervised is a step a supervisor runs: batch or srun tasks.
type supervised interface {
	stepHandler
	run()
}

// openLog logs to the configured file (append), or nowhere.
func openLog(cfg *Config) *slog.Logger {
	var w io.Writer = io.Discard
	if cfg.LogFile != "" {
		if f, err := os.OpenFile(cfg.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640); err == nil {
			w = f
		}
	}
	// Slurm's log line format, as slurmstepd shares slurmd's log file.
	return slog.New(slurmlog.New(w, slurmlog.Options{})).With("daemon", "slurmstepd", "pid", os.Getpid())
}

// batch supervises one batch script.
type batch struct {
	cfg *Config
	req *msg.BatchJobLaunch
	log *slog.Logger

	uid, gid uint32
	user     string
	groups   []uint32
	userErr  error

	mu      sync.Mutex
	st      int32
	pid     int      // the script's pid and process group, 0 before it runs
	trk     tracker  // set before pid
	stderr  *os.File // the job's stderr, for Slurm's *** lines
	aborted bool     // killed before the script started
	msgSent bool
	done    chan struct{} // closed when the script has exited
}

func newBatch(cfg *Config, req *msg.BatchJobLaunch, log *slog.Logger) *batch {
	b := &batch{cfg: cfg, req: req, uid: req.UID, gid: req.GID, st: StateStarting,
		done: make(chan struct{}), log: log.With("job", req.JobID)}
	b.user, b.groups, b.userErr = lookupUser(req)
	return b
}

// lookupUser finds the job user's name and groups: the credential's gid
// list, else the request's (a batch launch comes from slurmctld; task steps
// pass none), else the local group database (initgroups). The primary gid
// is always included.
func lookupUser(req *msg.BatchJobLaunch) (string, []uint32, error) {
	name := req.UserName.Value
	if !req.UserName.Valid && req.Cred != nil && req.Cred.Body.PwName.Valid {
		name = req.Cred.Body.PwName.S
	}
	var groups []uint32
	if req.Cred != nil {
		groups = append(groups, req.Cred.Body.GIDs...)
	}
	if len(groups) == 0 {
		groups = append(groups, req.GIDs...)
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(req.UID), 10))
	if err != nil {
		return name, nil, fmt.Errorf("user %d not found on host: %w", req.UID, err)
	}
	if name == "" {
		name = u.Username
	}
	if len(groups) == 0 {
		ids, err := u.GroupIds()
		if err != nil {
			return name, nil, fmt.Errorf("groups of %s: %w", name, err)
		}
		for _, s := range ids {
			if g, err := strconv.ParseUint(s, 10, 32); err == nil {
				groups = append(groups, uint32(g))
			}
		}
	}
	has := false
	for _, g := range groups {
		has = has || g == req.GID
	}
	if !has {
		groups = append(groups, req.GID)
	}
	return name, groups, nil
}

func (b *batch) setState(s int32) {
	b.mu.Lock()
	b.st = s
	b.mu.Unlock()
}

// run takes the step from launch to the completion report.
func (b *batch) run() {
	slurmRC, status := b.execute()
	b.setState(StateEnding)
	if b.cfg.RunEpilog && b.cfg.Epilog != "" {
		if err := runScript(b.cfg, b.cfg.Epilog, "epilog_slurmd", scriptEnv(b.cfg, b.req, b.user, "epilog_slurmd")); err != nil {
			b.log.Error("epilog failed", "err", err)
			if slurmRC == 0 {
				slurmRC = slurmerr.ESLURMD_EPILOG_FAILED
			}
		}
	}
	b.mu.Lock()
	if b.stderr != nil {
		b.stderr.Close()
		b.stderr = nil
	}
	b.mu.Unlock()
	os.RemoveAll(b.batchDir())
	b.complete(slurmRC, status)
}

func (b *batch) batchDir() string {
	return filepath.Join(b.cfg.SpoolDir, fmt.Sprintf("job%05d", b.req.JobID))
}

// execute runs prolog and script and returns (slurm_rc, raw wait status).
func (b *batch) execute() (int, uint32) {
	if b.userErr != nil {
		b.log.Error("cannot run job", "err", b.userErr)
		return slurmerr.ESLURMD_UID_NOT_FOUND, 0
	}
	if b.cfg.RunProlog && b.cfg.Prolog != "" {
		if err := runScript(b.cfg, b.cfg.Prolog, "prolog_slurmd", scriptEnv(b.cfg, b.req, b.user, "prolog_slurmd")); err != nil {
			b.log.Error("prolog failed", "err", err)
			return slurmerr.ESLURMD_PROLOG_FAILED, 0
		}
	}
	script, err := b.writeScript()
	if err != nil {
		b.log.Error("cannot write batch script", "err", err)
		return slurmerr.ESLURMD_SETUP_ENVIRONMENT_ERROR, 0
	}
	in, err := b.helperInit(script)
	if err != nil {
		b.log.Error("cannot set up job", "err", err)
		return slurmerr.ESLURMD_SETUP_ENVIRONMENT_ERROR, 0
	}
	b.mu.Lock()
	aborted := b.aborted
	b.mu.Unlock()
	if aborted {
		return 0, uint32(syscall.SIGKILL)
	}
	trk, err := newTracker(b.cfg, b.uid, b.gid, cgroup.StepID{JobID: b.req.JobID, StepID: StepIDBatch, HetComp: NoVal}, b.req.Cred)
	if err != nil {
		b.log.Error("cannot set up process tracking", "err", err)
		return slurmerr.ESLURMD_SETUP_ENVIRONMENT_ERROR, 0
	}
	defer trk.close()
	cmd, stderr, err := startHelper(in, func(c *exec.Cmd) error { return trk.start(c, 0) })
	if err != nil {
		// A user-side failure (unreadable work dir, output path refused):
		// the job fails with exit code 1, the node stays healthy.
		b.log.Error("cannot start batch script", "err", err)
		trk.killAll()
		return 0, 1 << 8
	}
	b.mu.Lock()
	b.trk, b.pid, b.stderr, b.st = trk, cmd.Process.Pid, stderr, StateRunning
	aborted = b.aborted
	b.mu.Unlock()
	if aborted {
		trk.signal(unix.SIGKILL)
	}
	b.log.Info("batch script started", "pid", cmd.Process.Pid)
	cmd.Wait()
	close(b.done)
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	// Whatever the script left behind goes with it, as proctrack does at
	// the end of a step.
	trk.killAll()
	status := uint32(ws)
	if n := trk.oom(); n > 0 {
		m := oomMessage(n, fmt.Sprintf("StepId=%d.batch", b.req.JobID))
		b.log.Error(m)
		b.mu.Lock()
		if b.stderr != nil {
			fmt.Fprintf(b.stderr, "slurmstepd: error: %s\n", m)
		}
		b.mu.Unlock()
		status = sigOOM
	}
	b.log.Info("batch script exited", "status", uint32(ws))
	return 0, status
}

// writeScript stores the script as <spool>/job%05u/slurm_script: the
// directory root-owned, group = job gid, 0750; the file the user's, 0700.
func (b *batch) writeScript() (string, error) {
	dir := b.batchDir()
	if err := os.Mkdir(dir, 0o750); err != nil && !os.IsExist(err) {
		return "", err
	}
	if err := os.Lchown(dir, -1, int(b.gid)); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "slurm_script")
	os.Remove(path)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o700)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if _, err := f.WriteString(b.req.Script.Value); err != nil {
		return "", err
	}
	if err := f.Chown(int(b.uid), int(b.gid)); err != nil {
		return "", err
	}
	return path, f.Chmod(0o700)
}

func (b *batch) helperInit(script string) (*helperInit, error) {
	host, port := b.cfg.ctldHostPort()
	env, lim := BatchEnv(b.req, NodeEnv{
		NodeName: b.cfg.NodeName, ClusterName: b.cfg.ClusterName, ConfPath: b.cfg.ConfPath,
		CtldHost: host, CtldPort: port, SelectPluginID: b.cfg.SelectPluginID, UserName: b.user,
	})
	jobName, _ := env.Get("SLURM_JOB_NAME")
	workDir := b.req.WorkDir.Value
	if workDir == "" {
		workDir = "/tmp"
	}
	pj := &PathJob{JobID: b.req.JobID, StepID: StepIDBatch, ArrayJobID: b.req.ArrayJobID,
		ArrayTaskID: b.req.ArrayTaskID, UserName: b.user, JobName: jobName,
		Hostname: b.cfg.hostname(), WorkDir: workDir}
	out := b.req.StdOut.Value
	if !b.req.StdOut.Valid {
		out = DefaultBatchOutput(pj)
	}
	errName := out
	if b.req.StdErr.Valid {
		errName = b.req.StdErr.Value
	}
	stdin := "/dev/null"
	if b.req.StdIn.Valid {
		stdin = ExpandBatchPath(b.req.StdIn.Value, pj, 0)
	}
	appendMode := b.cfg.JobFileAppend
	switch b.req.OpenMode {
	case 1:
		appendMode = true
	case 2:
		appendMode = false
	}
	argv := []string{script}
	for i, a := range b.req.Argv {
		if i > 0 {
			argv = append(argv, a.Value)
		}
	}
	return &helperInit{UID: b.uid, GID: b.gid, Groups: b.groups, WorkDir: workDir,
		Stdin: stdin, Stdout: ExpandBatchPath(out, pj, 0), Stderr: ExpandBatchPath(errName, pj, 0),
		Append: appendMode, Script: script, Argv: argv, Env: env, Umask: lim.Umask, RLimits: lim.RLimits}, nil
}

// startHelper starts the exec helper as the user and waits for its verdict.
// stdio, when given, are the helper's descriptors 0-2 (nil: /dev/null).
// start starts the command (a tracker's start: process group or cgroup).
func startHelper(in *helperInit, start func(*exec.Cmd) error, stdio ...*os.File) (*exec.Cmd, *os.File, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	initR, initW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer initR.Close()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		initW.Close()
		return nil, nil, err
	}
	mine := os.NewFile(uintptr(pair[0]), "status")
	theirs := os.NewFile(uintptr(pair[1]), "status-helper")
	defer mine.Close()
	cmd := exec.Command(exe, helperArg)
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{initR, theirs}
	if len(stdio) == 3 {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio[0], stdio[1], stdio[2]
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Getuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: in.UID, Gid: in.GID, Groups: in.Groups}
	} else {
		// Not root (a user's own cluster, as `make demo`): like Slurm's
		// slurmstepd there is nothing to drop and no right to set groups,
		// so the helper keeps ours; it still insists on the job's uid/gid.
		in.KeepGroups = true
	}
	err = start(cmd)
	theirs.Close()
	if err != nil {
		initW.Close()
		return nil, nil, fmt.Errorf("start exec helper as uid %d: %w", in.UID, err)
	}
	data, werr := json.Marshal(in)
	if werr == nil {
		_, werr = initW.Write(data)
	}
	initW.Close()
	stderr, err := receiveStatus(int(mine.Fd()))
	if err != nil || werr != nil {
		unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		cmd.Wait()
		if err == nil {
			err = werr
			stderr.Close()
		}
		return nil, nil, err
	}
	return cmd, stderr, nil
}

// --- socket requests -------------------------------------------------------

func (b *batch) state() int32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.st
}

func (b *batch) owner() uint32 { return b.uid }

func (b *batch) authorized(uid uint32) bool {
	return uid == 0 || uid == b.cfg.SlurmUserUID
}

// signal is _handle_signal_container for the batch step.
func (b *batch) signal(sig, flags int, details string, from uint32) int32 {
	if from != b.uid && !b.authorized(from) {
		b.log.Error("signal request refused", "from_uid", from, "owner", b.uid)
		return int32(unix.EPERM)
	}
	b.mu.Lock()
	if b.pid == 0 {
		defer b.mu.Unlock()
		switch sig {
		case int(unix.SIGKILL), int(unix.SIGTERM), SigAbort, SigTermKill:
			b.aborted = true
			return 0
		}
		return slurmerr.ESLURMD_JOB_NOTRUNNING
	}
	if b.st >= StateEnding {
		b.mu.Unlock()
		return slurmerr.ESLURMD_JOB_NOTRUNNING
	}
	b.announce(sig, details)
	pid, trk := b.pid, b.trk
	// Signalling a cgroup step freezes it for a moment: not under mu.
	b.mu.Unlock()
	switch sig {
	case SigTimeLimit, SigPreempted, SigNodeFail, SigRequeued, SigFailure, 992:
		return 0 // message only
	case SigAbort:
		sig = int(unix.SIGKILL)
	case SigTermKill:
		go b.termKill()
		return 0
	}
	if flags&KillJobBatch != 0 {
		if err := unix.Kill(pid, unix.Signal(sig)); err != nil && err != unix.ESRCH {
			return int32(err.(unix.Errno))
		}
		return 0
	}
	trk.signal(unix.Signal(sig))
	return 0
}

// announce writes Slurm's *** line to the job's stderr, once. Caller holds mu.
func (b *batch) announce(sig int, details string) {
	if b.msgSent || b.st >= StateEnding || b.stderr == nil {
		return
	}
	now := time.Now().Format("2006-01-02T15:04:05")
	entity := fmt.Sprintf("JOB %d ON %s", b.req.JobID, b.cfg.NodeName)
	var line string
	switch sig {
	case SigTimeLimit:
		line = fmt.Sprintf("*** %s CANCELLED AT %s DUE TO TIME LIMIT ***", entity, now)
	case SigPreempted:
		line = fmt.Sprintf("*** %s CANCELLED AT %s DUE TO PREEMPTION ***", entity, now)
	case SigNodeFail:
		line = fmt.Sprintf("*** %s CANCELLED AT %s DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***", entity, now)
	case SigRequeued:
		line = fmt.Sprintf("*** %s CANCELLED AT %s DUE TO JOB REQUEUE ***", entity, now)
	case SigFailure:
		line = fmt.Sprintf("*** %s FAILED (non-zero exit code or other failure mode) ***", entity)
	case int(unix.SIGTERM), int(unix.SIGKILL), SigTermKill:
		line = fmt.Sprintf("*** %s CANCELLED AT %s ***", entity, now)
	default:
		return
	}
	b.msgSent = true
	fmt.Fprintf(b.stderr, "slurmstepd: error: %s\n", line)
	if details != "" {
		fmt.Fprintf(b.stderr, "slurmstepd: error: *** REASON: %s ***\n", details)
	}
}

// termKill is SIG_TERM_KILL: SIGCONT and SIGTERM to the job, KillWait for
// it to go, then SIGKILL.
func (b *batch) termKill() {
	b.mu.Lock()
	trk := b.trk
	b.mu.Unlock()
	trk.signal(unix.SIGCONT)
	trk.signal(unix.SIGTERM)
	t := time.NewTimer(b.cfg.killWait())
	defer t.Stop()
	select {
	case <-b.done:
	case <-t.C:
		trk.signal(unix.SIGKILL)
	}
}

func (b *batch) terminate(from uint32) int32 {
	if from != b.uid && !b.authorized(from) {
		return int32(unix.EPERM)
	}
	b.mu.Lock()
	if b.pid == 0 {
		b.aborted = true
		b.mu.Unlock()
		return 0
	}
	trk := b.trk
	b.mu.Unlock()
	trk.signal(unix.SIGKILL)
	return 0
}
