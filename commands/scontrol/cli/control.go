package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// jobIDList is _is_job_id followed by _next_job_id until exhausted: a
// comma/blank separated list of ids, where "[a-b]" ranges of job ids and
// "_[x-y]" task specs are allowed; ok is false for anything else.
func jobIDList(str string) ([]string, bool) {
	haveUnder, havePlus := false, false
	brackets := 0
	b := []byte(str)
	for i, c := range b {
		switch {
		case c == '+':
			if havePlus {
				return nil, false
			}
			havePlus = true
		case c == '_':
			if haveUnder {
				return nil, false
			}
			haveUnder = true
		case c == '[':
			brackets++
		case c == ']':
			brackets--
		case c == '-':
			if brackets == 0 && !haveUnder {
				return nil, false
			}
		case c == ',' || c == ' ':
			if brackets == 0 {
				b[i] = '^'
				haveUnder, havePlus = false, false
			}
		case c < '0' || c > '9':
			return nil, false
		}
	}
	if brackets != 0 {
		return nil, false
	}
	var out []string
	for _, tok := range strings.Split(string(b), "^") {
		if tok == "" {
			continue
		}
		taskSpec, hasTask := "", false
		under := strings.IndexByte(tok, '_')
		if under >= 0 {
			hasTask = true
			if strings.HasPrefix(tok[under+1:], "[") {
				taskSpec = tok[under+2:]
				if k := strings.IndexByte(taskSpec, ']'); k >= 0 {
					taskSpec = taskSpec[:k]
				}
			} else {
				taskSpec = tok[under+1:]
			}
		}
		suffix := ""
		if hasTask {
			suffix = "_" + taskSpec
		}
		bracket := strings.IndexByte(tok, '[')
		if bracket >= 0 && (under < 0 || bracket < under) {
			head := tok
			if under >= 0 {
				head = tok[:under]
			}
			hl, err := hostlist.Parse(head)
			if err != nil || hl.Count() == 0 {
				// Real scontrol reports "Invalid job id" and stops.
				return out, true
			}
			for _, h := range hl.Hosts() {
				out = append(out, h+suffix)
			}
			continue
		}
		head := tok
		if under >= 0 {
			head = tok[:under]
		}
		out = append(out, head+suffix)
	}
	return out, true
}

// reportArrayErrors prints a RESPONSE_JOB_ARRAY_ERRORS reply as scontrol
// does: every entry unless it is a single success.
func (s *state) reportArrayErrors(resp *msg.JobArrayErrorsResponse) {
	for _, e := range resp.Errors {
		if e.ErrorCode == 0 && len(resp.Errors) == 1 {
			continue
		}
		s.exitCode = 1
		if s.quietFlag == 1 {
			continue
		}
		s.stdout.Flush()
		s.eprintf("%s: %s\n", cs(e.JobArrayID), slurmerr.Message(int(e.ErrorCode)))
	}
}

// jobRPC sends a job request answered by RC or RESPONSE_JOB_ARRAY_ERRORS.
func (s *state) jobRPC(mt msgtype.Type, body any) error {
	resp, err := s.jobRPCResp(mt, body)
	if resp != nil {
		s.reportArrayErrors(resp)
	}
	return err
}

// jobRPCResp is jobRPC that hands back a RESPONSE_JOB_ARRAY_ERRORS reply
// unreported: slurm_update_job2's caller acts on the success before it
// reports the entries.
func (s *state) jobRPCResp(mt msgtype.Type, body any) (*msg.JobArrayErrorsResponse, error) {
	if d, ok := body.(*msg.JobDesc); ok {
		// Slurm's packer sets these on every job descriptor it packs,
		// so real scontrol's hold, release and update requests carry
		// them; ours are then byte for byte the same.
		d.SetDefaultBits()
	}
	v, err := s.rpc(mt, body, msgtype.RESPONSE_JOB_ARRAY_ERRORS)
	if errors.Is(err, io.EOF) {
		// slurmctld 22.05 closes the connection without a reply for
		// some failures (suspend of an unknown job); the C API then
		// reports an unexpected message.
		return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
	}
	if err != nil {
		return nil, err
	}
	if resp, ok := v.(msg.JobArrayErrorsResponse); ok {
		return &resp, nil
	}
	return nil, nil
}

