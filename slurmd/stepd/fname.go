package stepd

import (
	"strconv"
	"strings"
)

// NoVal is Slurm's NO_VAL: an unset 32-bit id (array task id of a job that
// is not an array element).
const NoVal uint32 = 0xfffffffe

// StepIDBatch and StepIDExtern are the step ids of the batch script and of
// the extern step.
const (
	StepIDBatch  uint32 = 0xfffffffb
	StepIDExtern uint32 = 0xfffffffc
)

// maxWidth caps the zero-padding width of a %<n>x pattern, as Slurm does.
const maxWidth = 10

// PathJob is what the % patterns of a stdio file name refer to.
type PathJob struct {
	JobID       uint32
	StepID      uint32 // StepIDBatch for the batch script
	ArrayJobID  uint32
	ArrayTaskID uint32 // NoVal when not an array element
	NodeID      uint32
	UserName    string
	JobName     string // SLURM_JOB_NAME of the job's environment
	Hostname    string // this node's host name (%N), as Slurm's conf->hostname
	WorkDir     string // relative names are taken from here
}

// DefaultBatchOutput is the batch script's output name when sbatch gave
// none: slurm-%J.out, or slurm-%A_%a.out for an array element.
func DefaultBatchOutput(j *PathJob) string {
	if j.ArrayTaskID == NoVal {
		return "slurm-%J.out"
	}
	return "slurm-%A_%a.out"
}

// ExpandBatchPath turns an sbatch --output/--error/--input pattern into a
// path, as slurmstepd's fname_create does for a batch step: a relative name
// is joined to the work dir; %% is a literal %; %A %a %J %j %N %n %s %t %u %x
// take an optional zero-padding width (%5j); unknown patterns are kept; a
// name holding backslashes is not expanded at all, the escaping backslashes
// are dropped instead.
func ExpandBatchPath(format string, j *PathJob, taskID uint32) string {
	var name strings.Builder
	if !strings.HasPrefix(format, "/") {
		name.WriteString(j.WorkDir)
		if esc, ok := removePathSlashes(format); ok {
			name.WriteString(esc)
			return name.String()
		}
		if s := name.String(); s == "" || !strings.HasSuffix(s, "/") {
			name.WriteByte('/')
		}
	} else if esc, ok := removePathSlashes(format); ok {
		return esc
	}
	expandBatch(&name, format, j, taskID)
	return name.String()
}

