package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// As _slurm_rpc_job_notify: the owner or an operator (root, SlurmUser)
// gets past the access check, to the pending job's ESLURM_DISABLED.
func TestNotifyAccess(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil) // SlurmUser 64030
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	for _, tc := range []struct {
		name string
		c    Caller
		want int
	}{
		{"owner", alice, slurmerr.ESLURM_DISABLED},
		{"root", root, slurmerr.ESLURM_DISABLED},
		{"SlurmUser", Caller{UID: 64030, GID: 64030}, slurmerr.ESLURM_DISABLED},
		{"other user", bob, slurmerr.ESLURM_USER_ID_MISSING},
	} {
		req := &msg.JobNotifyRequest{StepID: msg.StepID{JobID: id, StepID: NoVal, StepHetComp: NoVal}, Message: msg.Str("hi")}
		if _, err := m.Notify(req, tc.c); code(err) != tc.want {
			t.Errorf("%s: %v, want %d", tc.name, err, tc.want)
		}
	}
}
