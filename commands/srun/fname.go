package main

import (
	"fmt"
	"strconv"
	"strings"
)

// fnameMaxWidth bounds a %<width> field (srun's MAX_WIDTH).
const fnameMaxWidth = 10

type ioKind int

const (
	ioStream ioKind = iota // through srun (all tasks)
	ioRemote               // opened by the step daemons: /dev/null, one task, a per-task pattern
	ioLocal                // a file srun opens itself
)

// fname is srun's fname_t: where one of stdin, stdout and stderr goes.
type fname struct {
	kind ioKind
	name string // the name after srun's own expansions
	task int    // the one task of a rank ("-i 0"), else -1
}

// fnameVars are the values srun itself puts in a name.
type fnameVars struct {
	ntasks        uint32
	jobID, stepID uint32
	jobName       string
	arrayJobID    string // SLURM_ARRAY_JOB_ID, "" when unset
	arrayTaskID   string // SLURM_ARRAY_TASK_ID
}

// fnameCreate is srun's fname_create: "", "all" and "-..." stream
// through srun; "none" is /dev/null on the nodes; a task rank below the
// task count is that task only; a name with a backslash is taken as it is
// (backslashes removed). Otherwise srun expands %j %J %s %a %A %x and
// %% itself; a name left with %t %n %N or %u is per task, expanded by the
// step daemons, any other is a file srun opens.
func fnameCreate(format string, v fnameVars) fname {
	switch {
	case format == "" || strings.HasPrefix(strings.ToLower(format), "all") || strings.HasPrefix(format, "-"):
		return fname{kind: ioStream, task: -1}
	case strings.EqualFold(format, "none"):
		return fname{kind: ioRemote, name: "/dev/null", task: -1}
	}
	if n, err := strconv.ParseUint(format, 10, 32); err == nil && n < uint64(v.ntasks) {
		return fname{kind: ioRemote, name: format, task: int(n)}
	}
	if strings.Contains(format, `\`) {
		return fname{kind: ioLocal, name: strings.ReplaceAll(format, `\`, ""), task: -1}
	}
	f := format
	at := func(i int) byte {
		if i < len(f) {
			return f[i]
		}
		return 0
	}
	var name strings.Builder
	var tmpPerc string
	doubleP, perTask := false, false
	p, q, wid := 0, 0, 0
	digits := func() int {
		n := 0
		for isDigit(at(p)) {
			n = min(n*10+int(f[p]-'0'), 1<<30)
			p++
		}
		return n
	}
	number := func(n uint32, width int) string { return fmt.Sprintf("%0*d", width, n) }
	for p < len(f) {
		switch {
		case f[p] == '%':
			if at(p+1) == '%' {
				p++
				doubleP = true
				name.WriteString(f[q:p])
				tmpPerc += "%"
				p++
				q = p
				continue
			}
			p++
			if isDigit(at(p)) {
				name.WriteString(f[q : p-1])
				wid = min(digits(), fnameMaxWidth)
				q = p - 1
				if p >= len(f) {
					break
				}
			}
			switch c := at(p); c {
			case 'a', 'A':
				val := v.arrayTaskID
				if c == 'A' {
					val = v.arrayJobID
				}
				n, err := strconv.ParseUint(val, 10, 32)
				if err != nil {
					n = 0xfffffffe // NO_VAL
					if c == 'A' {
						n = uint64(v.jobID)
					}
				}
				name.WriteString(f[q : p-1])
				name.WriteString(number(uint32(n), wid))
				tmpPerc = ""
				p++
				q = p
			case 'J', 'j':
				name.WriteString(f[q : p-1])
				name.WriteString(number(v.jobID, wid))
				if c == 'J' {
					fmt.Fprintf(&name, ".%d", v.stepID)
				}
				tmpPerc = ""
				p++
				q = p
			case 's':
				name.WriteString(f[q : p-1])
				name.WriteString(number(v.stepID, wid))
				tmpPerc = ""
				p++
				q = p
			case 'u', 't', 'n', 'N':
				perTask = true
				if doubleP {
					name.WriteString(tmpPerc)
				}
				if wid > 0 {
					// The width and its % go back for slurmstepd.
					fmt.Fprintf(&name, "%%%d", wid)
				} else {
					name.WriteString(f[q:p])
				}
				tmpPerc = ""
				q = p
				p++
			case 'x':
				name.WriteString(f[q : p-1])
				name.WriteString(v.jobName)
				p++
				q = p
			}
			doubleP = false
		case doubleP:
			// "%%" followed by a per-task field.
			doubleP = false
			if isDigit(at(p)) {
				wid = digits()
			}
			switch at(p) {
			case 'u', 't', 'n', 'N':
				perTask = true
				name.WriteString(tmpPerc)
				if wid > 0 {
					fmt.Fprintf(&name, "%d", wid)
					q = p
				}
				tmpPerc = ""
				p++
			}
		default:
			p++
		}
		wid = 0
	}
	if q < p && q < len(f) {
		name.WriteString(f[q:min(p, len(f))])
	}
	if perTask {
		return fname{kind: ioRemote, name: name.String(), task: -1}
	}
	return fname{kind: ioLocal, name: name.String(), task: -1}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
