package sim

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/goslurm/goslurm/slurmctld/sched/swf"
)

// Job is one trace job prepared for simulation. Times are seconds from the
// trace start.
type Job struct {
	ID     uint32
	User   uint32
	Submit int64
	CPUs   int64 // tasks of one CPU each
	// LimitMin is the time limit in minutes (the requested time rounded
	// up, as Slurm's --time has minute resolution); 0 means none was
	// requested, so the partition's DefaultTime (= MaxTime) applies.
	LimitMin int64
	Run      int64 // seconds the job runs, already cut to the limit
	Killed   bool  // the recorded run time exceeded the limit

	RecordedWait int64 // the trace's own wait time, -1 unknown
}

// Cluster is the simulated machine: identical nodes in one partition.
type Cluster struct {
	Nodes       int
	CPUsPerNode int
	// MaxTimeMin is the partition's MaxTime (and DefaultTime) in minutes:
	// the longest limit any job of the trace asks for.
	MaxTimeMin int64
}

// TotalCPUs is the size of the machine.
func (c Cluster) TotalCPUs() int64 { return int64(c.Nodes) * int64(c.CPUsPerNode) }

// Skipped counts trace records that are not simulated, by reason.
type Skipped struct {
	Malformed int // the line does not parse
	NoProcs   int // neither requested nor allocated processors
	TooBig    int // asks more processors than the machine has
	NoRun     int // run time unknown (-1)
	NoSubmit  int // submit time unknown
}

// Total is the number of skipped records.
func (s Skipped) Total() int { return s.Malformed + s.NoProcs + s.TooBig + s.NoRun + s.NoSubmit }

// Trace is a trace read for simulation.
type Trace struct {
	Header  swf.Header
	Cluster Cluster
	Jobs    []Job // by submit time, then job number
	Skipped Skipped
	Killed  int // jobs whose run time was cut to their limit
	NoLimit int // jobs with no requested time (they get MaxTime)
}

// ShapeCluster derives the machine from the header: MaxNodes nodes of
// MaxProcs/MaxNodes CPUs; single-CPU nodes when only one of the two is given
// or MaxProcs is not a multiple of MaxNodes. nodes / cpusPerNode > 0
// override the header.
func ShapeCluster(h swf.Header, nodes, cpusPerNode int) (Cluster, error) {
	var c Cluster
	switch {
	case h.MaxNodes > 0 && h.MaxProcs > 0 && h.MaxProcs%h.MaxNodes == 0:
		c = Cluster{Nodes: int(h.MaxNodes), CPUsPerNode: int(h.MaxProcs / h.MaxNodes)}
	case h.MaxProcs > 0:
		c = Cluster{Nodes: int(h.MaxProcs), CPUsPerNode: 1}
	case h.MaxNodes > 0:
		c = Cluster{Nodes: int(h.MaxNodes), CPUsPerNode: 1}
	}
	if nodes > 0 {
		c.Nodes = nodes
	}
	if cpusPerNode > 0 {
		c.CPUsPerNode = cpusPerNode
	}
	if c.Nodes <= 0 || c.CPUsPerNode <= 0 {
		return c, errors.New("the trace header gives neither MaxNodes nor MaxProcs: give the cluster size")
	}
	if c.CPUsPerNode > 65535 {
		return c, fmt.Errorf("%d CPUs per node is more than a node can have", c.CPUsPerNode)
	}
	return c, nil
}

// ReadOptions controls ReadTrace.
type ReadOptions struct {
	MaxJobs     int // stop after this many usable jobs; 0 = all
	Nodes       int // override the header's machine shape when > 0
	CPUsPerNode int
}

// ReadTrace reads an SWF stream and prepares its jobs. Records that cannot be
// simulated are counted in Skipped, not returned.
func ReadTrace(r io.Reader, opt ReadOptions) (*Trace, error) {
	rd, err := swf.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	t := &Trace{Header: rd.Header()}
	t.Cluster, err = ShapeCluster(t.Header, opt.Nodes, opt.CPUsPerNode)
	if err != nil {
		return nil, err
	}
	total := t.Cluster.TotalCPUs()
	for opt.MaxJobs <= 0 || len(t.Jobs) < opt.MaxJobs {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if le := (*swf.LineError)(nil); errors.As(err, &le) {
			t.Skipped.Malformed++
			continue
		}
		if err != nil {
			return nil, err
		}
		procs := rec.ReqProcs
		if procs <= 0 {
			procs = rec.AllocProcs
		}
		switch {
		case procs <= 0:
			t.Skipped.NoProcs++
			continue
		case procs > total:
			t.Skipped.TooBig++
			continue
		case rec.Run < 0:
			t.Skipped.NoRun++
			continue
		case rec.Submit < 0:
			t.Skipped.NoSubmit++
			continue
		}
		j := Job{
			ID:           uint32(rec.Job),
			User:         uint32(max(rec.User, 0)),
			Submit:       rec.Submit,
			CPUs:         procs,
			Run:          rec.Run,
			RecordedWait: rec.Wait,
		}
		if rec.ReqTime > 0 {
			j.LimitMin = (rec.ReqTime + 59) / 60
			t.Cluster.MaxTimeMin = max(t.Cluster.MaxTimeMin, j.LimitMin)
		} else {
			t.NoLimit++
		}
		t.Jobs = append(t.Jobs, j)
	}
	if t.Cluster.MaxTimeMin == 0 {
		// No job asked for a time: give the partition the longest run.
		for _, j := range t.Jobs {
			t.Cluster.MaxTimeMin = max(t.Cluster.MaxTimeMin, (j.Run+59)/60)
		}
		t.Cluster.MaxTimeMin = max(t.Cluster.MaxTimeMin, 1)
	}
	for i := range t.Jobs {
		j := &t.Jobs[i]
		limit := j.LimitMin
		if limit == 0 {
			limit = t.Cluster.MaxTimeMin
		}
		if j.Run > limit*60 {
			j.Run = limit * 60
			j.Killed = true
			t.Killed++
		}
	}
	slices.SortStableFunc(t.Jobs, func(a, b Job) int {
		if a.Submit != b.Submit {
			return compare(a.Submit, b.Submit)
		}
		return compare(a.ID, b.ID)
	})
	return t, nil
}

func compare[T int64 | uint32](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
