package sched

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/hostlist"
)

// Config is the part of slurm.conf a pass depends on.
type Config struct {
	// Backfill is true for SchedulerType=sched/backfill: Schedule then runs
	// the backfill pass after the main pass. The main pass is the same
	// either way: in a partition it stops at the first job that cannot
	// start for lack of resources (job_scheduler.c's fail_by_part), and
	// only the backfill pass looks past it.
	Backfill bool
	// WholeNodes is select/linear: jobs get whole nodes. Otherwise
	// select/cons_tres (or cons_res): cores, memory and GRES are consumed.
	WholeNodes bool
	// MemoryConsumable is a CR_*_Memory SelectTypeParameters: memory is
	// allocated and checked. Without it memory requests only have to fit
	// a node's RealMemory.
	MemoryConsumable bool
	// CPUsConsumable is CR_CPU or CR_CPU_Memory: a job is given the CPUs
	// (threads) its tasks use, not every thread of its cores. Cores are
	// still taken whole (cons_tres keeps one bit a core), so a core
	// another job has one thread of is not free.
	CPUsConsumable bool
	// CoreDistBlock is CR_Core_Default_Dist_Block: a node's cores go to
	// a job lowest first rather than cyclically over its sockets
	// (corepick.go).
	CoreDistBlock bool

	DefMemPerCPU  uint64 // MB, 0 = none
	DefMemPerNode uint64 // MB, 0 = none (then the whole node's memory)
	MaxMemPerCPU  uint64 // MB, 0 = unlimited
	MaxMemPerNode uint64 // MB, 0 = unlimited

	// SchedInterval is sched_interval (seconds between periodic main
	// passes, 60); DefaultQueueDepth is default_queue_depth (jobs the
	// event-triggered main pass tests, 100; 0 here means all). The package
	// does not time itself: a caller uses these to decide when and how to
	// call MainPass.
	SchedInterval     int64
	DefaultQueueDepth int

	// AllowZeroLic is allow_zero_lic: a submission asking for more of a
	// license than configured is accepted (it then waits with reason
	// Licenses for good). Read by the submit checks, not the passes.
	AllowZeroLic bool

	BF BackfillConfig

	// Preempt is PreemptType / PreemptMode and the preempt_* scheduler
	// parameters (preempt.go).
	Preempt PreemptConfig
}

// BackfillConfig is the bf_* part of SchedulerParameters, with 22.05's
// defaults.
type BackfillConfig struct {
	Interval       int64  // bf_interval, seconds between passes (30)
	Window         int64  // bf_window, seconds (from minutes; 1440 min)
	Resolution     int64  // bf_resolution, seconds (60)
	MaxJobTest     int    // bf_max_job_test (500); 0 = no limit
	MaxJobUser     int    // bf_max_job_user; 0 = no limit
	MaxJobPart     int    // bf_max_job_part; 0 = no limit
	MaxJobStart    int    // bf_max_job_start; 0 = no limit
	MinAgeReserve  int64  // bf_min_age_reserve, seconds pending before a job gets a reservation
	MinPrioReserve uint32 // bf_min_prio_reserve: jobs below it get no reservation
	// JobPartCountReserve is bf_job_part_count_reserve: reservations per
	// partition; jobs beyond it only try to start now. 0 = no limit.
	JobPartCountReserve int
	Continue            bool // bf_continue: a later pass resumes where this one stopped
	// OneResvPerJob is bf_one_resv_per_job: a job queued in several
	// partitions gets a reservation in the first one only (otherwise in
	// each partition where it cannot start now).
	OneResvPerJob bool
	BusyNodes     bool // bf_busy_nodes: reserve on busy nodes first
	// Licenses is bf_licenses: backfill plans license availability over
	// time and reserves licenses for the jobs it plans, and the main
	// pass stops at the first job blocked on licenses. It implies
	// RunningJobReserve (bf_running_job_reserve), which in this package
	// changes nothing else: running jobs are always in the plan.
	Licenses          bool
	RunningJobReserve bool
}

// DefaultConfig returns the 22.05 defaults (sched/backfill, cons_tres with
// memory, as most sites configure it).
func DefaultConfig() Config {
	return Config{
		Backfill:          true,
		MemoryConsumable:  true,
		SchedInterval:     60,
		DefaultQueueDepth: 100,
		BF:                DefaultBackfillConfig(),
	}
}

// DefaultBackfillConfig returns sched/backfill's defaults.
func DefaultBackfillConfig() BackfillConfig {
	return BackfillConfig{
		Interval:   30,
		Window:     1440 * 60,
		Resolution: 60,
		MaxJobTest: 500,
	}
}

