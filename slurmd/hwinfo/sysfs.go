package hwinfo

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// The functions here rebuild the part of hwloc 2.9's Linux discovery that
// slurmd's xcpuinfo_hwloc_topo_get looks at: Package, Core and PU objects,
// each with its cpuset and OS index. They read the same files hwloc reads,
// in the same order, so odd trees (offline CPUs, holes, old kernels) give
// the objects hwloc would give.

const sysCPU = "sys/devices/system/cpu"

// object is one hwloc Package or Core: its OS index (-1 when the id file
// is unreadable) and its CPUs.
type object struct {
	os  int
	set cpuSet
}

// hwTree is what hwloc found: Packages and Cores in hwloc's logical order
// (ascending first CPU), PUs ascending.
type hwTree struct {
	packages []object
	cores    []object
	pus      cpuSet
	source   string
}

var errNoSysfsTopology = errors.New("no sysfs cpu topology")

func readString(fsys fs.FS, name string) (string, bool) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", false
	}
	return string(b), true
}

func exists(fsys fs.FS, name string) bool {
	_, err := fs.Stat(fsys, name)
	return err == nil
}

// readInt reads a sysfs integer the way hwloc does (a leading number; -1
// when the file is missing or holds none).
func readInt(fsys fs.FS, name string) int {
	s, ok := readString(fsys, name)
	if !ok {
		return -1
	}
	s = strings.TrimSpace(s)
	end := 0
	if end < len(s) && s[end] == '-' {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(s[:end])
	if err != nil {
		return -1
	}
	return n
}

func cpuPath(cpu int, file string) string {
	return path.Join(sysCPU, "cpu"+strconv.Itoa(cpu), "topology", file)
}

// sysfsNames says which file names hwloc reads: the new ones (core_cpus,
// package_cpus) or the old ones (thread_siblings, core_siblings). ok is
// false when neither cpu0 nor the first online CPU has either, in which
// case hwloc gives up on the Linux topology.
func sysfsNames(fsys fs.FS) (old, ok bool) {
	probe := func(cpu int) (bool, bool) {
		if exists(fsys, cpuPath(cpu, "package_cpus")) || exists(fsys, cpuPath(cpu, "core_cpus")) {
			return false, true
		}
		if exists(fsys, cpuPath(cpu, "core_siblings")) || exists(fsys, cpuPath(cpu, "thread_siblings")) {
			return true, true
		}
		return false, false
	}
	if !exists(fsys, sysCPU) {
		return false, false
	}
	if old, ok := probe(0); ok {
		return old, true
	}
	first := readInt(fsys, path.Join(sysCPU, "online"))
	if first < 0 {
		return false, false
	}
	return probe(first)
}

// cpuDirID returns N for a directory entry "cpuN" (hwloc's strtoul on what
// follows "cpu"), or -1.
func cpuDirID(name string) int {
	if !strings.HasPrefix(name, "cpu") {
		return -1
	}
	digits := name[3:]
	end := 0
	for end < len(digits) && digits[end] >= '0' && digits[end] <= '9' {
		end++
	}
	if end == 0 {
		return -1
	}
	n, err := strconv.Atoi(digits[:end])
	if err != nil {
		return -1
	}
	return n
}

// cpuDirs lists the cpuN directories.
func cpuDirs(fsys fs.FS) []int {
	ents, err := fs.ReadDir(fsys, sysCPU)
	if err != nil {
		return nil
	}
	var ids []int
	for _, e := range ents {
		if id := cpuDirID(e.Name()); id >= 0 {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids
}

// usableCPUs is hwloc's set of CPUs it reads topology for: online (the
// global online list, else each cpuN/online file) and with a topology
// directory.
func usableCPUs(fsys fs.FS) cpuSet {
	var online cpuSet
	haveOnline := false
	if s, ok := readString(fsys, path.Join(sysCPU, "online")); ok {
		if set, err := parseCPUList(s); err == nil {
			online, haveOnline = set, true
		}
	}
	var out cpuSet
	for _, id := range cpuDirs(fsys) {
		if haveOnline {
			if !online.has(id) {
				continue
			}
		} else if s, ok := readString(fsys, path.Join(sysCPU, "cpu"+strconv.Itoa(id), "online")); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n == 0 {
				continue
			}
		}
		if !exists(fsys, path.Join(sysCPU, "cpu"+strconv.Itoa(id), "topology")) {
			continue
		}
		out = append(out, id)
	}
	return out
}

// amdWithComputeUnits reports hwloc's is_amd_with_CU quirk: AMD family 15h
// and 16h list the two cores of a compute unit as thread siblings.
func amdWithComputeUnits(fsys fs.FS) bool {
	procs := parseCPUInfo(fsys)
	if len(procs) == 0 {
		return false
	}
	return procs[0].vendor == "AuthenticAMD" && (procs[0].family == "21" || procs[0].family == "22")
}

// inserter keeps hwloc's rule for objects whose cpusets overlap without
// one including the other: the object being inserted is dropped. Equal
// cpusets of the same type merge into the first.
type inserter struct {
	kinds []string
	sets  []cpuSet
}

func (in *inserter) insert(kind string, set cpuSet) bool {
	for i, s := range in.sets {
		inter := s.and(set)
		if len(inter) == 0 {
			continue
		}
		if s.equal(set) && in.kinds[i] == kind {
			return false
		}
		if !set.subsetOf(s) && !s.subsetOf(set) {
			return false
		}
	}
	in.kinds = append(in.kinds, kind)
	in.sets = append(in.sets, set)
	return true
}

// readSysfs builds the tree from /sys/devices/system/cpu as hwloc's
// look_sysfscpu does.
func readSysfs(fsys fs.FS) (*hwTree, error) {
	old, ok := sysfsNames(fsys)
	if !ok {
		return nil, errNoSysfsTopology
	}
	coreFile, pkgFile := "core_cpus", "package_cpus"
	if old {
		coreFile, pkgFile = "thread_siblings", "core_siblings"
	}
	usable := usableCPUs(fsys)
	threadWithCoreID := 0 // -1: not known yet (AMD compute units)
	if amdWithComputeUnits(fsys) {
		threadWithCoreID = -1
	}
	t := &hwTree{source: "sysfs"}
	var in inserter
	readMask := func(cpu int, file string) (cpuSet, bool) {
		s, ok := readString(fsys, cpuPath(cpu, file))
		if !ok {
			return nil, false
		}
		set, err := parseCPUMask(s)
		if err != nil {
			return nil, false
		}
		return set.and(usable), true
	}
	for _, cpu := range usable {
		notFirstOfCore := false
		if coreSet, ok := readMask(cpu, coreFile); ok {
			if len(coreSet) > 1 && threadWithCoreID == -1 {
				mine := readInt(fsys, cpuPath(cpu, "core_id"))
				sib := coreSet[0]
				if sib == cpu {
					sib = coreSet[1]
				}
				if readInt(fsys, cpuPath(sib, "core_id")) != mine {
					threadWithCoreID = 1
				} else {
					threadWithCoreID = 0
				}
			}
			notFirstOfCore = coreSet.first() != cpu
			if !notFirstOfCore || threadWithCoreID != 0 {
				if threadWithCoreID != 0 {
					coreSet = cpuSet{cpu}
				}
				if in.insert("core", coreSet) {
					t.cores = append(t.cores, object{os: readInt(fsys, cpuPath(cpu, "core_id")), set: coreSet})
				}
			}
		}
		if !notFirstOfCore {
			if pkgSet, ok := readMask(cpu, pkgFile); ok && pkgSet.first() == cpu {
				if in.insert("package", pkgSet) {
					t.packages = append(t.packages, object{os: readInt(fsys, cpuPath(cpu, "physical_package_id")), set: pkgSet})
				}
			}
		}
		t.pus = append(t.pus, cpu)
	}
	sortObjects(t.packages)
	sortObjects(t.cores)
	return t, nil
}

func sortObjects(objs []object) {
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].set.first() < objs[j].set.first() })
}

