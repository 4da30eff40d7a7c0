package main

// squeue --json and --yaml: Slurm 22.05's squeue hands these to the
// openapi/v0.0.38 plugin's jobs handler, which ignores every filter,
// format and sort option and dumps all jobs (SHOW_ALL|SHOW_DETAIL) as
// slurmrestd's GET /slurm/v0.0.38/jobs/ would. This file builds the same
// document from the same RPC reply.

import (
	"fmt"
	"os/user"
	"strconv"

	"github.com/goslurm/goslurm/commands/internal/dataout"
	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
)

// Output kinds for --json and --yaml.
const (
	mimeJSON = "json"
	mimeYAML = "yaml"
)

// Constants of slurm.h the job dump tests.
const (
	noVal           = 0xfffffffe
	infinite        = 0xffffffff
	noVal16         = 0xfffe
	infinite16      = 0xffff
	niceOffset      = 0x80000000
	memPerCPU       = 0x8000000000000000
	coreSpecThread  = 0x8000
	crCPU           = 0x0001
	crSocket        = 0x0002
	crCore          = 0x0004
	profileNotSet   = 0
	profileNone     = 1
	unspecifiedText = "Unspecified error"
)

// jobBitflagNames are the job bit flags the dump names, in its order.
var jobBitflagNames = []struct {
	bit  uint64
	name string
}{
	{1 << 0, "KILL_INV_DEP"}, {1 << 1, "NO_KILL_INV_DEP"}, {1 << 2, "HAS_STATE_DIR"},
	{1 << 3, "BACKFILL_TEST"}, {1 << 4, "GRES_ENFORCE_BIND"}, {1 << 5, "TEST_NOW_ONLY"},
	{1 << 8, "SPREAD_JOB"}, {1 << 9, "USE_MIN_NODES"}, {1 << 10, "JOB_KILL_HURRY"},
	{1 << 11, "TRES_STR_CALC"}, {1 << 12, "SIB_JOB_FLUSH"}, {1 << 13, "HET_JOB_FLAG"},
	{1 << 15, "JOB_CPUS_SET"}, {1 << 17, "TOP_PRIO_TMP"}, {1 << 18, "JOB_ACCRUE_OVER"},
	{1 << 19, "GRES_DISABLE_BIND"}, {1 << 20, "JOB_WAS_RUNNING"}, {1 << 23, "JOB_MEM_SET"},
	{1 << 24, "JOB_RESIZED"},
}

var showFlagNames = []struct {
	bit  uint16
	name string
}{
	{0x01, "SHOW_ALL"}, {0x02, "SHOW_DETAIL"}, {0x08, "SHOW_MIXED"}, {0x10, "SHOW_LOCAL"},
	{0x20, "SHOW_SIBLING"}, {0x40, "SHOW_FEDERATION"}, {0x80, "SHOW_FUTURE"},
}

var profileNames = []struct {
	bit  uint32
	name string
}{
	{1 << 1, "Energy"}, {1 << 3, "Lustre"}, {1 << 4, "Network"}, {1 << 2, "Task"},
}

// dumpJobs prints every job as --json or --yaml and returns the exit
// code, which is 0 even when the controller could not be asked: the
// failure is reported inside the document.
func (q *squeue) dumpJobs() int {
	if q.verbose >= 3 {
		// Slurm's debug2 line for loading the plugin; the debug3 lines
		// of -vvvv print function addresses and are not reproduced.
		fmt.Fprintf(q.stderr, "%s: debug2: init_openapi: loaded plugin %s with flags 0x1\n", q.prog, dataout.PluginType)
	}
	resp, errs := dataout.NewResponse()
	jobs := resp.Set("jobs", dataout.NewList())
	m, err := q.conn.LoadJobs(q.ctx, 0, sc.ShowAll|sc.ShowDetail)
	if err != nil {
		// slurm_load_jobs returns SLURM_ERROR whatever the cause; the
		// handler reports that code, not errno.
		e := errs.Append(dataout.NewDict())
		e.Set("description", dataout.Str("Failed while looking for jobs"))
		e.Set("error_number", dataout.Int(-1))
		e.Set("error", dataout.Str(unspecifiedText))
		e.Set("source", dataout.Str("slurm_load_jobs"))
	} else {
		crType := selectTypeParam(q.conn)
		for i := range m.Jobs {
			jobs.Append(q.dumpJob(&m.Jobs[i], crType))
		}
	}
	if q.mimetype == mimeYAML {
		q.out.Write(dataout.YAML(resp))
	} else {
		q.out.Write(dataout.JSON(resp))
	}
	return 0
}