// ParseSchedulerParameters applies the SchedulerParameters options this
// package understands to c; unknown options are ignored (they belong to
// other parts of slurmctld), malformed values are errors.
func ParseSchedulerParameters(c *Config, opts conf.Options) error {
	for _, o := range opts {
		name := strings.ToLower(o.Name)
		num := func() (int64, error) {
			v, err := strconv.ParseInt(strings.TrimSpace(o.Value), 10, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("SchedulerParameters: invalid %s=%q", o.Name, o.Value)
			}
			return v, nil
		}
		var v int64
		var err error
		switch name {
		case "bf_interval", "bf_window", "bf_resolution", "bf_max_job_test",
			"bf_max_job_user", "bf_max_job_part", "bf_max_job_start",
			"bf_min_age_reserve", "bf_min_prio_reserve", "bf_job_part_count_reserve", "default_queue_depth",
			"sched_interval":
			if v, err = num(); err != nil {
				return err
			}
		}
		switch name {
		case "bf_interval":
			c.BF.Interval = v
		case "bf_window":
			c.BF.Window = v * 60
		case "bf_resolution":
			c.BF.Resolution = max(v, 1)
		case "bf_max_job_test":
			c.BF.MaxJobTest = int(v)
		case "bf_max_job_user":
			c.BF.MaxJobUser = int(v)
		case "bf_max_job_part":
			c.BF.MaxJobPart = int(v)
		case "bf_max_job_start":
			c.BF.MaxJobStart = int(v)
		case "bf_min_age_reserve":
			c.BF.MinAgeReserve = v
		case "bf_min_prio_reserve":
			c.BF.MinPrioReserve = uint32(min(v, int64(^uint32(0))))
		case "bf_job_part_count_reserve":
			c.BF.JobPartCountReserve = int(v)
		case "bf_continue":
			c.BF.Continue = true
		case "bf_busy_nodes":
			c.BF.BusyNodes = true
		case "bf_one_resv_per_job":
			c.BF.OneResvPerJob = true
		case "allow_zero_lic":
			c.AllowZeroLic = true
		case "bf_running_job_reserve":
			c.BF.RunningJobReserve = true
		case "bf_licenses":
			c.BF.Licenses = true
			c.BF.RunningJobReserve = true
		case "default_queue_depth":
			c.DefaultQueueDepth = int(v)
		case "sched_interval":
			c.SchedInterval = v
		}
	}
	return nil
}

// ConfigFromConf reads the scheduler settings of a parsed slurm.conf.
func ConfigFromConf(c *conf.Config) (Config, error) {
	cfg := DefaultConfig()
	switch c.SchedulerType {
	case "sched/backfill":
		cfg.Backfill = true
	case "sched/builtin":
		cfg.Backfill = false
	default:
		return cfg, fmt.Errorf("SchedulerType=%s: not supported by goslurm (sched/backfill, sched/builtin)", c.SchedulerType)
	}
	switch c.SelectType {
	case "select/linear":
		cfg.WholeNodes = true
	case "select/cons_tres", "select/cons_res":
		cfg.WholeNodes = false
	default:
		return cfg, fmt.Errorf("SelectType=%s: not supported by goslurm (select/cons_tres, select/cons_res, select/linear)", c.SelectType)
	}
	cfg.MemoryConsumable = false
	for _, p := range c.SelectTypeParameters {
		switch strings.ToUpper(p) {
		case "CR_MEMORY", "CR_CORE_MEMORY", "CR_CPU_MEMORY", "CR_SOCKET_MEMORY":
			cfg.MemoryConsumable = true
		}
		switch strings.ToUpper(p) {
		case "CR_CPU", "CR_CPU_MEMORY":
			cfg.CPUsConsumable = !cfg.WholeNodes
		case "CR_CORE_DEFAULT_DIST_BLOCK":
			cfg.CoreDistBlock = true
		}
	}
	cfg.DefMemPerCPU = uint64(c.DefMemPerCPU)
	cfg.DefMemPerNode = uint64(c.DefMemPerNode)
	cfg.MaxMemPerCPU = uint64(c.MaxMemPerCPU)
	cfg.MaxMemPerNode = uint64(c.MaxMemPerNode)
	if err := ParseSchedulerParameters(&cfg, c.SchedulerParameters); err != nil {
		return cfg, err
	}
	cfg.Preempt = preemptConfigFromConf(c)
	if !cfg.Backfill {
		// sched/builtin ignores bf_licenses (with an error in its log).
		cfg.BF.Licenses = false
	}
	return cfg, nil
}

// GroupLookup resolves a group name to its GID (the caller reads the group
// database; this package cannot).
type GroupLookup func(name string) (gid uint32, ok bool)