func (s *state) jobIDError(err error, id string) {
	s.exitCode = 1
	if s.quietFlag != 1 {
		s.stdout.Flush()
		s.eprintf("%s for job %s\n", strerror(err), id)
	}
}

func stripJobPrefix(str string) string {
	if hasPrefixFold(str, "jobid=", 6) {
		str = str[6:]
	}
	if hasPrefixFold(str, "job=", 4) {
		str = str[4:]
	}
	return str
}

func tooFew(s *state, tag string) {
	s.exitCode = 1
	if s.quietFlag != 1 {
		s.eprintf("too few arguments for keyword:%s\n", tag)
	}
}

// cmdHold is hold, holdu, uhold and release.
func cmdHold(s *state, args []string) {
	if len(args) < 2 {
		tooFew(s, args[0])
		return
	}
	for _, a := range args[1:] {
		if rc := s.hold(args[0], a); rc != nil {
			s.exitCode = 1
			if s.quietFlag != 1 {
				s.perror("slurm_suspend error", rc)
			}
		}
	}
}

const allocSIDUserHold = 2

// hold is scontrol_hold; a non-nil result is the error slurm_perror
// reports after it.
func (s *state) hold(op, jobStr string) error {
	if hasPrefixFold(jobStr, "JobID=", 6) {
		jobStr = jobStr[6:]
	}
	if hasPrefixFold(jobStr, "Job=", 4) {
		jobStr = jobStr[4:]
	}
	d := msg.NewJobDesc()
	switch {
	case hasPrefixFold(op, "holdu", 5) || hasPrefixFold(op, "uhold", 5):
		d.Priority = 0
		d.AllocSID = allocSIDUserHold
	case hasPrefixFold(op, "hold", 4):
		d.Priority = 0
		d.AllocSID = 0
	default:
		d.Priority = infinite
	}
	var rc error
	update := func(id string) {
		d.JobIDStr = msg.Str(id)
		if err := s.jobRPC(msgtype.REQUEST_UPDATE_JOB, d); err != nil {
			if rc == nil || errCode(err) > errCode(rc) {
				rc = err
			}
			s.jobIDError(err, id)
		}
	}
	if ids, ok := jobIDList(jobStr); ok {
		for _, id := range ids {
			update(id)
		}
		return rc
	}
	var name string
	switch {
	case hasPrefixFold(jobStr, "Name=", 5):
		name = jobStr[5:]
	case hasPrefixFold(jobStr, "JobName=", 8):
		name = jobStr[8:]
	default:
		err := slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_ID}
		s.jobIDError(err, jobStr)
		return err
	}
	m, err := s.ctl().LoadJobs(s.ctx(), 0, s.jobShowFlags())
	if err != nil {
		if s.quietFlag == -1 {
			s.perror("slurm_load_job error", err)
		}
		return slurmerr.Error{Code: 1}
	}
	for _, j := range s.viewJobs(m) {
		if !j.Name.Valid || j.Name.Value != name {
			continue
		}
		if j.JobState&0xff != 0 {
			if j.ArrayTaskID != noVal {
				continue
			}
			e := slurmerr.Error{Code: slurmerr.ESLURM_JOB_NOT_PENDING}
			if rc == nil || errCode(e) > errCode(rc) {
				rc = e
			}
		}
		var id string
		switch {
		case j.taskStr.Valid:
			id = fmt.Sprintf("%d_%s", j.ArrayJobID, j.taskStr.Value)
		case j.ArrayTaskID != noVal:
			id = fmt.Sprintf("%d_%d", j.ArrayJobID, j.ArrayTaskID)
		default:
			id = fmt.Sprintf("%d", j.JobID)
		}
		update(id)
	}
	return rc
}

