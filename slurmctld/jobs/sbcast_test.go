package jobs

import (
	"context"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

type fixedSigner []byte

func (s fixedSigner) Sign(context.Context, []byte) ([]byte, error) { return s, nil }

func TestSbcastCred(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.MinNodes = 2
	run := mustSubmit(t, m, cl, d, alice, t0)
	pend := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
	m.Job(pend).Hold = HoldUser
	mustSchedule(t, m, cl, t0)
	sel := func(id, step uint32) *msg.SelectedStep {
		return &msg.SelectedStep{StepID: msg.StepID{JobID: id, StepID: step, StepHetComp: NoVal}, ArrayTaskID: NoVal, HetJobOffset: NoVal}
	}
	for _, tc := range []struct {
		name string
		req  *msg.SelectedStep
		c    Caller
		code int
	}{
		{"unknown job", sel(999, NoVal), alice, slurmerr.ESLURM_INVALID_JOB_ID},
		{"pending job", sel(pend, NoVal), alice, slurmerr.ESLURM_JOB_PENDING},
		{"other user", sel(run, NoVal), bob, slurmerr.ESLURM_USER_ID_MISSING},
		{"no such step", sel(run, 3), alice, slurmerr.ESLURM_INVALID_JOB_ID},
	} {
		if _, err := m.SbcastCred(tc.req, tc.c, t0+1); code(err) != tc.code {
			t.Errorf("%s: %v, want %d", tc.name, err, tc.code)
		}
	}
	g, err := m.SbcastCred(sel(run, NoVal), root, t0+1)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.Sign(context.Background(), fixedSigner("sig"), codec.Version2205)
	if err != nil {
		t.Fatal(err)
	}
	j := m.Job(run)
	cr := resp.Cred
	if resp.JobID != run || resp.NodeList.Value != "n[1-2]" || cr.Nodes.Value != "n[1-2]" || cr.UID != alice.UID ||
		cr.StepID != j.NextStepID || cr.Expiration != j.EndTime || string(cr.Signature) != "sig" {
		t.Errorf("response %+v", resp)
	}
}
