package priority

import (
	"slices"
	"strings"
)

// tresOrder is the order of Slurm's built-in TRES (their ids 1..8), the
// order in which it walks its TRES arrays. Other TRES (gres, license, bb)
// follow, by name: in Slurm they follow in the order the database gave
// them ids. The order only matters for the last bits of float sums.
var tresOrder = []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}

// sortedTRES returns the keys of m in tresOrder, then the rest by name.
func sortedTRES[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		if i := slices.Index(tresOrder, k); i >= 0 {
			return i
		}
		return len(tresOrder)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return keys
}

// nodeTRES reports whether a TRES is counted per node for MAX_TRES: cpu,
// mem, node and every GRES. The others (licenses, burst buffers, energy,
// ...) are summed.
func nodeTRES(key string) bool {
	switch key {
	case "cpu", "mem", "node":
		return true
	}
	return strings.HasPrefix(key, "gres/")
}

// Billing is the billable TRES of counts under a partition's
// TRESBillingWeights, as assoc_mgr_tres_weighted computes it: the sum of
// count * weight over every TRES but billing itself, or with maxTRES
// (PriorityFlags=MAX_TRES) the largest of the per-node TRES (cpu, mem,
// node, gres) plus the sum of the others. Without weights (nil) it is the
// CPU count. Memory counts are in MB, as the weights (ParseTRESWeights).
func Billing(counts map[string]uint64, weights map[string]float64, maxTRES bool) float64 {
	if weights == nil {
		return float64(counts["cpu"])
	}
	var node, global float64
	for _, k := range sortedTRES(weights) {
		if k == "billing" {
			continue
		}
		v := float64(counts[k]) * weights[k]
		if maxTRES && nodeTRES(k) {
			node = max(node, v)
		} else {
			global += v
		}
	}
	return node + global
}

// ParseBillingWeights reads a partition's TRESBillingWeights, which use
// the syntax of PriorityWeightTRES; "" means none (nil: bill CPUs).
func ParseBillingWeights(s string) (map[string]float64, error) {
	if s == "" {
		return nil, nil
	}
	// A string of empty items gives weights that are all 0 (Slurm's
	// array is allocated before the items are read): nothing is billed.
	return ParseTRESWeights(s)
}
