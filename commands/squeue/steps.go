package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
)

// stepSel is one --steps entry: job[_array].step.
type stepSel struct {
	jobID, arrayID, stepID uint32
}

// stepField is one column of the step format.
type stepField struct {
	width       int
	right       bool
	suffix      string
	prefix      bool
	header      string
	headerRight *bool // START_TIME's header is always left-justified
	headerNoCut bool
	print       func(q *squeue, s *msg.StepInfo, w int, right bool)
}

func (q *squeue) buildStepList(v string) []stepSel {
	var out []stepSel
	for _, step := range sc.SplitList(v) {
		jobPart, stepPart, found := strings.Cut(step, ".")
		if jobPart == "" {
			break
		}
		id, rest := sc.Strtol(jobPart)
		arr := uint32(sc.NoVal)
		if strings.HasPrefix(rest, "_") {
			a, _ := sc.Strtol(rest[1:])
			arr = uint32(int32(a))
		}
		if !found {
			q.errorf("Invalid job_step id: %s.??", jobPart)
			q.exit(1)
		}
		stepPart, _, _ = strings.Cut(stepPart, ".")
		sid, _ := sc.Strtol(stepPart)
		if int32(id) <= 0 || int32(sid) < 0 {
			q.errorf("Invalid job_step id: %s.%s", jobPart, stepPart)
			q.exit(1)
		}
		out = append(out, stepSel{jobID: uint32(int32(id)), arrayID: arr, stepID: uint32(int32(sid))})
	}
	return out
}

func stepIDString(s *msg.StepInfo) string {
	id := ""
	if s.ArrayJobID != 0 {
		id = fmt.Sprintf("%d_%d.", s.ArrayJobID, s.ArrayTaskID)
	} else if s.StepID.JobID == 0 {
		return "Invalid"
	} else {
		id = strconv.FormatUint(uint64(s.StepID.JobID), 10)
		if s.StepID.StepID == sc.NoVal {
			return id
		}
		id += "."
	}
	if s.StepID.StepID == sc.NoVal {
		return id
	}
	switch s.StepID.StepID {
	case 0xfffffffb:
		id += "batch"
	case 0xfffffffc:
		id += "extern"
	case 0xfffffffa:
		id += "interactive"
	case 0xfffffffd:
		id += "TDB"
	default:
		id += strconv.FormatUint(uint64(s.StepID.StepID), 10)
	}
	if s.StepID.StepHetComp != sc.NoVal {
		id += "+" + strconv.FormatUint(uint64(s.StepID.StepHetComp), 10)
	}
	return id
}

// cpuFreqString is cpu_freq_to_string.
func cpuFreqString(f uint32) string {
	names := map[uint32]string{
		0x80000001: "Low", 0x80000002: "Medium", 0x80000003: "High", 0x80000004: "Highm1",
		0x80000005: "Conservative", 0x80000006: "OnDemand", 0x80000007: "Performance",
		0x80000008: "PowerSave", 0x80000009: "UserSpace", 0x8000000a: "SchedUtil",
	}
	if n, ok := names[f]; ok {
		return n
	}
	if f&0x80000000 != 0 {
		return "Unknown"
	}
	if f == sc.NoVal {
		return ""
	}
	return sc.ConvertNumUnit2(float64(f), sc.UnitKilo, 1000, 0)
}

