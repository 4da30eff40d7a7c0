package launch

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// stepAbortTime is STEP_ABORT_TIME: the seconds added to KillWait while
// srun waits for an aborted step.
const stepAbortTime = 2

// sigOOM is SIG_OOM, the task exit status slurmstepd reports for an OOM kill.
const sigOOM = 253

// Step is a created job step: its layout and credential from slurmctld and
// the ports its step daemons report to.
type Step struct {
	ctl    *Ctl
	JobID  uint32
	Resp   msg.StepCreateResponse
	Nodes  []string   // the step's nodes, in layout order
	TIDs   [][]uint32 // global task ids per node
	NTasks uint32
	Name   string

	hetComp uint32 // step_het_comp, NO_VAL outside a local het step

	msgs *Listener // SRUN_* for the step from slurmctld
	resp *Listener // RESPONSE_LAUNCH_TASKS, MESSAGE_TASK_EXIT
	io   *ioServer

	mu              sync.Mutex
	state           []taskState
	exited          int
	globalRC        uint32
	haveRC          bool
	exitSignal      bool // a task died of SIGKILL/SIGTERM
	cancelled       bool
	abortSent       bool
	allExited       chan struct{}
	reported        map[uint32]bool // launch reports seen, by first task id
	jobDone         chan struct{}
	jobDoneOnce     sync.Once
	oomPrinted      bool
	killOnBadRun    bool
	terminated      bool          // Terminate was called
	forceTerminated bool          // slurmctld ended the step (SRUN_JOB_COMPLETE)
	abortNoted      bool          // "Job step aborted" logged
	maxWait         time.Duration // --wait: how long the others may run on after the first exit
	maxWaitTimer    *time.Timer
}

type taskState int

const (
	taskUnknown taskState = iota
	taskRunning
	taskStartFailed
	taskExited
	taskAbnormal
)

// StepOptions is what srun asks for beyond the create request.
type StepOptions struct {
	Argv                   []string
	Env                    func(s *Step) []string // the task environment, built once the ports are known
	Cwd                    string
	UID, GID               uint32
	Label                  bool
	MultiProg              bool
	Unbuffered             bool
	KillBadExit            bool
	MaxWait                int // srun --wait, seconds; 0: no limit
	CPUsPerTask            uint16
	Ofname, Efname, Ifname string // set: a file on the node, not the stream
	OpenMode               uint8  // --open-mode (jobopt.OpenModeAppend/Truncate), 0: the default
	StdinTask              int    // -1: all tasks
	PTY                    bool   // --pty: task 0 on a terminal (LAUNCH_PTY)
	Stdin                  io.Reader
	Stdout                 io.Writer
	Stderr                 io.Writer
	// Alloc is the job's allocation record (task-per-unit limits, aliases).
	Alloc *msg.Allocation
	// Het describes the whole het step this step is a component of; nil
	// for a step that is not heterogeneous.
	Het *HetLaunch
}

// HetLaunch is what every component's launch request says about the
// whole het step (launch_tasks_request_msg_t's het_job_* fields): its
// nodes in sorted order with their tasks' het-wide ids.
type HetLaunch struct {
	JobID      uint32     // the het job's id; NO_VAL for a local het step
	NodeOffset uint32     // this component's first node in the het step
	NNodes     uint32     // nodes over all components
	NTasks     uint32     // tasks over all components
	TIDs       [][]uint32 // per node of NodeList, the het-wide task ids
	TIDOffsets []uint32   // per het-wide task, its component
	Offset     uint32     // this component
	StepCnt    uint32     // components
	TaskOffset uint32     // this component's first het-wide task id
	NodeList   string     // every component's nodes, sorted
}

// retryable are the step-create errors srun waits out (launch.c).
var retryable = map[int]bool{
	slurmerr.ESLURM_DISABLED: true, slurmerr.ESLURM_INTERCONNECT_BUSY: true,
	slurmerr.ESLURM_NODES_BUSY: true, slurmerr.ESLURM_PORTS_BUSY: true,
	slurmerr.ESLURM_PROLOG_RUNNING: true, int(syscall.EAGAIN): true,
}

// CreateStep sends REQUEST_JOB_STEP_CREATE for job (req.StepID, Host, Port
// and SrunPID are filled in here) and retries while the controller says the
// resources are busy, with srun's messages.
func (c *Ctl) CreateStep(ctx context.Context, jobID uint32, req msg.StepCreateRequest) (*Step, error) {
	return c.CreateHetStep(ctx, jobID, req, pack.NoVal, pack.NoVal)
}