// Suspend operations (suspend_opts).
const (
	opSuspend = 0
	opResume  = 1
)

// cmdSuspend is suspend and resume.
func cmdSuspend(s *state, args []string) {
	if len(args) < 2 {
		tooFew(s, args[0])
		return
	}
	op := uint16(opResume)
	if hasPrefixFold(args[0], "suspend", max(len(args[0]), 2)) {
		op = opSuspend
	}
	for _, a := range args[1:] {
		a = stripJobPrefix(a)
		ids, ok := jobIDList(a)
		if !ok {
			s.jobIDError(slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_ID}, a)
			continue
		}
		for _, id := range ids {
			req := msg.SuspendRequest{Op: op, JobID: noVal, JobIDStr: msg.Str(id)}
			if err := s.jobRPC(msgtype.REQUEST_SUSPEND, req); err != nil {
				s.jobIDError(err, id)
			}
		}
	}
}

// Requeue flags.
const (
	requeueIncomplete  = 1 // JOB_RUNNING
	requeueHold        = 1 << 11
	requeueSpecialExit = 1 << 12
)

// parseRequeueFlags is parse_requeue_flags; false when arg is not a flag.
func parseRequeueFlags(arg string, flags *uint32) bool {
	if hasPrefixFold("incomplete", arg, len(arg)) {
		*flags |= requeueIncomplete
		return true
	}
	if !hasPrefixFold(arg, "state=", 6) {
		return false
	}
	v := arg[6:]
	if hasPrefixFold(v, "specialexit", 11) || hasPrefixFold(v, "se", 2) {
		*flags |= requeueSpecialExit
		return true
	}
	return false
}

func cmdRequeue(s *state, args []string) { s.requeue(args, 0) }

func cmdRequeueHold(s *state, args []string) { s.requeue(args, requeueHold) }

func (s *state) requeue(args []string, base uint32) {
	if len(args) < 2 {
		tooFew(s, args[0])
		return
	}
	flags := base
	start := 1
	for i := 1; i < len(args); i++ {
		if !parseRequeueFlags(args[i], &flags) {
			break
		}
		start++
	}
	for _, a := range args[start:] {
		if base == 0 {
			if a == "" {
				s.exitCode = 1
				continue
			}
			a = stripJobPrefix(a)
		}
		ids, ok := jobIDList(a)
		if !ok {
			s.jobIDError(slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_ID}, a)
			continue
		}
		for _, id := range ids {
			req := msg.JobRequeueRequest{JobID: noVal, JobIDStr: msg.Str(id), Flags: flags}
			if err := s.jobRPC(msgtype.REQUEST_JOB_REQUEUE, req); err != nil {
				s.jobIDError(err, id)
			}
		}
	}
}

// cmdPing is "ping": one line per configured controller.
func cmdPing(s *state, args []string) {
	if len(args) > 1 {
		s.exitCode = 1
		s.eprintf("too many arguments for keyword:%s\n", args[0])
		return
	}
	s.pingControllers()
}

func (s *state) pingControllers() {
	c := s.ctl()
	hosts := c.Conf.SlurmctldHost
	s.exitCode = 1
	down := false
	for i, h := range hosts {
		status := "DOWN"
		if err := c.Client.Ping(s.ctx(), i); err == nil {
			status = "UP"
			s.exitCode = 0
		} else {
			down = true
		}
		mode := fmt.Sprintf("backup%d", i)
		switch {
		case i == 0:
			mode = "primary"
		case i == 1 && len(hosts) == 2:
			mode = "backup"
		}
		fmt.Fprintf(s.stdout, "Slurmctld(%s) at %s is %s\n", mode, controlMachine(h.Host), status)
	}
	if down && os.Getuid() == 0 {
		s.stdout.WriteString("*****************************************\n")
		s.stdout.WriteString("** RESTORE SLURMCTLD DAEMON TO SERVICE **\n")
		s.stdout.WriteString("*****************************************\n")
	}
}