func (q *squeue) stepDefs() (map[byte]stepField, map[string]stepField) {
	str := func(h string, get func(s *msg.StepInfo) sc.Str) stepField {
		return stepField{header: h, print: func(q *squeue, s *msg.StepInfo, w int, right bool) {
			q.out.PrintStr(get(s), w, right, true)
		}}
	}
	num := func(h string, get func(s *msg.StepInfo) int64) stepField {
		return stepField{header: h, print: func(q *squeue, s *msg.StepInfo, w int, right bool) {
			q.out.PrintInt(get(s), w, right, true)
		}}
	}
	left := false
	tasks := num("TASKS", func(s *msg.StepInfo) int64 { return int64(int32(s.NumTasks)) })
	tresNode := str("TRES_PER_JOB", func(s *msg.StepInfo) sc.Str { return nstr(s.TresPerNode) })
	id := str("STEPID", func(s *msg.StepInfo) sc.Str { return sc.S(cut(stepIDString(s), 32)) })
	name := str("NAME", func(s *msg.StepInfo) sc.Str { return nstr(s.Name) })
	limit := stepField{header: "TIME_LIMIT", print: func(q *squeue, s *msg.StepInfo, w int, right bool) {
		if s.TimeLimit == sc.Infinite {
			q.out.PrintStrS("UNLIMITED", w, right, true)
			return
		}
		q.secs(int64(s.TimeLimit)*60, w, right, false)
	}}
	used := stepField{header: "TIME", print: func(q *squeue, s *msg.StepInfo, w int, right bool) {
		q.secs(s.RunTime, w, right, false)
	}}
	nodes := stepField{header: "NODELIST", headerNoCut: true, print: func(q *squeue, s *msg.StepInfo, w int, right bool) {
		q.printNodes(nstr(s.Nodes), w, right)
	}}
	part := str("PARTITION", func(s *msg.StepInfo) sc.Str { return nstr(s.Partition) })
	start := stepField{header: "START_TIME", headerRight: &left, print: func(q *squeue, s *msg.StepInfo, w int, right bool) {
		if s.StartTime == 0 {
			q.out.PrintStrS("N/A", w, right, true)
			return
		}
		q.out.PrintStrS(q.tf.Format(s.StartTime, q.now), w, right, true)
	}}
	uid := num("UID", func(s *msg.StepInfo) int64 { return int64(int32(s.UserID)) })
	user := stepField{header: "USER", print: func(q *squeue, s *msg.StepInfo, w int, right bool) {
		q.out.PrintStrS(q.users.UserName(s.UserID), w, right, true)
	}}
	letters := map[byte]stepField{'A': tasks, 'b': tresNode, 'i': id, 'j': name, 'l': limit,
		'M': used, 'N': nodes, 'P': part, 'S': start, 'U': uid, 'u': user}
	longs := map[string]stepField{
		"cluster":   str("CLUSTER", func(s *msg.StepInfo) sc.Str { return nstr(s.Cluster) }),
		"container": str("CONTAINER", func(s *msg.StepInfo) sc.Str { return nstr(s.Container) }),
		"numtasks":  tasks, "gres": tresNode, "stepid": id, "stepname": name, "timelimit": limit,
		"timeused": used, "nodes": nodes, "partition": part, "starttime": start, "userid": uid,
		"username": user,
		"arrayjobid": num("ARRAY_JOB_ID", func(s *msg.StepInfo) int64 {
			if s.ArrayJobID != sc.NoVal {
				return int64(int32(s.ArrayJobID))
			}
			return int64(int32(s.StepID.JobID))
		}),
		"arraytaskid": stepField{header: "ARRAY_TASK_ID", print: func(q *squeue, s *msg.StepInfo, w int, right bool) {
			if s.ArrayTaskID != sc.NoVal {
				q.out.PrintInt(int64(int32(s.ArrayTaskID)), w, right, true)
				return
			}
			q.out.PrintStrS("N/A", w, right, true)
		}},
		"jobid":   num("JOB_ID", func(s *msg.StepInfo) int64 { return int64(int32(s.StepID.JobID)) }),
		"network": str("NETWORK", func(s *msg.StepInfo) sc.Str { return nstr(s.Network) }),
		"numcpus": num("NUM_CPUS", func(s *msg.StepInfo) int64 { return int64(int32(s.NumCPUs)) }),
		"cpufreq": str("CPU_FREQ", func(s *msg.StepInfo) sc.Str {
			return sc.S(cpuFreqString(s.CPUFreqMin) + "-" + cpuFreqString(s.CPUFreqMax) + ":" + cpuFreqString(s.CPUFreqGov))
		}),
		"resvports":       str("RESERVED_PORTS", func(s *msg.StepInfo) sc.Str { return nstr(s.ResvPorts) }),
		"stepstate":       str("STATE", func(s *msg.StepInfo) sc.Str { return sc.S(sc.JobStateString(s.State)) }),
		"cpus-per-tres":   str("CPUS_PER_TRES", func(s *msg.StepInfo) sc.Str { return nstr(s.CPUsPerTres) }),
		"mem-per-tres":    str("MEM_PER_TRES", func(s *msg.StepInfo) sc.Str { return nstr(s.MemPerTres) }),
		"tres-bind":       str("TRES_BIND", func(s *msg.StepInfo) sc.Str { return nstr(s.TresBind) }),
		"tres-freq":       str("TRES_FREQ", func(s *msg.StepInfo) sc.Str { return nstr(s.TresFreq) }),
		"tres-per-job":    str("TRES_PER_STEP", func(s *msg.StepInfo) sc.Str { return nstr(s.TresPerStep) }),
		"tres-per-step":   str("TRES_PER_STEP", func(s *msg.StepInfo) sc.Str { return nstr(s.TresPerStep) }),
		"tres-per-node":   tresNode,
		"tres-per-socket": str("TRES_PER_SOCKET", func(s *msg.StepInfo) sc.Str { return nstr(s.TresPerSocket) }),
		"tres-per-task":   str("TRES_PER_TASK", func(s *msg.StepInfo) sc.Str { return nstr(s.TresPerTask) }),
	}
	return letters, longs
}

