package msg

// Step daemon -> srun messages (reference protocol-daemon.md §4.2, §4.6):
// RESPONSE_LAUNCH_TASKS, MESSAGE_TASK_EXIT, and sattach's
// REQUEST_REATTACH_TASKS / RESPONSE_REATTACH_TASKS.

import (
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
)

// LaunchTasksResponse is RESPONSE_LAUNCH_TASKS: per node, the local pids and
// global task ids of the tasks it started (equal lengths; the count travels
// once, then each array with its own count).
type LaunchTasksResponse struct {
	StepID     StepID
	ReturnCode uint32
	NodeName   NullString
	LocalPIDs  []uint32
	TaskIDs    []uint32
}

func walkLaunchTasksResponse(w fieldWalker, _ codec.Version, b *LaunchTasksResponse) {
	walkStepID(w, &b.StepID)
	w.u32(&b.ReturnCode)
	w.str(&b.NodeName)
	if !w.decoding() && len(b.LocalPIDs) != len(b.TaskIDs) {
		daemonFail(w, "%d local pids, %d task ids", len(b.LocalPIDs), len(b.TaskIDs))
		return
	}
	n := uint32(len(b.LocalPIDs))
	w.u32(&n)
	walkU32s(w, &b.LocalPIDs)
	walkU32s(w, &b.TaskIDs)
	if w.decoding() && w.err() == nil && (uint32(len(b.LocalPIDs)) != n || uint32(len(b.TaskIDs)) != n) {
		daemonFail(w, "count_of_pids %d, %d pids, %d task ids", n, len(b.LocalPIDs), len(b.TaskIDs))
	}
}

// TaskExit is MESSAGE_TASK_EXIT: the tasks (global ids) that exited with
// ReturnCode, a raw wait status.
type TaskExit struct {
	ReturnCode uint32
	TaskIDs    []uint32
	StepID     StepID
}

func walkTaskExit(w fieldWalker, _ codec.Version, b *TaskExit) {
	w.u32(&b.ReturnCode)
	n := uint32(len(b.TaskIDs))
	w.u32(&n)
	walkU32s(w, &b.TaskIDs)
	if w.decoding() && w.err() == nil && uint32(len(b.TaskIDs)) != n {
		daemonFail(w, "num_tasks %d, %d task ids", n, len(b.TaskIDs))
	}
	walkStepID(w, &b.StepID)
}

// ReattachTasks is REQUEST_REATTACH_TASKS: sattach's response and I/O ports
// and the step credential (packed at the message version, no cred_version).
type ReattachTasks struct {
	StepID    StepID
	RespPorts []uint16
	IOPorts   []uint16
	Cred      *jobcred.Credential
}

func walkReattachTasks(w fieldWalker, v codec.Version, b *ReattachTasks) {
	walkStepID(w, &b.StepID)
	walkPorts(w, &b.RespPorts, "resp ports")
	walkPorts(w, &b.IOPorts, "io ports")
	walkCred(w, &b.Cred, uint16(v))
}

// ReattachTasksResponse is RESPONSE_REATTACH_TASKS: GTIDs, LocalPIDs and
// Executables have one entry per task.
type ReattachTasksResponse struct {
	NodeName    NullString
	ReturnCode  uint32
	GTIDs       []uint32
	LocalPIDs   []uint32
	Executables []NullString
}

func walkReattachTasksResponse(w fieldWalker, _ codec.Version, b *ReattachTasksResponse) {
	w.str(&b.NodeName)
	w.u32(&b.ReturnCode)
	if !w.decoding() && (len(b.GTIDs) != len(b.LocalPIDs) || len(b.GTIDs) != len(b.Executables)) {
		daemonFail(w, "%d gtids, %d pids, %d executables", len(b.GTIDs), len(b.LocalPIDs), len(b.Executables))
		return
	}
	n := uint32(len(b.GTIDs))
	w.u32(&n)
	walkU32s(w, &b.GTIDs)
	walkU32s(w, &b.LocalPIDs)
	if w.decoding() && w.err() == nil && (uint32(len(b.GTIDs)) != n || uint32(len(b.LocalPIDs)) != n) {
		daemonFail(w, "ntasks %d, %d gtids, %d pids", n, len(b.GTIDs), len(b.LocalPIDs))
	}
	walkNoValRecords(w, n, &b.Executables, 4, "executable names", func(w fieldWalker, p *NullString) { w.str(p) })
}
