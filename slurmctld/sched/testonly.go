package sched

// FitsEmpty is the test-only pass of select_nodes (cons_tres'
// SELECT_MODE_TEST_ONLY): whether job j could run in partition part were
// every node of it empty and up. Submission refuses a job no partition
// could ever hold. Only the request's geometry counts (CPUs, memory,
// GRES, features, required and excluded nodes); the partition's limits,
// which give a queued job a reason instead, and node states do not. A
// job the partition refuses on its limits (or an unknown partition)
// reports true: those checks are the caller's.
func FitsEmpty(s *Snapshot, j *Job, part string) bool {
	c := newCluster(&Snapshot{Now: s.Now, Config: s.Config, Nodes: s.Nodes, Partitions: s.Partitions})
	pi, ok := c.partIdx[part]
	if !ok {
		return true
	}
	r, why := c.newRequest(j, pi)
	if why != ReasonNone {
		return true
	}
	_, ok = c.emptyFit(r)
	return ok
}
