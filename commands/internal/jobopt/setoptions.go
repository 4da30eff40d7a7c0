package jobopt

import (
	"fmt"
	"strconv"
)

// SetOptionLines are slurm_print_set_options' lines (logged by srun and
// salloc with -v): each option given, by name in table order, with its
// value. Options whose value this package does not render show "(null)",
// as real Slurm does for options without a getter.
func (o *Opts) SetOptionLines() []string {
	lines := []string{"defined options", "-------------------- --------------------"}
	seen := map[int]bool{}
	for _, s := range table {
		if s.Cmds&o.Cmd == 0 || seen[s.Val] {
			continue
		}
		seen[s.Val] = true
		if _, ok := o.set[s.Val]; !ok {
			continue
		}
		lines = append(lines, fmt.Sprintf("%-20s: %s", s.Name, o.optionValue(s.Val)))
	}
	return append(lines, "-------------------- --------------------", "end of defined options")
}

func (o *Opts) optionValue(val int) string {
	switch val {
	case 'n':
		return strconv.Itoa(o.Ntasks)
	case 'N':
		if o.MinNodes != o.MaxNodes {
			return fmt.Sprintf("%d-%d", o.MinNodes, o.MaxNodes)
		}
		return strconv.Itoa(o.MinNodes)
	case 'c':
		return strconv.Itoa(o.CPUsPerTask)
	case 'v':
		return strconv.Itoa(o.Verbose)
	case 'Q':
		return strconv.Itoa(o.Quiet)
	case 'J':
		if o.JobName != nil {
			return *o.JobName
		}
	case 'p':
		return o.Partition
	case 't':
		return minsToTimeStr(o.TimeLimit)
	}
	return "(null)"
}

// minsToTimeStr is Slurm's mins2time_str.
func minsToTimeStr(m uint32) string {
	switch m {
	case 0xfffffffe: // NO_VAL
		return "Partition_Limit"
	case 0xffffffff: // INFINITE
		return "UNLIMITED"
	}
	d, h, mm := m/1440, (m%1440)/60, m%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:00", d, h, mm)
	}
	return fmt.Sprintf("%02d:%02d:00", h, mm)
}
