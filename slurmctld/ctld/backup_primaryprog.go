package ctld

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// SlurmctldPrimaryOnProg and SlurmctldPrimaryOffProg, as 22.05's
// _run_primary_prog: the on program runs each time a controller takes
// control (the primary at start, a backup when it takes over); the off
// program when the primary stops and each time a backup enters standby
// (at its start too). The program runs with no arguments (argv[0] its base
// name), in its own process group, without the daemon's descriptors
// (stdin, stdout and stderr are /dev/null here, where 22.05 closes them);
// its exit is logged, never waited for by the caller.

// RunPrimaryProg starts the on (on true) or off program named in cfg, if
// any, and returns at once; done, if not nil, is closed once the program
// has ended (or was not started).
func RunPrimaryProg(cfg *Config, on bool, log *slog.Logger) (done <-chan struct{}) {
	ch := make(chan struct{})
	prog, kind := cfg.Conf.SlurmctldPrimaryOffProg, "SlurmctldPrimaryOffProg"
	if on {
		prog, kind = cfg.Conf.SlurmctldPrimaryOnProg, "SlurmctldPrimaryOnProg"
	}
	if prog == "" {
		close(ch)
		return ch
	}
	if err := unix.Access(prog, unix.X_OK); err != nil {
		log.Error(fmt.Sprintf("_run_primary_prog: Invalid %s: %s", kind, errnoText(err)))
		close(ch)
		return ch
	}
	cmd := &exec.Cmd{Path: prog, Args: []string{filepath.Base(prog)},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if err := cmd.Start(); err != nil {
		log.Error(fmt.Sprintf("_run_primary_prog fork error: %s", errnoText(err)))
		close(ch)
		return ch
	}
	go func() {
		defer close(ch)
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
			log.Info(fmt.Sprintf("_wait_primary_prog: %s completed successfully", kind))
		case errors.As(err, &ee):
			ws, _ := ee.Sys().(syscall.WaitStatus)
			sig := 0
			if ws.Signaled() {
				sig = int(ws.Signal())
			}
			log.Error(fmt.Sprintf("_wait_primary_prog: %s exit status %d:%d", kind, max(ws.ExitStatus(), 0), sig))
		default:
			log.Error(fmt.Sprintf("_wait_primary_prog: %s: %v", kind, err))
		}
	}()
	return ch
}

// errnoText is strerror's text for a system error (%m).
func errnoText(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		return slurmerr.Message(int(en))
	}
	return err.Error()
}
