package main

import (
	"strconv"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
)

func nstr(s msg.NullString) sc.Str {
	if !s.Valid {
		return sc.NullStr
	}
	return sc.S(s.Value)
}

// longAlias maps -O names to the -o letter printing the same column.
var longAlias = map[string]byte{
	"account": 'a', "jobid": 'A', "gres": 'b', "batchhost": 'B', "mincpus": 'c',
	"numcpus": 'C', "mintmpdisk": 'd', "numnodes": 'D', "endtime": 'e', "dependency": 'E',
	"feature": 'f', "arrayjobid": 'F', "groupname": 'g', "groupid": 'G',
	"oversubscribe": 'h', "shared": 'h', "sockets": 'H', "jobarrayid": 'i', "cores": 'I',
	"name": 'j', "threads": 'J', "comment": 'k', "arraytaskid": 'K', "timelimit": 'l',
	"timeleft": 'L', "minmemory": 'm', "timeused": 'M', "reqnodes": 'n', "nodelist": 'N',
	"command": 'o', "contiguous": 'O', "priority": 'p', "partition": 'P', "qos": 'q',
	"prioritylong": 'Q', "reason": 'r', "reasonlist": 'R', "selectjobinfo": 's',
	"starttime": 'S', "statecompact": 't', "state": 'T', "userid": 'U', "username": 'u',
	"reservation": 'v', "submittime": 'V', "wckey": 'w', "licenses": 'W',
	"corespec": 'X', "nice": 'y', "schednodes": 'Y', "sct": 'z', "workdir": 'Z',
}

