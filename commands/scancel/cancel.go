package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Job states and kill flags scancel looks at.
const (
	jobPending   = 0
	jobRunning   = 1
	jobSuspended = 2
	jobStateBase = 0xff

	// KILL_JOB_BATCH, KILL_FULL_JOB and KILL_HURRY of slurm.h.
	killJobBatch = 0x01
	killFullJob  = 0x08
	killHurry    = 0x20

	sigKill = 9
	// maxCancelRetry is how often a request is retried while the job is
	// in a transitional state.
	maxCancelRetry = 10
)

// job is one loaded record with the bookkeeping scancel keeps on it: id 0
// means "skip from now on", as scancel zeroes job_id.
type job struct {
	*msg.JobInfo
	id           uint32
	taskStr      string // array_task_str made readable, "" for none
	hasTaskStr   bool
	arrayBitmap  []bool
	referencedBy bool
}

func (j *job) finished() bool { return j.JobState&jobStateBase > jobSuspended }
func (j *job) pending() bool  { return j.JobState&jobStateBase == jobPending }

func (s *scancel) process() int {
	o := &s.opt
	if o.hasDefaultOpt() && !o.hasJobSteps() {
		return s.signalByStr()
	}
	jobs := s.loadJobs()
	rc := s.verifyJobIDs(jobs)
	if o.hasAccount || o.hasName || o.hasNodes || o.hasPart || o.hasQOS ||
		o.hasResv || o.state != jobEnd || o.hasUser || o.hasWCKey {
		s.filterJobs(jobs)
	}
	rc = max(rc, s.cancelJobs(jobs))
	return rc
}

// signalByStr sends each id string as given to the controller.
func (s *scancel) signalByStr() int {
	rc := 0
	for _, id := range s.opt.jobList {
		rc = max(rc, s.cancelJobID(id))
	}
	return rc
}

func (s *scancel) loadJobs() []*job {
	m, err := s.conn.LoadJobs(s.ctx, 0, slurmcli.ShowAll)
	if err != nil {
		fmt.Fprintf(s.stderr, "slurm_load_jobs error: %s\n", slurmcli.Strerror(err))
		panic(exit{1})
	}
	jobs := make([]*job, len(m.Jobs))
	for i := range m.Jobs {
		ji := &m.Jobs[i]
		j := &job{JobInfo: ji, id: ji.JobID}
		if ji.ArrayTaskStr.Valid {
			j.taskStr, j.arrayBitmap = slurmcli.XlateArrayTaskStr(ji.ArrayTaskStr.Value, ji.ArrayMaxTasks, 0)
			j.hasTaskStr = true
		}
		jobs[i] = j
	}
	return jobs
}

func (j *job) hasTask(task uint32) bool {
	if j.ArrayTaskID == task {
		return true
	}
	if j.arrayBitmap == nil {
		return false
	}
	return int(task) < len(j.arrayBitmap) && j.arrayBitmap[task]
}

// matches is the id test shared by verification and cancellation.
func (spec *jobSpec) matches(j *job) bool {
	switch {
	case spec.arrayID == noVal:
		return spec.jobID == j.id || (spec.jobID == j.ArrayJobID && spec.stepID == batchScript)
	case spec.arrayID == infinite:
		return spec.jobID == j.ArrayJobID
	case spec.jobID != j.ArrayJobID:
		return false
	}
	return j.hasTask(spec.arrayID)
}

// verifyJobIDs marks the records the ids name and reports ids that name
// no active job.
func (s *scancel) verifyJobIDs(jobs []*job) int {
	o := &s.opt
	if len(o.jobs) == 0 {
		return 0
	}
	rc := 0
	for _, j := range jobs {
		j.referencedBy = false
		if j.finished() {
			j.id = 0
		}
		if j.id == 0 {
			continue
		}
		for k := range o.jobs {
			spec := &o.jobs[k]
			if spec.matches(j) {
				spec.found = true
			}
			if spec.found {
				if j.pending() {
					spec.pend = true
				}
				j.referencedBy = true
			}
		}
		if !j.referencedBy {
			j.id = 0
		}
	}
	for k := range o.jobs {
		spec := &o.jobs[k]
		if spec.found {
			continue
		}
		rc = 1
		if o.verbose >= 0 {
			msg := slurmerr.Message(slurmerr.ESLURM_INVALID_JOB_ID)
			if spec.stepID == batchScript {
				s.errorf("Kill job error on job id %s: %s", spec.idString(), msg)
			} else {
				s.errorf("Kill job error on job step id %s.%d: %s", spec.idString(), spec.stepID, msg)
			}
		}
		spec.jobID = 0
	}
	return rc
}

