package ctld

import (
	"slices"
	"strconv"
	"strings"
)

// specCoresOf turns a CPU ID list ("1,2", "0-3,6") into the cores
// holding those CPUs (CPU / threads per core), sorted, without
// duplicates and without cores beyond the node's count (which slurmctld
// reports as an error and skips).
func specCoresOf(list string, threads, cores int) []uint16 {
	threads = max(threads, 1)
	var out []uint16
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				continue
			}
		}
		for cpu := a; cpu <= b; cpu++ {
			core := cpu / threads
			if core >= cores {
				break
			}
			if !slices.Contains(out, uint16(core)) {
				out = append(out, uint16(core))
			}
		}
	}
	slices.Sort(out)
	return out
}

// cpuListOf is the CPU IDs of cores (sorted) of threads CPUs each, as
// ranges ("0-1,4-5").
func cpuListOf(cores []uint16, threads int) string {
	var b strings.Builder
	lo, hi := -1, -1
	flush := func() {
		if lo < 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(lo))
		if hi > lo {
			b.WriteString("-" + strconv.Itoa(hi))
		}
	}
	for _, c := range cores {
		first := int(c) * threads
		if first == hi+1 && lo >= 0 {
			hi = first + threads - 1
			continue
		}
		flush()
		lo, hi = first, first+threads-1
	}
	flush()
	return b.String()
}
