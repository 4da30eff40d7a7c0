package main

import (
	"strings"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
)

type jobCmp func(a, b *jobRec) int

func cmpU32(a, b uint32) int {
	switch {
	case a > b:
		return 1
	case a < b:
		return -1
	}
	return 0
}

func cmpI64(a, b int64) int {
	switch {
	case a > b:
		return 1
	case a < b:
		return -1
	}
	return 0
}

func emptyIfNull(s sc.Str) sc.Str {
	if s.Null {
		return sc.S("")
	}
	return s
}

// sortByStartTime is sort_jobs_by_start_time: start time, latest first.
func (q *squeue) sortByStartTime(recs []*jobRec) {
	sc.MergeSort(recs, q.startCmp(true))
}

func (q *squeue) startCmp(reverse bool) jobCmp {
	now := q.now.Unix()
	get := func(r *jobRec) int64 {
		if r.j.JobState == sc.JobPending && r.j.StartTime < now {
			return now
		}
		return r.j.StartTime
	}
	return func(a, b *jobRec) int {
		if a.j.StartTime == 0 {
			return 1
		}
		if b.j.StartTime == 0 {
			return -1
		}
		d := cmpI64(get(a), get(b))
		if reverse {
			d = -d
		}
		return d
	}
}

func firstHost(s sc.Str) string {
	if s.Null {
		return ""
	}
	hl, err := hostlist.Parse(s.V)
	if err != nil || hl.Count() == 0 {
		return ""
	}
	hl.Sort()
	h, _ := hl.Nth(0)
	return h
}