func cmdReconfigure(s *state, args []string) {
	if len(args) > 2 {
		s.exitCode = 1
		s.eprintf("too many arguments for keyword:%s\n", args[0])
	}
	if err := s.rpcRC(msgtype.REQUEST_RECONFIGURE, msg.Empty{}); err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_reconfigure error", err)
		}
	}
}

// cmdShutdown is "shutdown [slurmctld|controller]": the backups first,
// then the primary, as slurm_shutdown does.
func cmdShutdown(s *state, args []string) {
	var opts uint16
	switch {
	case len(args) == 2:
		if args[1] != "slurmctld" && args[1] != "controller" {
			s.exitCode = 1
			s.eprintf("invalid shutdown argument:%s\n", args[1])
			return
		}
		opts = 2
	case len(args) > 2:
		s.exitCode = 1
		s.eprintf("too many arguments for keyword:%s\n", args[0])
		return
	}
	c := s.ctl()
	body, err := s.encode(msgtype.REQUEST_SHUTDOWN, msg.ShutdownRequest{Options: opts})
	if err == nil {
		for i := len(c.Conf.SlurmctldHost) - 1; i >= 1; i-- {
			// Backups that are down are not an error.
			_, _ = c.Client.CallTo(s.ctx(), i, msgtype.REQUEST_SHUTDOWN, body, c.Client.SlurmUserUID)
		}
		err = c.Client.CallRC(s.ctx(), msgtype.REQUEST_SHUTDOWN, body)
	}
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_shutdown error", err)
		}
	}
}

// controlMachine is how slurm.conf's SlurmctldHost name is kept:
// "localhost" becomes this machine's short host name.
func controlMachine(host string) string {
	if host != "localhost" {
		return host
	}
	name, err := os.Hostname()
	if err != nil {
		return host
	}
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	return name
}

// cmdErrnumstr is "errnumstr N": Slurm's text for an error number.
func cmdErrnumstr(s *state, args []string) {
	if len(args) != 2 {
		s.exitCode = 1
		s.eprintf("one arguments required for keyword:%s\n", args[0])
		return
	}
	n, rest := strtolInt(args[1])
	if rest != "" {
		s.exitCode = 1
		s.eprintf("numeric arguments required for keyword:%s\n", args[0])
		return
	}
	fmt.Fprintf(s.stdout, "%s\n", slurmerr.Message(n))
}

// cmdCreate is "create PartitionName=... ...". Nodes and reservations
// are not supported yet.
func cmdCreate(s *state, args []string) {
	if len(args) < 2 {
		s.exitCode = 1
		s.eprintf("too few arguments for %s keyword\n", args[0])
		return
	}
	argv := args[1:]
	for _, a := range argv {
		tag, _, _ := strings.Cut(a, "=")
		m := func(kw string) bool { return hasPrefixFold(tag, kw, max(len(tag), 3)) }
		switch {
		case m("NodeName"):
			s.exitCode = 1
			s.errorf("create %s: not implemented yet by this scontrol", tag)
			return
		case m("ReservationName"):
			s.createReservation(argv)
			return
		case m("PartitionName"):
			s.createPartition(argv)
			return
		}
	}
	s.exitCode = 1
	s.errorf("Invalid creation entity: %s", argv[0])
}

func (s *state) createPartition(argv []string) {
	p, updates, err := s.parsePartOptions(argv)
	if err != nil {
		s.exitCode = 1
		return
	}
	switch {
	case !p.Name.Valid:
		s.exitCode = 1
		s.errorf("PartitionName must be given.")
	case strings.EqualFold(p.Name.Value, "default"):
		s.exitCode = 1
		s.errorf("PartitionName cannot be \"DEFAULT\".")
	case updates == 0:
		s.exitCode = 1
		s.errorf("No parameters specified")
	default:
		if err := s.rpcRC(msgtype.REQUEST_CREATE_PARTITION, p); err != nil {
			s.exitCode = 1
			s.perror("Error creating the partition", err)
		}
	}
}

