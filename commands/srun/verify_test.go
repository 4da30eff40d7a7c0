package main

import (
	"bytes"
	"testing"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
)

func TestVerifyCounts(t *testing.T) {
	for _, c := range []struct {
		name                   string
		nodes, maxNodes, tasks int // 0: not given
		perNode                int
		wantMin, wantMax       int
		wantPerNode            int
		log                    string
	}{
		{name: "more nodes than tasks", nodes: 2, maxNodes: 2, tasks: 1, perNode: jobopt.NoVal, wantMin: 1, wantMax: 1, wantPerNode: jobopt.NoVal,
			log: "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"},
		{name: "range", nodes: 1, maxNodes: 4, tasks: 3, perNode: jobopt.NoVal, wantMin: 1, wantMax: 3, wantPerNode: jobopt.NoVal},
		{name: "per node matches", nodes: 2, maxNodes: 2, tasks: 4, perNode: 2, wantMin: 2, wantMax: 2, wantPerNode: 2},
		{name: "per node ignored", nodes: 2, maxNodes: 2, tasks: 4, perNode: 1, wantMin: 2, wantMax: 2, wantPerNode: jobopt.NoVal,
			log: "srun: Warning: can't honor --ntasks-per-node set to 1 which doesn't match the requested tasks 4 with the number of requested nodes 2. Ignoring --ntasks-per-node.\n"},
		{name: "no task count", nodes: 2, maxNodes: 2, perNode: jobopt.NoVal, wantMin: 2, wantMax: 2, wantPerNode: jobopt.NoVal},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			s := &srun{log: &jobopt.Log{Prog: "srun", W: &buf}}
			o := jobopt.NewOpts(jobopt.Srun, s.log)
			o.MinNodes, o.MaxNodes, o.NodesSet = c.nodes, c.maxNodes, c.nodes > 0
			if c.tasks > 0 {
				o.Ntasks, o.NtasksSet = c.tasks, true
			}
			o.NtasksPerNode = c.perNode
			s.verifyCounts(o)
			if o.MinNodes != c.wantMin || o.MaxNodes != c.wantMax || o.NtasksPerNode != c.wantPerNode || buf.String() != c.log {
				t.Errorf("got -N %d-%d per-node %d log %q; want %d-%d %d %q",
					o.MinNodes, o.MaxNodes, o.NtasksPerNode, buf.String(), c.wantMin, c.wantMax, c.wantPerNode, c.log)
			}
		})
	}
}
