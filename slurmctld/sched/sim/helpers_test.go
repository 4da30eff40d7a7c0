package sim

import (
	"io"
	"strings"

	"github.com/goslurm/goslurm/slurmctld/sched/swf"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func newTestHeader(maxNodes, maxProcs int64) swf.Header {
	return swf.Header{MaxNodes: maxNodes, MaxProcs: maxProcs}
}
