package launch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
)

// taskExit records a MESSAGE_TASK_EXIT, logs it as srun's _task_finish
// does and keeps the step's status: the highest exit code, a signal death
// over any exit code (the highest signal), an OOM kill over everything.
func (s *Step) taskExit(m msg.TaskExit) {
	if m.StepID.JobID != s.JobID || m.StepID.StepID != s.Resp.JobStepID {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rc := m.ReturnCode
	ws := syscall.WaitStatus(rc)
	what := "task"
	if len(m.TaskIDs) != 1 {
		what = "tasks"
	}
	s.ctl.Log.Verbosef("launch/slurm: _task_finish: Received task exit notification for %d %s of %s (status=0x%04x).",
		len(m.TaskIDs), what, s.idString(), rc)
	where := func() (string, string) { return s.hostsOf(m.TaskIDs), rangeString(m.TaskIDs) }
	abnormal := true
	switch {
	case rc&0xff == sigOOM:
		if !s.oomPrinted {
			h, t := where()
			s.ctl.Log.Errorf("%s: %s %s: Out Of Memory", h, what, t)
		}
		s.oomPrinted = true
	case ws.Exited():
		if code := ws.ExitStatus(); code == 0 {
			abnormal = false
			if s.ctl.Log.Verbose >= 1 {
				h, t := where()
				s.ctl.Log.Verbosef("launch/slurm: _task_finish: %s: %s %s: Completed", h, what, t)
			}
		} else {
			h, t := where()
			s.ctl.Log.Errorf("%s: %s %s: Exited with exit code %d", h, what, t, code)
		}
	case ws.Signaled():
		sig := ws.Signal()
		core := ""
		if ws.CoreDump() {
			core = " (core dumped)"
		}
		h, t := where()
		if s.cancelled {
			s.ctl.Log.Verbosef("launch/slurm: _task_finish: %s: %s %s: %s%s", h, what, t, signalText(sig), core)
		} else {
			s.ctl.Log.Errorf("%s: %s %s: %s%s", h, what, t, signalText(sig), core)
		}
		if sig == syscall.SIGKILL || sig == syscall.SIGTERM {
			s.exitSignal = true
		}
	}
	s.noteRCLocked(rc)
	for _, t := range m.TaskIDs {
		if t >= s.NTasks || s.state[t] == taskExited || s.state[t] == taskAbnormal || s.state[t] == taskStartFailed {
			continue
		}
		if abnormal {
			s.state[t] = taskAbnormal
		} else {
			s.state[t] = taskExited
		}
		s.exited++
	}
	if abnormal && s.killOnBadRun && !s.abortSent && !s.terminated {
		s.terminated = true
		go s.Terminate(context.Background(), sigTermKill)
	}
	s.startMaxWaitLocked()
	s.checkExitedLocked()
}

// noteRCLocked folds one task status into the step's (launch_slurm.c).
func (s *Step) noteRCLocked(rc uint32) {
	if !s.haveRC {
		s.globalRC, s.haveRC = rc, true
		return
	}
	g := syscall.WaitStatus(s.globalRC)
	ws := syscall.WaitStatus(rc)
	switch {
	case s.globalRC&0xff == sigOOM:
	case rc&0xff == sigOOM:
		s.globalRC = rc
	case ws.Exited():
		if !g.Signaled() && (!g.Exited() || ws.ExitStatus() > g.ExitStatus()) {
			s.globalRC = rc
		}
	case ws.Signaled():
		if !g.Signaled() || ws.Signal() > g.Signal() {
			s.globalRC = rc
		}
	}
}

func (s *Step) checkExitedLocked() {
	if s.exited >= int(s.NTasks) {
		select {
		case <-s.allExited:
		default:
			close(s.allExited)
		}
	}
}

// hostsOf is the ranged host list running the given tasks.
func (s *Step) hostsOf(ids []uint32) string {
	var hosts []string
	for n, tids := range s.TIDs {
		for _, t := range tids {
			if slices.Contains(ids, t) {
				hosts = append(hosts, s.Nodes[n])
				break
			}
		}
	}
	return hostlist.Compress(hosts)
}

// rangeString is bit_fmt of a task id set: "0-2,5".
func rangeString(ids []uint32) string {
	s := slices.Clone(ids)
	slices.Sort(s)
	s = slices.Compact(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		} else {
			parts = append(parts, fmt.Sprint(s[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// signalText is glibc's strsignal (Go's names are lower-case and differ
// for a few signals).
func signalText(sig syscall.Signal) string {
	if t, ok := strsignal[sig]; ok {
		return t
	}
	return fmt.Sprintf("Unknown signal %d", int(sig))
}

var strsignal = map[syscall.Signal]string{
	syscall.SIGHUP: "Hangup", syscall.SIGINT: "Interrupt", syscall.SIGQUIT: "Quit",
	syscall.SIGILL: "Illegal instruction", syscall.SIGTRAP: "Trace/breakpoint trap",
	syscall.SIGABRT: "Aborted", syscall.SIGBUS: "Bus error",
	syscall.SIGFPE: "Floating point exception", syscall.SIGKILL: "Killed",
	syscall.SIGUSR1: "User defined signal 1", syscall.SIGSEGV: "Segmentation fault",
	syscall.SIGUSR2: "User defined signal 2", syscall.SIGPIPE: "Broken pipe",
	syscall.SIGALRM: "Alarm clock", syscall.SIGTERM: "Terminated",
	syscall.SIGSTKFLT: "Stack fault", syscall.SIGCHLD: "Child exited",
	syscall.SIGCONT: "Continued", syscall.SIGSTOP: "Stopped (signal)",
	syscall.SIGTSTP: "Stopped", syscall.SIGTTIN: "Stopped (tty input)",
	syscall.SIGTTOU: "Stopped (tty output)", syscall.SIGURG: "Urgent I/O condition",
	syscall.SIGXCPU: "CPU time limit exceeded", syscall.SIGXFSZ: "File size limit exceeded",
	syscall.SIGVTALRM: "Virtual timer expired", syscall.SIGPROF: "Profiling timer expired",
	syscall.SIGWINCH: "Window changed", syscall.SIGIO: "I/O possible",
	syscall.SIGPWR: "Power failure", syscall.SIGSYS: "Bad system call",
}
