package stepd

// Supervision of an srun step (REQUEST_LAUNCH_TASKS): this node's tasks run
// as the user through the exec helper, their stdio goes to srun over the
// I/O stream (or to files from srun's -o/-e/-i patterns), srun hears
// RESPONSE_LAUNCH_TASKS and MESSAGE_TASK_EXIT on its response port, and
// slurmctld REQUEST_STEP_COMPLETE for this node's rank.

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/cgroup"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// launchLabelIO is LAUNCH_LABEL_IO: srun labels the lines itself, the flag
// only sets SLURM_LABELIO for the tasks.
const launchLabelIO = 0x10

type taskStep struct {
	cfg    *Config
	req    *msg.LaunchTasksRequest
	log    *slog.Logger
	nodeID uint32
	gtids  []uint32
	user   string
	groups []uint32
	srun   netip.Addr

	mu      sync.Mutex
	st      int32
	pids    []int // per local task, 0 until started
	trk     tracker
	aborted bool
	done    chan struct{}
	ptyConn net.Conn // srun's pty port (window size changes)
	// msgErr is slurmstepd's own copy of local task 0's stderr pipe,
	// kept open until the step ends so its "*** STEP ... ***" notices
	// reach srun as that task's output, after the task's own (nil when
	// that stderr is a file or not streamed). msgSent: one notice only.
	msgErr  *os.File
	msgSent bool
}

// pty reports a LAUNCH_PTY step.
func (ts *taskStep) pty() bool { return ts.req.Flags&launchPTY != 0 }

// hasTask0 reports whether global task 0 runs on this node.
func (ts *taskStep) hasTask0() bool {
	for _, g := range ts.gtids {
		if g == 0 {
			return true
		}
	}
	return false
}

// nodeIndex finds this node in the step's complete_nodelist.
func nodeIndex(nodelist, node string) (uint32, error) {
	hosts, err := hostlist.Expand(nodelist)
	if err != nil {
		return 0, err
	}
	for i, h := range hosts {
		if h == node {
			return uint32(i), nil
		}
	}
	return 0, slurmErr(slurmerr.ESLURM_INVALID_NODE_NAME)
}

func newTaskStep(cfg *Config, req *msg.LaunchTasksRequest, log *slog.Logger) (*taskStep, error) {
	id, err := nodeIndex(req.CompleteNodelist.Value, cfg.NodeName)
	if err != nil {
		return nil, err
	}
	if int(id) >= len(req.GlobalTaskIDs) {
		return nil, fmt.Errorf("stepd: node %d has no task list", id)
	}
	ts := &taskStep{cfg: cfg, req: req, nodeID: id, gtids: req.GlobalTaskIDs[id], st: StateStarting,
		done: make(chan struct{}), log: log.With("step", fmt.Sprintf("%d.%d", req.StepID.JobID, req.StepID.StepID))}
	ts.pids = make([]int, len(ts.gtids))
	// Identity from the credential (22.05 slurmd also requires the body to
	// agree); the body's gid list is the sender's word and is not used.
	if req.Cred == nil || req.Cred.Body.UID != req.UID || req.Cred.Body.GID != req.GID {
		return nil, slurmErr(slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL)
	}
	bl := &msg.BatchJobLaunch{UID: req.UID, GID: req.GID, UserName: req.UserName, Cred: req.Cred}
	if ts.user, ts.groups, err = lookupUser(bl); err != nil {
		return nil, err
	}
	if a := req.OrigAddr; a.Family == codec.AFInet {
		ts.srun = netip.AddrFrom4([4]byte(a.IP[:4]))
	} else if a.Family == codec.AFInet6 {
		ts.srun = netip.AddrFrom16(a.IP)
	}
	if !ts.srun.IsValid() {
		return nil, fmt.Errorf("stepd: launch request has no srun address")
	}
	return ts, nil
}

