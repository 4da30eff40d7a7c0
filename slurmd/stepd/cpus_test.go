package stepd

import (
	"testing"

	"github.com/goslurm/goslurm/credential/jobcred"
)

func TestStepCPUs(t *testing.T) {
	// Two nodes of 2 sockets x 2 cores, then one node of 1x2: 10 cores in
	// the job bitmap. The step has cores 1,2 of n1, 4..7 of n2 (all) and
	// none of n3.
	cred := &jobcred.Credential{Body: jobcred.Body{
		JobHostlist:    jobcred.Str("n[1-3]"),
		SocketGroups:   []jobcred.SocketGroup{{CoresPerSocket: 2, SocketsPerNode: 2, RepCount: 2}, {CoresPerSocket: 2, SocketsPerNode: 1, RepCount: 1}},
		StepCoreBitmap: jobcred.BitmapOf(10, 1, 2, 4, 5, 6, 7),
	}}
	tests := []struct {
		node     string
		nodeCPUs int
		want     uint16
	}{
		{"n1", 4, 2},
		{"n1", 8, 4}, // two threads per core
		{"n2", 4, 4},
		{"n3", 2, 1}, // no core of the step here: Slurm's minimum of one
		{"n9", 4, 7}, // not in the job: the fallback
	}
	for _, tc := range tests {
		if got := stepCPUs(cred, tc.node, tc.nodeCPUs, 7); got != tc.want {
			t.Errorf("stepCPUs(%s, %d CPUs) = %d, want %d", tc.node, tc.nodeCPUs, got, tc.want)
		}
	}
	if got := stepCPUs(nil, "n1", 4, 3); got != 3 {
		t.Errorf("no credential: %d, want the fallback 3", got)
	}
}