func (q *squeue) parseStepFormat(format string) {
	q.stepFields = nil
	letters, _ := q.stepDefs()
	prefix, hasPrefix, items, all := sc.ParseFormat(format, "")
	if hasPrefix {
		q.stepFields = append(q.stepFields, stepField{prefix: true, suffix: prefix})
	}
	for _, it := range items {
		def, ok := letters[it.Letter]
		if !ok {
			if all {
				continue
			}
			q.stepFields = append(q.stepFields, stepField{width: it.Width, right: it.Right, suffix: "%" + it.Text})
			q.errorf("Invalid job step format specification: %c", it.Letter)
			continue
		}
		def.width, def.right, def.suffix = it.Width, it.Right, it.Suffix
		q.stepFields = append(q.stepFields, def)
	}
}

func (q *squeue) parseStepLongFormat(format string) {
	q.stepFields = nil
	_, longs := q.stepDefs()
	for _, it := range sc.ParseLongFormat(format) {
		lname := strings.ToLower(it.Name)
		def, ok := longs[lname]
		switch {
		case ok:
		case strings.HasPrefix(lname, "container"):
			def, ok = longs["container"], true
		case strings.HasPrefix(lname, "numtask"):
			def, ok = longs["numtasks"], true
		}
		if !ok {
			q.stepFields = append(q.stepFields, stepField{width: it.Width, right: it.Right, suffix: it.Suffix})
			q.errorf("Invalid job step format specification: %s", it.Name)
			continue
		}
		def.width, def.right, def.suffix = it.Width, it.Right, it.Suffix
		q.stepFields = append(q.stepFields, def)
	}
}

func (q *squeue) printStepRecord(s *msg.StepInfo) {
	for _, f := range q.stepFields {
		if f.prefix || f.print == nil {
			q.out.WriteString(f.suffix)
			continue
		}
		if s == nil {
			right := f.right
			if f.headerRight != nil {
				right = *f.headerRight
			}
			q.out.PrintStrS(f.header, f.width, right, !f.headerNoCut)
		} else {
			f.print(q, s, f.width, f.right)
		}
		q.out.WriteString(f.suffix)
	}
	q.out.WriteString("\n")
}

// printSteps is _print_job_steps.
func (q *squeue) printSteps(ctx context.Context, cache **msg.StepInfoMsg) error {
	var show uint16
	if q.allFlag {
		show |= sc.ShowAll
	}
	req := msg.JobStepInfoRequest{StepID: msg.StepID{JobID: sc.NoVal, StepID: sc.NoVal, StepHetComp: sc.NoVal},
		ShowFlags: show | sc.ShowLocal}
	resp, err := q.conn.LoadSteps(ctx, req)
	if errors.Is(err, sc.ErrNoChange) && *cache != nil {
		resp, err = *cache, nil
	}
	if err != nil {
		q.out.Flush()
		fmt.Fprintf(q.stderr, "slurm_get_job_steps error: %s\n", sc.Strerror(err))
		return err
	}
	*cache = resp
	if q.verbose != 0 {
		fmt.Fprintf(q.out, "last_update_time=%d records=%d\n", resp.LastUpdate, len(resp.Steps))
	}
	if q.stepFields == nil {
		if !q.formatSet && !q.formatLongSet {
			q.format, q.formatSet = "%.15i %.8j %.9P %.8u %.9M %N", true
		}
		if q.formatSet {
			q.parseStepFormat(q.format)
		} else {
			q.parseStepLongFormat(q.formatLong)
		}
	}
	if !q.noHeader {
		q.printStepRecord(nil)
	}
	var steps []*msg.StepInfo
	for i := range resp.Steps {
		if q.filterStep(&resp.Steps[i]) {
			steps = append(steps, &resp.Steps[i])
		}
	}
	q.sortSteps(steps)
	for _, s := range steps {
		q.printStepRecord(s)
	}
	return nil
}

