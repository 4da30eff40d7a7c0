package main

import (
	"fmt"
	"strconv"
	"strings"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
)

// field is one column of the job format: its header and how a job is
// printed in it.
type field struct {
	width  int
	right  bool
	suffix string
	header string
	// headerNoCut prints the header without truncation (node lists).
	headerNoCut bool
	print       func(q *squeue, r *jobRec, width int, right bool)
	// prefix is literal text before the first specifier.
	prefix bool
}

// fieldDef describes a specifier or long name.
type fieldDef struct {
	header      string
	headerNoCut bool
	print       func(q *squeue, r *jobRec, width int, right bool)
}

func str(get func(r *jobRec) sc.Str) func(q *squeue, r *jobRec, w int, right bool) {
	return func(q *squeue, r *jobRec, w int, right bool) { q.out.PrintStr(get(r), w, right, true) }
}

func num(get func(r *jobRec) int64) func(q *squeue, r *jobRec, w int, right bool) {
	return func(q *squeue, r *jobRec, w int, right bool) { q.out.PrintInt(get(r), w, right, true) }
}

func orNA(s sc.Str) sc.Str {
	if s.Null {
		return sc.S("N/A")
	}
	return s
}

// na16 prints "N/A" for NO_VAL16 (and INFINITE16 when inf).
func na16(get func(r *jobRec) uint16, inf bool) func(q *squeue, r *jobRec, w int, right bool) {
	return func(q *squeue, r *jobRec, w int, right bool) {
		v := get(r)
		if v == sc.NoVal16 || (inf && v == sc.Infinite16) {
			q.out.PrintStrS("N/A", w, right, true)
			return
		}
		q.out.PrintInt(int64(v), w, right, true)
	}
}

func (q *squeue) timeField(get func(r *jobRec) int64) func(q *squeue, r *jobRec, w int, right bool) {
	return func(q *squeue, r *jobRec, w int, right bool) {
		t := get(r)
		if t == 0 {
			q.out.PrintStrS("N/A", w, right, true)
			return
		}
		q.out.PrintStrS(q.tf.Format(t, q.now), w, right, true)
	}
}

func (q *squeue) secs(t int64, w int, right, cut bool) {
	q.out.PrintStrS(sc.SecsString(t, true), w, right, cut)
}

// sctValue is the S:C:T sub-value: "*" for NO_VAL16, else the count.
func (q *squeue) sctValue(v uint16) string {
	if v == sc.NoVal16 {
		return "*"
	}
	return cut(sc.ConvertNumUnit(float64(v), sc.UnitNone, q.convert), 9)
}

// cut truncates s to fit a C buffer of size bytes.
func cut(s string, size int) string {
	if len(s) > size-1 {
		return s[:size-1]
	}
	return s
}

func jobIDString(r *jobRec, q *squeue) (string, bool) {
	j := r.j
	switch {
	case !r.taskStr.Null:
		s := fmt.Sprintf("%d_[%s]", j.ArrayJobID, r.taskStr.V)
		if q.bitstrLenSet {
			return s, false
		}
		return cut(s, 32), true
	case r.taskID != sc.NoVal:
		return fmt.Sprintf("%d_%d", j.ArrayJobID, r.taskID), true
	case j.HetJobID != 0:
		return fmt.Sprintf("%d+%d", j.HetJobID, j.HetJobOffset), true
	}
	return strconv.FormatUint(uint64(j.JobID), 10), true
}

func (q *squeue) reasonText(r *jobRec) string {
	if !r.stateDesc.Null {
		return r.stateDesc.V
	}
	return sc.JobReasonString(r.j.StateReason)
}

// jobTimeUsed is job_time_used.
func (q *squeue) jobTimeUsed(r *jobRec) int64 {
	j := r.j
	if j.StartTime == 0 || isPending(j.JobState) {
		return 0
	}
	base := j.JobState & sc.JobStateBase
	if base == sc.JobSuspended {
		return j.PreSusTime
	}
	var end int64
	if base == sc.JobRunning || j.EndTime == 0 {
		end = q.now.Unix()
	} else {
		end = j.EndTime
	}
	if j.SuspendTime != 0 {
		return end - j.SuspendTime + j.PreSusTime
	}
	return end - j.StartTime
}

func isPending(st uint32) bool { return st&sc.JobStateBase == sc.JobPending }

func (q *squeue) printNodes(s sc.Str, w int, right bool) {
	q.out.PrintStr(sortNodeList(s), w, right, false)
}

// sortNodeList is slurm_sort_node_list_str.
func sortNodeList(s sc.Str) sc.Str {
	if s.Null {
		return sc.S("")
	}
	return sc.S(sc.SortHostlist(s.V))
}

func siblings(bitsv uint64) string {
	var ids []string
	for bit := 1; bitsv != 0; bit++ {
		if bitsv&1 != 0 {
			ids = append(ids, strconv.Itoa(bit))
		}
		bitsv >>= 1
	}
	return strings.Join(ids, ",")
}