// cpuInfoProc is one "processor" block of /proc/cpuinfo.
type cpuInfoProc struct {
	id, physID, coreID int
	vendor, family     string
}

func parseCPUInfo(fsys fs.FS) []cpuInfoProc {
	b, err := fs.ReadFile(fsys, "proc/cpuinfo")
	if err != nil {
		return nil
	}
	var out []cpuInfoProc
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if key == "processor" {
			id, err := strconv.Atoi(val)
			if err != nil {
				id = len(out)
			}
			out = append(out, cpuInfoProc{id: id, physID: -1, coreID: -1})
			continue
		}
		if len(out) == 0 {
			continue
		}
		p := &out[len(out)-1]
		n, nerr := strconv.Atoi(val)
		switch key {
		case "vendor_id":
			p.vendor = val
		case "cpu family":
			p.family = val
		case "physical id":
			if nerr == nil {
				p.physID = n
			}
		case "core id":
			if nerr == nil {
				p.coreID = n
			}
		}
	}
	return out
}

// readCPUInfo is the fallback for a kernel without sysfs topology. On x86
// hwloc then asks the processor itself (cpuid), which yields the packages
// and cores the kernel lists in /proc/cpuinfo as "physical id" and "core
// id"; elsewhere hwloc has PUs only. ok is false when cpuinfo has no
// package and core ids.
func readCPUInfo(fsys fs.FS) (*hwTree, bool) {
	procs := parseCPUInfo(fsys)
	if len(procs) == 0 {
		return nil, false
	}
	type key struct{ phys, core int }
	pkgSets := map[int]cpuSet{}
	coreSets := map[key]cpuSet{}
	t := &hwTree{source: "cpuinfo"}
	for _, p := range procs {
		if p.physID < 0 || p.coreID < 0 {
			return nil, false
		}
		pkgSets[p.physID] = append(pkgSets[p.physID], p.id)
		k := key{p.physID, p.coreID}
		coreSets[k] = append(coreSets[k], p.id)
		t.pus = append(t.pus, p.id)
	}
	sort.Ints(t.pus)
	for id, set := range pkgSets {
		sort.Ints(set)
		t.packages = append(t.packages, object{os: id, set: set})
	}
	for k, set := range coreSets {
		sort.Ints(set)
		t.cores = append(t.cores, object{os: k.core, set: set})
	}
	sortObjects(t.packages)
	sortObjects(t.cores)
	return t, true
}

// puOnly is hwloc's last resort: as many PUs as online CPUs, numbered from
// 0, with no packages or cores.
func puOnly(fsys fs.FS) *hwTree {
	n := 0
	if s, ok := readString(fsys, path.Join(sysCPU, "online")); ok {
		if set, err := parseCPUList(s); err == nil {
			n = len(set)
		}
	}
	if n == 0 {
		n = len(cpuDirs(fsys))
	}
	if n == 0 {
		n = 1
	}
	t := &hwTree{source: "fallback"}
	for i := 0; i < n; i++ {
		t.pus = append(t.pus, i)
	}
	return t
}

// readTree tries sysfs, then cpuinfo, then PUs only.
func readTree(fsys fs.FS) *hwTree {
	if t, err := readSysfs(fsys); err == nil && len(t.pus) > 0 {
		return t
	}
	if t, ok := readCPUInfo(fsys); ok {
		return t
	}
	return puOnly(fsys)
}