func (q *squeue) filterStep(s *msg.StepInfo) bool {
	if s.State == sc.JobPending {
		return false
	}
	if q.hasJobs {
		keep := false
		for _, j := range q.jobs {
			if (j.arrayID == sc.NoVal && (j.jobID == s.ArrayJobID || j.jobID == s.StepID.JobID)) ||
				(j.arrayID == s.ArrayTaskID && j.jobID == s.ArrayJobID) {
				keep = true
				break
			}
		}
		if !keep {
			return false
		}
	}
	if q.hasParts {
		keep := false
		for _, p := range q.partitions {
			if s.Partition.Valid && p == s.Partition.Value {
				keep = true
				break
			}
		}
		if !keep {
			return false
		}
	}
	if len(q.steps) > 0 {
		keep := false
		for _, j := range q.steps {
			if j.stepID != s.StepID.StepID {
				continue
			}
			if (j.arrayID == sc.NoVal && (j.jobID == s.ArrayJobID || j.jobID == s.StepID.JobID)) ||
				(j.arrayID == s.ArrayTaskID && j.jobID == s.ArrayJobID) {
				keep = true
				break
			}
		}
		if !keep {
			return false
		}
	}
	if q.nodes != nil && (!s.Nodes.Valid || !intersects(q.nodes, s.Nodes.Value)) {
		return false
	}
	if q.hasUsers {
		keep := false
		for _, u := range q.users_ {
			if u == s.UserID {
				keep = true
				break
			}
		}
		if !keep {
			return false
		}
	}
	return true
}

func (q *squeue) sortSteps(steps []*msg.StepInfo) {
	spec := q.sortSpec
	if !q.sortSet {
		spec = "P,i"
	}
	const cluster = "cluster"
	now := q.now.Unix()
	for i := len(spec) - 1; i >= 0; i-- {
		c := spec[i]
		if c == ',' || c == '+' || c == '-' {
			continue
		}
		reverse := i > 0 && spec[i-1] == '-'
		var cmp func(a, b *msg.StepInfo) int
		if i+1 >= len(cluster) && strings.EqualFold(spec[i+1-len(cluster):i+1], cluster) {
			if i >= len(cluster) && spec[i-len(cluster)] == '-' {
				reverse = true
			}
			cmp = func(a, b *msg.StepInfo) int { return sc.CompareStr(nstr(a.Cluster), nstr(b.Cluster)) }
			i -= len(cluster) - 1
		} else {
			switch c {
			case 'b':
				q.out.Flush()
				q.infof("Invalid sort specification: b")
				continue
			case 'i':
				cmp = func(a, b *msg.StepInfo) int {
					if d := cmpU32(a.StepID.JobID, b.StepID.JobID); d != 0 {
						return d
					}
					return cmpU32(a.StepID.StepID, b.StepID.StepID)
				}
			case 'N':
				cmp = func(a, b *msg.StepInfo) int {
					return sc.CompareFirstHost(firstHost(nstr(a.Nodes)), firstHost(nstr(b.Nodes)))
				}
			case 'P':
				cmp = func(a, b *msg.StepInfo) int {
					return sc.CompareStr(emptyIfNull(nstr(a.Partition)), emptyIfNull(nstr(b.Partition)))
				}
			case 'l':
				cmp = func(a, b *msg.StepInfo) int { return cmpU32(a.TimeLimit, b.TimeLimit) }
			case 'S':
				cmp = func(a, b *msg.StepInfo) int { return cmpI64(a.StartTime, b.StartTime) }
			case 'M':
				cmp = func(a, b *msg.StepInfo) int { return cmpI64(now-a.StartTime, now-b.StartTime) }
			case 'u':
				cmp = func(a, b *msg.StepInfo) int {
					return strings.Compare(q.users.UserName(a.UserID), q.users.UserName(b.UserID))
				}
			case 'U':
				cmp = func(a, b *msg.StepInfo) int { return cmpU32(a.UserID, b.UserID) }
			default:
				continue
			}
		}
		if reverse {
			inner := cmp
			cmp = func(a, b *msg.StepInfo) int { return -inner(a, b) }
		}
		sc.MergeSort(steps, cmp)
	}
}
