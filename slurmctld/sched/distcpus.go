package sched

import "slices"

// distributeCPUs is distribute for a request counting CPUs (request.unit):
// the CPUs each chosen node offers, as _eval_nodes' _cpus_to_use trims
// them, then the tasks laid over those CPUs as dist_tasks_compute_c_b
// does: one task a node first, then the tasks that fit whole, node by
// node; tasks that fit nowhere whole go to the nodes in turn, taking what
// CPUs are left there (-n 4 -c 3 on three 4-CPU nodes: 2+1+1 tasks on
// 4+3+3 CPUs).
func distributeCPUs(r *request, cands, caps []int, chosenPos, order []int) (placement, bool) {
	n := len(chosenPos)
	if n == 0 || n < r.minN || n > r.maxN {
		return placement{}, false
	}
	pl := placement{nodes: make([]int, n), tasks: make([]int, n), cpus: make([]int, n)}
	for i, pos := range chosenPos {
		pl.nodes[i] = cands[pos]
	}
	if order == nil {
		order = chosenPos
	}
	avail := make([]int, n)
	pnMin := max(r.unit, r.minCPUs)
	remMax, remNodes, total := r.tasks, max(r.minN, r.wantN), 0
	for _, pos := range order {
		i, ok := slices.BinarySearch(chosenPos, pos)
		if !ok {
			continue
		}
		a := caps[pos]
		// CPUs left for the nodes still to come, one allocation unit
		// (a core's usable threads) each.
		rm := remMax - max(remNodes-1, 0)*r.cpusPerCore(cands[pos])
		if a > rm {
			a = max(rm, pnMin)
		}
		avail[i] = a
		total += a
		remMax -= a
		remNodes--
	}
	if total < r.tasks {
		return placement{}, false
	}
	cpt, tid := r.unit, 0
	give := func(i int) {
		tid++
		pl.tasks[i]++
		pl.cpus[i] = min(pl.cpus[i]+cpt, avail[i])
	}
	room := false
	for i := 0; i < n && tid < r.ntasks; i++ {
		if avail[i] > 0 {
			give(i)
			room = room || pl.cpus[i] < avail[i]
		}
	}
	over := !room
	// Tasks that fit in the threads left on cores the node's tasks
	// already use.
	for i := 0; i < n && tid < r.ntasks; i++ {
		fill := (pl.cpus[i] % r.cpusPerCore(pl.nodes[i])) / cpt
		for t := 0; t < fill && tid < r.ntasks; t++ {
			if avail[i]-pl.cpus[i] < cpt {
				break
			}
			give(i)
		}
	}
	for tid < r.ntasks {
		room := false
		for i := 0; i < n && tid < r.ntasks; i++ {
			per := max(r.cpusPerCore(pl.nodes[i])/cpt, 1)
			for t := 0; t < per && tid < r.ntasks; t++ {
				if !over && avail[i]-pl.cpus[i] < cpt {
					break
				}
				give(i)
				room = room || avail[i]-pl.cpus[i] >= cpt
			}
		}
		over = over || !room
	}
	return pl, true
}

// cpusPerCore is the CPUs of a core of node ni the job's tasks use
// (common_cpus_per_core).
func (r *request) cpusPerCore(ni int) int { return r.threads(&r.nodes[ni]) }