// CreateHetStep is CreateStep for one component of a het step: stepID is
// the id the first component got (NO_VAL for the first) and hetComp the
// component's offset (step_het_comp; NO_VAL for a step of a het job's
// component, which is a job of its own).
func (c *Ctl) CreateHetStep(ctx context.Context, jobID uint32, req msg.StepCreateRequest, stepID, hetComp uint32) (*Step, error) {
	s := &Step{ctl: c, JobID: jobID, allExited: make(chan struct{}), reported: map[uint32]bool{},
		jobDone: make(chan struct{})}
	var err error
	s.msgs, err = Listen(c.Conn.Client.Auth, []msgtype.Type{
		msgtype.SRUN_PING, msgtype.SRUN_JOB_COMPLETE, msgtype.SRUN_TIMEOUT, msgtype.SRUN_USER_MSG,
		msgtype.SRUN_NODE_FAIL, msgtype.SRUN_STEP_MISSING, msgtype.SRUN_STEP_SIGNAL,
	}, s.handleCtld)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	if i := indexByte(host, '.'); i >= 0 {
		host = host[:i]
	}
	req.StepID = msg.StepID{JobID: jobID, StepID: stepID, StepHetComp: hetComp}
	s.hetComp = hetComp
	req.Host = msg.Str(host)
	req.Port = s.msgs.Port()
	req.SrunPID = uint32(os.Getpid())
	s.Name = req.Name.Value
	delay := 10 * time.Second
	for tries := 0; ; tries++ {
		v, err := c.Call(ctx, msgtype.REQUEST_JOB_STEP_CREATE, req, msgtype.RESPONSE_JOB_STEP_CREATE)
		if err == nil {
			s.Resp = v.(msg.StepCreateResponse)
			if tries > 0 {
				c.Log.Infof("Step created for job %d", jobID)
			}
			break
		}
		if !retryable[slurmerr.Code(err)] || req.Immediate != 0 {
			s.msgs.Close()
			return nil, err
		}
		if tries == 0 {
			c.Log.Infof("Job %d step creation temporarily disabled, retrying (%s)", jobID, Strerror(err))
		} else {
			c.Log.Verbosef("Job %d step creation still disabled, retrying (%s)", jobID, Strerror(err))
		}
		select {
		case <-ctx.Done():
			s.msgs.Close()
			c.Log.Infof("Cancelled pending step for job %d", jobID)
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 60*time.Second)
	}
	l := s.Resp.Layout
	if l == nil || s.Resp.Cred == nil {
		s.msgs.Close()
		return nil, fmt.Errorf("step create response without layout or credential")
	}
	nodes, err := hostlist.Expand(l.NodeList.Value)
	if err != nil || len(nodes) != len(l.TIDs) {
		s.msgs.Close()
		return nil, fmt.Errorf("step layout node list %q does not match its %d task lists", l.NodeList.Value, len(l.TIDs))
	}
	s.Nodes, s.TIDs = nodes, l.TIDs
	for _, t := range l.TIDs {
		s.NTasks += uint32(len(t))
	}
	s.state = make([]taskState, s.NTasks)
	return s, nil
}

func indexByte(s string, b byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}

// StepID is the step's id.
func (s *Step) StepID() msg.StepID {
	return msg.StepID{JobID: s.JobID, StepID: s.Resp.JobStepID, StepHetComp: s.hetComp}
}

func (s *Step) idString() string { return fmt.Sprintf("StepId=%d.%d", s.JobID, s.Resp.JobStepID) }

// RespPort is the port of the launch-report listener (SLURM_SRUN_COMM_PORT).
func (s *Step) RespPort() uint16 { return s.resp.Port() }

// TasksPerNode is the step's compressed task count list.
func (s *Step) TasksPerNode() string {
	counts := make([]uint32, len(s.TIDs))
	for i, t := range s.TIDs {
		counts[i] = uint32(len(t))
	}
	return CompressCounts(counts)
}

