package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// TestBatchScript: REQUEST_BATCH_SCRIPT gives the stored script to the
// owner, root and SlurmUser only, as _slurm_rpc_dump_batch_script does.
func TestBatchScript(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	d := msg.NewJobDesc()
	d.MinNodes, d.AllocRespPort = 1, 4000
	a, _, err := m.Allocate(d, alice, cl, t0)
	if err != nil {
		t.Fatal(err)
	}
	const script = "#!/bin/sh\necho hello\n"
	for _, c := range []struct {
		name     string
		id, uid  uint32
		want     string
		wantCode int
	}{
		{"owner", id, alice.UID, script, 0},
		{"root", id, 0, script, 0},
		{"SlurmUser", id, 64030, script, 0},
		{"another user", id, bob.UID, "", slurmerr.ESLURM_USER_ID_MISSING},
		{"unknown job", id + 100, 0, "", slurmerr.ESLURM_INVALID_JOB_ID},
		{"allocation has no script", a.JobID, alice.UID, "", slurmerr.ESLURM_JOB_SCRIPT_MISSING},
		{"another user's allocation", a.JobID, bob.UID, "", slurmerr.ESLURM_USER_ID_MISSING},
	} {
		got, err := m.BatchScript(c.id, c.uid)
		if got != c.want || code(err) != c.wantCode {
			t.Errorf("%s: %q, %v; want %q, code %d", c.name, got, err, c.want, c.wantCode)
		}
	}
}