// cmdDelete is "delete PartitionName=P" or "delete NodeName=N" (also
// with the id as a separate word).
func cmdDelete(s *state, args []string) {
	if len(args) < 2 {
		s.exitCode = 1
		s.eprintf("too few arguments for %s keyword\n", args[0])
		return
	}
	argv := args[1:]
	var tag, val string
	switch len(argv) {
	case 1:
		var ok bool
		tag, val, ok = strings.Cut(argv[0], "=")
		if !ok {
			s.errorf("Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'")
			s.exitCode = 1
			return
		}
	case 2:
		tag, val = argv[0], argv[1]
	default:
		s.errorf("Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'")
		s.exitCode = 1
		return
	}
	m := func(kw string) bool { return hasPrefixFold(tag, kw, max(len(tag), 3)) }
	var err error
	var what string
	switch {
	case m("NodeName"):
		req := msg.UpdateNodeRequest{NodeNames: msg.Str(val)}
		err, what = s.rpcRC(msgtype.REQUEST_DELETE_NODE, req), "delete_node"
	case m("PartitionName"):
		err, what = s.rpcRC(msgtype.REQUEST_DELETE_PARTITION, msg.DeletePartitionRequest{Name: msg.Str(val)}), "delete_partition"
	case m("ReservationName"):
		req := msg.ReservationName{Name: msg.Str(val)}
		err, what = s.rpcRC(msgtype.REQUEST_DELETE_RESERVATION, req), "delete_reservation"
	default:
		s.exitCode = 1
		s.eprintf("Invalid deletion entity: %s\n", argv[0])
		return
	}
	if err != nil {
		// Slurm formats the prefix into a 64-byte buffer.
		prefix := what + " " + argv[0]
		if len(prefix) > 63 {
			prefix = prefix[:63]
		}
		s.perror(prefix, err)
		s.exitCode = 1
	}
}

// cmdNotify is "notify JOBID MESSAGE...": a message to the job's srun.
func cmdNotify(s *state, args []string) {
	if len(args) < 3 {
		s.exitCode = 1
		s.eprintf("too few arguments for keyword:%s\n", args[0])
		return
	}
	n, _ := strtolInt(args[1])
	if n <= 0 {
		s.exitCode = 1
		s.eprintf("Invalid job_id %s", args[1])
		s.perror("job notify failure", noError{})
		return
	}
	req := msg.JobNotifyRequest{
		StepID:  msg.StepID{JobID: uint32(n), StepID: noVal, StepHetComp: noVal},
		Message: msg.Str(strings.Join(args[2:], " ")),
	}
	if err := s.rpcRC(msgtype.REQUEST_JOB_NOTIFY, req); err != nil {
		s.exitCode = 1
		s.perror("job notify failure", err)
	}
}

// cmdTop is "top JOBID": move a job to the top of its user's queue.
func cmdTop(s *state, args []string) {
	switch {
	case len(args) < 2:
		tooFew(s, args[0])
		return
	case len(args) > 2:
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.eprintf("too many arguments for keyword:%s\n", args[0])
		}
		return
	}
	id := stripJobPrefix(args[1])
	if err := s.rpcRC(msgtype.REQUEST_TOP_JOB, msg.SuspendRequest{JobIDStr: msg.Str(id)}); err != nil {
		s.jobIDError(err, id)
	}
}

// Job readiness bits of RESPONSE_JOB_READY and the API's error values.
const (
	readyJobFatal  = -2
	readyJobError  = -1
	readyNodeState = 0x1
	readyJobState  = 0x2
	readyProlog    = 0x4
)

