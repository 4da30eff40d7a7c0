package realslurm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The process handling here is shared with testsuite/ctldharness, which
// runs its daemons the same way.

// Proc is a daemon started in its own process group (StartProc, or a
// Cluster's Launch).
type Proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProc starts bin with args in its own process group, SIGKILLed if
// the test binary dies, with working directory dir and environment env,
// its standard output and error appended to logPath. name labels it in
// PollProcs' errors.
func StartProc(name, bin string, args, env []string, dir, logPath string) (*Proc, error) {
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Name is the name the process was started with.
func (p *Proc) Name() string { return p.name }

// Pid returns the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Process returns the started process.
func (p *Proc) Process() *os.Process { return p.cmd.Process }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is the process's exit error, valid once Done is closed.
func (p *Proc) Err() error { return p.err }

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) error { return syscall.Kill(p.cmd.Process.Pid, sig) }

// Kill SIGKILLs the process group (a crash: the daemon flushes and closes
// nothing) and waits until the process is gone.
func (p *Proc) Kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// StopProcs terminates the process groups of ps with SIGTERM and, for
// those not gone within 10 s, SIGKILL; then it SIGKILLs whatever is left
// in the groups (children that outlived their leader).
func StopProcs(ps []*Proc) {
	for _, p := range ps {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	}
	deadline := time.After(10 * time.Second)
	for _, p := range ps {
		select {
		case <-p.done:
		case <-deadline:
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
	for _, p := range ps {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// PollProcs calls ready every 100 ms until it returns true, ctx ends, or
// one of ps has exited.
func PollProcs(ctx context.Context, ps []*Proc, ready func() bool) error {
	for {
		if ready() {
			return nil
		}
		for _, p := range ps {
			select {
			case <-p.done:
				return fmt.Errorf("%s exited: %v", p.name, p.err)
			default:
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// KillStrays SIGKILLs, this process aside, what a cluster's daemons left
// behind (Slurm's slurmstepd daemonizes out of slurmd's process group):
// the processes whose environment holds marker ("NAME=value") or, when
// dir is not "", whose working directory is dir or below it.
func KillStrays(marker, dir string) {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		stray := false
		if dir != "" {
			cwd, _ := os.Readlink(filepath.Join(d, "cwd"))
			stray = cwd == dir || strings.HasPrefix(cwd, dir+"/")
		}
		if env, err := os.ReadFile(filepath.Join(d, "environ")); err == nil && !stray {
			for _, kv := range bytes.Split(env, []byte{0}) {
				if string(kv) == marker {
					stray = true
					break
				}
			}
		}
		if stray {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// LogFiles returns the non-empty files in dir, each under a heading.
func LogFiles(dir string) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		fmt.Fprintf(&b, "==== %s ====\n%s\n", filepath.Base(f), bytes.TrimRight(data, "\n"))
	}
	return b.String()
}
