package stepd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
)

// memPerCPU is the MEM_PER_CPU flag bit of pn_min_memory.
const memPerCPU uint64 = 0x8000000000000000

// Env is an environment in Slurm's env_array form ("NAME=value"), kept in
// order: overwriting a name replaces it where it stands, a new name goes to
// the end.
type Env []string

// Get returns the value of name and whether it is set.
func (e Env) Get(name string) (string, bool) {
	for _, kv := range e {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// Set is env_array_overwrite: replace name's value, or append it.
func (e *Env) Set(name, value string) {
	for i, kv := range *e {
		if k, _, ok := strings.Cut(kv, "="); ok && k == name {
			(*e)[i] = name + "=" + value
			return
		}
	}
	*e = append(*e, name+"="+value)
}

// Append is env_array_append: set name only if it is not set yet.
func (e *Env) Append(name, value string) {
	if _, ok := e.Get(name); !ok {
		*e = append(*e, name+"="+value)
	}
}

// Unset removes name.
func (e *Env) Unset(name string) {
	out := (*e)[:0]
	for _, kv := range *e {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	*e = out
}

// NodeEnv is what the batch environment takes from this node and its
// slurm.conf rather than from the launch message.
type NodeEnv struct {
	NodeName       string // SLURMD_NODENAME, HOSTNAME, SLURM_TOPOLOGY_ADDR
	ClusterName    string // SLURM_CLUSTER_NAME
	ConfPath       string // SLURM_CONF
	CtldHost       string // SlurmctldHost[0], for SLURM_WORKING_CLUSTER
	CtldPort       int
	SelectPluginID uint32 // 109 cons_tres, 101 cons_res, 102 linear
	UserName       string // SLURM_JOB_USER
}

// Limits are the job's inherited settings the supervisor consumes from the
// environment (sbatch's SLURM_UMASK and SLURM_RLIMIT_*) and applies to the
// script instead of passing them on.
type Limits struct {
	Umask   int               // -1 when not given
	RLimits map[string]uint64 // by Slurm's name (CPU, FSIZE, NOFILE, ...)
}

// nullStr prints a NULL string the way glibc's printf("%s", NULL) does,
// which is what Slurm's environment gets for unset strings.
func nullStr(s msg.NullString) string {
	if !s.Valid {
		return "(null)"
	}
	return s.Value
}

// BatchEnv builds the batch script's environment as slurmstepd 22.05 does
// (protocol-daemon.md §6.1): the job's stored environment, minus what the
// supervisor consumes (SLURM_UMASK, SLURM_RLIMIT_*), then
// env_array_for_batch_job, the topology variables, TMPDIR and the per-task
// layer for task 0. SLURM_TASK_PID is left out: only the process that
// becomes the script knows it (see the exec helper).
func BatchEnv(req *msg.BatchJobLaunch, n NodeEnv) (Env, Limits) {
	env := make(Env, 0, len(req.Environment)+40)
	for _, kv := range req.Environment {
		if kv.Valid && strings.Contains(kv.Value, "=") {
			env = append(env, kv.Value)
		}
	}
	lim := consumeLimits(&env, true)

	// env_array_for_batch_job
	var nodes uint32
	for _, r := range req.CPUCountReps {
		nodes += r
	}
	env.Set("SLURM_CLUSTER_NAME", n.ClusterName)
	env.Set("SLURM_JOB_ID", u32(req.JobID))
	env.Set("SLURM_JOB_NUM_NODES", u32(nodes))
	if req.ArrayTaskID != NoVal {
		env.Set("SLURM_ARRAY_JOB_ID", u32(req.ArrayJobID))
		env.Set("SLURM_ARRAY_TASK_ID", u32(req.ArrayTaskID))
	}
	env.Set("SLURM_JOB_NODELIST", nullStr(req.Nodes))
	env.Set("SLURM_JOB_PARTITION", nullStr(req.Partition))
	env.Set("SLURM_NODE_ALIASES", nullStr(req.AliasList))
	env.Set("SLURM_JOB_CPUS_PER_NODE", compressedU16(req.CPUsPerNode, req.CPUCountReps))
	env.Set("ENVIRONMENT", "BATCH")
	if n.NodeName != "" {
		env.Set("HOSTNAME", n.NodeName)
	}
	env.Set("SLURM_JOBID", u32(req.JobID))
	env.Set("SLURM_NNODES", u32(nodes))
	env.Set("SLURM_NODELIST", nullStr(req.Nodes))
	cpt := uint32(1)
	if req.CPUsPerTask != 0 && req.CPUsPerTask != 0xfffe {
		cpt = uint32(req.CPUsPerTask)
	}
	if _, ok := env.Get("SLURM_CPUS_PER_TASK"); ok {
		env.Set("SLURM_CPUS_PER_TASK", u32(cpt))
	}
	ntasks := req.NTasks
	if ntasks != 0 {
		env.Append("SLURM_NTASKS", u32(ntasks))
		env.Append("SLURM_NPROCS", u32(ntasks))
	} else {
		for i, c := range req.CPUsPerNode {
			if i < len(req.CPUCountReps) {
				ntasks += uint32(c) / cpt * req.CPUCountReps[i]
			}
		}
	}
	env.Set("SLURM_TASKS_PER_NODE", compressedTasks(blockLayout(req.CPUsPerNode, req.CPUCountReps, cpt, ntasks)))
	if req.PnMinMemory&memPerCPU != 0 {
		env.Set("SLURM_MEM_PER_CPU", strconv.FormatUint(req.PnMinMemory&^memPerCPU, 10))
	} else if req.PnMinMemory != 0 {
		env.Set("SLURM_MEM_PER_NODE", strconv.FormatUint(req.PnMinMemory, 10))
	}
	if req.Account.Valid {
		env.Set("SLURM_JOB_ACCOUNT", req.Account.Value)
	}
	if req.QOS.Valid {
		env.Set("SLURM_JOB_QOS", req.QOS.Value)
	}
	if req.ResvName.Valid {
		env.Set("SLURM_JOB_RESERVATION", req.ResvName.Value)
	}

	// slurmstepd: topology/none's address and pattern; TMPDIR for the task.
	env.Set("SLURM_TOPOLOGY_ADDR", n.NodeName)
	env.Set("SLURM_TOPOLOGY_ADDR_PATTERN", "node")
	if v, ok := env.Get("TMPDIR"); !ok || v == "" {
		env.Set("TMPDIR", "/tmp")
	}

	// exec_task + setup_env for the one batch "task".
	env.Set("SLURM_CONF", n.ConfPath)
	env.Unset("SLURM_CONF_SERVER")
	cpusOnNode := uint16(1)
	if len(req.CPUsPerNode) > 0 {
		cpusOnNode = req.CPUsPerNode[0]
	}
	env.Set("SLURM_CPUS_ON_NODE", strconv.Itoa(int(cpusOnNode)))
	env.Set("SLURM_GTIDS", "0")
	if req.RestartCnt != 0 {
		env.Set("SLURM_RESTART_COUNT", strconv.Itoa(int(req.RestartCnt)))
	}
	if n.UserName != "" {
		env.Set("SLURM_JOB_UID", u32(req.UID))
		env.Set("SLURM_JOB_USER", n.UserName)
	}
	env.Set("SLURM_WORKING_CLUSTER", fmt.Sprintf("%s:%s:%d:%d:%d",
		n.ClusterName, n.CtldHost, n.CtldPort, 0x2600, n.SelectPluginID))
	env.Set("SLURM_JOB_ID", u32(req.JobID))
	env.Set("SLURM_JOBID", u32(req.JobID))
	env.Set("SLURM_NODEID", "0")
	env.Set("SLURM_PROCID", "0")
	env.Set("SLURM_LOCALID", "0")
	env.Set("SLURM_JOB_GID", u32(req.GID))
	env.Set("SLURMD_NODENAME", n.NodeName)
	if req.TresBind.Valid {
		env.Set("SLURMD_TRES_BIND", req.TresBind.Value)
	}
	if req.TresFreq.Valid {
		env.Set("SLURMD_TRES_FREQ", req.TresFreq.Value)
	}
	return env, lim
}

// consumeLimits takes sbatch/srun's SLURM_RLIMIT_* (and, for the batch
// script, SLURM_UMASK) out of env; the supervisor applies them to the task
// instead.
func consumeLimits(env *Env, dropUmask bool) Limits {
	lim := Limits{Umask: -1, RLimits: map[string]uint64{}}
	if v, ok := env.Get("SLURM_UMASK"); ok {
		if m, err := strconv.ParseUint(v, 8, 32); err == nil {
			lim.Umask = int(m)
		}
		if dropUmask {
			env.Unset("SLURM_UMASK")
		}
	}
	for _, kv := range append(Env(nil), *env...) {
		k, v, _ := strings.Cut(kv, "=")
		if name, ok := strings.CutPrefix(k, "SLURM_RLIMIT_"); ok {
			// A leading U marks a limit the user asked to propagate.
			if n, err := strconv.ParseUint(strings.TrimPrefix(v, "U"), 10, 64); err == nil {
				lim.RLimits[name] = n
			}
			env.Unset(k)
		}
	}
	return lim
}

func u32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

// compressedU16 is uint32_compressed_to_str: "4(x2),2".
func compressedU16(vals []uint16, reps []uint32) string {
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(v)))
		if i < len(reps) && reps[i] > 1 {
			fmt.Fprintf(&b, "(x%d)", reps[i])
		}
	}
	return b.String()
}