// taskEnv is a task's environment: srun's, then what slurmd and
// slurmstepd add, in the order a real 22.05 task sees them
// (testdata/real_task_env.txt). SLURM_RLIMIT_* are consumed; unlike the
// batch script, an srun task keeps SLURM_UMASK.
func (ts *taskStep) taskEnv(ltid int) (Env, Limits) {
	req := ts.req
	var env Env
	for _, kv := range req.Env {
		if kv.Valid && strings.Contains(kv.Value, "=") {
			env = append(env, kv.Value)
		}
	}
	lim := consumeLimits(&env, false)
	if req.MPIPluginID == msg.MPINone {
		env.Unset("SLURM_MPI_TYPE") // mpi/none takes it out, as a real task shows
	}
	host, port := ts.cfg.ctldHostPort()
	env.Set("SLURM_SRUN_COMM_HOST", ts.srun.String())
	env.Set("SLURM_TOPOLOGY_ADDR", ts.cfg.NodeName)
	env.Set("SLURM_TOPOLOGY_ADDR_PATTERN", "node")
	env.Set("SLURM_CONF", ts.cfg.ConfPath)
	env.Unset("SLURM_CONF_SERVER")
	env.Set("SLURM_CPUS_ON_NODE", strconv.Itoa(int(stepCPUs(req.Cred, ts.cfg.NodeName, ts.cfg.NodeCPUs, req.NodeCPUs))))
	env.Set("SLURM_TASK_PID", "") // the exec helper fills it in place
	if req.Flags&launchLabelIO != 0 {
		env.Set("SLURM_LABELIO", "1")
	}
	env.Set("SLURM_JOB_ID", u32(req.StepID.JobID))
	env.Set("SLURM_JOBID", u32(req.StepID.JobID))
	env.Set("SLURM_NODEID", u32(ts.nodeID))
	env.Set("SLURM_PROCID", u32(ts.gtids[ltid]))
	env.Set("SLURM_LOCALID", strconv.Itoa(ltid))
	env.Set("SLURM_STEP_ID", u32(req.StepID.StepID))
	env.Set("SLURM_STEPID", u32(req.StepID.StepID))
	if len(req.RespPorts) > 0 {
		env.Set("SLURM_SRUN_COMM_PORT", strconv.Itoa(int(req.RespPorts[int(ts.nodeID)%len(req.RespPorts)])))
	}
	env.Set("SLURM_LAUNCH_NODE_IPADDR", ts.srun.String())
	gt := make([]string, len(ts.gtids))
	for i, g := range ts.gtids {
		gt[i] = u32(g)
	}
	env.Set("SLURM_GTIDS", strings.Join(gt, ","))
	env.Set("SLURM_JOB_UID", u32(req.UID))
	env.Set("SLURM_JOB_USER", ts.user)
	env.Set("SLURM_WORKING_CLUSTER", fmt.Sprintf("%s:%s:%d:%d:%d",
		ts.cfg.ClusterName, host, port, 0x2600, ts.cfg.SelectPluginID))
	env.Set("SLURM_JOB_GID", u32(req.GID))
	env.Set("SLURMD_NODENAME", ts.cfg.NodeName)
	if v, ok := env.Get("TMPDIR"); !ok || v == "" {
		env.Set("TMPDIR", "/tmp")
	}
	return env, lim
}

// srunAddr is srun's address for port list ports, as node nodeID uses it.
func (ts *taskStep) srunAddr(ports []uint16) (string, error) {
	if len(ports) == 0 {
		return "", errNoIOPort
	}
	p := ports[int(ts.nodeID)%len(ports)]
	return net.JoinHostPort(ts.srun.String(), strconv.Itoa(int(p))), nil
}

func (ts *taskStep) pathJob() *PathJob {
	return &PathJob{JobID: ts.req.StepID.JobID, StepID: ts.req.StepID.StepID, ArrayTaskID: NoVal,
		NodeID: ts.nodeID, UserName: ts.user, Hostname: ts.cfg.hostname(), WorkDir: ts.req.Cwd.Value}
}

