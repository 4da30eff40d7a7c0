// Command squeue is goslurm's drop-in for Slurm 22.05's squeue: it asks
// slurmctld for jobs and prints them in the same formats, order, messages
// and exit codes.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr, os.LookupEnv))
}

// exitCode ends run early, where squeue calls exit() deep inside.
type exitCode = sc.Exit

// squeue is one run's state (Slurm's global params).
type squeue struct {
	prog   string // basename of argv[0], for log lines
	out    sc.Out
	stderr io.Writer
	getenv func(string) (string, bool)
	conn   *sc.Conn
	ctx    context.Context
	now    time.Time
	tf     *sc.TimeFormatter
	users  sc.Users

	allFlag, arrayFlag, arrayUniqueFlag, noHeader, jobFlag bool
	longList, priorityFlag, startFlag, stepFlag            bool
	localFlag, siblingFlag                                 bool
	raw                                                    map[string]*string
	iterate, verbose                                       int
	convert                                                uint32
	bitstrLenSet                                           bool
	bitstrLen                                              int

	format, formatLong string
	formatSet          bool // format came from -o or SQUEUE_FORMAT
	formatLongSet      bool
	sortSpec           string
	sortSet            bool

	accounts, names, partitions, qoss, licenses []string
	hasAccounts, hasNames, hasParts, hasQOS     bool
	hasLicenses                                 bool
	reservation                                 string
	hasReservation                              bool
	states                                      []uint32
	hasStates, allStates                        bool
	users_                                      []uint32
	hasUsers                                    bool
	jobs                                        []jobSel
	hasJobs                                     bool
	nodes                                       *hostlist.Hostlist

	jobID, userID uint32

	// mimetype is "json" or "yaml" for --json and --yaml: every other
	// option but -v is then ignored (see json.go).
	mimetype string

	fields     []field
	stepFields []stepField
	steps      []stepSel
}

// jobSel is one -j entry: a job id and an optional array task id.
type jobSel struct {
	jobID, arrayID uint32
}

func (q *squeue) errorf(format string, a ...any) {
	fmt.Fprintf(q.stderr, "%s: error: "+format+"\n", append([]any{q.prog}, a...)...)
}

func (q *squeue) fatalf(format string, a ...any) {
	fmt.Fprintf(q.stderr, "%s: fatal: "+format+"\n", append([]any{q.prog}, a...)...)
	panic(exitCode(1))
}

func run(args []string, stdout, stderr io.Writer, getenv func(string) (string, bool)) (code int) {
	w := bufio.NewWriter(stdout)
	q := &squeue{out: sc.Out{Writer: w}, stderr: stderr, getenv: getenv, ctx: context.Background(),
		convert: sc.ConvertExact, bitstrLen: -1}
	if len(args) == 0 {
		args = []string{"squeue"}
	}
	q.prog = filepath.Base(args[0])
	defer sc.RecoverExit(&code, w)
	conn, err := sc.Dial(getenv)
	if err != nil {
		q.fatalf("%v", err)
	}
	q.conn = conn
	q.parseCommandLine(args)
	conn.Verbose, conn.Log, conn.Prog = q.verbose, stderr, q.prog
	if q.mimetype != "" {
		return q.dumpJobs()
	}
	v, ok := getenv("SLURM_TIME_FORMAT")
	q.tf = sc.NewTimeFormatter(v, ok, q.errorf)

	var cache *msg.JobInfoMsg
	var stepCache *msg.StepInfoMsg
	dated := !q.noHeader && (q.iterate != 0 || q.verbose != 0 || q.longList)
	return sc.Repeat(w, q.iterate, dated, func(now time.Time) error {
		q.now = now
		if q.stepFlag {
			return q.printSteps(q.ctx, &stepCache)
		}
		return q.printJobs(&cache)
	})
}