func (q *squeue) sortJobs(recs []*jobRec) {
	spec := q.sortSpec
	if !q.sortSet {
		spec = "P,t,-p"
	}
	const cluster = "cluster"
	for i := len(spec) - 1; i >= 0; i-- {
		c := spec[i]
		if c == ',' || c == '+' || c == '-' {
			continue
		}
		reverse := i > 0 && spec[i-1] == '-'
		var cmp jobCmp
		if i+1 >= len(cluster) && strings.EqualFold(spec[i+1-len(cluster):i+1], cluster) {
			if i >= len(cluster) && spec[i-len(cluster)] == '-' {
				reverse = true
			}
			cmp = func(a, b *jobRec) int { return sc.CompareStr(nstr(a.j.Cluster), nstr(b.j.Cluster)) }
			i -= len(cluster) - 1
		} else {
			switch c {
			case 'B':
				cmp = func(a, b *jobRec) int {
					return sc.CompareStr(emptyIfNull(nstr(a.j.BatchHost)), emptyIfNull(nstr(b.j.BatchHost)))
				}
			case 'b':
				q.out.Flush()
				q.infof("Invalid sort specification: b")
				continue
			case 'c', 'f', 'h', 'n', 'O':
				continue
			case 'C':
				cmp = func(a, b *jobRec) int { return cmpU32(a.j.NumCPUs, b.j.NumCPUs) }
			case 'd':
				cmp = func(a, b *jobRec) int { return cmpU32(a.j.PnMinTmpDisk, b.j.PnMinTmpDisk) }
			case 'D':
				cmp = func(a, b *jobRec) int { return cmpU32(a.j.NumNodes, b.j.NumNodes) }
			case 'e':
				cmp = func(a, b *jobRec) int { return cmpI64(a.j.EndTime, b.j.EndTime) }
			case 'g':
				cmp = func(a, b *jobRec) int {
					return strings.Compare(q.users.GroupName(a.j.GroupID), q.users.GroupName(b.j.GroupID))
				}
			case 'G':
				cmp = func(a, b *jobRec) int { return cmpU32(a.j.GroupID, b.j.GroupID) }
			case 'H':
				cmp = func(a, b *jobRec) int { return cmpU32(uint32(a.mc().SocketsPerNode), uint32(b.mc().SocketsPerNode)) }
			case 'i':
				cmp = sortByID
			case 'I':
				cmp = func(a, b *jobRec) int { return cmpU32(uint32(a.mc().CoresPerSocket), uint32(b.mc().CoresPerSocket)) }
			case 'j':
				cmp = func(a, b *jobRec) int { return sc.CompareStr(emptyIfNull(nstr(a.j.Name)), emptyIfNull(nstr(b.j.Name))) }
			case 'J':
				cmp = func(a, b *jobRec) int { return cmpU32(uint32(a.mc().ThreadsPerCore), uint32(b.mc().ThreadsPerCore)) }
			case 'l':
				cmp = func(a, b *jobRec) int { return cmpU32(a.j.TimeLimit, b.j.TimeLimit) }
			case 'L':
				left := func(r *jobRec) int64 {
					if r.j.TimeLimit == sc.Infinite || r.j.TimeLimit == sc.NoVal {
						return sc.Infinite
					}
					return int64(r.j.TimeLimit)*60 - q.jobTimeUsed(r)
				}
				cmp = func(a, b *jobRec) int { return cmpI64(left(a), left(b)) }
			case 'm':
				cmp = func(a, b *jobRec) int {
					x, y := a.j.PnMinMemory&^(1<<63), b.j.PnMinMemory&^(1<<63)
					switch {
					case x > y:
						return 1
					case x < y:
						return -1
					}
					return 0
				}
			case 'M':
				cmp = func(a, b *jobRec) int { return cmpI64(q.jobTimeUsed(a), q.jobTimeUsed(b)) }
			case 'N':
				cmp = func(a, b *jobRec) int {
					return sc.CompareFirstHost(firstHost(nstr(a.j.Nodes)), firstHost(nstr(b.j.Nodes)))
				}
			case 'p', 'Q':
				cmp = func(a, b *jobRec) int {
					d := cmpU32(a.partPrio, b.partPrio)
					if d == 0 {
						d = cmpU32(a.j.Priority, b.j.Priority)
					}
					return d
				}
			case 'P':
				cmp = func(a, b *jobRec) int { return sc.CompareStr(a.partName, b.partName) }
			case 'S':
				cmp = q.startCmp(false)
			case 't':
				cmp = func(a, b *jobRec) int {
					return strings.Compare(sc.JobStateCompact(a.j.JobState), sc.JobStateCompact(b.j.JobState))
				}
			case 'T':
				cmp = func(a, b *jobRec) int {
					return strings.Compare(sc.JobStateString(a.j.JobState), sc.JobStateString(b.j.JobState))
				}
			case 'u':
				cmp = func(a, b *jobRec) int {
					return strings.Compare(q.users.UserName(a.j.UserID), q.users.UserName(b.j.UserID))
				}
			case 'U':
				cmp = func(a, b *jobRec) int { return cmpU32(a.j.UserID, b.j.UserID) }
			case 'v':
				cmp = func(a, b *jobRec) int {
					return sc.CompareStr(emptyIfNull(nstr(a.j.ResvName)), emptyIfNull(nstr(b.j.ResvName)))
				}
			case 'V':
				cmp = func(a, b *jobRec) int { return cmpI64(a.j.SubmitTime, b.j.SubmitTime) }
			case 'z':
				cmp = func(a, b *jobRec) int {
					ma, mb := a.mc(), b.mc()
					if d := cmpU32(uint32(ma.SocketsPerNode), uint32(mb.SocketsPerNode)); d != 0 {
						return d
					}
					if d := cmpU32(uint32(ma.CoresPerSocket), uint32(mb.CoresPerSocket)); d != 0 {
						return d
					}
					return cmpU32(uint32(ma.ThreadsPerCore), uint32(mb.ThreadsPerCore))
				}
			default:
				q.out.Flush()
				q.errorf("Invalid sort specification: %c", c)
				q.exit(1)
			}
		}
		if c == 'S' {
			// startCmp applies the direction itself (its "0 start"
			// cases are not reversed).
			if reverse {
				cmp = q.startCmp(true)
			}
			sc.MergeSort(recs, cmp)
			continue
		}
		if reverse {
			inner := cmp
			cmp = func(a, b *jobRec) int { return -inner(a, b) }
		}
		sc.MergeSort(recs, cmp)
	}
}

func sortByID(a, b *jobRec) int {
	id := func(r *jobRec) uint32 {
		switch {
		case r.j.HetJobID != 0:
			return r.j.HetJobID
		case r.taskID == sc.NoVal:
			return r.j.JobID
		}
		return r.j.ArrayJobID
	}
	x, y := id(a), id(b)
	if x == y {
		sub := func(r *jobRec) uint32 {
			if r.j.HetJobID != 0 {
				return r.j.HetJobOffset
			}
			return r.taskID
		}
		x, y = sub(a), sub(b)
	}
	return cmpU32(x, y)
}

func (q *squeue) infof(format string, a ...any) {
	q.stderrf(q.prog+": "+format+"\n", a...)
}
