package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// cmdWrite is "write batch_script JOBID [FILE|-]"; "write config" is not
// supported yet.
func cmdWrite(s *state, args []string) {
	switch {
	case len(args) < 2:
		s.exitCode = 1
		s.eprintf("too few arguments for keyword:%s\n", args[0])
	case hasPrefixFold(args[1], "batch_script", max(len(args[1]), 5)):
		if len(args) > 4 {
			s.exitCode = 1
			s.eprintf("too many arguments for keyword:%s\n", args[0])
			return
		}
		s.batchScript(args[2:])
	case hasPrefixFold(args[1], "config", max(len(args[1]), 6)):
		s.exitCode = 1
		s.errorf("write config: not implemented yet by this scontrol")
	default:
		s.exitCode = 1
		s.eprintf("invalid write argument:%s\n", args[1])
	}
}

// batchScript is scontrol_batch_script. Like Slurm's, its failures do not
// change scontrol's exit code.
func (s *state) batchScript(argv []string) {
	if len(argv) < 1 {
		return
	}
	n, _ := strtolInt(argv[0])
	id := uint32(n)
	name := fmt.Sprintf("slurm-%d.sh", id)
	if len(argv) > 1 {
		name = argv[1]
	}
	var out *os.File
	if name == "-" {
		s.stdout.Flush()
		out = os.Stdout
	} else {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			var errno syscall.Errno
			msgText := err.Error()
			if errors.As(err, &errno) {
				msgText = errno.Error()
				msgText = strings.ToUpper(msgText[:1]) + msgText[1:]
			}
			s.eprintf("failed to open file `%s`: %s\n", name, msgText)
			return
		}
		out = f
	}
	script, err := s.fetchBatchScript(id)
	if err == nil {
		if name == "-" {
			s.stdout.WriteString(script)
		} else if _, werr := out.WriteString(script); werr != nil {
			err = slurmerr.Error{Code: slurmerr.SLURM_ERROR}
		}
	}
	if out != os.Stdout {
		out.Close()
	}
	if err != nil {
		if out != os.Stdout {
			os.Remove(name)
		}
		s.perror("job script retrieval failed", err)
		return
	}
	if out != os.Stdout && s.quietFlag != 1 {
		fmt.Fprintf(s.stdout, "batch script for job %d written to %s\n", id, name)
	}
}

// fetchBatchScript is slurm_job_batch_script's RPC.
func (s *state) fetchBatchScript(id uint32) (string, error) {
	b, err := encode(msgtype.REQUEST_BATCH_SCRIPT, msg.JobIDShowRequest{JobID: id})
	if err != nil {
		return "", err
	}
	c := s.ctl()
	s.logAuth()
	r, err := c.Client.Call(s.ctx(), msgtype.REQUEST_BATCH_SCRIPT, b)
	if err != nil {
		return "", err
	}
	f := r.Frame
	switch f.Header.MsgType {
	case msgtype.RESPONSE_BATCH_SCRIPT:
		rd := pack.NewReader(f.Body)
		script, _ := rd.OptStr()
		if err := rd.Err(); err != nil {
			return "", fmt.Errorf("%v: %w: %w", msgtype.RESPONSE_BATCH_SCRIPT, client.ErrReceive, err)
		}
		return script, nil
	case msgtype.RESPONSE_SLURM_RC:
		if err := client.ReturnCode(&f); err != nil {
			return "", err
		}
		return "", nil
	case msgtype.RESPONSE_SLURM_RC_MSG:
		return "", s.rcMsg(&f)
	}
	return "", slurmerr.Error{Code: slurmerr.SLURM_ERROR}
}

// printDaemons is _print_daemons: which Slurm daemons slurm.conf says
// should run on this host.
func (s *state) printDaemons() {
	cfg := s.ctl().Conf
	long, _ := os.Hostname()
	short, _, _ := strings.Cut(long, ".")
	actld, ctld := false, false
	for _, h := range cfg.SlurmctldHost {
		if h.Host == "" {
			break
		}
		actld = true
		for _, tok := range strings.Split(controlMachine(h.Host), ",") {
			if tok == short || tok == long || strings.EqualFold(tok, "localhost") {
				ctld = true
				break
			}
		}
		if ctld {
			break
		}
	}
	hasNode := func(host string) bool {
		for _, n := range cfg.Nodes {
			hn := n.Hostname
			if hn == "" {
				hn = n.Name
			}
			if hn == host {
				return true
			}
		}
		return false
	}
	// Slurm also tries the host's aliases; its name, full name and
	// "localhost" cover the usual setups.
	d := hasNode(short) || hasNode(long) || hasNode("localhost")
	var list string
	if actld && ctld {
		list += "slurmctld "
	}
	if actld && d {
		list += "slurmd"
	}
	if list == "" {
		list = "(null)"
	}
	fmt.Fprintf(s.stdout, "%s\n", list)
}

// license is one record of RESPONSE_LICENSE_INFO.
type license struct {
	name                          string
	total, inUse, reserved, avail uint32
	remote                        bool
}

// showLicenses is scontrol_print_licenses: "show licenses [NAME]".
func showLicenses(s *state, _ []string, val *string) {
	lics, err := s.loadLicenses()
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_load_license error", err)
		}
		return
	}
	if len(lics) == 0 {
		s.stdout.WriteString("No licenses configured in Slurm.\n")
		return
	}
	slurmcli.MergeSort(lics, func(a, b license) int { return strings.Compare(a.name, b.name) })
	sep := "\n    "
	if s.oneLiner {
		sep = " "
	}
	for _, l := range lics {
		if val != nil && l.name != *val {
			continue
		}
		remote := "no"
		if l.remote {
			remote = "yes"
		}
		fmt.Fprintf(s.stdout, "LicenseName=%s%sTotal=%d Used=%d Free=%d Reserved=%d Remote=%s\n",
			l.name, sep, int32(l.total), l.inUse, l.avail, l.reserved, remote)
		if val != nil {
			break
		}
	}
}

func (s *state) loadLicenses() ([]license, error) {
	b, err := encode(msgtype.REQUEST_LICENSE_INFO, msg.InfoRequest{})
	if err != nil {
		return nil, err
	}
	c := s.ctl()
	s.logAuth()
	r, err := c.Client.Call(s.ctx(), msgtype.REQUEST_LICENSE_INFO, b)
	if err != nil {
		return nil, err
	}
	f := r.Frame
	switch f.Header.MsgType {
	case msgtype.RESPONSE_LICENSE_INFO:
	case msgtype.RESPONSE_SLURM_RC_MSG:
		return nil, s.rcMsg(&f)
	default:
		if err := client.ReturnCode(&f); err != nil {
			return nil, err
		}
		return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
	}
	rd := pack.NewReader(f.Body)
	n := rd.Count(17)
	rd.Time()
	out := make([]license, 0, n)
	for i := 0; i < n && rd.Err() == nil; i++ {
		var l license
		l.name = rd.Str()
		l.total = rd.U32()
		l.inUse = rd.U32()
		l.reserved = rd.U32()
		if l.total >= l.inUse {
			l.avail = l.total - l.inUse
		}
		l.remote = rd.U8() != 0
		out = append(out, l)
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("%v: %w: %w", msgtype.RESPONSE_LICENSE_INFO, client.ErrReceive, err)
	}
	return out, nil
}