// selectTypeParam is the client's slurm_conf.select_type_param: the CR_
// bits of SelectTypeParameters, 0 when unset.
func selectTypeParam(c *sc.Conn) uint16 {
	var p uint16
	if c == nil || c.Conf == nil {
		return 0
	}
	for _, tok := range c.Conf.SelectTypeParameters {
		switch {
		case sc.HasPrefixFold(tok, "CR_Socket"):
			p |= crSocket
		case sc.HasPrefixFold(tok, "CR_Core"):
			p |= crCore
		case sc.HasPrefixFold(tok, "CR_CPU"):
			p |= crCPU
		}
	}
	return p
}

func nstrV(s msg.NullString) *dataout.Value { return dataout.StrOrNullStr(s.Value, s.Valid) }

// userOrNull is uid_to_string_or_null.
func userOrNull(uid uint32) *dataout.Value {
	if uid == 0 {
		return dataout.Str("root")
	}
	if n, ok := sc.UserNameOK(uid); ok {
		return dataout.Str(n)
	}
	return dataout.Null()
}

// groupOrNull is gid_to_string_or_null.
func groupOrNull(gid uint32) *dataout.Value {
	if g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10)); err == nil {
		return dataout.Str(g.Name)
	}
	return dataout.Null()
}

func intOrNull(v, null1, null2 int64) *dataout.Value {
	if v == null1 || v == null2 {
		return dataout.Null()
	}
	return dataout.Int(v)
}

