package cgroup

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
)

// CPUMap is slurmd's abstract-to-machine CPU mapping (conf->block_map):
// abstract CPU a = core*Threads + thread is machine CPU BlockMap[a]. A nil
// BlockMap is the identity.
type CPUMap struct {
	Threads  int   // threads per core (>= 1)
	BlockMap []int // len = CPUs on the node
}

// AbsToMac turns abstract core ids into the sorted machine CPU ids of all
// their threads, as Slurm's xcpuinfo_abs_to_mac does (ids wrap modulo the
// CPU count exactly like Slurm's).
func (m CPUMap) AbsToMac(cores []int, totalCPUs int) []int {
	threads := max(m.Threads, 1)
	if len(m.BlockMap) > 0 {
		totalCPUs = len(m.BlockMap)
	}
	if totalCPUs <= 0 {
		return nil
	}
	seen := make([]bool, totalCPUs)
	for _, c := range cores {
		for t := 0; t < threads; t++ {
			abs := (c*threads + t) % totalCPUs
			mac := abs
			if len(m.BlockMap) > 0 {
				mac = m.BlockMap[abs] % totalCPUs
			}
			seen[mac] = true
		}
	}
	var out []int
	for i, ok := range seen {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// FormatCPUList prints ids as a kernel/Slurm range list ("0-2,5").
func FormatCPUList(ids []int) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ParseCPUList reads a range list ("0-2,5", "" = none).
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cgroup: bad cpu list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cgroup: bad cpu list %q", s)
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

// Device is one device rule, Slurm's gres_device dev_desc: type 'c' or
// 'b', major and minor (-1 = any), and whether the job may use it.
type Device struct {
	Type    byte
	Major   int64
	Minor   int64
	Allowed bool
}

// String is the devices.allow/deny line ("c 195:0 rwm"), as Slurm's
// gres_device_id2str prints it.
func (d Device) String() string {
	num := func(n int64) string {
		if n < 0 {
			return "*"
		}
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprintf("%c %s:%s rwm", d.Type, num(d.Major), num(d.Minor))
}

// Node holds the node facts the limits depend on.
type Node struct {
	// RealMemoryMB is slurmd's conf->real_memory_size: the node's
	// RealMemory in MB. Unlimited jobs get this much, and MaxRAMPercent /
	// MaxSwapPercent are taken of it.
	RealMemoryMB uint64
	// CPUs is the node's CPU count (the BlockMap length when CPUMap has
	// one).
	CPUs   int
	CPUMap CPUMap
}

// Allocation is what the credential grants the job and the step.
type Allocation struct {
	JobCores, StepCores []int  // abstract core ids
	JobMemMB, StepMemMB uint64 // 0 = no memory limit requested
	// JobDevices / StepDevices are the GRES devices of the node with
	// Allowed set for those allocated (Slurm allows the allocated ones and
	// denies the others; devices that are not GRES stay accessible).
	JobDevices, StepDevices []Device
}

// MemoryLimits are the memory cgroup values of one level, in bytes.
type MemoryLimits struct {
	Limit     uint64 // v1 memory.limit_in_bytes, v2 memory.max
	SoftLimit uint64 // v1 memory.soft_limit_in_bytes, v2 memory.high
	// MemSwap is the RAM+swap limit (v1 memory.memsw.limit_in_bytes); 0 =
	// not set (ConstrainSwapSpace=no). v2 gets MemSwap-Limit in
	// memory.swap.max.
	MemSwap uint64
	Kmem    uint64 // v1 memory.kmem.limit_in_bytes; 0 = not set
	// Swappiness is memory.swappiness (v1, job level only); nil = not set.
	Swappiness *uint64
}

// Constraints are the limits task/cgroup puts on a step and its job.
// A false Cores/Memory/Devices means the controller is not used at all.
type Constraints struct {
	Cores             bool
	JobCPUs, StepCPUs string // machine CPU lists for cpuset.cpus

	Memory                bool
	JobMemory, StepMemory MemoryLimits

	Devices                 bool
	JobDevices, StepDevices []Device
}

// ErrNoMemory is returned when memory is constrained but the node's real
// memory is unknown (Slurm logs "Unable to get RealMemory size").
var ErrNoMemory = errors.New("cgroup: Unable to get RealMemory size")

// Compute turns cgroup.conf and an allocation into constraints, with
// Slurm 22.05's task/cgroup formulas. It does no I/O.
func Compute(cfg *conf.CgroupConfig, node Node, id StepID, a Allocation) (Constraints, error) {
	var c Constraints
	if cfg.ConstrainCores {
		c.Cores = true
		c.JobCPUs = FormatCPUList(node.CPUMap.AbsToMac(a.JobCores, node.CPUs))
		c.StepCPUs = FormatCPUList(node.CPUMap.AbsToMac(a.StepCores, node.CPUs))
		if c.JobCPUs == "" || c.StepCPUs == "" {
			return Constraints{}, fmt.Errorf("cgroup: no CPU allocated (job %q, step %q)", c.JobCPUs, c.StepCPUs)
		}
	}
	if cfg.ConstrainRAMSpace || cfg.ConstrainSwapSpace {
		if node.RealMemoryMB == 0 {
			return Constraints{}, ErrNoMemory
		}
		m := newMemCalc(cfg, node.RealMemoryMB)
		c.Memory = true
		c.JobMemory = m.limits(a.JobMemMB, true)
		c.StepMemory = m.limits(a.StepMemMB, false)
	}
	if cfg.ConstrainDevices {
		c.Devices = true
		c.JobDevices = slices.Clone(a.JobDevices)
		if !id.IsSpecial() {
			c.StepDevices = slices.Clone(a.StepDevices)
		}
	}
	return c, nil
}

// memCalc holds task_cgroup_memory's derived values, in bytes.
type memCalc struct {
	cfg         *conf.CgroupConfig
	totalMB     uint64
	allowedRAM  float64 // percent
	allowedSwap float64 // percent
	maxRAM      uint64
	maxSwap     uint64 // RAM+swap ceiling
	minRAM      uint64
	minKmem     uint64
}

// pct mirrors Slurm's percent_in_bytes: the percent is a C float (so
// rounded to float32) and the product of doubles is truncated.
func pct(mb uint64, percent float64) uint64 {
	return uint64(float64(mb*1024*1024) * (float64(float32(percent)) / 100.0))
}

func newMemCalc(cfg *conf.CgroupConfig, totalMB uint64) memCalc {
	m := memCalc{cfg: cfg, totalMB: totalMB, allowedRAM: 100, allowedSwap: cfg.AllowedSwapSpace}
	// Without ConstrainRAMSpace the RAM part of the mem+swap value is the
	// full request.
	if cfg.ConstrainRAMSpace {
		m.allowedRAM = cfg.AllowedRAMSpace
	}
	m.maxRAM = pct(totalMB, cfg.MaxRAMPercent)
	m.maxSwap = pct(totalMB, cfg.MaxSwapPercent) + m.maxRAM
	m.minRAM = uint64(cfg.MinRAMSpace) * 1024 * 1024
	m.minKmem = uint64(cfg.MinKmemSpace) * 1024 * 1024
	return m
}

// memLimit is mem_limit_in_bytes: 0 MB means the whole node (without the
// allowed percent), then clamp to [MinRAMSpace, MaxRAMPercent].
func (m memCalc) memLimit(mb uint64, withAllowed bool) uint64 {
	var b uint64
	switch {
	case mb == 0:
		b = m.totalMB * 1024 * 1024
	case withAllowed:
		b = pct(mb, m.allowedRAM)
	default:
		b = pct(mb, 100)
	}
	if b < m.minRAM {
		return m.minRAM
	}
	if b > m.maxRAM {
		return m.maxRAM
	}
	return b
}

// swapLimit is swap_limit_in_bytes: RAM limit plus AllowedSwapSpace percent
// of the request (of the node when unlimited), clamped to
// [MinRAMSpace, MaxRAMPercent+MaxSwapPercent].
func (m memCalc) swapLimit(mb uint64) uint64 {
	base := mb
	if base == 0 {
		base = m.totalMB
	}
	b := m.memLimit(mb, true) + pct(base, m.allowedSwap)
	if b < m.minRAM {
		return m.minRAM
	}
	if b > m.maxSwap {
		return m.maxSwap
	}
	return b
}

// kmemLimit is kmem_limit_in_bytes, including Slurm's comparison of
// AllowedKmemSpace (a byte count) with byte values.
func (m memCalc) kmemLimit(mlb uint64) uint64 {
	total := uint64(float64(mlb) * (float64(float32(m.cfg.MaxKmemPercent)) / 100.0))
	allowed := float64(float32(m.cfg.AllowedKmemSpace))
	if allowed < 0 {
		if mlb > total {
			return total
		}
		if mlb < m.minKmem {
			return m.minKmem
		}
		return mlb
	}
	if allowed > float64(total) {
		return total
	}
	if allowed < float64(m.minKmem) {
		return m.minKmem
	}
	return uint64(allowed)
}

// limits is _memcg_initialize for one level.
func (m memCalc) limits(mb uint64, jobLevel bool) MemoryLimits {
	mlb := m.memLimit(mb, true)
	soft := m.memLimit(mb, false)
	mls := m.swapLimit(mb)
	if soft > mlb {
		soft = mlb
	}
	if !m.cfg.ConstrainRAMSpace {
		// Only swap is constrained: RAM may use the whole mem+swap.
		mlb = mls
	}
	l := MemoryLimits{Limit: mlb, SoftLimit: soft}
	if m.cfg.ConstrainKmemSpace {
		l.Kmem = m.kmemLimit(mlb)
	}
	if m.cfg.ConstrainSwapSpace {
		l.MemSwap = mls
		// Slurm writes swappiness at the job level only, and only when
		// MemorySwappiness is set.
		if jobLevel && m.cfg.MemorySwappiness <= 100 {
			v := m.cfg.MemorySwappiness
			l.Swappiness = &v
		}
	}
	return l
}
