package jobs

import (
	"fmt"
	"strings"
)

// hetEnv is _set_het_job_env: the batch environment of a het job's
// leader gets, for every component k, NAME_HET_GROUP_k (and the older
// NAME_PACK_GROUP_k) for the job's account, CPUs per node, id, name,
// nodes, node count, partition, memory request and tasks per node, then
// SLURM_HET_SIZE and SLURM_PACK_SIZE. A variable already present is
// replaced in place; new ones go at the end.
func hetEnv(env []string, comps []*Job) []string {
	set := func(name, val string) {
		p := name + "="
		for i, e := range env {
			if strings.HasPrefix(e, p) {
				env[i] = p + val
				return
			}
		}
		env = append(env, p+val)
	}
	het := func(name string, k int, val string) {
		set(fmt.Sprintf("%s_PACK_GROUP_%d", name, k), val)
		set(fmt.Sprintf("%s_HET_GROUP_%d", name, k), val)
	}
	for k, c := range comps {
		if c.Account != "" {
			het("SLURM_JOB_ACCOUNT", k, c.Account)
		}
		if len(c.NodeCPUs) > 0 {
			het("SLURM_JOB_CPUS_PER_NODE", k, compressedCounts(c.NodeCPUs))
		}
		het("SLURM_JOB_ID", k, fmt.Sprint(c.ID))
		het("SLURM_JOB_NAME", k, c.Name)
		het("SLURM_JOB_NODELIST", k, c.nodeList())
		het("SLURM_JOB_NUM_NODES", k, fmt.Sprint(len(c.Nodes)))
		if c.Partition != "" {
			het("SLURM_JOB_PARTITION", k, c.Partition)
		}
		if c.QOS != "" {
			het("SLURM_JOB_QOS", k, c.QOS)
		}
		if c.Reservation != "" {
			het("SLURM_JOB_RESERVATION", k, c.Reservation)
		}
		switch mem := c.PnMinMemory; {
		case mem == NoVal64 || mem == 0:
		case mem&memPerCPU != 0:
			het("SLURM_MEM_PER_CPU", k, fmt.Sprint(mem&^memPerCPU))
		default:
			het("SLURM_MEM_PER_NODE", k, fmt.Sprint(mem))
		}
		if len(c.NodeCPUs) > 0 {
			het("SLURM_TASKS_PER_NODE", k, compressedCounts(blockTasks(c)))
		}
	}
	set("SLURM_PACK_SIZE", fmt.Sprint(len(comps)))
	set("SLURM_HET_SIZE", fmt.Sprint(len(comps)))
	return env
}

// blockTasks lays a component's tasks out block-wise on its nodes as
// slurm_step_layout_create does for the batch environment: the task count
// is the job's, else its CPUs over cpus-per-task; every node first gets a
// task, then each node is filled up to its CPUs in order, then any tasks
// left go round the nodes.
func blockTasks(j *Job) []uint32 {
	cpt := uint32(1)
	if j.CPUsPerTask != NoVal16 && j.CPUsPerTask > 0 {
		cpt = uint32(j.CPUsPerTask)
	}
	var total uint32
	for _, c := range j.NodeCPUs {
		total += c
	}
	n := total / cpt
	if j.NumTasks != NoVal && j.NumTasks != 0 {
		n = j.NumTasks
	}
	tasks := make([]uint32, len(j.NodeCPUs))
	left := n
	for i := range tasks {
		if left == 0 {
			break
		}
		tasks[i] = 1
		left--
	}
	for i, c := range j.NodeCPUs {
		for left > 0 && (tasks[i]+1)*cpt <= c {
			tasks[i]++
			left--
		}
	}
	for i := 0; left > 0 && len(tasks) > 0; i = (i + 1) % len(tasks) {
		tasks[i]++
		left--
	}
	return tasks
}