// dumpJob is dump_job_info of openapi/v0.0.38 (key names, order, nulls
// and its quirks included: cpus_per_task and the misspelt
// cpu_frequency_minumum follow cpu_freq_min, core_spec and thread_spec
// are swapped).
func (q *squeue) dumpJob(j *msg.JobInfo, crType uint16) *dataout.Value {
	d := dataout.NewDict()
	str := func(k string, s msg.NullString) { d.Set(k, nstrV(s)) }
	num := func(k string, v int64) { d.Set(k, dataout.Int(v)) }
	mc := j.MultiCore
	if mc == nil {
		mc = &msg.MultiCore{}
	}

	str("account", j.Account)
	num("accrue_time", j.AccrueTime)
	str("admin_comment", j.AdminComment)
	num("array_job_id", int64(j.ArrayJobID))
	d.Set("array_task_id", intOrNull(int64(j.ArrayTaskID), noVal, noVal))
	num("array_max_tasks", int64(j.ArrayMaxTasks))
	taskStr := j.ArrayTaskStr
	if taskStr.Valid && taskStr.Value != "" {
		s, _ := sc.XlateArrayTaskStr(taskStr.Value, j.ArrayMaxTasks, q.bitstrLen)
		taskStr.Value = s
	}
	str("array_task_string", taskStr)
	num("association_id", int64(j.AssocID))
	str("batch_features", j.BatchFeatures)
	d.Set("batch_flag", dataout.Bool(j.BatchFlag == 1))
	str("batch_host", j.BatchHost)
	flags := d.Set("flags", dataout.NewList())
	for _, f := range jobBitflagNames {
		if j.Bitflags&f.bit != 0 {
			flags.Append(dataout.Str(f.name))
		}
	}
	str("burst_buffer", j.BurstBuffer)
	str("burst_buffer_state", j.BurstBufferState)
	str("cluster", j.Cluster)
	str("cluster_features", j.ClusterFeatures)
	str("command", j.Command)
	str("comment", j.Comment)
	str("container", j.Container)
	if j.Contiguous != noVal16 {
		d.Set("contiguous", dataout.Bool(j.Contiguous == 1))
	} else {
		d.Set("contiguous", dataout.Null())
	}
	switch {
	case j.CoreSpec == noVal16:
		d.Set("core_spec", dataout.Null())
		d.Set("thread_spec", dataout.Null())
	case j.CoreSpec&coreSpecThread != 0:
		num("core_spec", int64(j.CoreSpec))
		d.Set("thread_spec", dataout.Null())
	default:
		num("thread_spec", int64(j.CoreSpec&^coreSpecThread))
		d.Set("core_spec", dataout.Null())
	}
	d.Set("cores_per_socket", intOrNull(int64(mc.CoresPerSocket), noVal16, noVal16))
	if bt := j.BillableTres.Float64(); bt == float64(noVal) {
		d.Set("billable_tres", dataout.Null())
	} else {
		d.Set("billable_tres", dataout.Float(bt))
	}
	if j.CPUFreqMin == noVal {
		d.Set("cpus_per_task", dataout.Null())
		d.Set("cpu_frequency_minimum", dataout.Null())
	} else {
		num("cpus_per_task", int64(j.CPUsPerTask))
		num("cpu_frequency_minumum", int64(j.CPUFreqMin))
	}
	d.Set("cpu_frequency_maximum", intOrNull(int64(j.CPUFreqMax), noVal, noVal))
	d.Set("cpu_frequency_governor", intOrNull(int64(j.CPUFreqGov), noVal, noVal))
	str("cpus_per_tres", j.CPUsPerTres)
	num("deadline", j.Deadline)
	d.Set("delay_boot", intOrNull(int64(j.DelayBoot), noVal, noVal))
	str("dependency", j.Dependency)
	num("derived_exit_code", int64(j.DerivedEC))
	num("eligible_time", j.EligibleTime)
	num("end_time", j.EndTime)
	str("excluded_nodes", j.ExcNodes)
	num("exit_code", int64(j.ExitCode))
	str("features", j.Features)
	str("federation_origin", j.FedOriginStr)
	str("federation_siblings_active", j.FedSiblingsActiveStr)
	str("federation_siblings_viable", j.FedSiblingsViableStr)
	gres := d.Set("gres_detail", dataout.NewList())
	for _, g := range j.GresDetailStr {
		gres.Append(nstrV(g))
	}
	if j.GroupID == noVal {
		d.Set("group_id", dataout.Null())
	} else {
		num("group_id", int64(j.GroupID))
		d.Set("group_name", groupOrNull(j.GroupID))
	}
	d.Set("job_id", intOrNull(int64(j.JobID), noVal, noVal))
	if r := j.JobResrcs; r != nil {
		jr := d.Set("job_resources", dataout.NewDict())
		jr.Set("nodes", nstrV(r.Nodes))
		if crType&(crCore|crSocket) != 0 {
			jr.Set("allocated_cores", dataout.Int(int64(r.NCPUs)))
		} else if crType&crCPU != 0 {
			jr.Set("allocated_cpus", dataout.Int(int64(r.NCPUs)))
		}
		jr.Set("allocated_hosts", dataout.Int(int64(len(r.CPUs))))
		dumpNodesRes(jr.Set("allocated_nodes", dataout.NewList()), r)
	}
	d.Set("job_state", dataout.Str(sc.JobStateString(j.JobState)))
	num("last_sched_evaluation", j.LastSchedEval)
	str("licenses", j.Licenses)
	d.Set("max_cpus", intOrNull(int64(j.MaxCPUs), noVal, noVal))
	d.Set("max_nodes", intOrNull(int64(j.MaxNodes), noVal, noVal))
	str("mcs_label", j.MCSLabel)
	str("memory_per_tres", j.MemPerTres)
	str("name", j.Name)
	str("nodes", j.Nodes)
	if j.Nice == noVal || j.Nice == niceOffset {
		d.Set("nice", dataout.Null())
	} else {
		num("nice", int64(j.Nice-niceOffset))
	}
	d.Set("tasks_per_core", intOrNull(int64(mc.NtasksPerCore), noVal16, infinite16))
	num("tasks_per_node", int64(j.NtasksPerNode))
	d.Set("tasks_per_socket", intOrNull(int64(mc.NtasksPerSocket), noVal16, infinite16))
	num("tasks_per_board", int64(mc.NtasksPerBoard))
	tasksKnown := j.NumTasks != noVal && j.NumTasks != infinite
	if tasksKnown {
		num("cpus", int64(j.NumCPUs))
	} else {
		d.Set("cpus", dataout.Null())
	}
	num("node_count", int64(j.NumNodes))
	if tasksKnown {
		num("tasks", int64(j.NumTasks))
	} else {
		d.Set("tasks", dataout.Null())
	}
	num("het_job_id", int64(j.HetJobID))
	str("het_job_id_set", j.HetJobIDSet)
	num("het_job_offset", int64(j.HetJobOffset))
	str("partition", j.Partition)
	str("prefer", j.Prefer)
	switch {
	case j.PnMinMemory&memPerCPU != 0:
		d.Set("memory_per_node", dataout.Null())
		num("memory_per_cpu", int64(j.PnMinMemory&^memPerCPU))
	case j.PnMinMemory != 0:
		num("memory_per_node", int64(j.PnMinMemory))
		d.Set("memory_per_cpu", dataout.Null())
	default:
		d.Set("memory_per_node", dataout.Null())
		d.Set("memory_per_cpu", dataout.Null())
	}
	num("minimum_cpus_per_node", int64(j.PnMinCPUs))
	num("minimum_tmp_disk_per_node", int64(j.PnMinTmpDisk))
	num("preempt_time", j.PreemptTime)
	num("pre_sus_time", j.PreSusTime)
	d.Set("priority", intOrNull(int64(j.Priority), noVal, infinite))
	if j.Profile == profileNotSet {
		d.Set("profile", dataout.Null())
	} else {
		p := d.Set("profile", dataout.NewList())
		if j.Profile == profileNone {
			p.Append(dataout.Str("None"))
		}
		for _, f := range profileNames {
			if j.Profile&f.bit != 0 {
				p.Append(dataout.Str(f.name))
			}
		}
	}
	str("qos", j.QOS)
	d.Set("reboot", dataout.Bool(j.Reboot != 0))
	str("required_nodes", j.ReqNodes)
	d.Set("requeue", dataout.Bool(j.Requeue != 0))
	num("resize_time", j.ResizeTime)
	num("restart_cnt", int64(j.RestartCnt))
	str("resv_name", j.ResvName)
	switch j.Shared {
	case 0:
		d.Set("shared", dataout.Str("none"))
	case 1:
		d.Set("shared", dataout.Str("shared"))
	case 2:
		d.Set("shared", dataout.Str("user"))
	case 3:
		d.Set("shared", dataout.Str("mcs"))
	case noVal16:
		d.Set("shared", dataout.Null())
	default:
		num("shared", int64(j.Shared))
	}
	sf := d.Set("show_flags", dataout.NewList())
	for _, f := range showFlagNames {
		if j.ShowFlags&f.bit != 0 {
			sf.Append(dataout.Str(f.name))
		}
	}
	num("sockets_per_board", int64(mc.SocketsPerBoard))
	d.Set("sockets_per_node", intOrNull(int64(mc.SocketsPerNode), noVal16, noVal16))
	num("start_time", j.StartTime)
	str("state_description", j.StateDesc)
	d.Set("state_reason", dataout.Str(sc.JobReasonString(j.StateReason)))
	str("standard_error", j.StdErr)
	str("standard_input", j.StdIn)
	str("standard_output", j.StdOut)
	num("submit_time", j.SubmitTime)
	num("suspend_time", j.SuspendTime)
	str("system_comment", j.SystemComment)
	str("container", j.Container)
	d.Set("time_limit", intOrNull(int64(j.TimeLimit), infinite, infinite))
	d.Set("time_minimum", intOrNull(int64(j.TimeMin), infinite, infinite))
	d.Set("threads_per_core", intOrNull(int64(mc.ThreadsPerCore), noVal16, noVal16))
	str("tres_bind", j.TresBind)
	str("tres_freq", j.TresFreq)
	str("tres_per_job", j.TresPerJob)
	str("tres_per_node", j.TresPerNode)
	str("tres_per_socket", j.TresPerSocket)
	str("tres_per_task", j.TresPerTask)
	str("tres_req_str", j.TresReqStr)
	str("tres_alloc_str", j.TresAllocStr)
	num("user_id", int64(j.UserID))
	if j.UserName.Valid {
		str("user_name", j.UserName)
	} else {
		d.Set("user_name", userOrNull(j.UserID))
	}
	str("wckey", j.WCKey)
	str("current_working_directory", j.WorkDir)
	return d
}