// run launches the tasks and sees them to the end.
func (ts *taskStep) run() {
	req := ts.req
	stepRC := uint32(0)
	var rpcAuth = func() (*client.Client, error) {
		authn, err := newAuthenticator(ts.cfg)
		if err != nil {
			return nil, err
		}
		return &client.Client{Auth: authn, Sweeps: 1, ConnectTimeout: ts.cfg.TCPTimeout,
			Codec: &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: ts.cfg.AuthType == "auth/slurm"}}, nil
	}
	cl, err := rpcAuth()
	if err != nil {
		ts.log.Error("auth", "err", err)
		return
	}
	trk, err := newTracker(ts.cfg, req.UID, req.GID,
		cgroup.StepID{JobID: req.StepID.JobID, StepID: req.StepID.StepID, HetComp: req.StepID.StepHetComp}, req.Cred)
	if err != nil {
		ts.log.Error("cannot set up process tracking", "err", err)
		trk = &pgidTracker{}
	}
	defer trk.close()
	ts.mu.Lock()
	ts.trk = trk
	ts.mu.Unlock()
	respAddr, respErr := ts.srunAddr(req.RespPorts)

	// I/O: stream to srun unless srun gave file names.
	var sio *srunIO
	streamOut, streamErr, streamIn := !req.OFName.Valid, !req.EFName.Valid, !req.IFName.Valid
	if streamOut || streamErr || streamIn {
		addr, err := ts.srunAddr(req.IOPorts)
		if err == nil {
			n := uint32(len(ts.gtids))
			var so, se uint32
			if streamOut {
				so = n
			}
			if streamErr {
				se = n
			}
			if ts.pty() {
				// Only the terminal of task 0 streams, as stdout.
				so, se = 0, 0
				if ts.hasTask0() {
					so = 1
				}
			}
			sio, err = dialSrunIO(addr, ts.nodeID, so, se, jobcred.IOKey(req.Cred))
		}
		if err != nil {
			ts.log.Error("cannot connect I/O to srun", "err", err)
		}
	}

	type started struct {
		cmd *exec.Cmd
		err error
	}
	cmds := make([]started, len(ts.gtids))
	stdins := map[uint32]*os.File{}
	for i, gtid := range ts.gtids {
		cmds[i].cmd, cmds[i].err = ts.startTask(i, gtid, sio, stdins)
	}
	if sio != nil && streamIn {
		go sio.stdinLoop(stdins)
	}
	var pids, tids []uint32
	ts.mu.Lock()
	for i, c := range cmds {
		if c.err == nil {
			ts.pids[i] = c.cmd.Process.Pid
			pids = append(pids, uint32(c.cmd.Process.Pid))
			tids = append(tids, ts.gtids[i])
		}
	}
	ts.st = StateRunning
	aborted := ts.aborted
	ts.mu.Unlock()
	if aborted {
		ts.killAll(unix.SIGKILL)
	}
	if respErr == nil {
		ts.send(cl, respAddr, msgtype.RESPONSE_LAUNCH_TASKS, &msg.LaunchTasksResponse{StepID: req.StepID,
			NodeName: msg.Str(ts.cfg.NodeName), LocalPIDs: pids, TaskIDs: tids})
	}

	var wg sync.WaitGroup
	var rcMu sync.Mutex
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status := uint32(1 << 8)
			if c.err == nil {
				c.cmd.Wait()
				ws, _ := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
				status = uint32(ws)
			} else {
				ts.log.Error("task launch failed", "task", ts.gtids[i], "err", c.err)
			}
			rcMu.Lock()
			if status > stepRC {
				stepRC = status
			}
			rcMu.Unlock()
			if respErr == nil {
				ts.send(cl, respAddr, msgtype.MESSAGE_TASK_EXIT, &msg.TaskExit{ReturnCode: status,
					TaskIDs: []uint32{ts.gtids[i]}, StepID: req.StepID})
			}
		}()
	}
	wg.Wait()
	close(ts.done)
	if ts.ptyConn != nil {
		ts.ptyConn.Close()
	}
	trk.killAll() // leftovers
	ts.mu.Lock()
	ts.st = StateEnding
	if ts.msgErr != nil {
		ts.msgErr.Close()
		ts.msgErr = nil
	}
	ts.mu.Unlock()
	if n := trk.oom(); n > 0 {
		ts.log.Error(oomMessage(n, fmt.Sprintf("StepId=%d.%d", ts.req.StepID.JobID, ts.req.StepID.StepID)))
		stepRC = sigOOM
	}
	if sio != nil {
		sio.finish()
	}
	ts.stepComplete(stepRC)
}

