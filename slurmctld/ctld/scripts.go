package ctld

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// maxMailProcs bounds the MailProg processes at a time (slurmctld's
// MAX_MAIL_THREADS); mails beyond it wait their turn in their goroutine.
const maxMailProcs = 10

var (
	mailSlots   = make(chan struct{}, maxMailProcs)
	jobCompLock sync.Mutex // one jobcomp/filetxt record at a time
)

// runScripts starts the site hooks a job call asked for (MailProg,
// PrologSlurmctld, EpilogSlurmctld, jobcomp), outside the controller lock:
// each script runs in its own goroutine (as slurmscriptd runs them for
// slurmctld), so a slow or hanging one never holds up the controller.
// The jobcomp/filetxt record is appended here, in call order.
func (c *Controller) runScripts(scripts []jobs.Script) {
	for _, s := range scripts {
		switch s.Kind {
		case jobs.ScriptJobCompFile:
			c.appendJobComp(s)
		case jobs.ScriptMail:
			go func() {
				mailSlots <- struct{}{}
				defer func() { <-mailSlots }()
				c.runMail(s)
			}()
		case jobs.ScriptPrologCtld, jobs.ScriptEpilogCtld:
			go c.runPrepilog(s)
		case jobs.ScriptJobCompScript:
			c.queueJobCompScript(s)
		}
	}
}

// afterRecovery is the part of a restart's work on the recovered jobs
// that needs the cluster view (jobs.Manager.RestartActions): nodes still
// completing a job are told again to end it, a job whose configuration
// ended is launched. The PrologSlurmctld and EpilogSlurmctld runs the
// recovery queued start here too.
func (c *Controller) afterRecovery(ctx context.Context) {
	out, err := c.jobOp(ctx, func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		return m.RestartActions(cl, now)
	})
	if err != nil {
		c.log.Error(fmt.Sprintf("restart: %v", err))
	}
	c.spawnActions(out.Actions)
}

// appendJobComp writes one jobcomp/filetxt record to JobCompLoc.
func (c *Controller) appendJobComp(s jobs.Script) {
	jobCompLock.Lock()
	defer jobCompLock.Unlock()
	f, err := os.OpenFile(s.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err == nil {
		_, err = f.WriteString(s.Line)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		c.log.Error(fmt.Sprintf("jobcomp/filetxt: JobId=%d: %v", s.JobID, err))
	}
}

// jobCompQueue feeds the one jobcomp/script runner: as the plugin's
// agent thread, it runs the records one after the other, in order.
var (
	jobCompOnce  sync.Once
	jobCompQueue chan jobCompItem
)

type jobCompItem struct {
	c *Controller
	s jobs.Script
}

func (c *Controller) queueJobCompScript(s jobs.Script) {
	jobCompOnce.Do(func() {
		jobCompQueue = make(chan jobCompItem, 1<<16)
		go func() {
			for it := range jobCompQueue {
				it.c.runJobCompScript(it.s)
			}
		}()
	})
	select {
	case jobCompQueue <- jobCompItem{c, s}:
	default:
		c.log.Error(fmt.Sprintf("jobcomp/script: queue full, JobId=%d not recorded", s.JobID))
	}
}

// runJobCompScript is _jobcomp_child: JobCompLoc runs in /tmp with its
// output to /dev/null, slurmctld's TZ passed on.
func (c *Controller) runJobCompScript(s jobs.Script) {
	if tz, ok := os.LookupEnv("TZ"); ok {
		s.Env = append(s.Env, "TZ="+tz)
	}
	cmd := exec.Command(s.Argv[0])
	cmd.Env = cutNUL(s.Env)
	cmd.Dir = "/tmp"
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		c.log.Error(fmt.Sprintf("jobcomp/script: script %s exited with status %d", s.Argv[0], ee.ExitCode()))
	case err != nil && !errors.As(err, &ee):
		c.log.Error(fmt.Sprintf("jobcomp/script: execve(%s): %v", s.Argv[0], err))
	}
}

// runMail is _mail_proc: MailProg's failure is logged with its output.
func (c *Controller) runMail(s jobs.Script) {
	status, out, _, err := runHook(s)
	switch {
	case err != nil:
		c.log.Error(fmt.Sprintf("MailProg %s: %v", s.Argv[0], err))
	case status != 0:
		c.log.Error(fmt.Sprintf("MailProg returned error, it's output was '%s'", out))
	case out != "":
		c.log.Debug(fmt.Sprintf("MailProg output was '%s'.", out))
	}
}

// runPrepilog runs PrologSlurmctld or EpilogSlurmctld and reports its end
// to the job manager (prep_prolog_slurmctld_callback and the epilog's).
func (c *Controller) runPrepilog(s jobs.Script) {
	status, _, timedOut, err := runHook(s)
	if err != nil {
		// The script could not be started: run_command reports 127.
		c.log.Error(fmt.Sprintf("%s JobId=%d: %v", s.Kind.Name(), s.JobID, err))
		status = 127 << 8
	} else if ws := syscall.WaitStatus(status); !timedOut && status != 0 {
		c.log.Error(fmt.Sprintf("_run_script: JobId=%d %s exit status %d:%d", s.JobID, s.Kind.Name(),
			ws.ExitStatus(), max(int(ws.Signal()), 0)))
	}
	out, err := c.jobOp(context.Background(), func(m *jobs.Manager, cl *jobs.Cluster, now int64) (jobs.Outcome, error) {
		if s.Kind == jobs.ScriptPrologCtld {
			return m.PrologDone(s.JobID, status, timedOut, cl, now)
		}
		return m.EpilogDone(s.JobID, timedOut, now)
	})
	if err != nil {
		c.log.Error(fmt.Sprintf("%s JobId=%d: %v", s.Kind.Name(), s.JobID, err))
	}
	c.carryOut(out.Actions)
	c.kickScheduler()
}

// runHook runs a script with exactly its environment, in its own process
// group, killed (the group, SIGKILL) after its timeout. status is the raw
// wait status; out is what it wrote to stdout and stderr.
func runHook(s jobs.Script) (status int, out string, timedOut bool, err error) {
	ctx := context.Background()
	var cancel context.CancelFunc = func() {}
	if s.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(s.Timeout)*time.Second)
	}
	defer cancel()
	argv := cutNUL(s.Argv)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = cutNUL(s.Env)
	cmd.Dir = "/"
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child left behind with the output pipe must not hold us forever.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return 0, "", false, err
	}
	var killed atomic.Bool
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				killed.Store(true)
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		case <-done:
		}
	}()
	werr := cmd.Wait()
	close(done)
	timedOut = killed.Load()
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			status = int(ws)
		}
	} else if werr != nil {
		return 0, "", false, werr
	}
	return status, strings.TrimRight(buf.String(), "\n"), timedOut, nil
}

// cutNUL cuts every string at its first NUL byte, as the C strings real
// slurmctld passes to execve end there: a job name or comment sent with
// an embedded NUL must not stop a site script from running (exec refuses
// such arguments and environments).
func cutNUL(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		if k := strings.IndexByte(s, 0); k >= 0 {
			s = s[:k]
		}
		out[i] = s
	}
	return out
}