func (q *squeue) longFields() map[string]fieldDef {
	s := func(h string, get func(r *jobRec) sc.Str) fieldDef { return fieldDef{header: h, print: str(get)} }
	n := func(h string, get func(r *jobRec) int64) fieldDef { return fieldDef{header: h, print: num(get)} }
	t := func(h string, get func(r *jobRec) int64) fieldDef {
		return fieldDef{header: h, print: q.timeField(get)}
	}
	tres := func(h string, get func(r *jobRec) msg.NullString) fieldDef {
		return s(h, func(r *jobRec) sc.Str { return orNA(nstr(get(r))) })
	}
	na := func(get func(r *jobRec) sc.Str) func(r *jobRec) sc.Str {
		return func(r *jobRec) sc.Str {
			v := get(r)
			if v.Null {
				return sc.S("NA")
			}
			return v
		}
	}
	m := map[string]fieldDef{
		"container":        s("CONTAINER", func(r *jobRec) sc.Str { return nstr(r.j.Container) }),
		"burstbuffer":      s("BURST_BUFFER", func(r *jobRec) sc.Str { return nstr(r.j.BurstBuffer) }),
		"burstbufferstate": s("BURST_BUFFER_STATE", func(r *jobRec) sc.Str { return nstr(r.j.BurstBufferState) }),
		"cluster":          s("CLUSTER", func(r *jobRec) sc.Str { return nstr(r.j.Cluster) }),
		"delayboot": {header: "DELAY_BOOT", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.secs(int64(r.j.DelayBoot), w, right, true)
		}},
		"numtasks":       n("TASKS", func(r *jobRec) int64 { return int64(r.j.NumTasks) }),
		"clusterfeature": s("CLUSTER_FEATURES", func(r *jobRec) sc.Str { return nstr(r.j.ClusterFeatures) }),
		"prefer":         s("PREFER", func(r *jobRec) sc.Str { return nstr(r.j.Prefer) }),
		"admin_comment":  s("ADMIN_COMMENT", func(r *jobRec) sc.Str { return nstr(r.j.AdminComment) }),
		"system_comment": s("SYSTEM_COMMENT", func(r *jobRec) sc.Str { return nstr(r.j.SystemComment) }),
		"lastschedeval":  t("LAST_SCHED_EVAL", func(r *jobRec) int64 { return r.j.LastSchedEval }),
		"pendingtime": {header: "PENDING_TIME", print: func(q *squeue, r *jobRec, w int, right bool) {
			now := q.now.Unix()
			if r.j.StartTime != 0 && r.j.StartTime < now {
				q.out.PrintInt(int64(int32(r.j.StartTime-r.j.SubmitTime)), w, right, true)
				return
			}
			q.out.PrintInt(int64(int32(now-r.j.SubmitTime)), w, right, true)
		}},
		"accruetime":     t("ACCRUE_TIME", func(r *jobRec) int64 { return r.j.AccrueTime }),
		"allocnodes":     s("ALLOC_NODES", func(r *jobRec) sc.Str { return nstr(r.j.AllocNode) }),
		"allocsid":       n("ALLOC_SID", func(r *jobRec) int64 { return int64(int32(r.j.AllocSID)) }),
		"associd":        n("ASSOC_ID", func(r *jobRec) int64 { return int64(int32(r.j.AssocID)) }),
		"batchflag":      n("BATCH_FLAG", func(r *jobRec) int64 { return int64(r.j.BatchFlag) }),
		"boardspernode":  {header: "BOARDS_PER_NODE", print: na16(func(r *jobRec) uint16 { return r.mc().BoardsPerNode }, false)},
		"cpuspertask":    {header: "CPUS_PER_TASK", print: na16(func(r *jobRec) uint16 { return r.j.CPUsPerTask }, false)},
		"cpus-per-task":  {header: "CPUS_PER_TASK", print: na16(func(r *jobRec) uint16 { return r.j.CPUsPerTask }, false)},
		"derivedec":      n("DERIVED_EC", func(r *jobRec) int64 { return int64(int32(r.j.DerivedEC)) }),
		"eligibletime":   t("ELIGIBLE_TIME", func(r *jobRec) int64 { return r.j.EligibleTime }),
		"exit_code":      n("EXIT_CODE", func(r *jobRec) int64 { return int64(int32(r.j.ExitCode)) }),
		"origin":         s("ORIGIN", na(func(r *jobRec) sc.Str { return nstr(r.j.FedOriginStr) })),
		"siblingsactive": s("ACTIVE_SIBLINGS", na(func(r *jobRec) sc.Str { return nstr(r.j.FedSiblingsActiveStr) })),
		"siblingsviable": s("VIABLE_SIBLINGS", na(func(r *jobRec) sc.Str { return nstr(r.j.FedSiblingsViableStr) })),
		"originraw": {header: "ORIGIN_RAW", print: func(q *squeue, r *jobRec, w int, right bool) {
			if id := r.j.JobID >> 26; id != 0 {
				q.out.PrintInt(int64(id), w, right, true)
				return
			}
			q.out.PrintStrS("NA", w, right, true)
		}},
		"siblingsactiveraw": s("ACTIVE_SIBLINGS_RAW", func(r *jobRec) sc.Str {
			if v := siblings(r.j.FedSiblingsActive); v != "" {
				return sc.S(v)
			}
			return sc.S("NA")
		}),
		"siblingsviableraw": s("VIALBLE_SIBLINGS_RAW", func(r *jobRec) sc.Str {
			if v := siblings(r.j.FedSiblingsViable); v != "" {
				return sc.S(v)
			}
			return sc.S("NA")
		}),
		"maxcpus": n("MAX_CPUS", func(r *jobRec) int64 {
			if r.j.MaxCPUs != 0 {
				return int64(int32(r.j.MaxCPUs))
			}
			return int64(int32(r.j.NumCPUs))
		}),
		"maxnodes": n("MAX_NODES", func(r *jobRec) int64 {
			if r.j.MaxNodes != 0 {
				return int64(int32(r.j.MaxNodes))
			}
			return int64(int32(r.j.NumNodes))
		}),
		"network":     s("NETWORK", func(r *jobRec) sc.Str { return nstr(r.j.Network) }),
		"ntpercore":   {header: "NTASKS_PER_CORE", print: na16(func(r *jobRec) uint16 { return r.mc().NtasksPerCore }, true)},
		"ntpernode":   {header: "NTASKS_PER_NODE", print: na16(func(r *jobRec) uint16 { return r.j.NtasksPerNode }, true)},
		"ntpersocket": {header: "NTASKS_PER_SOCKET", print: na16(func(r *jobRec) uint16 { return r.mc().NtasksPerSocket }, true)},
		"ntperboard":  {header: "NTASKS_PER_BOARD", print: na16(func(r *jobRec) uint16 { return r.mc().NtasksPerBoard }, true)},
		"preempttime": {header: "PREEMPT_TIME", print: func(q *squeue, r *jobRec, w int, right bool) {
			switch r.j.PreemptTime {
			case sc.Infinite:
				q.out.PrintStrS("UNLIMITED", w, right, true)
			case sc.NoVal:
				q.out.PrintStrS("NOT_SET", w, right, true)
			default:
				q.timeField(func(r *jobRec) int64 { return r.j.PreemptTime })(q, r, w, right)
			}
		}},
		"profile":   s("PROFILE", func(r *jobRec) sc.Str { return sc.S(profileString(r.j.Profile)) }),
		"reboot":    n("REBOOT", func(r *jobRec) int64 { return int64(r.j.Reboot) }),
		"reqswitch": n("REQ_SWITCH", func(r *jobRec) int64 { return int64(int32(r.j.ReqSwitch)) }),
		"requeue":   n("REQUEUE", func(r *jobRec) int64 { return int64(r.j.Requeue) }),
		"resizetime": {header: "RESIZE_TIME", print: func(q *squeue, r *jobRec, w int, right bool) {
			if r.j.ResizeTime != 0 {
				q.secs(r.j.ResizeTime*60, w, right, true)
				return
			}
			q.out.PrintStrS("N/A", w, right, false)
		}},
		"restartcnt": n("RESTART_COUNT", func(r *jobRec) int64 { return int64(r.j.RestartCnt) }),
		"sperboard":  n("SOCKETS_PER_BOARD", func(r *jobRec) int64 { return int64(r.mc().SocketsPerBoard) }),
		"stderr": s("STDERR", func(r *jobRec) sc.Str {
			switch {
			case r.j.BatchFlag == 0:
				return sc.S("N/A")
			case r.j.StdErr.Valid:
				return nstr(r.j.StdErr)
			case r.j.StdOut.Valid:
				return nstr(r.j.StdOut)
			}
			return sc.S(defaultOut(r))
		}),
		"stdin": s("STDIN", func(r *jobRec) sc.Str { return nstr(r.j.StdIn) }),
		"stdout": s("STDOUT", func(r *jobRec) sc.Str {
			if r.j.StdOut.Valid {
				return nstr(r.j.StdOut)
			}
			return sc.S(defaultOut(r))
		}),
		"mintime": {header: "TIME_MIN", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.secs(int64(r.j.TimeMin)*60, w, right, true)
		}},
		"wait4switch": {header: "WAIT4SWITCH", print: func(q *squeue, r *jobRec, w int, right bool) {
			q.secs(int64(r.j.Wait4Switch), w, right, true)
		}},
		"cpus-per-tres": tres("CPUS_PER_TRES", func(r *jobRec) msg.NullString { return r.j.CPUsPerTres }),
		"mem-per-tres":  tres("MEM_PER_TRES", func(r *jobRec) msg.NullString { return r.j.MemPerTres }),
		"tres-bind":     tres("TRES_BIND", func(r *jobRec) msg.NullString { return r.j.TresBind }),
		"tres-freq":     tres("TRES_FREQ", func(r *jobRec) msg.NullString { return r.j.TresFreq }),
		"tres-per-job":  tres("TRES_PER_JOB", func(r *jobRec) msg.NullString { return r.j.TresPerJob }),
		"tres-per-node": tres("TRES_PER_NODE", func(r *jobRec) msg.NullString { return r.j.TresPerNode }),
		"tres-per-socket": tres("TRES_PER_SOCKET", func(r *jobRec) msg.NullString {
			return r.j.TresPerSocket
		}),
		"tres-per-task": tres("TRES_PER_TASK", func(r *jobRec) msg.NullString { return r.j.TresPerTask }),
		"mcslabel":      s("MCSLABEL", func(r *jobRec) sc.Str { return nstr(r.j.MCSLabel) }),
		"deadline":      t("DEADLINE", func(r *jobRec) int64 { return r.j.Deadline }),
		"hetjobid": s("HET_JOB_ID", func(r *jobRec) sc.Str {
			if r.j.HetJobID == 0 {
				return sc.S("N/A")
			}
			return sc.S(strconv.FormatUint(uint64(r.j.HetJobID), 10))
		}),
		"hetjoboffset": s("HET_JOB_OFFSET", func(r *jobRec) sc.Str {
			if r.j.HetJobID == 0 {
				return sc.S("N/A")
			}
			return sc.S(strconv.FormatUint(uint64(r.j.HetJobOffset), 10))
		}),
		"hetjobidset": s("HET_JOB_ID_SET", func(r *jobRec) sc.Str {
			if r.j.HetJobID == 0 {
				return sc.S("N/A")
			}
			return nstr(r.j.HetJobIDSet)
		}),
	}
	tresAlloc := s("TRES_ALLOC", func(r *jobRec) sc.Str {
		switch {
		case r.j.TresAllocStr.Valid:
			return nstr(r.j.TresAllocStr)
		case r.j.TresReqStr.Valid:
			return nstr(r.j.TresReqStr)
		}
		return sc.S("N/A")
	})
	m["tres"], m["tres-alloc"] = tresAlloc, tresAlloc
	m["packjobid"], m["packjoboffset"], m["packjobidset"] = m["hetjobid"], m["hetjoboffset"], m["hetjobidset"]
	letters := q.jobFields()
	for name, c := range longAlias {
		m[name] = letters[c]
	}
	// -O gres prints tres_per_node as -o %b does.
	return m
}

func defaultOut(r *jobRec) string {
	s := nstr(r.j.WorkDir)
	wd := s.V
	if s.Null {
		wd = "(null)"
	}
	return cut(wd+"/slurm-"+strconv.FormatUint(uint64(r.j.JobID), 10)+".out", 1024)
}

// profileString is acct_gather_profile_to_string.
func profileString(p uint32) string {
	switch p {
	case 0:
		return "NotSet"
	case 1:
		return "None"
	}
	var s string
	for _, f := range []struct {
		bit  uint32
		name string
	}{{2, "Energy"}, {8, "Lustre"}, {16, "Network"}, {4, "Task"}} {
		if p&f.bit != 0 {
			if s != "" {
				s += ","
			}
			s += f.name
		}
	}
	return s
}
