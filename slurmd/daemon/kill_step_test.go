package daemon

import (
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// TestStepTimeLimitKeepsCredentials: a step's REQUEST_KILL_TIMELIMIT ends
// that step only (22.05's _rpc_timelimit for a step id): the job's
// credentials are not revoked, so its next step still launches, while a
// kill of the whole job revokes them.
func TestStepTimeLimitKeepsCredentials(t *testing.T) {
	steps := &fakeSteps{}
	r := newRig(t, rigOpts{steps: steps})
	now := r.now
	kill := killReq(50, now)
	kill.StepID.StepID = 0
	if rc := r.rc(500, msgtype.REQUEST_KILL_TIMELIMIT, kill); rc != 0 {
		t.Fatalf("step kill: rc %d", rc)
	}
	next := launchReq(cred(t, 50, 1, "n1", now.Add(-time.Second), nil), 1000, "n1")
	if rc := r.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, next); rc != 0 {
		t.Errorf("launch after a step's time-out: rc %d (%s), want 0", rc, slurmerr.Name(rc))
	}
	if rc := r.rc(500, msgtype.REQUEST_KILL_TIMELIMIT, killReq(50, now)); rc != 0 {
		t.Fatalf("job kill: rc %d", rc)
	}
	last := launchReq(cred(t, 50, 2, "n1", now.Add(-time.Second), nil), 1000, "n1")
	if rc := r.rc(1000, msgtype.REQUEST_LAUNCH_TASKS, last); rc != slurmerr.ESLURMD_CREDENTIAL_REVOKED {
		t.Errorf("launch after the job's time-out: rc %d (%s), want ESLURMD_CREDENTIAL_REVOKED", rc, slurmerr.Name(rc))
	}
}