// dumpNodesRes is _dump_nodes_res: per allocated node, the cores of the
// job's core bitmap by socket ("allocated", or "allocated_and_in_use"
// when also set in the used bitmap).
func dumpNodesRes(list *dataout.Value, r *msg.JobResources) {
	nhosts := len(r.CPUs)
	if len(r.CoresPerSocket) == 0 || nhosts == 0 {
		return
	}
	hosts := expandHosts(r.Nodes.Value)
	bits, _ := sc.HexMaskBits(r.CoreBitmap.Hex.Value)
	used, _ := sc.HexMaskBits(r.CoreBitmapUsed.Hex.Value)
	test := func(b []bool, i int) bool { return i < len(b) && b[i] }
	arraySize := int(r.CoreBitmap.NBits)
	bitInx, sockInx, sockReps := 0, 0, uint32(0)
	u64 := func(a []uint64, i int) int64 {
		if i < len(a) {
			return int64(a[i])
		}
		return 0
	}
	for n := 0; n < nhosts; n++ {
		if sockInx < len(r.SockCoreRepCount) && sockReps >= r.SockCoreRepCount[sockInx] {
			sockInx++
			sockReps = 0
		}
		sockReps++
		if sockInx >= len(r.SocketsPerNode) || sockInx >= len(r.CoresPerSocket) {
			return
		}
		node := list.Append(dataout.NewDict())
		sockets := node.Set("sockets", dataout.NewDict())
		if n < len(hosts) {
			node.Set("nodename", dataout.Str(hosts[n]))
		} else {
			node.Set("nodename", dataout.NullStr())
		}
		var cpusUsed int64
		if n < len(r.CPUsUsed) {
			cpusUsed = int64(r.CPUsUsed[n])
		}
		node.Set("cpus_used", dataout.Int(cpusUsed))
		node.Set("memory_used", dataout.Int(u64(r.MemoryUsed, n)))
		node.Set("memory_allocated", dataout.Int(u64(r.MemoryAllocated, n)))
		cps := int(r.CoresPerSocket[sockInx])
		reps := int(r.SocketsPerNode[sockInx]) * cps
		perSocket := map[int]*dataout.Value{}
		for i := 0; i < reps; i++ {
			if bitInx >= arraySize {
				break
			}
			socket, core := i/cps, i%cps
			if test(bits, bitInx) {
				cores := perSocket[socket]
				if cores == nil {
					cores = sockets.SetInt(int64(socket), dataout.NewDict()).Set("cores", dataout.NewDict())
					perSocket[socket] = cores
				}
				state := "allocated"
				if test(used, bitInx) {
					state = "allocated_and_in_use"
				}
				cores.SetInt(int64(core), dataout.Str(state))
			}
			bitInx++
		}
	}
}

// expandHosts is hostlist_create then hostlist_nth over every index.
func expandHosts(nodes string) []string {
	hosts, err := hostlist.Expand(nodes)
	if err != nil {
		return nil
	}
	return hosts
}