// filterJobs drops the records the filter options exclude.
func (s *scancel) filterJobs(jobs []*job) {
	o := &s.opt
	matches := 0
	var hetLeader *job
	for _, j := range jobs {
		if j.HetJobID != 0 && j.HetJobOffset == 0 {
			hetLeader = j
		}
		if j.finished() {
			j.id = 0
		}
		if j.id == 0 {
			continue
		}
		base := j.JobState & jobStateBase
		drop := base != jobPending && base != jobRunning && base != jobSuspended ||
			o.hasAccount && !strEq(j.Account, o.account) ||
			o.hasName && !strEq(j.Name, o.jobName) ||
			o.hasPart && !strEq(j.Partition, o.partition) ||
			o.hasQOS && !strEq(j.QOS, o.qos) ||
			o.hasResv && !strEq(j.ResvName, o.reservation) ||
			o.state != jobEnd && base != o.state ||
			o.hasUser && j.UserID != o.userID
		if !drop && o.hasNodes {
			drop = !s.nodesIntersect(j.Nodes.Value)
		}
		if !drop && o.hasWCKey {
			key := j.WCKey
			if !strings.HasPrefix(o.wckey, "*") && key.Valid && strings.HasPrefix(key.Value, "*") {
				key.Value = key.Value[1:]
			}
			drop = !strEq(key, o.wckey)
		}
		// The leader's kill covers the other components of a het job.
		if !drop && hetLeader != nil && hetLeader.id != 0 && j.HetJobOffset != 0 &&
			j.HetJobID == hetLeader.HetJobID {
			drop = true
		}
		if drop {
			j.id = 0
			continue
		}
		matches++
	}
	if matches == 0 && o.verbose > 0 {
		var b strings.Builder
		if o.hasAccount {
			fmt.Fprintf(&b, "account=%s ", o.account)
		}
		if o.hasName {
			fmt.Fprintf(&b, "job_name=%s ", o.jobName)
		}
		if o.hasNodes {
			fmt.Fprintf(&b, "nodelist=%s ", o.nodelist)
		}
		if o.hasPart {
			fmt.Fprintf(&b, "partition=%s ", o.partition)
		}
		if o.hasQOS {
			fmt.Fprintf(&b, "qos=%s ", o.qos)
		}
		if o.hasResv {
			fmt.Fprintf(&b, "reservation=%s ", o.reservation)
		}
		if o.state != jobEnd {
			fmt.Fprintf(&b, "state=%s ", slurmcli.JobStateString(o.state))
		}
		if o.hasUser {
			fmt.Fprintf(&b, "user_name=%s ", o.userName)
		}
		if o.hasWCKey {
			fmt.Fprintf(&b, "wckey=%s ", o.wckey)
		}
		if b.Len() > 0 {
			s.errorf("No active jobs match ALL job filters, including: %s", b.String())
		}
	}
}

// strEq is xstrcmp(a, b) == 0 with b never NULL.
func strEq(a msg.NullString, b string) bool { return a.Valid && a.Value == b }

// nodesIntersect is hostset_intersects(job nodes, -w list); a -w value
// with a '/' names a host file (read once).
func (s *scancel) nodesIntersect(jobNodes string) bool {
	o := &s.opt
	if strings.Contains(o.nodelist, "/") {
		if list, ok := readHostfile(o.nodelist); ok {
			o.nodelist = list
		}
	}
	if jobNodes == "" {
		return false
	}
	a, err := hostlist.Parse(jobNodes)
	if err != nil {
		return false
	}
	b, err := hostlist.Parse(o.nodelist)
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, h := range a.Hosts() {
		have[h] = true
	}
	for _, h := range b.Hosts() {
		if have[h] {
			return true
		}
	}
	return false
}