// handleCtld answers slurmctld's step messages.
func (s *Step) handleCtld(mt msgtype.Type, body any) *server.Response {
	switch mt {
	case msgtype.SRUN_PING:
		return server.RC(0)
	case msgtype.SRUN_JOB_COMPLETE:
		s.jobDoneOnce.Do(func() { close(s.jobDone) })
		// The step (or job) was ended by slurmctld: as step_launch.c's
		// _job_complete_handler, stop waiting for the tasks once they
		// are gone and do not call them force terminated.
		s.mu.Lock()
		s.forceTerminated = true
		s.noteAbortLocked()
		again := s.exited < int(s.NTasks) && !s.abortSent
		s.abortSent = true
		s.mu.Unlock()
		if again {
			// slurm_step_launch_wait_finish kills the step once more on
			// abort, for tasks that were still starting.
			go s.killStep(context.Background(), int(syscall.SIGKILL))
		}
	case msgtype.SRUN_TIMEOUT:
		t := body.(msg.SrunTimeoutMsg)
		s.ctl.Log.Verbosef("step %d.%d will be killed at %s", s.JobID, s.Resp.JobStepID, time.Unix(t.Timeout, 0).Format("2006-01-02T15:04:05"))
	case msgtype.SRUN_USER_MSG:
		s.ctl.Log.Infof("%s", body.(msg.SrunUserMsg).Msg.Value)
	case msgtype.SRUN_NODE_FAIL:
		s.ctl.Log.Errorf("Node failure on %s", body.(msg.SrunNodeFailMsg).NodeList.Value)
	case msgtype.SRUN_STEP_SIGNAL:
		k := body.(msg.JobStepKillRequest)
		s.Signal(context.Background(), int(k.Signal))
	}
	return nil
}

// Launch opens the report and I/O listeners and sends REQUEST_LAUNCH_TASKS
// to every node of the step through the forwarding tree.
func (s *Step) Launch(ctx context.Context, o StepOptions) error {
	var err error
	s.killOnBadRun = o.KillBadExit
	s.maxWait = time.Duration(o.MaxWait) * time.Second
	s.resp, err = Listen(s.ctl.Conn.Client.Auth, []msgtype.Type{
		msgtype.RESPONSE_LAUNCH_TASKS, msgtype.MESSAGE_TASK_EXIT,
	}, s.handleReport)
	if err != nil {
		return err
	}
	taskNode := make([]uint32, s.NTasks)
	for n, t := range s.TIDs {
		for _, id := range t {
			if id < s.NTasks {
				taskNode[id] = uint32(n)
			}
		}
	}
	stdin := o.Stdin
	if o.Ifname != "" && o.StdinTask < 0 {
		stdin = nil
	}
	s.io, err = newIOServer(jobcred.IOKey(s.Resp.Cred), uint32(len(s.Nodes)), s.NTasks, o.Label,
		o.Stdout, o.Stderr, stdin, o.StdinTask, taskNode)
	if err != nil {
		return err
	}
	if o.Het != nil {
		// Labels name the het-wide rank.
		s.io.labelOffset = o.Het.TaskOffset
	}
	cfg := s.ctl.Conn.Conf
	a := o.Alloc
	req := msg.LaunchTasksRequest{
		StepID: s.StepID(), UID: o.UID, GID: o.GID,
		HetJobID: pack.NoVal, HetJobNNodes: pack.NoVal, HetJobNTasks: pack.NoVal,
		HetJobOffset: pack.NoVal, HetJobStepCnt: 1, HetJobTaskOffset: pack.NoVal,
		MPIPluginID: msg.MPINone, NTasks: s.NTasks,
		NTasksPerCore: 0xffff, NTasksPerSocket: 0xffff,
		NNodes: uint32(len(s.Nodes)), CPUsPerTask: max(o.CPUsPerTask, 1), ThreadsPerCore: pack.NoVal16,
		TaskDist: s.Resp.Layout.TaskDist, Cred: s.Resp.Cred, GlobalTaskIDs: s.TIDs,
		RespPorts: []uint16{s.resp.Port()}, Cwd: msg.Str(o.Cwd),
		Flags: msg.LaunchBufferedIO, IOPorts: []uint16{s.io.port()},
		SwitchJobinfo: s.Resp.SwitchJobinfo, CompleteNodelist: s.Resp.Layout.NodeList,
		CPUFreqMin: pack.NoVal, CPUFreqMax: pack.NoVal, CPUFreqGov: pack.NoVal,
		SelectJobinfo: s.Resp.SelectJobinfo,
	}
	if h := o.Het; h != nil {
		req.HetJobID, req.HetJobNodeOffset, req.HetJobNNodes, req.HetJobNTasks = h.JobID, h.NodeOffset, h.NNodes, h.NTasks
		req.HetJobTIDs, req.HetJobTIDOffsets, req.HetJobOffset = h.TIDs, h.TIDOffsets, h.Offset
		req.HetJobStepCnt, req.HetJobTaskOffset, req.HetJobNodeList = h.StepCnt, h.TaskOffset, msg.Str(h.NodeList)
	}
	if a != nil {
		req.NTasksPerBoard, req.NTasksPerCore = a.NtasksPerBoard, a.NtasksPerCore
		req.NTasksPerTres, req.NTasksPerSocket = a.NtasksPerTres, a.NtasksPerSocket
		req.AliasList = a.AliasList
	}
	if o.Unbuffered {
		req.Flags &^= msg.LaunchBufferedIO
	}
	if o.Label {
		req.Flags |= msg.LaunchLabelIO
	}
	if o.MultiProg {
		req.Flags |= msg.LaunchMultiProg
	}
	if o.PTY {
		req.Flags |= msg.LaunchPTY
	}
	for _, v := range o.Argv {
		req.Argv = append(req.Argv, msg.Str(v))
	}
	for _, v := range o.Env(s) {
		req.Env = append(req.Env, msg.Str(v))
	}
	req.OFName, req.EFName, req.IFName = nstr(o.Ofname), nstr(o.Efname), nstr(o.Ifname)
	req.OpenMode = o.OpenMode
	body, err := encode(msgtype.REQUEST_LAUNCH_TASKS, &req)
	if err != nil {
		return err
	}
	if s.ctl.Log.Verbose >= 1 {
		// launch_p_step_launch's and _print_launch_msg's lines.
		s.ctl.Log.Verbosef("launch/slurm: launch_p_step_launch: CpuBindType=(null type)")
		for n, node := range s.Nodes {
			var ids []string
			for _, id := range s.TIDs[n] {
				ids = append(ids, strconv.FormatUint(uint64(id), 10))
			}
			s.ctl.Log.Infof("launching %s on host %s, %d tasks: %s", s.idString(), node, len(ids), hostlist.Compress(ids))
		}
		s.ctl.Log.Verbosef("route/default: init: route default plugin loaded")
	}
	results, err := s.sender().Send(ctx, s.Nodes, forward.Request{MsgType: msgtype.REQUEST_LAUNCH_TASKS,
		Body: body, RUID: uidAny, TreeWidth: cfg.TreeWidth})
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range results {
		if rc := r.RC(); rc != 0 {
			failed = rc
			s.ctl.Log.Errorf("Task launch for %s failed on node %s: %s", s.idString(), r.Node, slurmerr.Message(rc))
			s.nodeLaunchFailed(r.Node, uint32(rc))
		}
	}
	if failed != 0 {
		s.ctl.Log.Errorf("Application launch failed: %s", slurmerr.Message(failed))
		return errLaunch
	}
	return nil
}