// startTask starts local task i through the exec helper.
func (ts *taskStep) startTask(i int, gtid uint32, sio *srunIO, stdins map[uint32]*os.File) (*exec.Cmd, error) {
	req := ts.req
	pj := ts.pathJob()
	env, lim := ts.taskEnv(i)
	in := &helperInit{UID: req.UID, GID: req.GID, Groups: ts.groups, WorkDir: req.Cwd.Value,
		Append: req.OpenMode == 1 || (req.OpenMode != 2 && ts.cfg.JobFileAppend),
		Env:    env, Umask: lim.Umask, RLimits: lim.RLimits, Search: true}
	for _, a := range req.Argv {
		in.Argv = append(in.Argv, a.Value)
	}
	if len(in.Argv) == 0 {
		return nil, fmt.Errorf("stepd: no command to run")
	}
	// srun --bcast to a directory: the file slurmd wrote there
	// (REQUEST_FILE_BCAST names it the same way).
	if strings.HasSuffix(in.Argv[0], "/") {
		in.Argv[0] += fmt.Sprintf("slurm_bcast_%d.%d_%s", req.StepID.JobID, req.StepID.StepID, ts.cfg.NodeName)
	}
	in.Script = in.Argv[0]
	var closeAfter []*os.File
	defer func() {
		for _, f := range closeAfter {
			f.Close()
		}
	}()
	devnull := func() *os.File {
		f, _ := os.Open(os.DevNull)
		closeAfter = append(closeAfter, f)
		return f
	}
	if ts.pty() {
		return ts.startPTYTask(i, gtid, in, sio, stdins, env)
	}
	stdio := []*os.File{nil, nil, nil}
	// Output: a pattern names a file (opened by the helper as the user);
	// otherwise a pipe to the srun stream.
	for fd, name := range []msg.NullString{req.OFName, req.EFName} {
		if name.Valid {
			p := ExpandStepPath(name.Value, pj, gtid)
			if fd == 0 {
				in.Stdout = p
			} else {
				in.Stderr = p
			}
			stdio[fd+1] = devnull()
			continue
		}
		if sio == nil {
			stdio[fd+1] = devnull()
			continue
		}
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		if fd == 1 && i == 0 {
			ts.mu.Lock()
			ts.msgErr = w // closed by run when the step ends
			ts.mu.Unlock()
		} else {
			closeAfter = append(closeAfter, w)
		}
		sio.pump(r, uint16(ioStdout+fd), gtid, uint32(i))
		stdio[fd+1] = w
	}
	if req.OFName.Valid && !req.EFName.Valid && sio == nil {
		in.Stderr = in.Stdout
	}
	switch {
	case req.IFName.Valid:
		in.Stdin = ExpandStepPath(req.IFName.Value, pj, gtid)
		stdio[0] = devnull()
	case sio != nil:
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		closeAfter = append(closeAfter, r)
		stdins[gtid] = w
		stdio[0] = r
	default:
		stdio[0] = devnull()
	}
	cmd, stderr, err := startHelper(in, func(c *exec.Cmd) error { return ts.trk.start(c, uint32(i)) }, stdio...)
	if err != nil {
		return nil, err
	}
	stderr.Close()
	return cmd, nil
}