func (q *squeue) printJobs(cache **msg.JobInfoMsg) error {
	var show uint16
	if q.allFlag || len(q.jobs) > 0 {
		show |= sc.ShowAll
	}
	if q.formatSet && strings.Contains(q.format, "C") {
		show |= sc.ShowDetail
	}
	var resp *msg.JobInfoMsg
	var err error
	switch {
	case q.jobID != 0:
		resp, err = q.conn.LoadJob(q.ctx, q.jobID, show)
	case q.userID != 0:
		resp, err = q.conn.LoadJobUser(q.ctx, q.userID, show)
	default:
		var last int64
		if *cache != nil {
			last = (*cache).LastUpdate
		}
		resp, err = q.conn.LoadJobs(q.ctx, last, show)
		if errors.Is(err, sc.ErrNoChange) && *cache != nil {
			resp, err = *cache, nil
		}
	}
	if err != nil {
		q.out.Flush()
		fmt.Fprintf(q.stderr, "slurm_load_jobs error: %s\n", sc.Strerror(err))
		return err
	}
	*cache = resp
	if q.jobID != 0 || q.userID != 0 {
		c := *resp
		c.LastUpdate = 0
		*cache = &c
	}
	if q.verbose != 0 {
		// Slurm clears a single job's or user's last_update before
		// printing it.
		last := resp.LastUpdate
		if q.jobID != 0 || q.userID != 0 {
			last = 0
		}
		fmt.Fprintf(q.out, "last_update_time=%d records=%d\n", last, len(resp.Jobs))
	}
	if q.fields == nil {
		if !q.formatSet && !q.formatLongSet {
			if q.longList {
				q.formatLong = "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,state:.8 ,timeused:.10 ,timelimit:.9 ,numnodes:.6 ,reasonlist:0"
			} else {
				q.formatLong = "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,statecompact:.2 ,timeused:.10 ,numnodes:.6 ,reasonlist:0"
			}
		}
		if q.formatSet {
			q.parseFormat(q.format)
		} else {
			q.parseLongFormat(q.formatLong)
		}
	}
	q.printJobsArray(resp.Jobs)
	return nil
}

// jobRec is one line to print (squeue_job_rec_t plus the fields squeue
// rewrites in its copy of the job).
type jobRec struct {
	j         *msg.JobInfo
	partName  sc.Str
	partPrio  uint32
	taskStr   sc.Str // human-readable array task string (NULL if none)
	bitmap    []bool
	taskID    uint32
	stateDesc sc.Str
}

var noMC msg.MultiCore

func (r *jobRec) mc() *msg.MultiCore {
	if r.j.MultiCore == nil {
		return &noMC
	}
	return r.j.MultiCore
}

func (q *squeue) printJobsArray(jobs []msg.JobInfo) {
	if !q.noHeader {
		q.printRecord(nil)
	}
	parts, err := q.conn.LoadPartitions(q.ctx, 0, sc.ShowAll)
	if err != nil {
		q.out.Flush()
		fmt.Fprintf(q.stderr, "slurm_load_partitions: %s\n", sc.Strerror(err))
	}
	prioTier := func(name string) uint32 {
		if parts != nil {
			for _, p := range parts.Partitions {
				if p.Name.Valid && p.Name.Value == name {
					return uint32(p.PriorityTier)
				}
			}
		}
		return 1
	}
	var recs []*jobRec
	for i := range jobs {
		j := &jobs[i]
		r := &jobRec{j: j, taskID: j.ArrayTaskID, stateDesc: nstr(j.StateDesc), taskStr: sc.NullStr}
		if j.ArrayTaskStr.Valid && j.ArrayTaskStr.Value != "" {
			// -r sets SLURM_BITSTR_LEN=0 (the full list); SQUEUE_ARRAY
			// does not, and then expands the possibly cut list.
			s, bits := sc.XlateArrayTaskStr(j.ArrayTaskStr.Value, j.ArrayMaxTasks, q.bitstrLen)
			r.taskStr, r.bitmap = sc.S(s), bits
		} else if j.ArrayTaskStr.Valid {
			r.taskStr = sc.S("")
		}
		if !q.filterJob(r) {
			continue
		}
		if q.priorityFlag {
			for _, tok := range strings.Split(nstr(j.Partition).V, ",") {
				if tok == "" || !q.partMatch(tok) {
					continue
				}
				c := *r
				c.partName = sc.S(tok)
				c.partPrio = prioTier(tok)
				recs = append(recs, &c)
			}
			continue
		}
		if !q.partMatch(nstr(j.Partition).V) {
			continue
		}
		r.partName = nstr(j.Partition)
		recs = append(recs, r)
	}
	recs = q.combinePendingArrayTasks(recs)
	q.sortByStartTime(recs)
	q.sortJobs(recs)
	for _, r := range recs {
		if !r.taskStr.Null && q.arrayFlag {
			s := r.taskStr.V
			if i := strings.IndexByte(s, '%'); i >= 0 {
				s = s[:i]
			}
			bits := parseBitList(s, int(q.conn.Conf.MaxArraySize))
			for i, b := range bits {
				if !b {
					continue
				}
				c := *r
				c.taskStr = sc.NullStr
				c.taskID = uint32(i)
				q.printRecord(&c)
			}
			continue
		}
		q.printRecord(r)
	}
}

