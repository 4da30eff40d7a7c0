package hwinfo

import (
	"fmt"
	"io/fs"
	"sort"
)

// Layout is a node's CPU shape as slurmd reports it.
type Layout struct {
	CPUs   int
	Boards int
	// Sockets is the total over all boards; slurmd -C prints
	// SocketsPerBoard = Sockets / Boards.
	Sockets        int
	CoresPerSocket int
	ThreadsPerCore int
}

// PU is one online logical CPU in Slurm's abstract order.
type PU struct {
	// Abstract is Slurm's abstract CPU id: socket-major, then core, then
	// thread (Abstract = (Socket*CoresPerSocket+Core)*ThreadsPerCore+Thread
	// on a regular machine).
	Abstract int
	// OS is the kernel's CPU id (what sched_setaffinity and cpuset.cpus
	// take).
	OS int
	// Socket, Core and Thread are logical positions: the socket among
	// sockets holding cores, the core within its socket, the thread
	// within its core. -1 when hwloc found no socket or core for the PU.
	Socket, Core, Thread int
	// PackageID and CoreID are the kernel's physical_package_id and
	// core_id (-1 if unknown).
	PackageID, CoreID int
}

// Topology is what slurmd's hardware detection (xcpuinfo_hwloc_topo_get)
// yields: the layout and the abstract <-> machine CPU maps.
type Topology struct {
	Layout
	// BlockMap maps abstract CPU ids to OS CPU ids and BlockMapInv OS ids
	// to abstract ids, exactly as slurmd builds them: both have CPUs
	// entries, start as the identity, and skip any CPU whose OS id (or
	// abstract id) is >= CPUs. With offline CPUs in the middle of the
	// numbering Slurm therefore leaves identity entries that name
	// offline CPUs; AbsToOS and OSToAbs do not.
	BlockMap    []int
	BlockMapInv []int
	// PUs lists every PU found, in abstract order.
	PUs []PU
	// Source says where the topology came from: "sysfs", "cpuinfo" (no
	// sysfs topology; /proc/cpuinfo ids, what hwloc reads from cpuid on
	// x86) or "fallback" (PUs only).
	Source string
	// Errors are the messages slurmd logs at error level for this shape
	// ("Thread count (%d) not multiple of core count (%d)", ...).
	Errors []string
}

// ReadTopology detects the CPU topology under root (a file system holding
// sys/devices/system/cpu and proc/cpuinfo; os.DirFS("/") for this
// machine).
func ReadTopology(root fs.FS) *Topology {
	return fromTree(readTree(root))
}

// fromTree is xcpuinfo_hwloc_topo_get's arithmetic over hwloc's objects.
func fromTree(t *hwTree) *Topology {
	top := &Topology{Source: t.source}
	coresIn := make([][]object, len(t.packages))
	socketCount := 0
	var used []int // indexes of packages holding cores
	for i, p := range t.packages {
		for _, c := range t.cores {
			if c.set.subsetOf(p.set) {
				coresIn[i] = append(coresIn[i], c)
			}
		}
		if len(coresIn[i]) > 0 {
			socketCount++
			used = append(used, i)
		}
	}
	coreCount := len(t.cores)
	if socketCount == 0 {
		// hwloc gave sockets without cores, or nothing: every package
		// counts, and at least one.
		socketCount = len(t.packages)
		if socketCount == 0 {
			socketCount = 1
		}
		used = used[:0]
		for i := 0; i < socketCount && i < len(t.packages); i++ {
			used = append(used, i)
		}
	}
	if coreCount == 0 {
		coreCount = 1
	}
	cpus := len(t.pus)
	if cpus%coreCount != 0 {
		top.Errors = append(top.Errors, fmt.Sprintf("Thread count (%d) not multiple of core count (%d)", cpus, coreCount))
	}
	threads := cpus / coreCount
	if coreCount%socketCount != 0 {
		top.Errors = append(top.Errors, fmt.Sprintf("Core count (%d) not multiple of socket count (%d)", coreCount, socketCount))
	}
	top.Layout = Layout{CPUs: cpus, Boards: 1, Sockets: socketCount, CoresPerSocket: coreCount / socketCount, ThreadsPerCore: threads}

	top.BlockMap = make([]int, cpus)
	top.BlockMapInv = make([]int, cpus)
	for i := range top.BlockMap {
		top.BlockMap[i] = i
		top.BlockMapInv[i] = i
	}
	// PUs: Slurm's abstract id where its formula gives one, then the
	// free ids in order for PUs Slurm leaves out (irregular cores, PUs
	// outside any core).
	placed := map[int]bool{}
	taken := map[int]bool{}
	var pending []PU
	usedCore := -1
	for s, pi := range used {
		for ci, c := range coresIn[pi] {
			usedCore++
			th := 0
			for _, mac := range t.pus {
				if !c.set.has(mac) {
					continue
				}
				abs := usedCore*threads + th
				inRange := th < threads && abs < cpus
				if inRange && mac < cpus {
					top.BlockMap[abs] = mac
					top.BlockMapInv[mac] = abs
				}
				if !placed[mac] {
					placed[mac] = true
					p := PU{Abstract: -1, OS: mac, Socket: s, Core: ci, Thread: th, PackageID: t.packages[pi].os, CoreID: c.os}
					if inRange && !taken[abs] {
						p.Abstract = abs
						taken[abs] = true
						top.PUs = append(top.PUs, p)
					} else {
						pending = append(pending, p)
					}
				}
				th++
			}
		}
	}
	for _, pu := range t.pus {
		if placed[pu] {
			continue
		}
		p := PU{Abstract: -1, OS: pu, Socket: -1, Core: -1, Thread: -1, PackageID: -1, CoreID: -1}
		if len(t.cores) == 0 {
			// PUs only: one socket, one core, every PU a thread.
			p.Socket, p.Core, p.Thread = 0, 0, len(pending)
		}
		pending = append(pending, p)
	}
	next := 0
	for _, p := range pending {
		for taken[next] {
			next++
		}
		p.Abstract = next
		taken[next] = true
		top.PUs = append(top.PUs, p)
	}
	sort.Slice(top.PUs, func(i, j int) bool { return top.PUs[i].Abstract < top.PUs[j].Abstract })
	return top
}

// AbsToOS maps every abstract CPU id to its OS CPU id (socket-major,
// core, thread order of the online PUs). Unlike BlockMap it names no
// offline CPU.
func (t *Topology) AbsToOS() []int {
	out := make([]int, len(t.PUs))
	for i, p := range t.PUs {
		out[i] = p.OS
	}
	return out
}

// OSToAbs is the inverse of AbsToOS, keyed by OS CPU id.
func (t *Topology) OSToAbs() map[int]int {
	out := make(map[int]int, len(t.PUs))
	for _, p := range t.PUs {
		out[p.OS] = p.Abstract
	}
	return out
}
