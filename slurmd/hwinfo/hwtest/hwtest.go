// Package hwtest builds fake sysfs/procfs trees for testing hardware
// detection: as an fstest.MapFS for hwinfo, or written to a directory for
// hwloc's HWLOC_FSROOT so the real slurmd reads the same machine.
package hwtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing/fstest"
)

// CPU is one logical CPU of a fake machine.
type CPU struct {
	ID      int
	Package int // physical_package_id
	Core    int // core_id
	Offline bool
	// Siblings overrides the thread siblings (core_cpus); nil means the
	// online CPUs with the same Package and Core.
	Siblings []int
	// PackageCPUs overrides package_cpus; nil means the online CPUs with
	// the same Package.
	PackageCPUs []int
}

// Machine is a fake machine.
type Machine struct {
	CPUs []CPU
	// NoTopology leaves out every cpuN/topology directory.
	NoTopology bool
	// OldNames writes only thread_siblings and core_siblings (kernels
	// before 5.4) instead of core_cpus and package_cpus as well.
	OldNames bool
	// NoOnlineList leaves out /sys/devices/system/cpu/online; offline
	// CPUs then say so in cpuN/online.
	NoOnlineList bool
	// MemTotalKB is /proc/meminfo's MemTotal; 0 leaves meminfo out.
	MemTotalKB uint64
	// Uptime is /proc/uptime's content; "" leaves it out.
	Uptime string
	// CPUInfo is /proc/cpuinfo's content; "" leaves it out.
	CPUInfo string
	// Arch is the machine architecture hwloc assumes for a tree that is
	// not the running system (it then parses CPUInfo for that
	// architecture); "" is none.
	Arch string
}

// Regular returns a machine of sockets x cores x threads numbered as
// Linux does on x86: thread t of core c of socket s is CPU
// t*(sockets*cores) + s*cores + c, with core_id c*coreIDStep.
func Regular(sockets, cores, threads, coreIDStep int) Machine {
	var m Machine
	per := sockets * cores
	for t := 0; t < threads; t++ {
		for s := 0; s < sockets; s++ {
			for c := 0; c < cores; c++ {
				m.CPUs = append(m.CPUs, CPU{ID: t*per + s*cores + c, Package: s, Core: c * coreIDStep})
			}
		}
	}
	sort.Slice(m.CPUs, func(i, j int) bool { return m.CPUs[i].ID < m.CPUs[j].ID })
	return m
}

// mask formats ids as the kernel's hexadecimal cpumask for width CPUs.
func mask(ids []int, width int) string {
	words := (width + 31) / 32
	if words == 0 {
		words = 1
	}
	w := make([]uint32, words)
	for _, id := range ids {
		if id/32 < words {
			w[id/32] |= 1 << (id % 32)
		}
	}
	parts := make([]string, words)
	for i := range w {
		parts[words-1-i] = fmt.Sprintf("%08x", w[i])
	}
	s := strings.Join(parts, ",")
	if words == 1 {
		// The kernel prints only as many digits as the width needs.
		digits := (width + 3) / 4
		if digits < 1 {
			digits = 1
		}
		s = s[8-digits:]
	}
	return s
}

// list formats ids as the kernel's cpu list ("0-3,6").
func list(ids []int) string {
	ids = append([]int(nil), ids...)
	sort.Ints(ids)
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(ids[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Files returns the tree as slash paths relative to the root.
func (m Machine) Files() map[string]string {
	files := map[string]string{}
	base := "sys/devices/system/cpu"
	width := 0
	var online, offline []int
	for _, c := range m.CPUs {
		if c.ID+1 > width {
			width = c.ID + 1
		}
		if c.Offline {
			offline = append(offline, c.ID)
		} else {
			online = append(online, c.ID)
		}
	}
	if !m.NoOnlineList {
		files[base+"/online"] = list(online) + "\n"
		files[base+"/offline"] = list(offline) + "\n"
	}
	files[base+"/possible"] = list(append(append([]int(nil), online...), offline...)) + "\n"
	for _, c := range m.CPUs {
		dir := fmt.Sprintf("%s/cpu%d", base, c.ID)
		if c.ID != 0 || c.Offline {
			st := "1"
			if c.Offline {
				st = "0"
			}
			files[dir+"/online"] = st + "\n"
		}
		if c.Offline || m.NoTopology {
			files[dir+"/uevent"] = ""
			continue
		}
		sib, pkg := c.Siblings, c.PackageCPUs
		for _, o := range m.CPUs {
			if o.Offline {
				continue
			}
			if c.Siblings == nil && o.Package == c.Package && o.Core == c.Core {
				sib = append(sib, o.ID)
			}
			if c.PackageCPUs == nil && o.Package == c.Package {
				pkg = append(pkg, o.ID)
			}
		}
		top := dir + "/topology/"
		files[top+"physical_package_id"] = strconv.Itoa(c.Package) + "\n"
		files[top+"core_id"] = strconv.Itoa(c.Core) + "\n"
		files[top+"thread_siblings"] = mask(sib, width) + "\n"
		files[top+"thread_siblings_list"] = list(sib) + "\n"
		files[top+"core_siblings"] = mask(pkg, width) + "\n"
		files[top+"core_siblings_list"] = list(pkg) + "\n"
		if !m.OldNames {
			files[top+"core_cpus"] = mask(sib, width) + "\n"
			files[top+"core_cpus_list"] = list(sib) + "\n"
			files[top+"package_cpus"] = mask(pkg, width) + "\n"
			files[top+"package_cpus_list"] = list(pkg) + "\n"
		}
	}
	if m.MemTotalKB > 0 {
		files["proc/meminfo"] = fmt.Sprintf("MemTotal:       %d kB\nMemFree:         1000 kB\n", m.MemTotalKB)
	}
	if m.Uptime != "" {
		files["proc/uptime"] = m.Uptime
	}
	if m.CPUInfo != "" {
		files["proc/cpuinfo"] = m.CPUInfo
	}
	// hwloc reads this file only when its root is not the running
	// system: what uname and sysconf would have said there.
	info := fmt.Sprintf("FallbackNbProcessors: %d\n", len(online))
	if m.Arch != "" {
		info += "Architecture: " + m.Arch + "\n"
	}
	files["proc/hwloc-nofile-info"] = info
	return files
}

// MapFS returns the tree as an in-memory file system.
func (m Machine) MapFS() fstest.MapFS {
	out := fstest.MapFS{}
	for name, data := range m.Files() {
		out[name] = &fstest.MapFile{Data: []byte(data), Mode: 0o444}
	}
	return out
}

// WriteDir writes the tree under dir.
func (m Machine) WriteDir(dir string) error {
	for name, data := range m.Files() {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
			return err
		}
	}
	// Offline and topology-less CPUs still have their directory.
	for _, c := range m.CPUs {
		if err := os.MkdirAll(filepath.Join(dir, "sys/devices/system/cpu", "cpu"+strconv.Itoa(c.ID)), 0o755); err != nil {
			return err
		}
	}
	return nil
}