// parseBitList is bit_unfmt: "1-3,7" (or "a-b:step", whose end Slurm
// leaves out) into a bitmap of size bits.
func parseBitList(s string, size int) []bool {
	bits := make([]bool, size)
	set := func(a, b int) {
		for i := a; i <= b; i++ {
			if i >= 0 && i < size {
				bits[i] = true
			}
		}
	}
	if !strings.Contains(s, ":") {
		sum, start := 0, -1
		for i := 0; i <= len(s); i++ {
			c := byte(0)
			if i < len(s) {
				c = s[i]
			}
			switch {
			case c >= '0' && c <= '9':
				sum = sum*10 + int(c-'0')
			case c == '-':
				start, sum = sum, 0
			case c == ',' || c == 0:
				if i == 0 {
					return bits
				}
				if start == -1 {
					start = sum
				}
				set(start, sum)
				start, sum = -1, 0
			}
		}
		return bits
	}
	first, rest := sc.Strtol(s)
	if !strings.HasPrefix(rest, "-") {
		return bits
	}
	last, rest := sc.Strtol(rest[1:])
	if !strings.HasPrefix(rest, ":") {
		return bits
	}
	step, rest := sc.Strtol(rest[1:])
	if rest != "" || last < first || step <= 0 {
		return bits
	}
	for i := first; i < last; i += step {
		set(int(i), int(i))
	}
	return bits
}

func (q *squeue) partMatch(name string) bool {
	if !q.hasParts {
		return true
	}
	for _, tok := range strings.Split(name, ",") {
		if tok == "" {
			continue
		}
		for _, p := range q.partitions {
			if p == tok {
				return true
			}
		}
	}
	return false
}

func (q *squeue) printRecord(r *jobRec) {
	for _, f := range q.fields {
		if f.prefix {
			q.out.WriteString(f.suffix)
			continue
		}
		if f.print == nil { // invalid specifier: only its text
			q.out.WriteString(f.suffix)
			continue
		}
		if r == nil {
			q.out.PrintStrS(f.header, f.width, f.right, !f.headerNoCut)
		} else {
			f.print(q, r, f.width, f.right)
		}
		q.out.WriteString(f.suffix)
	}
	q.out.WriteString("\n")
}

func (q *squeue) mergeJobReason(job, task *jobRec) {
	if job.j.StateReason == task.j.StateReason {
		return
	}
	if job.stateDesc.Null {
		job.stateDesc = sc.S(sc.JobReasonString(job.j.StateReason))
	}
	td := sc.JobReasonString(task.j.StateReason)
	if strings.Contains(job.stateDesc.V, td) {
		return
	}
	job.stateDesc = sc.S(job.stateDesc.V + "," + td)
}

func (q *squeue) combinePendingArrayTasks(recs []*jobRec) []*jobRec {
	if q.arrayFlag {
		return recs
	}
	for ji := 0; ji < len(recs); ji++ {
		jr := recs[ji]
		if !isPending(jr.j.JobState) || jr.taskStr.Null || jr.bitmap == nil {
			continue
		}
		updates := 0
		for ti := 0; ti < len(recs); ti++ {
			tr := recs[ti]
			if !isPending(tr.j.JobState) {
				continue
			}
			if tr == jr || tr.j.ArrayJobID != jr.j.ArrayJobID || int(tr.j.ArrayTaskID) >= len(jr.bitmap) {
				continue
			}
			if sc.CompareStr(nstr(tr.j.Name), nstr(jr.j.Name)) != 0 ||
				sc.CompareStr(nstr(tr.j.Partition), nstr(jr.j.Partition)) != 0 {
				continue
			}
			if q.arrayUniqueFlag {
				continue
			}
			updates++
			q.mergeJobReason(jr, tr)
			jr.bitmap[tr.j.ArrayTaskID] = true
			recs = append(recs[:ti], recs[ti+1:]...)
			if ti < ji {
				ji--
			}
			ti--
		}
		if updates > 0 {
			bl := q.bitstrLen
			if bl < 0 {
				bl = 64
			}
			if bl > 0 {
				jr.taskStr = sc.S(sc.BitFmt(jr.bitmap, bl))
			} else {
				jr.taskStr = sc.S(sc.BitFmt(jr.bitmap, 0))
			}
		}
	}
	return recs
}

func (q *squeue) stderrf(format string, a ...any) {
	fmt.Fprintf(q.stderr, format, a...)
}