var errLaunch = fmt.Errorf("launch failed")

const uidAny = 0xffffffff

func (s *Step) sender() *forward.Sender {
	cfg := s.ctl.Conn.Conf
	return &forward.Sender{
		Resolve: func(node string) (string, error) {
			i, ok := cfg.NodeIndex[node]
			if !ok {
				return "", fmt.Errorf("unknown node %s", node)
			}
			n := cfg.Nodes[i]
			addr := n.Addr
			if addr == "" {
				addr = n.Hostname
			}
			if addr == "" {
				addr = n.Name
			}
			port := uint32(n.Port)
			if port == 0 {
				port = cfg.SlurmdPort
			}
			return net.JoinHostPort(addr, strconv.Itoa(int(port))), nil
		},
		Auth: s.ctl.Conn.Client.Auth,
		// slurmd signs its replies with the cluster's auth.
		Codec:          &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: cfg.AuthType == "auth/slurm"},
		MessageTimeout: time.Duration(cfg.MessageTimeout) * time.Second,
		TCPTimeout:     time.Duration(cfg.TCPTimeout) * time.Second,
		TreeWidth:      int(cfg.TreeWidth),
	}
}

func (s *Step) nodeIndex(name string) int {
	for i, n := range s.Nodes {
		if n == name {
			return i
		}
	}
	return -1
}

// nodeLaunchFailed marks a node's tasks as failed to start.
func (s *Step) nodeLaunchFailed(node string, rc uint32) {
	i := s.nodeIndex(node)
	if i < 0 {
		return
	}
	s.io.nodeFailed(i)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.TIDs[i] {
		if t < s.NTasks && s.state[t] < taskStartFailed {
			s.state[t] = taskStartFailed
			s.exited++
		}
	}
	// A task that never ran counts as exit code 1 (step_launch.c).
	s.noteRCLocked(1 << 8)
	s.checkExitedLocked()
}