// compressedTasks is uint16_array_to_str: runs of equal counts collapse to
// "n(xk)".
func compressedTasks(tasks []uint32) string {
	var b strings.Builder
	for i := 0; i < len(tasks); {
		j := i
		for j < len(tasks) && tasks[j] == tasks[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(u32(tasks[i]))
		if j-i > 1 {
			fmt.Fprintf(&b, "(x%d)", j-i)
		}
		i = j
	}
	return b.String()
}

// blockLayout counts the tasks per node of Slurm's default block
// distribution (no CR_PACK_NODES): a cyclic deal bounded by each node's
// cpus/cpus_per_task, then oversubscribed round robin once every node is
// full.
func blockLayout(cpusPerNode []uint16, reps []uint32, cpt, ntasks uint32) []uint32 {
	var cpus []uint32
	for i, c := range cpusPerNode {
		if i >= len(reps) {
			break
		}
		per := uint32(c) / cpt
		if per < 1 {
			per = 1
		}
		for r := uint32(0); r < reps[i]; r++ {
			cpus = append(cpus, per)
		}
	}
	tasks := make([]uint32, len(cpus))
	if len(cpus) == 0 {
		return tasks
	}
	over := false
	for j, t := uint32(0), uint32(0); t < ntasks; j++ {
		room := false
		for i := 0; i < len(cpus) && t < ntasks; i++ {
			if j < cpus[i] || over {
				tasks[i]++
				t++
				if j+1 < cpus[i] {
					room = true
				}
			}
		}
		if !room {
			over = true
		}
	}
	return tasks
}
