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
