package sched

import (
	"slices"
	"sync"
)

// FitsEmpty is the test-only pass of select_nodes (cons_tres'
// SELECT_MODE_TEST_ONLY): whether job j could run in partition part were
// every node of it empty and up. Submission refuses a job no partition
// could ever hold. Only the request's geometry counts (CPUs, memory,
// GRES, features, required and excluded nodes); the partition's limits,
// which give a queued job a reason instead, and node states do not. A
// job the partition refuses on its limits (or an unknown partition)
// reports true: those checks are the caller's.
func FitsEmpty(s *Snapshot, j *Job, part string) bool {
	return fitsEmpty(newCluster(&Snapshot{Now: s.Now, Config: s.Config, Nodes: s.Nodes, Partitions: s.Partitions}), j, part)
}

func fitsEmpty(c *cluster, j *Job, part string) bool {
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

// EmptyCache is FitsEmpty keeping the empty cluster between calls:
// building it (node configurations, feature index, partition bitmaps)
// costs milliseconds on ten thousand nodes, and submission would pay that
// on every job. The state kept depends on the nodes' configuration
// (hardware, GRES, features, weight, specialized cores and memory) and on
// the partitions' names and members, never on node states or running
// jobs, which the test-only pass ignores. Partition limits, states and
// the scheduler configuration are read from each call's snapshot.
//
// The cache notices a different node table (another slice) and changed
// partition members itself; a node table changed in place must be
// reported with Reset. The zero value is ready to use; safe for
// concurrent use.
type EmptyCache struct {
	mu sync.Mutex
	c  *cluster
	// What c was built from: the node table and each partition's name
	// and members.
	nodes []Node
	parts []partKey
}

type partKey struct {
	name  string
	nodes []int
}

// Reset drops the kept state: the caller changed the configuration of
// some node in place.
func (e *EmptyCache) Reset() {
	e.mu.Lock()
	e.c, e.nodes, e.parts = nil, nil, nil
	e.mu.Unlock()
}

// FitsEmpty is the package's FitsEmpty, with the same result.
func (e *EmptyCache) FitsEmpty(s *Snapshot, j *Job, part string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	snap := &Snapshot{Now: s.Now, Config: s.Config, Nodes: s.Nodes, Partitions: s.Partitions}
	if e.c == nil || !e.matches(snap) {
		e.c = newCluster(snap)
		e.nodes = s.Nodes
		e.parts = make([]partKey, len(s.Partitions))
		for i := range s.Partitions {
			e.parts[i] = partKey{s.Partitions[i].Name, slices.Clone(s.Partitions[i].Nodes)}
		}
	} else {
		// Limits, partition states and the configuration as they are
		// now; nothing built from them is kept.
		e.c.snap, e.c.now = snap, snap.Now
	}
	return fitsEmpty(e.c, j, part)
}

// matches reports whether the kept state was built from s's node table
// and partition members.
func (e *EmptyCache) matches(s *Snapshot) bool {
	if len(s.Nodes) != len(e.nodes) || len(s.Nodes) > 0 && &s.Nodes[0] != &e.nodes[0] ||
		len(s.Partitions) != len(e.parts) {
		return false
	}
	for i := range s.Partitions {
		if s.Partitions[i].Name != e.parts[i].name || !slices.Equal(s.Partitions[i].Nodes, e.parts[i].nodes) {
			return false
		}
	}
	return true
}
