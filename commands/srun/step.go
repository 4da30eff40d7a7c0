package main

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/launch"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/pack"
)

// Step request values (slurm.h).
const (
	ssfExclusive  = 1 << 0
	ssfNoKill     = 1 << 1
	ssfOvercommit = 1 << 2
	ssfWhole      = 1 << 3
	ssfOverlap    = 1 << 6 // SSF_OVERLAP_FORCE
	distUnknown   = 0x2000
	distCyclic    = 1
	distBlock     = 2
	memPerCPU     = 0x8000000000000000
)

// stepRequest is srun's _create_job_step_create_request.
func (s *srun) stepRequest(o *jobopt.Opts, alloc *launch.Allocation, argv []string, submitLine string, ownAlloc bool) msg.StepCreateRequest {
	nhosts := alloc.NodeCnt
	r := msg.StepCreateRequest{
		UserID: uint32(os.Getuid()), CPUFreqMin: o.CPUFreqMin, CPUFreqMax: o.CPUFreqMax, CPUFreqGov: o.CPUFreqGov,
		ThreadsPerCore: pack.NoVal16, Relative: pack.NoVal16, PlaneSize: pack.NoVal16,
		ResvPortCnt: pack.NoVal16, NtasksPerTres: pack.NoVal16, TaskDist: distUnknown,
		ExcNodes: nstr(o.Exclude), Features: nstr(o.Constraint), NodeList: nstr(o.Nodelist),
		SubmitLine: msg.Str(submitLine), Network: nstr(o.Network),
	}
	if s.sopt.relative >= 0 {
		r.Relative = uint16(s.sopt.relative)
	}
	if o.Immediate == 1 {
		r.Immediate = 1
	}
	if o.Overcommit {
		r.Flags |= ssfOvercommit
	}
	if o.NoKill {
		r.Flags |= ssfNoKill
	}
	r.MinNodes, r.MaxNodes = nhosts, nhosts
	if o.MaxNodes > 0 && uint32(o.MaxNodes) < r.MaxNodes {
		r.MaxNodes = uint32(o.MaxNodes)
	}
	minNodes := 0
	switch {
	case o.NodesSet:
		minNodes = o.MinNodes
	case o.Nodelist != "":
		// -w alone asks for the nodes it names.
		if hosts, err := hostlist.Expand(o.Nodelist); err == nil {
			minNodes = len(hosts)
		}
	}
	if minNodes > 0 && uint32(minNodes) < r.MinNodes {
		r.MinNodes = uint32(minNodes)
	}
	ntasks := o.Ntasks
	if !o.NtasksSet {
		// Without -n: one task per node of the step (srun's _opt_verify).
		ntasks = int(r.MinNodes)
		if o.NtasksPerNode != jobopt.NoVal && o.NtasksPerNode > 0 {
			ntasks = int(r.MinNodes) * o.NtasksPerNode
		}
	}
	ntasks = max(ntasks, 1)
	exact := s.sopt.exact
	var cpus uint32
	switch {
	case o.Overcommit && ownAlloc:
		cpus = totalCPUs(alloc)
	case o.Overcommit:
		cpus = r.MinNodes
	case o.CPUsSet:
		// -c implies --exact, and the step gets only its CPUs.
		cpus = uint32(ntasks * o.CPUsPerTask)
		exact = true
		r.Flags |= ssfExclusive
	case o.NtasksSet:
		cpus = uint32(ntasks)
	case ownAlloc:
		cpus = totalCPUs(alloc)
	default:
		cpus = uint32(ntasks)
	}
	r.CPUCount = cpus
	r.NumTasks = uint32(ntasks)
	if o.JobName != nil && o.SetBy('J') == jobopt.FromCLI {
		r.Name = msg.Str(*o.JobName)
	} else {
		r.Name = msg.Str(filepath.Base(argv[0]))
	}
	if o.MemPerCPU != pack.NoVal64 {
		r.PnMinMemory = o.MemPerCPU | memPerCPU
	} else if o.PnMinMemory != pack.NoVal64 {
		r.PnMinMemory = o.PnMinMemory
	}
	// A time limit is the job's, not the step's, when srun made the job.
	if o.TimeLimit != pack.NoVal && !ownAlloc {
		r.TimeLimit = o.TimeLimit
	}
	r.TresPerStep = msg.Str(fmt.Sprintf("cpu:%d", cpus))
	if o.CPUsSet {
		r.TresPerTask = msg.Str(fmt.Sprintf("cpu:%d", o.CPUsPerTask))
	}
	if o.NtasksPerNode != jobopt.NoVal && o.NtasksPerNode > 0 {
		r.PlaneSize = uint16(o.NtasksPerNode)
	}
	switch {
	case o.Distribution != 0 && o.Distribution != pack.NoVal && o.Distribution != distUnknown:
		r.TaskDist = o.Distribution
	case memSet(o.MemPerCPU) || memSet(o.PnMinMemory),
		s.ownHet && o.MemPerCPU != 0 && o.PnMinMemory != 0:
		// srun's own het job leaves the memory options it was not
		// given at NO_VAL, which counts as a request here.
		// With a memory request the controller needs a real layout:
		// cyclic when there are no more tasks than nodes, else block.
		r.TaskDist = distBlock
		if r.NumTasks <= r.MinNodes {
			r.TaskDist = distCyclic
		}
	}
	if s.sopt.overlap {
		// The step shares every CPU, memory and GRES of its nodes with
		// the job's other steps (arg_set_overlap clears exclusive).
		r.Flags = r.Flags&^ssfExclusive | ssfOverlap
	}
	if !exact {
		r.Flags |= ssfWhole
	}
	return r
}

