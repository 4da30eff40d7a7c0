package main

import (
	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
)

func cmpU(a, b uint64) int {
	switch {
	case a > b:
		return 1
	case a < b:
		return -1
	}
	return 0
}

func partStr(r *rec, get func(r *rec) sc.Str) sc.Str {
	if r.part == nil {
		return sc.S("")
	}
	v := get(r)
	if v.Null {
		return sc.S("")
	}
	return v
}

func emptyNull(v sc.Str) sc.Str {
	if v.Null {
		return sc.S("")
	}
	return v
}

// sortRecs is sort_sinfo_list.
func (s *sinfo) sortRecs(recs []*rec) {
	spec := s.sortSpec
	if !s.sortSet {
		if s.nodeFlag {
			spec = "N"
		} else {
			spec = "#P,-t"
		}
	}
	for i := len(spec) - 1; i >= 0; i-- {
		c := spec[i]
		if c == ',' || c == '#' || c == '+' || c == '-' {
			continue
		}
		reverse := i > 0 && spec[i-1] == '-'
		partOrder := i > 0 && spec[i-1] == '#'
		var cmp func(a, b *rec) int
		pu := func(get func(r *rec) uint64) func(a, b *rec) int {
			return func(a, b *rec) int {
				var x, y uint64
				if a.part != nil {
					x = get(a)
				}
				if b.part != nil {
					y = get(b)
				}
				return cmpU(x, y)
			}
		}
		pdiff := func(get func(r *rec) int) func(a, b *rec) int {
			return func(a, b *rec) int {
				var x, y int
				if a.part != nil {
					x = get(a)
				}
				if b.part != nil {
					y = get(b)
				}
				return x - y
			}
		}
		switch c {
		case 'a':
			cmp = pdiff(func(r *rec) int { return int(r.part.StateUp) })
		case 'A', 'F':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.nodesAlloc), uint64(b.nodesAlloc)) }
		case 'b':
			cmp = func(a, b *rec) int { return sc.CompareStr(emptyNull(a.featuresAct), emptyNull(b.featuresAct)) }
		case 'c':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.minCPUs), uint64(b.minCPUs)) }
		case 'd':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.minDisk), uint64(b.minDisk)) }
		case 'D':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.nodesTotal), uint64(b.nodesTotal)) }
		case 'E':
			cmp = func(a, b *rec) int { return sc.CompareStr(emptyNull(a.reason), emptyNull(b.reason)) }
		case 'f':
			cmp = func(a, b *rec) int { return sc.CompareStr(emptyNull(a.features), emptyNull(b.features)) }
		case 'g':
			cmp = func(a, b *rec) int {
				g := func(r *rec) sc.Str { return str(r.part.AllowGroups) }
				return sc.CompareStr(partStr(a, g), partStr(b, g))
			}
		case 'h':
			cmp = pdiff(func(r *rec) int { return int(r.part.MaxShare) })
		case 'H':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.reasonTime), uint64(b.reasonTime)) }
		case 'l':
			cmp = pu(func(r *rec) uint64 { return uint64(r.part.MaxTime) })
		case 'm':
			cmp = func(a, b *rec) int { return cmpU(a.minMem, b.minMem) }
		case 'M':
			cmp = pdiff(func(r *rec) int { return int(r.part.PreemptMode) })
		case 'n':
			cmp = func(a, b *rec) int { return sc.CompareFirstHost(firstNode(a.hostnames), firstNode(b.hostnames)) }
		case 'N':
			cmp = func(a, b *rec) int { return sc.CompareFirstHost(firstNode(a.nodes), firstNode(b.nodes)) }
		case 'o':
			cmp = func(a, b *rec) int { return sc.CompareFirstHost(firstNode(a.nodeAddr), firstNode(b.nodeAddr)) }
		case 'O':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.minCPULoad), uint64(b.minCPULoad)) }
		case 'e':
			cmp = func(a, b *rec) int { return cmpU(a.minFreeMem, b.minFreeMem) }
		case 'p':
			cmp = pu(func(r *rec) uint64 { return uint64(r.part.PriorityTier) })
		case 'P', 'R':
			if partOrder {
				cmp = func(a, b *rec) int { return a.partInx - b.partInx }
			} else {
				cmp = func(a, b *rec) int {
					n := func(r *rec) sc.Str { return str(r.part.Name) }
					return sc.CompareStr(partStr(a, n), partStr(b, n))
				}
			}
		case 'r':
			cmp = pdiff(func(r *rec) int { return int(r.part.Flags & partFlagRootOnly) })
		case 's':
			size := func(r *rec) uint64 {
				v := r.part.MaxNodes
				if v != sc.Infinite {
					v += r.part.MinNodes
				}
				return uint64(v)
			}
			cmp = pu(size)
		case 'S':
			cmp = pu(func(r *rec) uint64 { return uint64(r.part.PriorityJobFactor) })
		case 't', 'T':
			cmp = func(a, b *rec) int { return int(int32(a.nodeState)) - int(int32(b.nodeState)) }
		case 'u', 'U':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.reasonUID), uint64(b.reasonUID)) }
		case 'V':
			cmp = func(a, b *rec) int { return 0 }
		case 'w':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.minWeight), uint64(b.minWeight)) }
		case 'X':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.minSockets), uint64(b.minSockets)) }
		case 'Y':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.minCores), uint64(b.minCores)) }
		case 'Z':
			cmp = func(a, b *rec) int { return cmpU(uint64(a.minThreads), uint64(b.minThreads)) }
		case 'z':
			cmp = func(a, b *rec) int {
				if d := cmpU(uint64(a.minSockets), uint64(b.minSockets)); d != 0 {
					return d
				}
				if d := cmpU(uint64(a.minCores), uint64(b.minCores)); d != 0 {
					return d
				}
				return cmpU(uint64(a.minThreads), uint64(b.minThreads))
			}
		default:
			continue
		}
		if reverse {
			inner := cmp
			cmp = func(a, b *rec) int { return -inner(a, b) }
		}
		sc.MergeSort(recs, cmp)
	}
}
