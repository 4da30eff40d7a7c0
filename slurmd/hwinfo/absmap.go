package hwinfo

import (
	"fmt"
	"sort"
)

// CoresToOSCPUs converts abstract core ids (what the controller allocates:
// 0 .. Sockets*CoresPerSocket-1 of the reported layout) to OS CPU ids,
// every thread of each core, through BlockMap: slurmd's
// xcpuinfo_abs_to_mac, used for gres.conf Cores= and CPU binding. Ids
// wrap modulo the hardware CPU count as in slurmd.
func (t *Topology) CoresToOSCPUs(cores []int, reported Layout) ([]int, error) {
	total := reported.Sockets * reported.CoresPerSocket
	n := len(t.BlockMap)
	if n == 0 || total <= 0 {
		return nil, fmt.Errorf("xcpuinfo_abs_to_mac: failed (no CPU map)")
	}
	threads := reported.ThreadsPerCore
	set := map[int]bool{}
	for _, c := range cores {
		if c < 0 || c >= total {
			return nil, fmt.Errorf("xcpuinfo_abs_to_mac: failed (core %d of %d)", c, total)
		}
		for th := 0; th < threads; th++ {
			abs := (c*threads + th) % n
			set[t.BlockMap[abs]%n] = true
		}
	}
	return sortedKeys(set), nil
}

// OSCPUsToCores converts OS CPU ids to the abstract cores holding them
// (any thread counts): slurmd's xcpuinfo_mac_to_abs, through BlockMapInv.
func (t *Topology) OSCPUsToCores(cpus []int, reported Layout) ([]int, error) {
	total := reported.Sockets * reported.CoresPerSocket
	n := len(t.BlockMapInv)
	if n == 0 || total <= 0 {
		return nil, fmt.Errorf("xcpuinfo_mac_to_abs failed (no CPU map)")
	}
	in := map[int]bool{}
	for _, c := range cpus {
		if c < 0 || c >= n {
			return nil, fmt.Errorf("xcpuinfo_mac_to_abs failed (CPU %d of %d)", c, n)
		}
		in[c] = true
	}
	threads := reported.ThreadsPerCore
	abs := map[int]bool{}
	for core := 0; core < total; core++ {
		for th := 0; th < threads; th++ {
			mac := (core*threads + th) % n
			if in[mac] {
				abs[t.BlockMapInv[mac]%n] = true
			}
		}
	}
	out := map[int]bool{}
	for core := 0; core < total; core++ {
		for th := 0; th < threads; th++ {
			if abs[(core*threads+th)%n] {
				out[core] = true
				break
			}
		}
	}
	return sortedKeys(out), nil
}

func sortedKeys(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
