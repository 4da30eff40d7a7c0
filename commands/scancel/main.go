// Command scancel is goslurm's drop-in for Slurm 22.05's scancel: it
// signals or cancels jobs, array tasks and steps by id or by filter.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
)

// Our own wording: scripts depend on scancel's exit codes and messages,
// not on its help text.
const usageText = `Usage: scancel [-A account] [--batch] [--full] [--interactive] [-n job_name]
               [-p partition] [-Q] [-q qos] [-R reservation] [-s signal | integer]
               [-t PENDING | RUNNING | SUSPENDED] [--usage] [-u user_name]
               [--hurry] [-V] [-v] [-w hosts...] [--wckey=wckey]
               [job_id[_array_id][.step_id]]
`

const helpText = `Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]
  -A, --account=account           only jobs of this account
  -b, --batch                     signal only the batch shell
  -f, --full                      signal the batch shell, its children and all steps
  -H, --hurry                     skip burst buffer stage out
  -i, --interactive               ask before acting on each job
  -M, --clusters                  clusters to act on (needs slurmdbd)
  -n, --name=job_name             only jobs with this name
  -p, --partition=partition       only jobs in this partition
  -Q, --quiet                     no warnings
  -q, --qos=qos                   only jobs with this QOS
  -R, --reservation=reservation   only jobs in this reservation
      --sibling=cluster_name      remove an active sibling of a federated job
  -s, --signal=name | integer     signal to send (default: cancel with SIGKILL)
  -t, --state=states              only jobs in this state (PENDING, RUNNING or SUSPENDED)
  -u, --user=user_name            only jobs of this user
  -V, --version                   print the version and exit
  -v, --verbose                   more messages
  -w, --nodelist                  only jobs on these nodes
      --wckey=wckey               only jobs with this workload characterization key

Help options:
  --help                          show this help message
  --usage                         display brief usage message
`

// scancel is one run of the command.
type scancel struct {
	stdin  *bufio.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) (string, bool)
	opt    options
	conn   *slurmcli.Conn
	ctx    context.Context

	delayLogged bool
}

func main() {
	s := &scancel{
		stdin:  bufio.NewReader(os.Stdin),
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.LookupEnv,
		ctx:    context.Background(),
	}
	os.Exit(s.run(os.Args))
}

// run executes scancel with args (args[0] is the program name) and returns
// the exit status.
func (s *scancel) run(args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(exit)
			if !ok {
				panic(r)
			}
			code = e.code
		}
	}()
	conn, err := slurmcli.Dial(s.getenv)
	if err != nil {
		fmt.Fprintf(s.stderr, "scancel: fatal: %v\n", err)
		return 1
	}
	s.conn = conn
	s.opt.signal = noVal16
	s.opt.state = jobEnd
	// Slurm defaults --ctld on unless LaunchType is launch/slurm.
	if lt := conn.Conf.LaunchType; lt != "" && lt != "launch/slurm" {
		s.opt.ctld = true
	}
	s.parseEnv()
	s.parseArgs(append([]string(nil), args...))
	if s.opt.verbose > 2 {
		s.listOpts()
	}
	conn.Verbose = s.opt.verbose
	conn.Log = s.stderr
	conn.Prog = "scancel"
	return s.process()
}

// listOpts is scancel's option dump at -vvv.
func (s *scancel) listOpts() {
	o := &s.opt
	tf := func(b bool) string {
		if b {
			return "true"
		}
		return "false"
	}
	str := func(v string, set bool) string {
		if !set {
			return "(null)"
		}
		return v
	}
	s.infof("account        : %s", str(o.account, o.hasAccount))
	s.infof("batch          : %s", tf(o.batch))
	s.infof("ctld           : %s", tf(o.ctld))
	s.infof("full           : %s", tf(o.full))
	s.infof("hurry          : %s", tf(o.hurry))
	s.infof("interactive    : %s", tf(o.interactive))
	s.infof("job_name       : %s", str(o.jobName, o.hasName))
	s.infof("nodelist       : %s", str(o.nodelist, o.hasNodes))
	s.infof("partition      : %s", str(o.partition, o.hasPart))
	s.infof("qos            : %s", str(o.qos, o.hasQOS))
	s.infof("reservation    : %s", str(o.reservation, o.hasResv))
	s.infof("sibling        : %s", str(o.sibling, o.sibling != ""))
	if o.signal != noVal16 {
		s.infof("signal         : %d", o.signal)
	}
	s.infof("state          : %s", stateString(o.state))
	s.infof("user_id        : %d", o.userID)
	s.infof("user_name      : %s", str(o.userName, o.hasUser))
	s.infof("verbose        : %d", o.verbose)
	s.infof("wckey          : %s", str(o.wckey, o.hasWCKey))
	for i, j := range o.jobs {
		if j.stepID == batchScript {
			s.infof("job_id[%d]      : %s", i, j.idString())
		} else {
			s.infof("job_step_id[%d] : %s.%d", i, j.idString(), j.stepID)
		}
	}
}

func stateString(st uint32) string {
	if st == jobEnd {
		return "?"
	}
	return slurmcli.JobStateString(st)
}

// idString is how scancel names a parsed id in messages.
func (j jobSpec) idString() string {
	switch j.arrayID {
	case noVal:
		return fmt.Sprintf("%d", j.jobID)
	case infinite:
		return fmt.Sprintf("%d_*", j.jobID)
	}
	return fmt.Sprintf("%d_%d", j.jobID, j.arrayID)
}
