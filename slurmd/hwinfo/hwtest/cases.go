package hwtest

import (
	"fmt"
	"strings"
)

// Case is a named fake machine.
type Case struct {
	Name    string
	Machine Machine
}

// Cases are the machine shapes the hwinfo tests and the differential test
// against the real slurmd share. Every Machine has at most 64 CPUs.
func Cases() []Case {
	offline := Regular(2, 2, 2, 1) // CPUs 0-7; 5 is thread 1 of socket 0 core 1
	offline.CPUs[5].Offline = true

	hole := Regular(1, 4, 1, 1) // CPU 1 offline: OS ids 0,2,3
	hole.CPUs[1].Offline = true

	oddIDs := Regular(2, 3, 2, 4) // core_id 0,4,8
	for i := range oddIDs.CPUs {
		oddIDs.CPUs[i].Package = []int{7, 3}[oddIDs.CPUs[i].Package]
	}

	// Threads of a core numbered next to each other (AMD, many ARM).
	adjacent := Machine{}
	for id := 0; id < 8; id++ {
		adjacent.CPUs = append(adjacent.CPUs, CPU{ID: id, Package: id / 4, Core: (id % 4) / 2})
	}

	old := Regular(2, 2, 2, 1)
	old.OldNames = true

	noList := Regular(1, 2, 2, 1)
	noList.NoOnlineList = true
	noList.CPUs[3].Offline = true

	big := Regular(2, 16, 2, 1) // 64 CPUs: two-word cpumasks

	cpu0Off := Regular(1, 4, 1, 1)
	cpu0Off.CPUs[0].Offline = true

	// Sockets listed against the CPU numbering: package 1 holds CPU 0.
	swapped := Regular(2, 2, 1, 1)
	for i := range swapped.CPUs {
		swapped.CPUs[i].Package = 1 - swapped.CPUs[i].Package
	}

	// AMD family 15h compute units: two cores share a "thread sibling"
	// mask but keep their own core_id, and hwloc makes them two cores.
	// The same files from another vendor are one core of two threads.
	cu := func(vendor, family string) Machine {
		m := Machine{CPUInfo: cpuInfo(4, vendor, family), Arch: "x86_64"}
		for id := 0; id < 4; id++ {
			m.CPUs = append(m.CPUs, CPU{ID: id, Core: id, Siblings: []int{id &^ 1, id | 1}})
		}
		return m
	}

	return []Case{
		{"this-shape-1x2x1", Regular(1, 2, 1, 1)},
		{"two-socket-ht-2x4x2", Regular(2, 4, 2, 1)},
		{"offline-sibling", offline},
		{"offline-hole", hole},
		{"odd-core-and-package-ids", oddIDs},
		{"adjacent-threads", adjacent},
		{"old-file-names", old},
		{"no-online-list", noList},
		{"64-cpus", big},
		{"cpu0-offline", cpu0Off},
		{"swapped-packages", swapped},
		{"amd-compute-units", cu("AuthenticAMD", "21")},
		{"intel-shared-siblings", cu("GenuineIntel", "6")},
	}
}

// NoTopology is a machine of n CPUs whose kernel exports no topology
// directories.
func NoTopology(n int) Machine {
	m := Machine{NoTopology: true}
	for id := 0; id < n; id++ {
		m.CPUs = append(m.CPUs, CPU{ID: id})
	}
	return m
}

// cpuInfo is a minimal x86 /proc/cpuinfo of n processors, all in package
// 0 with core id = processor.
func cpuInfo(n int, vendor, family string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "processor\t: %d\nvendor_id\t: %s\ncpu family\t: %s\nmodel\t\t: 1\nphysical id\t: 0\ncore id\t\t: %d\n\n", i, vendor, family, i)
	}
	return b.String()
}