// readHostfile is slurm_read_hostfile without a count: the file's host
// names (blanks, commas and newlines separate them, '#' starts a comment)
// as one list.
func readHostfile(path string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		names = append(names, strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' })...)
	}
	if len(names) == 0 {
		return "", false
	}
	return strings.Join(names, ","), true
}

// buildJobIDStr names a record for the kill request.
func (j *job) buildJobIDStr() string {
	switch {
	case j.hasTaskStr:
		return fmt.Sprintf("%d_[%s]", j.ArrayJobID, j.taskStr)
	case j.ArrayTaskID != noVal:
		return fmt.Sprintf("%d_%d", j.ArrayJobID, j.ArrayTaskID)
	}
	return fmt.Sprintf("%d", j.id)
}

// cancelJobs cancels pending jobs first, then the rest, so that a pending
// job cannot start on resources a running job being cancelled frees.
func (s *scancel) cancelJobs(jobs []*job) int {
	rc := s.cancelByState(jobs, jobPending)
	return max(rc, s.cancelByState(jobs, jobEnd))
}

func (s *scancel) cancelByState(jobs []*job, state uint32) int {
	o := &s.opt
	rc := 0
	if len(o.jobs) > 0 {
		for k := range o.jobs {
			spec := &o.jobs[k]
			if spec.jobID == 0 || state == jobPending && !spec.pend {
				continue
			}
			for _, j := range jobs {
				if j.finished() {
					j.id = 0
				}
				if j.id == 0 {
					continue
				}
				// A step of an array whose other tasks still pend.
				if spec.stepID != batchScript && j.pending() {
					continue
				}
				spec.found = spec.matches(j)
				if !spec.found {
					continue
				}
				if o.interactive && !s.confirm(j, spec.stepID) {
					j.id = 0
					continue
				}
				if spec.stepID == batchScript {
					rc = max(rc, s.cancelJobID(j.buildJobIDStr()))
					j.id = 0
				} else {
					rc = max(rc, s.cancelStep(j.id, spec.stepID))
				}
			}
		}
		return rc
	}
	for _, j := range jobs {
		if j.finished() {
			j.id = 0
		}
		if j.id == 0 {
			continue
		}
		if state < jobEnd && j.JobState != state {
			continue
		}
		if o.interactive && !s.confirm(j, batchScript) {
			j.id = 0
			continue
		}
		rc = max(rc, s.cancelJobID(j.buildJobIDStr()))
		j.id = 0
	}
	return rc
}

// confirm asks before each job with -i; EOF asks again, as scancel does,
// so it gives up instead of spinning when stdin is closed.
func (s *scancel) confirm(j *job, step uint32) bool {
	for tries := 0; ; tries++ {
		id := j.buildJobIDStr()
		if step == batchScript {
			fmt.Fprintf(s.stdout, "Cancel job_id=%s name=%s partition=%s [y/n]? ", id, cstr(j.Name), cstr(j.Partition))
		} else {
			fmt.Fprintf(s.stdout, "Cancel step_id=%s.%d name=%s partition=%s [y/n]? ", id, step, cstr(j.Name), cstr(j.Partition))
		}
		if f, ok := s.stdout.(interface{ Flush() error }); ok {
			f.Flush()
		}
		line, err := s.stdin.ReadString('\n')
		if line == "" && err != nil {
			if tries > 1000 {
				panic(exit{1})
			}
			continue
		}
		switch line[0] {
		case 'y', 'Y':
			return true
		case 'n', 'N':
			return false
		}
	}
}

func cstr(v msg.NullString) string {
	if !v.Valid {
		return "(null)"
	}
	return v.Value
}

// rpc sends one request and returns the controller's return code as an
// error (nil for 0).
func (s *scancel) rpc(mt msgtype.Type, body any) error { return s.conn.RPCRC(s.ctx, mt, body) }

// addDelay stands for scancel's _add_delay, which paces huge numbers of
// requests; here it only logs its target response time once, as Slurm
// does at debug level. Requests are sent one at a time, so no pacing is
// needed.
func (s *scancel) addDelay() {
	if s.delayLogged {
		return
	}
	s.delayLogged = true
	if s.opt.verbose >= 2 {
		t := int(s.conn.Conf.MessageTimeout) / 4
		t = min(max(t, 3), 5)
		fmt.Fprintf(s.stderr, "scancel: debug:  _add_delay: target response time = %d\n", t*1000000)
	}
}