// FromConf builds a Snapshot's Config, Nodes and Partitions from a parsed
// slurm.conf. Node states come from the State= of the NodeName lines
// (UNKNOWN counts as up) and from DownNodes. lookup may be nil; then
// AllowGroups partitions admit only root (an unresolved group admits no
// one, as in Slurm when the group does not exist).
func FromConf(c *conf.Config, lookup GroupLookup) (*Snapshot, error) {
	cfg, err := ConfigFromConf(c)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Config: cfg, Nodes: make([]Node, len(c.Nodes))}
	for i, cn := range c.Nodes {
		nl := c.NodeLines[cn.Line]
		n := Node{
			Name:           cn.Name,
			Sockets:        max(nl.Sockets, 1),
			CoresPerSocket: max(nl.CoresPerSocket, 1),
			ThreadsPerCore: max(nl.ThreadsPerCore, 1),
			CPUs:           nl.CPUs,
			RealMemory:     uint64(nl.RealMemory),
			MemSpec:        uint64(nl.MemSpecLimit),
			Weight:         nl.Weight,
			State:          nodeStateFromConf(nl.State),
		}
		if n.CPUs == 0 {
			n.CPUs = n.Sockets * n.CoresPerSocket * n.ThreadsPerCore
		}
		for _, g := range nl.Gres {
			n.Gres = append(n.Gres, Gres{Name: g.Name, Type: g.Type, Count: g.Count})
		}
		n.Features = append([]string(nil), nl.Features...)
		s.Nodes[i] = n
	}
	for _, dn := range c.DownNodes {
		st := nodeStateFromConf(dn.State)
		if st == NodeUp {
			st = NodeDown
		}
		names, err := hostlist.Expand(dn.Nodes)
		if err != nil {
			return nil, fmt.Errorf("DownNodes=%s: %w", dn.Nodes, err)
		}
		for _, name := range names {
			if i, ok := c.NodeIndex[name]; ok {
				s.Nodes[i].State |= st
			}
		}
	}
	for _, cp := range c.Partitions {
		p := Partition{
			Name:              cp.Name,
			Default:           cp.Default,
			MaxTime:           uint32(cp.MaxTime),
			DefaultTime:       uint32(cp.DefaultTime),
			MinNodes:          cp.MinNodes,
			MaxNodes:          cp.MaxNodes,
			MaxCPUsPerNode:    cp.MaxCPUsPerNode,
			DefMemPerCPU:      uint64(cp.DefMemPerCPU),
			DefMemPerNode:     uint64(cp.DefMemPerNode),
			MaxMemPerCPU:      uint64(cp.MaxMemPerCPU),
			MaxMemPerNode:     uint64(cp.MaxMemPerNode),
			MaxShare:          cp.MaxShare,
			ExclusiveUser:     cp.ExclusiveUser,
			LLN:               cp.LLN,
			AllowGroups:       append([]string(nil), cp.AllowGroups...),
			AllowAccounts:     append([]string(nil), cp.AllowAccounts...),
			DenyAccounts:      append([]string(nil), cp.DenyAccounts...),
			RootOnly:          cp.RootOnly,
			PriorityTier:      cp.PriorityTier,
			PriorityJobFactor: cp.PriorityJobFactor,
			PreemptMode:       partPreemptMode(c, cp.PreemptMode),
			GraceTime:         uint32(cp.GraceTime),
		}
		switch strings.ToUpper(cp.State) {
		case "", "UP":
			p.State = PartUp
		case "DOWN":
			p.State = PartDown
		case "DRAIN":
			p.State = PartDrain
		case "INACTIVE":
			p.State = PartInactive
		default:
			return nil, fmt.Errorf("partition %s: unknown State=%s", cp.Name, cp.State)
		}
		switch strings.ToUpper(cp.OverSubscribe) {
		case "", "NO":
			p.OverSubscribe = OverSubscribeNo
		case "YES":
			p.OverSubscribe = OverSubscribeYes
		case "FORCE":
			p.OverSubscribe = OverSubscribeForce
		case "EXCLUSIVE":
			p.OverSubscribe = OverSubscribeExclusive
		default:
			return nil, fmt.Errorf("partition %s: unknown OverSubscribe=%s", cp.Name, cp.OverSubscribe)
		}
		if len(p.AllowGroups) > 0 && !(len(p.AllowGroups) == 1 && strings.EqualFold(p.AllowGroups[0], "ALL")) {
			p.AllowGIDs = []uint32{}
			for _, g := range p.AllowGroups {
				if lookup == nil {
					continue
				}
				if gid, ok := lookup(g); ok {
					p.AllowGIDs = append(p.AllowGIDs, gid)
				}
			}
		} else {
			p.AllowGroups = nil
		}
		for _, name := range cp.NodeNames {
			if i, ok := c.NodeIndex[name]; ok {
				p.Nodes = append(p.Nodes, i)
			}
		}
		s.Partitions = append(s.Partitions, p)
	}
	return s, nil
}

func nodeStateFromConf(st string) NodeState {
	st = strings.ToUpper(st)
	base, _, _ := strings.Cut(st, "+")
	switch base {
	case "DOWN":
		return NodeDown
	case "DRAIN", "DRAINED", "DRAINING":
		return NodeDrain
	case "FAIL", "FAILING":
		return NodeFail
	case "FUTURE":
		return NodeFuture
	case "CLOUD", "POWERED_DOWN", "POWER_DOWN":
		return NodePoweredDown
	}
	return NodeUp
}
