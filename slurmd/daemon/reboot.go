package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/server"
)

// rpcReboot is REQUEST_REBOOT_NODES (scontrol reboot). Like slurmd it never
// replies: the controller sends it without waiting for an answer. The
// program runs before the connection closes, so a sender that waits for
// the close sees it finish (or the node go away).
func (d *Daemon) rpcReboot(_ context.Context, r *server.Request) *server.Response {
	cfg := d.config()
	if !cfg.Authorized(r.Identity.UID) {
		d.log.Error(fmt.Sprintf("Security violation, reboot RPC from uid %d", r.Identity.UID))
		return nil
	}
	program := cfg.Conf.RebootProgram
	if program == "" {
		d.log.Error("RebootProgram isn't defined in config")
		return nil
	}
	req, _ := r.Body.(msg.RebootNodesRequest)
	path, cmd := rebootCommand(program, req.Features)
	if req.Features.Valid {
		d.log.Info(fmt.Sprintf("Node reboot request with features %s being processed", req.Features.Value))
	} else {
		d.log.Info("Node reboot request being processed")
	}
	if err := unix.Access(path, unix.R_OK|unix.X_OK); err != nil {
		d.log.Error(fmt.Sprintf("Cannot run RebootProgram [%s]: %s", path, strerror(err)))
	} else if status := runSystem(cmd); status != 0 {
		d.log.Error(fmt.Sprintf("system(%s) returned %d", program, status))
	}
	// If the program did not take the node down, stopping slurmd at least
	// keeps jobs off it until someone looks (xstrcasestr: any case, and
	// slurmd matches a substring of the whole parameter list).
	if strings.Contains(strings.ToLower(cfg.Conf.SlurmdParameters.String()), "shutdown_on_reboot") {
		if d.opts.Shutdown != nil {
			go d.opts.Shutdown()
		}
	}
	return nil
}

// rebootCommand returns the program's path (RebootProgram up to its first
// space) and the shell command slurmd runs: RebootProgram as written, or,
// when the request carries features (scontrol reboot with features, even
// empty ones), only the path followed by the features in single quotes.
func rebootCommand(program string, features msg.NullString) (path, cmd string) {
	path, _, _ = strings.Cut(program, " ")
	switch {
	case !features.Valid:
		return path, program
	case features.Value == "":
		return path, path
	default:
		return path, path + " '" + features.Value + "'"
	}
}

// runSystem runs cmd as system(3) does (/bin/sh -c, slurmd's own
// environment and standard streams, no time limit) and returns system's
// result: the raw wait status, or -1 when the shell could not start.
func runSystem(cmd string) int {
	c := exec.Command("/bin/sh", "-c", cmd)
	c.Stdin, c.Stdout, c.Stderr = nil, os.Stdout, os.Stderr
	err := c.Run()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			return int(ws)
		}
	}
	return -1
}

// strerror is err's text as strerror(3) words it: Go's errno strings are
// the C ones with a lower-case first letter.
func strerror(err error) string {
	s := err.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