func memSet(v uint64) bool { return v != 0 && v != pack.NoVal64 }

func totalCPUs(a *launch.Allocation) uint32 {
	var n uint32
	for i, c := range a.Allocation.CPUsPerNode {
		n += uint32(c) * a.CPUCountReps[i]
	}
	return n
}

func nstr(s string) msg.NullString {
	if s == "" {
		return msg.NullString{}
	}
	return msg.Str(s)
}

// taskEnv is the environment srun sends with the launch: its own, the
// job's (when srun made the allocation) and the step's.
func (s *srun) taskEnv(ctl *launch.Ctl, o *jobopt.Opts, alloc *launch.Allocation, st *launch.Step, ownAlloc bool, u *user.User) []string {
	env := jobopt.NewEnv(exportEnv(s.env, o.Export))
	set := func(k, v string) { env.Set(k, v, true) }
	cfg := ctl.Conn.Conf
	set("SLURM_MPI_TYPE", "none")
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err == nil {
		prio = 20 - prio
	}
	set("SLURM_PRIO_PROCESS", strconv.Itoa(prio))
	rlimitEnv(cfg, set)
	set("SRUN_DEBUG", strconv.Itoa(3+s.log.Verbose))
	m := syscall.Umask(0)
	syscall.Umask(m)
	set("SLURM_UMASK", fmt.Sprintf("%04o", m))
	set("SLURM_CLUSTER_NAME", cfg.ClusterName)
	if _, ok := env.Get("SLURM_SUBMIT_DIR"); !ok || ownAlloc {
		set("SLURM_SUBMIT_DIR", s.io.cwd)
	}
	if _, ok := env.Get("SLURM_SUBMIT_HOST"); !ok || ownAlloc {
		h, _ := os.Hostname()
		set("SLURM_SUBMIT_HOST", h)
	}
	if ownAlloc {
		set("SLURM_JOB_NAME", st.Name)
		if o.JobName != nil {
			set("SLURM_JOB_NAME", *o.JobName)
		}
		set("SLURM_JOB_CPUS_PER_NODE", alloc.CPUsPerNodeString())
		alloc.SetAssocEnv(set)
		set("SLURM_JOB_PARTITION", alloc.Partition.Value)
		set("SLURM_JOB_NUM_NODES", strconv.Itoa(int(alloc.NodeCnt)))
		set("SLURM_JOB_NODELIST", alloc.NodeList.Value)
	}
	ntasks := strconv.Itoa(int(st.NTasks))
	set("SLURM_NTASKS", ntasks)
	set("SLURM_NPROCS", ntasks)
	// setup_env's per-option variables, for the options given.
	if o.CPUsSet && o.CPUsPerTask > 0 {
		set("SLURM_CPUS_PER_TASK", strconv.Itoa(o.CPUsPerTask))
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"SLURM_NTASKS_PER_NODE", o.NtasksPerNode}, {"SLURM_NTASKS_PER_SOCKET", o.NtasksPerSocket}, {"SLURM_NTASKS_PER_CORE", o.NtasksPerCore}} {
		if v.n != jobopt.NoVal && v.n > 0 {
			set(v.name, strconv.Itoa(v.n))
		}
	}
	if o.Overcommit {
		set("SLURM_OVERCOMMIT", "1")
	}
	set("SLURM_JOB_ID", strconv.Itoa(int(st.JobID)))
	set("SLURM_JOBID", strconv.Itoa(int(st.JobID)))
	stepID := strconv.Itoa(int(st.Resp.JobStepID))
	set("SLURM_STEP_ID", stepID)
	set("SLURM_STEPID", stepID)
	nnodes := strconv.Itoa(len(st.Nodes))
	set("SLURM_NNODES", nnodes)
	set("SLURM_NODELIST", alloc.NodeList.Value)
	set("SLURM_TASKS_PER_NODE", st.TasksPerNode())
	set("SLURM_JOB_UID", strconv.Itoa(os.Getuid()))
	if u != nil {
		set("SLURM_JOB_USER", u.Username)
	}
	port := int(cfg.SlurmctldPort.First)
	if port == 0 {
		port = 6817
	}
	ctld := "localhost"
	if len(cfg.SlurmctldHost) > 0 {
		ctld = cfg.SlurmctldHost[0].Host
	}
	set("SLURM_WORKING_CLUSTER", fmt.Sprintf("%s:%s:%d:%d:%d", cfg.ClusterName, ctld, port, 9728, alloc.SelectJobinfo))
	set("SLURM_STEP_NODELIST", st.Resp.Layout.NodeList.Value)
	set("SLURM_STEP_NUM_NODES", nnodes)
	set("SLURM_STEP_NUM_TASKS", ntasks)
	set("SLURM_STEP_TASKS_PER_NODE", st.TasksPerNode())
	rp := strconv.Itoa(int(st.RespPort()))
	set("SLURM_STEP_LAUNCHER_PORT", rp)
	set("SLURM_SRUN_COMM_PORT", rp)
	if s.pty != nil {
		set("SLURM_PTY_PORT", strconv.Itoa(int(s.pty.port())))
		set("SLURM_PTY_WIN_COL", strconv.Itoa(int(s.pty.cols)))
		set("SLURM_PTY_WIN_ROW", strconv.Itoa(int(s.pty.rows)))
	}
	if s.sopt.label {
		set("SLURM_LABELIO", "1")
	}
	return env.List()
}

// exportEnv is --export applied to srun's environment: ALL (the default)
// passes everything, optionally with NAME=value additions; NONE or a list
// without ALL passes only the SLURM_* variables plus the named ones.
func exportEnv(env *jobopt.Env, export *string) []string {
	if export == nil {
		return env.List()
	}
	items := strings.Split(*export, ",")
	all := strings.EqualFold(items[0], "ALL")
	out := jobopt.NewEnv(nil)
	for _, kv := range env.List() {
		if all || strings.HasPrefix(kv, "SLURM_") {
			k, v, _ := strings.Cut(kv, "=")
			out.Set(k, v, true)
		}
	}
	for _, it := range items {
		if strings.EqualFold(it, "ALL") || strings.EqualFold(it, "NONE") || it == "" {
			continue
		}
		if k, v, ok := strings.Cut(it, "="); ok {
			out.Set(k, v, true)
		} else if v, ok := env.Get(it); ok {
			out.Set(it, v, true)
		}
	}
	return out.List()
}