// handleReport answers slurmstepd's RESPONSE_LAUNCH_TASKS and
// MESSAGE_TASK_EXIT.
func (s *Step) handleReport(mt msgtype.Type, body any) *server.Response {
	switch mt {
	case msgtype.RESPONSE_LAUNCH_TASKS:
		r := body.(msg.LaunchTasksResponse)
		if r.StepID.StepID != s.Resp.JobStepID || r.StepID.JobID != s.JobID {
			break
		}
		if len(r.TaskIDs) == 0 || r.ReturnCode != 0 {
			s.ctl.Log.Debugf("No tasks started on node %s: %s", r.NodeName.Value, slurmerr.Message(int(r.ReturnCode)))
			s.nodeLaunchFailed(r.NodeName.Value, r.ReturnCode)
			break
		}
		s.ctl.Log.Verbosef("launch/slurm: _task_start: Node %s, %d tasks started", r.NodeName.Value, len(r.LocalPIDs))
		s.mu.Lock()
		if !s.reported[r.TaskIDs[0]] {
			s.reported[r.TaskIDs[0]] = true
			for _, t := range r.TaskIDs {
				if t < s.NTasks && s.state[t] == taskUnknown {
					s.state[t] = taskRunning
				}
			}
		}
		s.mu.Unlock()
	case msgtype.MESSAGE_TASK_EXIT:
		// Recorded once the answer is out: the last exit lets srun
		// finish and close this listener, which would cut off an
		// answer still being signed, and slurmstepd retries (and
		// holds the step open) until it gets one.
		m := body.(msg.TaskExit)
		r := server.RC(0)
		r.After = func(error) { s.taskExit(m) }
		return r
	}
	return server.RC(0)
}

// Wait blocks until every task has exited and the I/O stream is done (or
// abandoned because a task was killed), and returns the step's wait status
// as srun's global_rc.
func (s *Step) Wait() uint32 {
	<-s.allExited
	s.mu.Lock()
	if s.maxWaitTimer != nil {
		s.maxWaitTimer.Stop()
	}
	abortIO := s.exitSignal || s.cancelled
	s.mu.Unlock()
	if abortIO {
		s.io.abort()
	}
	<-s.io.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exitSignal && !s.cancelled && !s.forceTerminated {
		s.ctl.Log.Infof("Force Terminated %s", s.idString())
	}
	return s.globalRC
}

// JobDone is closed when slurmctld reports the job complete.
func (s *Step) JobDone() <-chan struct{} { return s.jobDone }

// Close releases the listeners.
func (s *Step) Close() {
	if s.io != nil {
		s.io.close()
	}
	if s.resp != nil {
		s.resp.Close()
	}
	if s.msgs != nil {
		s.msgs.Close()
	}
}

// Signal sends REQUEST_SIGNAL_TASKS to every node of the step
// (slurm_step_launch_fwd_signal).
func (s *Step) Signal(ctx context.Context, sig int) {
	body, err := encode(msgtype.REQUEST_SIGNAL_TASKS, msg.SignalTasks{StepID: s.StepID(), Signal: uint16(sig)})
	if err != nil {
		return
	}
	results, err := s.sender().Send(ctx, s.Nodes, forward.Request{MsgType: msgtype.REQUEST_SIGNAL_TASKS, Body: body, RUID: uidAny})
	if err != nil {
		return
	}
	for _, r := range results {
		if rc := r.RC(); rc != 0 && rc != slurmerr.ESLURM_INVALID_JOB_ID {
			s.ctl.Log.Errorf("Failure sending signal %d to %s on node %s: %s", sig, s.idString(), r.Node, slurmerr.Message(rc))
		}
	}
}

// Abort is slurm_step_launch_abort: ask slurmctld to kill the step, and
// stop waiting for the tasks' output once they are gone.
func (s *Step) Abort(ctx context.Context) {
	s.mu.Lock()
	first := !s.abortSent
	s.abortSent = true
	s.cancelled = true
	s.mu.Unlock()
	if !first {
		return
	}
	kill := msg.JobStepKillRequest{StepID: s.StepID(), Signal: uint16(syscall.SIGKILL)}
	if err := s.ctl.CallRC(ctx, msgtype.REQUEST_CANCEL_JOB_STEP, kill); err != nil {
		s.ctl.Log.Debugf("kill job step: %s", Strerror(err))
	}
	s.mu.Lock()
	s.noteAbortLocked()
	s.mu.Unlock()
}

