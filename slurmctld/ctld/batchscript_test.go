package ctld

import (
	"context"
	"testing"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// TestRPCBatchScript: scontrol write batch_script's request is answered
// with RESPONSE_BATCH_SCRIPT for the owner and a return code otherwise,
// and the reply body encodes as Slurm packs it (one packstr).
func TestRPCBatchScript(t *testing.T) {
	ctl, _ := attachTestJobs(t)
	ctx := context.Background()
	if resp := ctl.Serve(ctx, submitReq(1)); resp.MsgType != msgtype.RESPONSE_SUBMIT_BATCH_JOB {
		t.Fatalf("submit: %v %+v", resp.MsgType, resp.Body)
	}
	ask := func(id, uid uint32) *server.Response {
		return ctl.Serve(ctx, &server.Request{
			Header:   codec.Header{MsgType: msgtype.REQUEST_BATCH_SCRIPT, Version: codec.Current},
			Body:     &msg.JobIDShowRequest{JobID: id},
			Identity: auth.Identity{UID: uid, GID: uid},
		})
	}
	resp := ask(1, 0)
	b, ok := resp.Body.(*msg.BatchScriptResponse)
	if resp.MsgType != msgtype.RESPONSE_BATCH_SCRIPT || !ok || b.Script != msg.Str("#!/bin/sh\ntrue\n") {
		t.Fatalf("owner: %v %+v", resp.MsgType, resp.Body)
	}
	bc, _ := msg.Registry().Lookup(msgtype.RESPONSE_BATCH_SCRIPT)
	var w pack.Writer
	if err := bc.Encode(&w, codec.Current, resp.Body); err != nil {
		t.Fatal(err)
	}
	if got := pack.NewReader(w.Bytes()).Str(); got != "#!/bin/sh\ntrue\n" {
		t.Errorf("wire body %x", w.Bytes())
	}
	for _, c := range []struct {
		name    string
		id, uid uint32
		code    int
	}{
		{"another user", 1, 1000, slurmerr.ESLURM_USER_ID_MISSING},
		{"unknown job", 99, 0, slurmerr.ESLURM_INVALID_JOB_ID},
	} {
		resp := ask(c.id, c.uid)
		rc, ok := resp.Body.(codec.ReturnCode)
		if p, isPtr := resp.Body.(*codec.ReturnCode); isPtr {
			rc, ok = *p, true
		}
		if resp.MsgType != msgtype.RESPONSE_SLURM_RC || !ok || int(rc.RC) != c.code {
			t.Errorf("%s: %v %+v, want rc %d", c.name, resp.MsgType, resp.Body, c.code)
		}
	}
}