// expandBatch follows _create_batch_fname's scan, including its handling of
// a width before an unknown letter (the width's last digit is kept).
func expandBatch(out *strings.Builder, p string, j *PathJob, taskID uint32) {
	q := 0 // start of the text not yet copied
	i := 0
	for i < len(p) {
		if p[i] != '%' {
			i++
			continue
		}
		if i+1 < len(p) && p[i+1] == '%' {
			out.WriteString(p[q : i+1])
			i += 2
			q = i
			continue
		}
		i++ // at the letter or the first width digit
		if i >= len(p) {
			break
		}
		wid := 0
		if i < len(p) && isDigit(p[i]) {
			out.WriteString(p[q : i-1])
			k := i
			for k < len(p) && isDigit(p[k]) {
				k++
			}
			w, err := strconv.ParseUint(p[i:k], 10, 64)
			if err != nil || w > maxWidth {
				w = maxWidth
			}
			wid = int(w)
			i = k
			q = i - 1
			if i >= len(p) {
				break
			}
		}
		var val string
		known := true
		switch p[i] {
		case 'a':
			val = pad(j.ArrayTaskID, wid)
		case 'A':
			if j.ArrayTaskID == NoVal {
				val = pad(j.JobID, wid)
			} else {
				val = pad(j.ArrayJobID, wid)
			}
		case 'J', 'j':
			val = pad(j.JobID, wid)
			if p[i] == 'J' && j.StepID != StepIDBatch {
				val += "." + strconv.FormatUint(uint64(j.StepID), 10)
			}
		case 'n':
			val = pad(j.NodeID, wid)
		case 'N':
			val = j.Hostname
		case 's':
			if j.StepID == StepIDBatch {
				val = "batch"
			} else {
				val = pad(j.StepID, wid)
			}
		case 't':
			val = pad(taskID, wid)
		case 'u':
			val = j.UserName
		case 'x':
			val = j.JobName
		default:
			known = false
		}
		if !known {
			continue
		}
		out.WriteString(p[q : i-1]) // empty after a width: q is its last digit
		out.WriteString(val)
		i++
		q = i
	}
	if q < len(p) {
		out.WriteString(p[q:])
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// pad formats v with at least wid digits, zero-padded (printf "%0*u").
func pad(v uint32, wid int) string {
	s := strconv.FormatUint(uint64(v), 10)
	for len(s) < wid {
		s = "0" + s
	}
	return s
}

// removePathSlashes drops escaping backslashes ("\\" becomes "\"); ok is
// false when the name has none, meaning "expand the patterns".
func removePathSlashes(p string) (string, bool) {
	if !strings.Contains(p, `\`) {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' {
			if i+1 < len(p) && p[i+1] == '\\' {
				b.WriteByte('\\')
				i++
			}
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String(), true
}

// ExpandStepPath turns srun's --output/--error/--input pattern, as it
// reaches the node, into a path for one task, as fname_create does for a
// step: a bare number means "only that task" (/dev/null for the others);
// srun has already expanded the job-level patterns, so only %t %n %N %u and
// %% remain, with Slurm's scanning quirks kept (a character right after an
// expanded pattern is copied, not scanned).
func ExpandStepPath(format string, j *PathJob, taskID uint32) string {
	if id, err := strconv.ParseUint(format, 10, 32); err == nil {
		if uint32(id) != taskID {
			return "/dev/null"
		}
	}
	var name strings.Builder
	if !strings.HasPrefix(format, "/") {
		name.WriteString(j.WorkDir)
		if esc, ok := removePathSlashes(format); ok {
			name.WriteString(esc)
			return name.String()
		}
		if s := name.String(); s == "" || !strings.HasSuffix(s, "/") {
			name.WriteByte('/')
		}
	} else if esc, ok := removePathSlashes(format); ok {
		return esc
	}
	expandStep(&name, format, j, taskID)
	return name.String()
}

// expandStep follows _create_step_fname and _step_path_check index for
// index.
func expandStep(out *strings.Builder, p string, j *PathJob, taskID uint32) {
	at := func(i int) byte {
		if i < len(p) {
			return p[i]
		}
		return 0
	}
	copyRange := func(from, to int) {
		if from < to {
			out.WriteString(p[from:to])
		}
	}
	q, i := 0, 0
	for i < len(p) {
		if p[i] != '%' {
			i++
			continue
		}
		double, offset, wid := false, 1, 0
		if at(i+1) == '%' {
			i++
			double = true
		}
		i++
		if isDigit(at(i)) {
			k := i
			for k < len(p) && isDigit(p[k]) {
				k++
			}
			w, _ := strconv.ParseUint(p[i:k], 10, 64)
			offset = 2
			if w == maxWidth {
				offset = 3
			}
			wid = int(w)
			i = k
			if i >= len(p) {
				break
			}
		}
		var val string
		switch at(i) {
		case '%':
			copyRange(q, i-1)
			q = i
			continue
		case 't':
			val = pad(taskID, wid)
		case 'n':
			val = pad(j.NodeID, wid)
		case 'N':
			val = j.Hostname
		case 'u':
			val = j.UserName
			offset = 1
		default:
			continue
		}
		copyRange(q, i-offset)
		if !double {
			out.WriteString(val)
			i++
		}
		q = i
		i++
	}
	if q < len(p) {
		copyRange(q, len(p))
	}
}