// Release ends a step whose tasks were never launched, as srun's
// _cancel_steps: REQUEST_STEP_COMPLETE for all its nodes, quietly.
func (s *Step) Release(ctx context.Context) {
	done := msg.StepComplete{StepID: s.StepID(), RangeFirst: 0, RangeLast: uint32(max(len(s.Nodes), 1) - 1)}
	if err := s.ctl.CallRC(ctx, msgtype.REQUEST_STEP_COMPLETE, done); err != nil {
		s.ctl.Log.Debugf("step complete: %s", Strerror(err))
	}
}

// noteAbortLocked logs, once, that srun now waits a bounded time for the
// tasks still running (slurm_step_launch_wait_finish).
func (s *Step) noteAbortLocked() {
	if s.abortNoted || s.exited >= int(s.NTasks) {
		return
	}
	s.abortNoted = true
	s.ctl.Log.Infof("Job step aborted: Waiting up to %d seconds for job step to finish.",
		int(s.ctl.Conn.Conf.KillWait)+stepAbortTime)
}

// sigTermKill asks slurmstepd for SIGCONT, SIGTERM and, after KillWait,
// SIGKILL (SIG_TERM_KILL).
const sigTermKill = 991

// Terminate is launch/slurm's _step_signal: slurmctld signals the whole
// step (SIGKILL or SIG_TERM_KILL). Unlike Abort, the task deaths it
// causes are still reported as errors.
func (s *Step) Terminate(ctx context.Context, sig int) {
	s.mu.Lock()
	s.terminated = true
	s.mu.Unlock()
	s.ctl.Log.Infof("launch/slurm: _step_signal: Terminating %s", s.idString())
	s.killStep(ctx, sig)
}

// killStep is slurm_kill_job_step: slurmctld signals the step.
func (s *Step) killStep(ctx context.Context, sig int) {
	kill := msg.JobStepKillRequest{StepID: s.StepID(), Signal: uint16(sig)}
	if err := s.ctl.CallRC(ctx, msgtype.REQUEST_CANCEL_JOB_STEP, kill); err != nil {
		s.ctl.Log.Debugf("kill job step: %s", Strerror(err))
	}
}

// startMaxWaitLocked arms srun --wait's timer at the first task exit.
func (s *Step) startMaxWaitLocked() {
	if s.maxWait <= 0 || s.maxWaitTimer != nil {
		return
	}
	s.ctl.Log.Verbosef("launch/slurm: _setup_max_wait_timer: First task exited. Terminating job in %ds", int(s.maxWait/time.Second))
	s.maxWaitTimer = time.AfterFunc(s.maxWait, func() {
		s.ctl.Log.Infof("First task exited %ds ago", int(s.maxWait/time.Second))
		s.PrintStatus()
		s.Terminate(context.Background(), int(syscall.SIGKILL))
	})
}

// PrintStatus logs what each task is doing (srun's first Ctrl-C).
func (s *Step) PrintStatus() {
	s.mu.Lock()
	defer s.mu.Unlock()
	groups := []struct {
		st   taskState
		text string
	}{{taskStartFailed, "failed to start"}, {taskRunning, "running"}, {taskAbnormal, "exited abnormally"}, {taskExited, "exited"}, {taskUnknown, "unknown"}}
	for _, g := range groups {
		var ids []uint32
		for t, st := range s.state {
			if st == g.st {
				ids = append(ids, uint32(t))
			}
		}
		if len(ids) == 0 {
			continue
		}
		plural := "s"
		if len(ids) == 1 {
			plural = ""
		}
		s.ctl.Log.Infof("%s task%s %s: %s", s.idString(), plural, rangeString(ids), g.text)
	}
}

// Cancelled marks the step as cancelled by the user (SRUN_JOB_CANCELLED):
// signal deaths are then not reported as errors.
func (s *Step) Cancelled() {
	s.mu.Lock()
	s.cancelled = true
	s.mu.Unlock()
}

// ExitCode turns srun's global_rc into its exit status: the exit code, 128
// plus the signal, 1 for an OOM kill.
func ExitCode(rc uint32) int {
	if rc&0xff == sigOOM {
		return 1
	}
	ws := syscall.WaitStatus(rc)
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return int(rc)
}