// cmdWaitJob is "wait_job JOBID": wait until the job's nodes are booted
// and its prolog is done.
func cmdWaitJob(s *state, args []string) {
	switch {
	case len(args) > 2:
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.eprintf("too many arguments for keyword:%s\n", args[0])
		}
		return
	case len(args) < 2:
		tooFew(s, args[0])
		return
	}
	n, _ := strtolInt(args[1])
	if n <= 0 {
		s.eprintf("Invalid job_id %s", args[1])
		s.exitCode = 1
		return
	}
	if !s.waitNodesReady(uint32(n)) {
		s.exitCode = 1
	}
}

// jobNodeReady is slurm_job_node_ready.
func (s *state) jobNodeReady(id uint32) int {
	v, err := s.rpc(msgtype.REQUEST_JOB_READY, msg.JobIDShowRequest{JobID: id}, msgtype.RESPONSE_JOB_READY)
	if err == nil {
		// RESPONSE_JOB_READY carries the readiness bits as a return code.
		if rc, ok := v.(codec.ReturnCode); ok {
			return int(int32(rc.RC))
		}
		return readyJobError
	}
	if c := slurmerr.Code(err); c == slurmerr.ESLURM_INVALID_PARTITION_NAME || c == slurmerr.ESLURM_INVALID_JOB_ID {
		return readyJobFatal
	}
	return readyJobError
}

// waitNodesReady is _wait_nodes_ready: polls every 3 s for up to five
// times SuspendTimeout + ResumeTimeout.
func (s *state) waitNodesReady(id uint32) bool {
	cfg := s.ctl().Conf
	if cfg.SuspendTimeout == 0 || cfg.ResumeTimeout == 0 {
		return true
	}
	maxDelay := (int(cfg.SuspendTimeout) + int(cfg.ResumeTimeout)) * 5
	rc, ready := 0, false
	for i, delay := 0, 0; delay < maxDelay; i++ {
		if i > 0 {
			if i == 1 {
				s.infof("Waiting for nodes to boot")
			}
			s.sleep(3 * time.Second)
			delay += 3
		}
		rc = s.jobNodeReady(id)
		if rc == readyJobFatal {
			break
		}
		if rc == readyJobError || rc == int(syscall.EAGAIN) {
			continue
		}
		if rc&readyJobState == 0 {
			break
		}
		if rc&readyNodeState != 0 && rc&readyProlog != 0 {
			ready = true
			break
		}
	}
	switch {
	case ready:
		s.infof("Nodes are ready for job %d", id)
	case rc&readyJobState == 0:
		s.infof("Job %d no longer running", id)
	default:
		s.infof("Problem running job %d", id)
	}
	return ready
}

// cmdTakeover is "takeover [INDEX]": REQUEST_TAKEOVER, restricted to
// SlurmUser, straight to backup controller INDEX (1 by default), which
// then asks the primary to give up control.
func cmdTakeover(s *state, args []string) {
	c := s.ctl()
	idx := 1
	switch {
	case len(args) > 2:
		s.exitCode = 1
		s.eprintf("%s: too many arguments\n", args[0])
		return
	case len(args) == 2:
		idx = slurmcli.Atoi(args[1])
		if idx < 1 || idx >= len(c.Conf.SlurmctldHost) {
			s.exitCode = 1
			s.eprintf("%s: invalid backup controller index (%d)\n", args[0], idx)
			return
		}
	}
	if idx >= len(c.Conf.SlurmctldHost) {
		// No backup at all: Slurm reads an empty address past its
		// controller list and logs these before the connect failure.
		s.stdout.Flush()
		s.eprintf("scontrol: error: slurm_get_port: Address family '0' not supported\n")
		s.eprintf("scontrol: error: Error connecting, bad data: family = 0, port = 0\n")
	}
	r, err := c.Client.CallTo(s.ctx(), idx, msgtype.REQUEST_TAKEOVER, nil, c.Client.SlurmUserUID)
	if err == nil {
		err = client.ReturnCode(&r.Frame)
	}
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_takeover error", err)
		}
	}
}
