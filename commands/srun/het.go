package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/launch"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/pack"
)

// maxHetComponents is MAX_HET_JOB_COMPONENTS.
const maxHetComponents = 128

// hetComp is one step component of a het step: the options of one ":"
// separated part of the command line for one het group.
type hetComp struct {
	o     *jobopt.Opts
	sopt  srunOpts
	argv  []string
	group int

	alloc *launch.Allocation
	step  *launch.Step
}

// cutColon splits srun's operands at the first ":": the command of this
// component and the arguments of the next (nil when there is none). The
// next part keeps the ":" in front, where the option parser expects the
// program name (as srun's argv moves to the ":").
func cutColon(operands []string) (argv, rest []string, more bool) {
	i := slices.Index(operands, ":")
	if i < 0 {
		return operands, nil, false
	}
	return operands[:i], operands[i:], true
}

// parseHetGroup is --het-group's value as the component indexes it names
// ("1", "0,2", "0-2", "[0-1,3]"), in order.
func parseHetGroup(v string) ([]int, bool) {
	spec := v
	if !strings.HasPrefix(spec, "[") {
		spec = "[" + spec + "]"
	}
	names, err := hostlist.Expand("g" + spec)
	if err != nil || len(names) == 0 {
		return nil, false
	}
	var out []int
	for _, n := range names {
		i, err := strconv.Atoi(strings.TrimPrefix(n, "g"))
		if err != nil || i < 0 || i >= maxHetComponents {
			return nil, false
		}
		out = append(out, i)
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// localHetStep is srun's test for a het step inside a plain allocation:
// an allocation that is not a het job and a ":" after the options.
func localHetStep(env *jobopt.Env, args []string) bool {
	if _, ok := env.Get("SLURM_HET_SIZE"); ok {
		return false
	}
	if _, ok := env.Get("SLURM_JOB_ID"); !ok {
		return false
	}
	return slices.Contains(args, ":")
}

// hetGroupStep tells whether --het-group (without ":") makes srun's
// work a het step or het job: a group other than 0 inside an allocation,
// or more than one group. Outside an allocation one group is ignored
// (srun allocates a plain job).
func (s *srun) hetGroupStep() bool {
	g := s.sopt.hetGroup
	if g == "" || g == "0" || g == "[0]" {
		return false
	}
	if groups, ok := parseHetGroup(g); ok && len(groups) == 1 && s.sopt.jobID == 0 {
		_, id := s.env.Get("SLURM_JOB_ID")
		_, old := s.env.Get("SLURM_JOBID")
		return id || old
	}
	return true
}

// hetComponents reads every component's options: the first part's
// (already parsed as o, with operands the rest of the line), then each
// part after a ":". A part with --het-group=a,b gives a component per
// group, each read again with that group's environment.
func (s *srun) hetComponents(cli *launch.CLI, ctl *launch.Ctl, args []string, o *jobopt.Opts, operands []string, local bool) ([]*hetComp, int, bool) {
	var comps []*hetComp
	partArgs := args[:len(args)-len(operands)]
	argv, rest, more := cutColon(operands)
	first, sopt := o, s.sopt
	for part := 0; ; part++ {
		groups := []int{part}
		if sopt.hetGroup != "" {
			g, ok := parseHetGroup(sopt.hetGroup)
			if !ok {
				s.log.Errorf("Invalid --het-group value: %s", sopt.hetGroup)
				return nil, s.errorExit, false
			}
			groups = g
		}
		for i, g := range groups {
			c := &hetComp{o: first, sopt: sopt, argv: argv, group: g}
			if i > 0 || part == 0 && g != 0 {
				// Every group reads its own environment, from the
				// options the pass before left (none for the first).
				var prev *jobopt.Opts
				if len(comps) > 0 {
					prev = comps[len(comps)-1].o
				}
				s.sopt = srunOpts{relative: -1}
				po, _, err := cli.ParseComponent(ctl, prev, jobopt.HetEnvTable(jobopt.SrunEnv, g), partArgs)
				if err != nil {
					return nil, launch.ExitStatus(0, err, s.log, s.errorExit), false
				}
				c.o, c.sopt = po, s.sopt
			}
			if local && c.o.SetBy('N') == jobopt.FromEnv {
				// A het step does not take the allocation's node count.
				c.o.NodesSet, c.o.MinNodes, c.o.MaxNodes = false, 1, 0
			}
			comps = append(comps, c)
		}
		if !more {
			break
		}
		s.sopt = srunOpts{relative: -1}
		po, n, err := cli.ParseComponent(ctl, comps[len(comps)-1].o, jobopt.HetEnvTable(jobopt.SrunEnv, part+1), rest)
		if err != nil {
			return nil, launch.ExitStatus(0, err, s.log, s.errorExit), false
		}
		first, sopt = po, s.sopt
		partArgs = rest[:n]
		argv, rest, more = cutColon(rest[n:])
	}
	s.sopt = comps[0].sopt
	var prevName *string
	for _, c := range comps {
		if len(c.argv) == 0 {
			s.log.Fatalf("No command given to execute.")
			return nil, s.errorExit, false
		}
		if c.o.JobName == nil && prevName != nil {
			// The name _opt_verify gave the component before carries
			// over (job names are not reset between passes).
			c.o.JobName = prevName
		}
		prevName = c.o.JobName
		if prevName == nil {
			name := filepath.Base(c.argv[0])
			prevName = &name
		}
		if len(comps) > 1 && c.o.OpenMode == 0 {
			// Components may share output files: srun's
			// _match_job_name makes them append.
			c.o.OpenMode = jobopt.OpenModeAppend
		}
	}
	return comps, 0, true
}

// runHet runs a het step: srun "a : b" inside an allocation (one step
// with a component per part, local het step) or the --het-group
// components of a het job.
func (s *srun) runHet(cli *launch.CLI, ctl *launch.Ctl, args []string, o *jobopt.Opts, operands []string) (int, error) {
	local := localHetStep(s.env, args)
	comps, code, ok := s.hetComponents(cli, ctl, args, o, operands, local)
	if !ok {
		return code, nil
	}
	if comps[len(comps)-1].o.TestOnly {
		// srun's global options are the last component's (options
		// carry over): allocate_test asks slurm_job_will_run of each
		// component in turn, up to the first refusal.
		for _, c := range comps {
			if code := s.testOnly(ctl, c.o, c.argv, strings.Join(args, " ")); code != 0 {
				return code, nil
			}
		}
		return 0, nil
	}
	jobID := s.sopt.jobID
	if jobID == 0 {
		for _, name := range []string{"SLURM_JOB_ID", "SLURM_JOBID"} {
			if v, ok := s.env.Get(name); ok {
				if n, err := strconv.ParseUint(v, 10, 32); err == nil {
					jobID = uint32(n)
					break
				}
			}
		}
	}
	submitLine := strings.Join(args, " ")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT, syscall.SIGALRM)
	defer signal.Stop(sigs)

	var allocs []*launch.Allocation
	var err error
	if jobID == 0 {
		// srun's own het job: a job component per part.
		allocs, err = s.allocateHet(ctx, ctl, comps, submitLine, sigs)
		if err != nil {
			return s.errorExit, nil
		}
		defer allocs[0].Close()
		code, rc := s.runHetStep(ctx, ctl, comps, allocs, submitLine, sigs)
		if err := allocs[0].Release(context.Background(), rc); err != nil {
			s.log.Debugf("complete job allocation: %s", launch.Strerror(err))
		}
		return code, nil
	}
	allocs, err = ctl.ExistingAllocations(ctx, jobID)
	if err != nil {
		s.log.Errorf("Unable to confirm allocation for job %d: %s", jobID, launch.Strerror(err))
		s.log.Infof("Check SLURM_JOB_ID environment variable. Expired or invalid job %d", jobID)
		return s.errorExit, nil
	}
	code, _ = s.runHetStep(ctx, ctl, comps, allocs, submitLine, sigs)
	return code, nil
}

// runHetStep creates and runs the het step of comps in allocs (a het
// job's components, or one plain allocation for a local het step) and
// returns srun's exit code.
func (s *srun) runHetStep(ctx context.Context, ctl *launch.Ctl, comps []*hetComp, allocs []*launch.Allocation, submitLine string, sigs chan os.Signal) (int, uint32) {
	maxGroup := 0
	for _, c := range comps {
		maxGroup = max(maxGroup, c.group)
	}
	localStep := false
	if maxGroup > len(allocs)-1 && len(comps) == 1 {
		// One set of options is never a local het step.
		s.log.Errorf("Requested het-group offset exceeds highest hetjob index (%d > %d)", maxGroup, len(allocs)-1)
		return s.errorExit, 1 << 8
	}
	if maxGroup > len(allocs)-1 {
		if len(allocs) != 1 {
			s.log.Errorf("Attempt to run a job step with het group value of %d, but the job allocation has maximum value of %d", maxGroup, len(allocs)-1)
			return 1, 1 << 8
		}
		localStep = true
	}
	// Components in het group order, as srun walks the allocation's.
	var ordered []*hetComp
	for g := 0; g <= max(maxGroup, len(allocs)-1); g++ {
		for _, c := range comps {
			if c.group == g {
				c.alloc = allocs[0]
				if !localStep {
					c.alloc = allocs[g]
				}
				ordered = append(ordered, c)
			}
		}
	}
	hetJobID := uint32(pack.NoVal)
	if len(allocs) > 1 {
		hetJobID = allocs[0].JobID
	}
	// Create the steps: the first gets the step id, the others ask for it.
	stepID := uint32(pack.NoVal)
	var used []string
	defer func() {
		for _, c := range ordered {
			if c.step != nil {
				c.step.Close()
			}
		}
	}()
	// A component that cannot be created ends the ones created before it
	// (_cancel_steps): they would stay in the job with no tasks.
	cancelCreated := func() int {
		for _, c := range ordered {
			if c.step != nil {
				c.step.Release(context.Background())
			}
		}
		return s.errorExit
	}
	for i, c := range ordered {
		a := c.alloc
		if localStep && len(used) > 0 {
			// Later components leave out the nodes earlier ones took.
			all, _ := hostlist.Expand(a.NodeList.Value)
			left := len(all) - len(used)
			if c.o.MinNodes > left || left <= 0 {
				s.log.Errorf("Allocation failure of %d nodes: job size of %d, already allocated %d nodes to previous components.", max(c.o.MinNodes, 1), len(all), len(used))
				return cancelCreated(), 1 << 8
			}
			ex := append([]string(nil), used...)
			if c.o.Exclude != "" {
				ex = append(ex, c.o.Exclude)
			}
			c.o.Exclude = hostlist.Compress(ex)
			cp := *a
			cp.NodeCnt = uint32(left)
			a = &cp
		}
		s.sopt = c.sopt
		req := s.stepRequest(c.o, a, c.argv, submitLine, false)
		comp := uint32(pack.NoVal)
		if localStep {
			comp = uint32(i)
		}
		st, err := ctl.CreateHetStep(ctx, c.alloc.JobID, req, stepID, comp)
		if err != nil {
			s.log.Errorf("Unable to create step for job %d: %s", c.alloc.JobID, launch.Strerror(err))
			return cancelCreated(), 1 << 8
		}
		c.step = st
		if stepID == pack.NoVal {
			stepID = st.Resp.JobStepID
		}
		used = append(used, st.Nodes...)
	}
	s.sopt = ordered[0].sopt
	het := hetLayout(ordered, hetJobID)

	label := false
	for _, c := range ordered {
		label = label || c.sopt.label
	}
	u, _ := user.Current()
	var wg sync.WaitGroup
	rcs := make([]uint32, len(ordered))
	stop := make(chan struct{})
	var sigWG sync.WaitGroup
	sigWG.Add(1)
	go func() {
		defer sigWG.Done()
		steps := make([]*launch.Step, len(ordered))
		for i, c := range ordered {
			steps[i] = c.step
		}
		s.signals(ctx, steps, sigs, stop)
	}()
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for i, c := range ordered {
		h := het[i]
		c := c
		so := launch.StepOptions{
			Argv: c.argv, Cwd: c.o.Chdir, UID: uint32(os.Getuid()), GID: uint32(os.Getgid()),
			// --label in any part labels every component's output.
			Label: c.sopt.label || label, MultiProg: c.sopt.multiProg, Unbuffered: c.sopt.unbuffered,
			KillBadExit: c.sopt.killBadExit, MaxWait: c.sopt.maxWait, StdinTask: -1,
			Stdin: s.io.stdin, Stdout: s.io.stdout, Stderr: s.io.stderr,
			Alloc: &c.alloc.Allocation, Het: h,
			Env: func(st *launch.Step) []string {
				return s.hetTaskEnv(ctl, c, st, h, ordered, localStep, u)
			},
		}
		if i > 0 {
			so.Stdin = nil
		}
		if len(ordered) == 1 {
			// One component of a het job: a step of that job alone.
			so.Het = nil
		}
		if c.o.CPUsSet {
			so.CPUsPerTask = uint16(c.o.CPUsPerTask)
		}
		vars := fnameVars{ntasks: c.step.NTasks, jobID: c.alloc.JobID, stepID: c.step.Resp.JobStepID}
		vars.jobName, _ = s.env.Get("SLURM_JOB_NAME")
		opened, err := s.stdio(c.o, &so, vars)
		files = append(files, opened...)
		if err != nil {
			c.step.Abort(context.Background())
			rcs[i] = 1 << 8
			continue
		}
		if err := c.step.Launch(ctx, so); err != nil {
			c.step.Abort(context.Background())
			rcs[i] = 1 << 8
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rcs[i] = c.step.Wait()
		}()
	}
	wg.Wait()
	close(stop)
	sigWG.Wait()
	var rc uint32
	for _, r := range rcs {
		rc = max(rc, r)
	}
	return launch.ExitCode(rc), rc
}

// allocateHet is allocate_het_job_nodes: srun's own het job, a job
// component per component of the command line. The components' node
// counts become what was granted, and srun's environment gets each
// component's variables (_set_env_vars, _set_env_vars2), which the
// tasks inherit.
func (s *srun) allocateHet(ctx context.Context, ctl *launch.Ctl, comps []*hetComp, submitLine string, sigs chan os.Signal) ([]*launch.Allocation, error) {
	var descs []*msg.JobDesc
	for _, c := range comps {
		if c.sopt.relative >= 0 {
			s.log.Fatalf("--relative option invalid for job allocation request")
			return nil, errors.New("relative")
		}
		s.sopt = c.sopt
		d, err := s.jobDesc(ctl, c.o, c.argv, submitLine)
		if err != nil {
			s.log.Errorf("%v", err)
			return nil, err
		}
		descs = append(descs, d)
	}
	s.sopt = comps[0].sopt
	// srun's own SLURM_JOB_NAME: the last -J (which every later
	// component took), else the first component's program as given.
	cliName, envName := false, false
	for _, c := range comps {
		cliName = cliName || c.o.SetBy('J') == jobopt.FromCLI
		envName = envName || c.o.SetBy('J') == jobopt.FromEnv
	}
	if last := comps[len(comps)-1]; cliName && last.o.JobName != nil {
		s.env.Set("SLURM_JOB_NAME", *last.o.JobName, true)
	} else if !envName {
		s.env.Set("SLURM_JOB_NAME", comps[0].argv[0], true)
	}
	var completed atomic.Bool
	hooks := launch.AllocHooks{JobComplete: func() { completed.Store(true) }}
	allocs, err := ctl.AllocateHetInteractive(ctx, descs, sigs, nil, hooks)
	if err != nil {
		s.allocFailed(err, completed.Load())
		return nil, err
	}
	if len(allocs) != len(comps) {
		s.log.Errorf("allocate_het_job_nodes: request count != response count (%d != %d)", len(comps), len(allocs))
		allocs[0].Release(context.Background(), 1)
		allocs[0].Close()
		return nil, errors.New("count")
	}
	s.ownHet = true
	for i, a := range allocs {
		c := comps[i]
		c.o.MinNodes, c.o.MaxNodes = int(a.NodeCnt), int(a.NodeCnt)
		// The memory granted replaces the one asked for (a request
		// left out stays NO_VAL).
		if c.o.PnMinMemory != pack.NoVal64 {
			c.o.PnMinMemory = a.PnMinMemory &^ jobopt.MemPerCPU
		} else if c.o.MemPerCPU != pack.NoVal64 {
			c.o.MemPerCPU = a.PnMinMemory &^ jobopt.MemPerCPU
		}
		if cf := ctl.Conn.Conf; cf.SuspendTimeout != 0 && cf.ResumeTimeout != 0 {
			if err := a.WaitReady(ctx, nil); err != nil {
				s.log.Errorf("Something is wrong with the boot of the nodes.")
				allocs[0].Release(context.Background(), 1)
				allocs[0].Close()
				return nil, err
			}
		}
	}
	for i, a := range allocs {
		if s.log.Verbose >= 1 {
			var counts []string
			for j, c := range a.Allocation.CPUsPerNode {
				counts = append(counts, fmt.Sprintf("%d(x%d)", c, a.CPUCountReps[j]))
			}
			s.log.Verbosef("jobid %d: nodes(%d):`%s', cpu counts: %s", a.JobID, a.NodeCnt, a.NodeList.Value, strings.Join(counts, ","))
		}
		key := func(base string) string { return base + "_PACK_GROUP_" + strconv.Itoa(i) }
		setNew := func(k, v string) {
			if _, ok := s.env.Get(k); !ok {
				s.env.Set(k, v, true)
			}
		}
		setNew(key("SLURM_JOB_CPUS_PER_NODE"), a.CPUsPerNodeString())
		if a.AliasList.Value != "" {
			s.env.Set(key("SLURM_NODE_ALIASES"), a.AliasList.Value, true)
		}
		if a.Account.Value != "" {
			setNew(key("SLURM_JOB_ACCOUNT"), a.Account.Value)
		}
		setNew(key("SLURM_JOB_ID"), strconv.Itoa(int(a.JobID)))
		setNew(key("SLURM_JOB_NODELIST"), a.NodeList.Value)
		setNew(key("SLURM_JOB_PARTITION"), a.Partition.Value)
		if a.QOS.Value != "" {
			setNew(key("SLURM_JOB_QOS"), a.QOS.Value)
		}
		if a.ResvName.Value != "" {
			setNew(key("SLURM_JOB_RESERVATION"), a.ResvName.Value)
		}
	}
	n := strconv.Itoa(len(allocs))
	s.env.Set("SLURM_PACK_SIZE", n, true)
	s.env.Set("SLURM_HET_SIZE", n, true)
	return allocs, nil
}

// hetLayout is each component's view of the whole het step: the nodes
// of every component sorted by name, with their tasks' het-wide ids.
func hetLayout(comps []*hetComp, hetJobID uint32) []*launch.HetLaunch {
	var nodes []string
	var tids [][]uint32
	var tidOffsets []uint32
	var ntasks, nodeOffset uint32
	out := make([]*launch.HetLaunch, len(comps))
	for i, c := range comps {
		st := c.step
		out[i] = &launch.HetLaunch{JobID: hetJobID, NodeOffset: nodeOffset, Offset: uint32(i),
			StepCnt: uint32(len(comps)), TaskOffset: ntasks}
		for n, name := range st.Nodes {
			nodes = append(nodes, name)
			var ids []uint32
			for _, t := range st.TIDs[n] {
				ids = append(ids, t+ntasks)
			}
			tids = append(tids, ids)
		}
		for range st.NTasks {
			tidOffsets = append(tidOffsets, uint32(i))
		}
		ntasks += st.NTasks
		nodeOffset += uint32(len(st.Nodes))
	}
	// The het step's nodes in name order, when no node is in two
	// components (srun's _reorder_het_job_recs).
	sorted := slices.Compact(slices.Sorted(slices.Values(nodes)))
	if len(sorted) == len(nodes) {
		var stids [][]uint32
		for _, name := range sorted {
			stids = append(stids, tids[slices.Index(nodes, name)])
		}
		nodes, tids = sorted, stids
	}
	list := hostlist.Compress(nodes)
	for _, h := range out {
		h.NNodes, h.NTasks, h.TIDs, h.TIDOffsets, h.NodeList = uint32(len(nodes)), ntasks, tids, tidOffsets, list
	}
	return out
}

// hetTaskEnv is taskEnv for a component of a het step: the step-wide
// counts and lists are the whole het step's.
func (s *srun) hetTaskEnv(ctl *launch.Ctl, c *hetComp, st *launch.Step, h *launch.HetLaunch, comps []*hetComp, local bool, u *user.User) []string {
	saved := s.sopt
	s.sopt = c.sopt
	env := jobopt.NewEnv(s.taskEnv(ctl, c.o, c.alloc, st, false, u))
	s.sopt = saved
	set := func(k, v string) { env.Set(k, v, true) }
	counts := make([]uint32, len(h.TIDs))
	for i, t := range h.TIDs {
		counts[i] = uint32(len(t))
	}
	tpn := launch.CompressCounts(counts)
	ntasks := strconv.Itoa(int(h.NTasks))
	nnodes := strconv.Itoa(int(h.NNodes))
	set("SLURM_NTASKS", ntasks)
	set("SLURM_NPROCS", ntasks)
	set("SLURM_NNODES", nnodes)
	set("SLURM_NODELIST", h.NodeList)
	set("SLURM_TASKS_PER_NODE", tpn)
	set("SLURM_STEP_NODELIST", h.NodeList)
	set("SLURM_STEP_NUM_NODES", nnodes)
	set("SLURM_STEP_NUM_TASKS", ntasks)
	set("SLURM_STEP_TASKS_PER_NODE", tpn)
	// The het step's layout: cyclic when no component node has more
	// than one task over all, else block.
	if h.NTasks <= h.NNodes {
		set("SLURM_DISTRIBUTION", "cyclic")
	} else {
		set("SLURM_DISTRIBUTION", "block")
	}
	s.hetJobEnv(env, comps, local)
	return env.List()
}

// hetJobEnv is what srun sets for the job before a het step: for a het
// job, the job-wide variables name the components the step uses; each
// used component's alias variable (by its place among them) is the
// allocation's or gone, and so is a local het step's SLURM_NODE_ALIASES.
func (s *srun) hetJobEnv(env *jobopt.Env, comps []*hetComp, local bool) {
	drop := func(name string) {
		l := slices.DeleteFunc(env.List(), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
		*env = *jobopt.NewEnv(l)
	}
	if local {
		if a := comps[0].alloc.AliasList.Value; a != "" {
			env.Set("SLURM_NODE_ALIASES", a, true)
		} else {
			drop("SLURM_NODE_ALIASES")
		}
		return
	}
	var allocs []*launch.Allocation
	for _, c := range comps {
		if !slices.Contains(allocs, c.alloc) {
			allocs = append(allocs, c.alloc)
		}
	}
	var nodes []string
	var cpus []uint32
	var nnodes uint32
	for i, a := range allocs {
		key := "SLURM_NODE_ALIASES_PACK_GROUP_" + strconv.Itoa(i)
		if a.AliasList.Value != "" {
			env.Set(key, a.AliasList.Value, true)
		} else {
			drop(key)
		}
		n, _ := hostlist.Expand(a.NodeList.Value)
		nodes = append(nodes, n...)
		nnodes += a.NodeCnt
		for j, c := range a.Allocation.CPUsPerNode {
			for range a.CPUCountReps[j] {
				cpus = append(cpus, uint32(c))
			}
		}
	}
	id := strconv.Itoa(int(allocs[0].JobID))
	env.Set("SLURM_JOB_ID", id, true)
	env.Set("SLURM_JOBID", id, true)
	env.Set("SLURM_JOB_NODELIST", hostlist.Compress(nodes), true)
	env.Set("SLURM_JOB_NUM_NODES", strconv.Itoa(int(nnodes)), true)
	env.Set("SLURM_JOB_CPUS_PER_NODE", launch.CompressCounts(cpus), true)
	env.Set("SLURM_JOB_PARTITION", allocs[0].Partition.Value, true)
	if v, ok := s.env.Get("SLURM_JOB_NAME_HET_GROUP_" + strconv.Itoa(comps[0].group)); ok {
		env.Set("SLURM_JOB_NAME", v, true)
	}
}
