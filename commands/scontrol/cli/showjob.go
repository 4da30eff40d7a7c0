package cli

import (
	"fmt"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Show flags scontrol's loaders add from its options.
func (s *state) jobShowFlags() uint16 {
	var f uint16
	if s.allFlag {
		f |= slurmcli.ShowAll
	}
	if s.detailFlag {
		f |= slurmcli.ShowDetail
	}
	return f
}

// showJob is scontrol_print_job: "show job [ID|ID_TASK|ID+OFFSET]".
func showJob(s *state, _ []string, val *string) {
	var jobID uint32
	arrayID, hetOffset := uint32(noVal), uint32(noVal)
	if val != nil {
		str := *val
		for i := 0; i < len(str); i++ {
			c := str[i]
			if (c < '0' || c > '9') && c != '_' && c != '+' {
				s.exitCode = 1
				if s.quietFlag != 1 {
					s.perror("scontrol_print_job error", slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_ID})
				}
				return
			}
		}
		n, rest := strtolInt(str)
		jobID = uint32(n)
		if len(rest) > 0 && rest[0] == '_' {
			n, rest = strtolInt(rest[1:])
			arrayID = uint32(n)
		}
		if len(rest) > 0 && rest[0] == '+' {
			n, _ = strtolInt(rest[1:])
			hetOffset = uint32(n)
		}
	}
	var m *msg.JobInfoMsg
	var err error
	if jobID != 0 {
		m, err = s.ctl().LoadJob(s.ctx(), jobID, s.jobShowFlags())
	} else {
		m, err = s.ctl().LoadJobs(s.ctx(), 0, s.jobShowFlags())
	}
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_load_jobs error", err)
		}
		return
	}
	if s.quietFlag == -1 {
		// A single-job load is cached with last_update 0.
		last := m.LastUpdate
		if jobID != 0 {
			last = 0
		}
		fmt.Fprintf(s.stdout, "last_update_time=%s, records=%d\n", s.timeStr(last), len(m.Jobs))
	}
	printed := 0
	for _, j := range s.viewJobs(m) {
		if hetOffset != noVal && hetOffset != j.HetJobOffset {
			continue
		}
		if arrayID != noVal && arrayID != j.ArrayTaskID &&
			(j.taskBitmap == nil || int(arrayID) >= len(j.taskBitmap) || !j.taskBitmap[arrayID]) {
			continue
		}
		if arrayID != noVal && j.taskStr.Valid {
			// One pending task of an array prints as that task.
			c := *j.JobInfo
			c.ArrayTaskID = arrayID
			v := *j
			v.JobInfo = &c
			v.taskStr = msg.NullString{}
			j = &v
		}
		s.stdout.WriteString(s.sprintJob(j, s.oneLiner))
		printed++
	}
	if printed > 0 {
		return
	}
	if val != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			switch {
			case arrayID != noVal:
				fmt.Fprintf(s.stdout, "Job %d_%d not found\n", jobID, arrayID)
			case hetOffset != noVal:
				fmt.Fprintf(s.stdout, "Job %d+%d not found\n", jobID, hetOffset)
			default:
				fmt.Fprintf(s.stdout, "Job %d not found\n", jobID)
			}
		}
	} else if s.quietFlag != 1 {
		s.stdout.WriteString("No jobs in the system\n")
	}
}