// jobFields maps the -o letters.
func (q *squeue) jobFields() map[byte]fieldDef {
	return map[byte]fieldDef{
		'a': {header: "ACCOUNT", print: str(func(r *jobRec) sc.Str { return nstr(r.j.Account) })},
		'A': {header: "JOBID", print: num(func(r *jobRec) int64 { return int64(r.j.JobID) })},
		'b': {header: "TRES_PER_NODE", print: str(func(r *jobRec) sc.Str { return orNA(nstr(r.j.TresPerNode)) })},
		'B': {header: "EXEC_HOST", print: str(func(r *jobRec) sc.Str {
			eh := nstr(r.j.AllocNode)
			if r.j.BatchFlag != 0 {
				eh = nstr(r.j.BatchHost)
			}
			if eh.Null {
				return sc.S("n/a")
			}
			return eh
		})},
		'c': {header: "MIN_CPUS", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.out.PrintStrS(cut(sc.ConvertNumUnit(float64(r.j.PnMinCPUs), sc.UnitNone, q.convert), 8), w, right, true)
		}},
		'C': {header: "CPUS", print: num(func(r *jobRec) int64 { return int64(r.j.NumCPUs) })},
		'd': {header: "MIN_TMP_DISK", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.out.PrintStrS(cut(sc.ConvertNumUnit(float64(float32(r.j.PnMinTmpDisk)), sc.UnitMega, q.convert), 10), w, right, true)
		}},
		'D': {header: "NODES", print: num(func(r *jobRec) int64 { return int64(int32(r.j.NumNodes)) })},
		'e': {header: "END_TIME", print: func(q *squeue, r *jobRec, w int, right bool) {
			if r.j.TimeLimit == sc.Infinite && r.j.EndTime > q.now.Unix() {
				q.out.PrintStrS("NONE", w, right, true)
				return
			}
			q.timeField(func(r *jobRec) int64 { return r.j.EndTime })(q, r, w, right)
		}},
		'E': {header: "DEPENDENCY", print: str(func(r *jobRec) sc.Str { return nstr(r.j.Dependency) })},
		'f': {header: "FEATURES", print: str(func(r *jobRec) sc.Str { return nstr(r.j.Features) })},
		'F': {header: "ARRAY_JOB_ID", print: num(func(r *jobRec) int64 {
			if !r.taskStr.Null || r.taskID != sc.NoVal {
				return int64(r.j.ArrayJobID)
			}
			return int64(r.j.JobID)
		})},
		'g': {header: "GROUP", print: func(q *squeue, r *jobRec, w int, right bool) {
			if g := q.users.GroupName(r.j.GroupID); g != "" {
				q.out.PrintStrS(g, w, right, true)
				return
			}
			q.out.PrintInt(int64(r.j.GroupID), w, right, true)
		}},
		'G': {header: "GROUP", print: num(func(r *jobRec) int64 { return int64(int32(r.j.GroupID)) })},
		'h': {header: "OVER_SUBSCRIBE", print: str(func(r *jobRec) sc.Str { return sc.S(sc.JobShareString(r.j.Shared)) })},
		'H': {header: "SOCKETS_PER_NODE", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.out.PrintStrS(cut(q.sctValue(r.mc().SocketsPerNode), 8), w, right, true)
		}},
		'i': {header: "JOBID", print: func(q *squeue, r *jobRec, w int, right bool) {
			s, c := jobIDString(r, q)
			q.out.PrintStrS(s, w, right, c)
		}},
		'I': {header: "CORES_PER_SOCKET", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.out.PrintStrS(cut(q.sctValue(r.mc().CoresPerSocket), 8), w, right, true)
		}},
		'j': {header: "NAME", print: str(func(r *jobRec) sc.Str { return nstr(r.j.Name) })},
		'J': {header: "THREADS_PER_CORE", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.out.PrintStrS(cut(q.sctValue(r.mc().ThreadsPerCore), 8), w, right, true)
		}},
		'k': {header: "COMMENT", print: str(func(r *jobRec) sc.Str { return nstr(r.j.Comment) })},
		'K': {header: "ARRAY_TASK_ID", print: str(func(r *jobRec) sc.Str {
			switch {
			case !r.taskStr.Null:
				return r.taskStr
			case r.taskID != sc.NoVal:
				return sc.S(strconv.FormatUint(uint64(r.taskID), 10))
			}
			return sc.S("N/A")
		})},
		'l': {header: "TIME_LIMIT", print: func(q *squeue, r *jobRec, w int, right bool) {
			switch r.j.TimeLimit {
			case sc.Infinite:
				q.out.PrintStrS("UNLIMITED", w, right, true)
			case sc.NoVal:
				q.out.PrintStrS("NOT_SET", w, right, true)
			default:
				q.secs(int64(r.j.TimeLimit)*60, w, right, false)
			}
		}},
		'L': {header: "TIME_LEFT", print: func(q *squeue, r *jobRec, w int, right bool) {
			switch r.j.TimeLimit {
			case sc.Infinite:
				q.out.PrintStrS("UNLIMITED", w, right, true)
			case sc.NoVal:
				q.out.PrintStrS("NOT_SET", w, right, true)
			default:
				q.secs(int64(r.j.TimeLimit)*60-q.jobTimeUsed(r), w, right, false)
			}
		}},
		'm': {header: "MIN_MEMORY", print: func(q *squeue, r *jobRec, w int, right bool) {
			m := r.j.PnMinMemory &^ (1 << 63)
			q.out.PrintStrS(cut(sc.ConvertNumUnit(float64(float32(m)), sc.UnitMega, q.convert), 10), w, right, true)
		}},
		'M': {header: "TIME", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.secs(q.jobTimeUsed(r), w, right, false)
		}},
		'n': {header: "REQ_NODES", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.printNodes(nstr(r.j.ReqNodes), w, right)
		}},
		'N': {header: "NODELIST", headerNoCut: true, print: func(q *squeue, r *jobRec, w int, right bool) {
			q.printNodes(nstr(r.j.Nodes), w, right)
		}},
		'o': {header: "COMMAND", print: str(func(r *jobRec) sc.Str { return nstr(r.j.Command) })},
		'O': {header: "CONTIGUOUS", print: num(func(r *jobRec) int64 { return int64(r.j.Contiguous) })},
		'p': {header: "PRIORITY", print: str(func(r *jobRec) sc.Str {
			return sc.S(fmt.Sprintf("%16.14f", float64(r.j.Priority)/float64(uint32(0xffffffff))))
		})},
		'P': {header: "PARTITION", print: str(func(r *jobRec) sc.Str { return r.partName })},
		'q': {header: "QOS", print: str(func(r *jobRec) sc.Str { return nstr(r.j.QOS) })},
		'Q': {header: "PRIORITY", print: num(func(r *jobRec) int64 { return int64(r.j.Priority) })},
		'r': {header: "REASON", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.out.PrintStrS(q.reasonText(r), w, right, true)
		}},
		'R': {header: "NODELIST(REASON)", headerNoCut: true, print: func(q *squeue, r *jobRec, w int, right bool) {
			st := r.j.JobState
			base := st & sc.JobStateBase
			if st&sc.JobCompleting == 0 && (base == sc.JobPending || st&sc.JobStageOut != 0 ||
				base == sc.JobTimeout || base == sc.JobOOM || base == sc.JobDeadline || base == sc.JobFailed) {
				q.out.PrintStrS("("+q.reasonText(r)+")", w, right, true)
				return
			}
			q.printNodes(nstr(r.j.Nodes), w, right)
		}},
		's': {header: "", print: str(func(r *jobRec) sc.Str { return sc.S("") })},
		'S': {header: "START_TIME", print: q.timeField(func(r *jobRec) int64 { return r.j.StartTime })},
		't': {header: "ST", print: str(func(r *jobRec) sc.Str { return sc.S(sc.JobStateCompact(r.j.JobState)) })},
		'T': {header: "STATE", print: str(func(r *jobRec) sc.Str { return sc.S(sc.JobStateString(r.j.JobState)) })},
		'u': {header: "USER", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.out.PrintStrS(q.users.UserName(r.j.UserID), w, right, true)
		}},
		'U': {header: "UID", print: num(func(r *jobRec) int64 { return int64(int32(r.j.UserID)) })},
		'v': {header: "RESERVATION", print: str(func(r *jobRec) sc.Str { return nstr(r.j.ResvName) })},
		'V': {header: "SUBMIT_TIME", print: q.timeField(func(r *jobRec) int64 { return r.j.SubmitTime })},
		'w': {header: "WCKEY", print: str(func(r *jobRec) sc.Str { return nstr(r.j.WCKey) })},
		'W': {header: "LICENSES", print: str(func(r *jobRec) sc.Str { return nstr(r.j.Licenses) })},
		'x': {header: "EXC_NODES", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.printNodes(nstr(r.j.ExcNodes), w, right)
		}},
		'X': {header: "CORE_SPEC", print: func(q *squeue, r *jobRec, w int, right bool) {
			cs := r.j.CoreSpec
			switch {
			case cs == sc.NoVal16:
				q.out.PrintStrS("N/A", w, right, true)
			case cs&0x8000 != 0:
				q.out.PrintStrS(fmt.Sprintf("%d Threads", cs&^0x8000), w, right, true)
			default:
				q.out.PrintInt(int64(cs), w, right, true)
			}
		}},
		'y': {header: "NICE", print: num(func(r *jobRec) int64 { return int64(int32(r.j.Nice - 0x80000000)) })},
		'Y': {header: "SCHEDNODES", headerNoCut: true, print: func(q *squeue, r *jobRec, w int, right bool) {
			q.out.PrintStr(nstr(r.j.SchedNodes), w, right, false)
		}},
		'z': {header: "S:C:T", print: func(q *squeue, r *jobRec, w int, right bool) {
			mc := r.mc()
			s := q.sctValue(mc.SocketsPerNode) + ":" + q.sctValue(mc.CoresPerSocket) + ":" + q.sctValue(mc.ThreadsPerCore)
			q.out.PrintStrS(s, w, right, true)
		}},
		'Z': {header: "WORK_DIR", print: str(func(r *jobRec) sc.Str { return nstr(r.j.WorkDir) })},
	}
}
