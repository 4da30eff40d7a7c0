package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
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
	v, err := s.rpc(msgtype.REQUEST_BATCH_SCRIPT, msg.JobIDShowRequest{JobID: id}, msgtype.RESPONSE_BATCH_SCRIPT)
	if err != nil || v == nil {
		return "", err
	}
	return v.(msg.BatchScriptResponse).Script.Value, nil
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
	slurmcli.MergeSort(lics, func(a, b msg.License) int { return strings.Compare(a.Name.Value, b.Name.Value) })
	sep := "\n    "
	if s.oneLiner {
		sep = " "
	}
	for _, l := range lics {
		if val != nil && l.Name.Value != *val {
			continue
		}
		remote := "no"
		if l.Remote != 0 {
			remote = "yes"
		}
		fmt.Fprintf(s.stdout, "LicenseName=%s%sTotal=%d Used=%d Free=%d Reserved=%d Remote=%s\n",
			l.Name.Value, sep, int32(l.Total), l.InUse, l.Available(), l.Reserved, remote)
		if val != nil {
			break
		}
	}
}

// loadLicenses is slurm_load_licenses.
func (s *state) loadLicenses() ([]msg.License, error) {
	v, err := s.rpc(msgtype.REQUEST_LICENSE_INFO, msg.InfoRequest{}, msgtype.RESPONSE_LICENSE_INFO)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
	}
	return v.(msg.LicenseInfoResponse).Licenses, nil
}