func errCode(err error) int {
	if code := slurmerr.Code(err); code != 0 {
		return code
	}
	return slurmerr.SLURM_ERROR
}

func (s *scancel) sleepRetry(i int) {
	s.verbosef("Job is in transitional state, retrying")
	sleep(5 + i)
}

// killFlags are the kill request's flags for -b, -f and -H, and the word
// the verbose message puts before "job".
func (o *options) killFlags() (uint16, string) {
	var flags uint16
	jobType := ""
	if o.batch {
		flags |= killJobBatch
		jobType = "batch "
	}
	if o.full {
		flags |= killFullJob
		jobType = "full "
	}
	if o.hurry {
		flags |= killHurry
	}
	return flags, jobType
}

// cancelJobID is _cancel_job_id: REQUEST_KILL_JOB with the id string.
func (s *scancel) cancelJobID(id string) int {
	o := &s.opt
	sig, sigSet := o.signal, true
	if sig == noVal16 {
		sig, sigSet = sigKill, false
	}
	flags, jobType := o.killFlags()
	if !sigSet {
		s.verbosef("Terminating %sjob %s", jobType, id)
	} else {
		s.verbosef("Signal %d to %sjob %s", sig, jobType, id)
	}
	req := msg.JobStepKillRequest{
		StepID: msg.StepID{JobID: noVal, StepID: noVal, StepHetComp: noVal},
		SJobID: msg.Str(id), Signal: sig, Flags: flags,
	}
	if o.sibling != "" {
		req.Sibling = msg.Str(o.sibling)
	}
	var err error
	for i := 0; i < maxCancelRetry; i++ {
		s.addDelay()
		err = s.rpc(msgtype.REQUEST_KILL_JOB, req)
		if err == nil || errCode(err) != slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE {
			break
		}
		s.sleepRetry(i)
	}
	if err == nil {
		return 0
	}
	code := errCode(err)
	done := code == slurmerr.ESLURM_ALREADY_DONE || code == slurmerr.ESLURM_INVALID_JOB_ID
	if o.verbose > 0 || !done {
		s.errorf("Kill job error on job id %s: %s", id, slurmcli.Strerror(err))
	}
	if done && sig == sigKill {
		return 0
	}
	return exitStatus(code)
}

// exitStatus is what exit() makes of scancel's rc: the error code's low
// byte.
func exitStatus(code int) int { return code & 0xff }

// cancelStep is _cancel_step_id. A step is always signalled through the
// controller (REQUEST_CANCEL_JOB_STEP); real scancel sends a custom
// signal without --ctld to the step's slurmds itself, with the same
// effect on the step.
func (s *scancel) cancelStep(jobID, stepID uint32) int {
	o := &s.opt
	sig := o.signal
	if sig == noVal16 {
		sig = sigKill
	}
	idStr := fmt.Sprintf("%d", jobID)
	req := msg.JobStepKillRequest{
		StepID: msg.StepID{JobID: jobID, StepID: stepID, StepHetComp: noVal},
		Signal: sig,
	}
	var err error
	for i := 0; i < maxCancelRetry; i++ {
		if sig == sigKill {
			s.verbosef("Terminating step %s.%d", idStr, stepID)
		} else {
			s.verbosef("Signal %d to step %s.%d", sig, idStr, stepID)
		}
		s.addDelay()
		err = s.rpc(msgtype.REQUEST_CANCEL_JOB_STEP, req)
		c := errCode(err)
		if err == nil || c != slurmerr.ESLURM_TRANSITION_STATE_NO_UPDATE && c != slurmerr.ESLURM_JOB_PENDING {
			break
		}
		s.sleepRetry(i)
	}
	if err == nil {
		return 0
	}
	code := errCode(err)
	if o.verbose > 0 || code != slurmerr.ESLURM_ALREADY_DONE {
		s.errorf("Kill job error on job step id %s: %s", idStr, slurmcli.Strerror(err))
	}
	if code == slurmerr.ESLURM_ALREADY_DONE && sig == sigKill {
		return 0
	}
	return exitStatus(code)
}
