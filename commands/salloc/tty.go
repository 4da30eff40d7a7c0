package main

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// jobControl is salloc's handling of the terminal on its standard input
// (salloc.c): when salloc runs in the terminal's foreground, its command
// gets a process group of its own and the foreground, so keyboard signals
// and a shell's job control reach the command, not salloc.
type jobControl struct {
	interactive bool
	saved       *unix.Termios
}

// errNoCtty: stdin is a terminal but not salloc's controlling one.
type errNoCtty struct{}

func (errNoCtty) Error() string { return "no controlling terminal: please set --no-shell" }

// newJobControl looks at stdin as salloc does before asking for the
// allocation. A terminal that is not the controlling one is an error
// unless --no-shell is given.
func newJobControl(stdin any, noShell bool) (*jobControl, error) {
	jc := &jobControl{}
	f, ok := stdin.(*os.File)
	if !ok || f.Fd() != 0 {
		return jc, nil
	}
	t, err := unix.IoctlGetTermios(0, unix.TCGETS)
	if err != nil {
		return jc, nil // not a terminal
	}
	tpgid, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	switch {
	case err != nil || tpgid < 0:
		if !noShell {
			return nil, errNoCtty{}
		}
	case !noShell && unix.Getpgrp() == tpgid:
		jc.interactive = true
		jc.saved = t
	}
	return jc, nil
}

// granted takes the terminal for salloc's own process group once the
// allocation is there. SIGTSTP is ignored from here on; the command
// inherits that (as real salloc's does): a plain command is not stopped
// by ^Z, a job-control shell sets its own.
func (jc *jobControl) granted() {
	if !jc.interactive {
		return
	}
	signal.Ignore(syscall.SIGTSTP)
	unix.Setpgid(0, 0) // fails for a session leader, which leads its group already
	jc.foreground(os.Getpid())
}

// childAttr is how the command is started: in a process group of its own,
// given the terminal's foreground when salloc is interactive.
func (jc *jobControl) childAttr() *syscall.SysProcAttr {
	if jc.interactive {
		return &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: 0}
	}
	return &syscall.SysProcAttr{Setpgid: true}
}

// commandDone takes the terminal back for salloc.
func (jc *jobControl) commandDone() {
	if jc.interactive {
		jc.foreground(unix.Getpgrp())
	}
}

// restore is salloc's exit handler: the terminal's modes as they were and
// the foreground back to the process group of salloc's parent.
func (jc *jobControl) restore() {
	if !jc.interactive {
		return
	}
	jc.blockTTOU(func() {
		unix.IoctlSetTermios(0, unix.TCSETS, jc.saved)
		if pg, err := unix.Getpgid(os.Getppid()); err == nil {
			unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, pg)
		}
	})
}

func (jc *jobControl) foreground(pgrp int) {
	jc.blockTTOU(func() { unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, pgrp) })
}

// blockTTOU runs f with SIGTTOU and SIGTTIN blocked on its thread: a
// process outside the foreground may then change the terminal (POSIX),
// where a caught SIGTTOU would make the call fail and restart forever.
func (jc *jobControl) blockTTOU(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	for _, sig := range []syscall.Signal{syscall.SIGTTOU, syscall.SIGTTIN} {
		set.Val[(sig-1)/64] |= 1 << ((uint(sig) - 1) % 64)
	}
	unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old)
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	f()
}