// send delivers one message to srun's response port (new connection, RC
// reply), retrying briefly as slurmstepd does.
func (ts *taskStep) send(cl *client.Client, addr string, mt msgtype.Type, body any) {
	bc, _ := msg.Registry().Lookup(mt)
	var w pack.Writer
	if err := bc.Encode(&w, codec.Current, body); err != nil {
		ts.log.Error("encode", "type", mt, "err", err)
		return
	}
	c := *cl
	c.Controllers = []string{addr}
	delay := 100 * time.Millisecond
	for try := 0; try < int(ts.req.NNodes/1024)+5; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := c.CallTo(ctx, 0, mt, w.Bytes(), ts.req.UID)
		cancel()
		if err == nil {
			return
		}
		ts.log.Error("send to srun", "type", mt, "err", err)
		time.Sleep(delay)
		if delay < 800*time.Millisecond {
			delay *= 2
		}
	}
}

// stepComplete reports this node's rank to slurmctld. Every rank reports
// directly (slurmctld accepts any sub-range); Slurm's width-7 reverse tree
// is not built yet.
func (ts *taskStep) stepComplete(stepRC uint32) {
	bc, _ := msg.Registry().Lookup(msgtype.REQUEST_STEP_COMPLETE)
	var w pack.Writer
	body := &msg.StepComplete{StepID: ts.req.StepID, RangeFirst: ts.nodeID, RangeLast: ts.nodeID, StepRC: stepRC}
	if err := bc.Encode(&w, codec.Current, body); err != nil {
		ts.log.Error("encode step complete", "err", err)
		return
	}
	if err := callCtld(ts.cfg, msgtype.REQUEST_STEP_COMPLETE, w.Bytes()); err != nil {
		ts.log.Error("Unable to send step complete message", "err", err)
	}
}

func (ts *taskStep) killAll(sig unix.Signal) {
	ts.mu.Lock()
	trk := ts.trk
	ts.mu.Unlock()
	if trk != nil {
		trk.signal(sig)
	}
}

// --- socket requests -------------------------------------------------------

func (ts *taskStep) state() int32 {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.st
}

func (ts *taskStep) owner() uint32 { return ts.req.UID }

func (ts *taskStep) authorized(uid uint32) bool { return uid == 0 || uid == ts.cfg.SlurmUserUID }

func (ts *taskStep) signal(sig, flags int, details string, from uint32) int32 {
	if from != ts.req.UID && !ts.authorized(from) {
		return int32(unix.EPERM)
	}
	ts.mu.Lock()
	running := ts.st == StateRunning
	if !running && (sig == int(unix.SIGKILL) || sig == SigAbort || sig == SigTermKill) {
		ts.aborted = true
	}
	ts.announce(sig, details)
	ts.mu.Unlock()
	switch sig {
	case SigTimeLimit, SigPreempted, SigNodeFail, SigRequeued, SigFailure, 992:
		return 0
	case SigAbort:
		sig = int(unix.SIGKILL)
	case SigTermKill:
		go func() {
			ts.killAll(unix.SIGCONT)
			ts.killAll(unix.SIGTERM)
			t := time.NewTimer(ts.cfg.killWait())
			defer t.Stop()
			select {
			case <-ts.done:
			case <-t.C:
				ts.killAll(unix.SIGKILL)
			}
		}()
		return 0
	}
	if !running {
		return slurmerr.ESLURMD_JOB_NOTRUNNING
	}
	ts.killAll(unix.Signal(sig))
	return 0
}

func (ts *taskStep) terminate(from uint32) int32 {
	if from != ts.req.UID && !ts.authorized(from) {
		return int32(unix.EPERM)
	}
	ts.mu.Lock()
	ts.aborted = true
	ts.mu.Unlock()
	ts.killAll(unix.SIGKILL)
	return 0
}
