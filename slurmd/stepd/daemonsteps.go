package stepd

import (
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmd/daemon"
)

// DaemonSteps is the Manager as slurmd/daemon's Steps seam: main wires
// daemon.Options{Steps: stepd.DaemonSteps{Manager: m}}.
type DaemonSteps struct {
	*Manager
}

var _ daemon.Steps = DaemonSteps{}

// Running lists the live steps in the daemon's terms.
func (d DaemonSteps) Running() []daemon.StepRef {
	var out []daemon.StepRef
	for _, r := range d.Manager.Running() {
		out = append(out, daemon.StepRef{ID: msg.StepID{JobID: r.JobID, StepID: r.StepID, StepHetComp: r.HetComp},
			Owner: r.UID})
	}
	return out
}
