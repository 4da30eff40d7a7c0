package captures

// RESPONSE_STATS_INFO (sdiag) and RESPONSE_JOB_SBCAST_CRED (sbcast) from a
// live real Slurm 22.05 controller: our requests are accepted and the
// replies decode with protocol/msg, use their body up and re-encode to the
// bytes the controller sent. The sbcast credential's munge signature is
// checked to cover exactly the bytes SbcastCred.SignedBytes packs. Skipped
// when the Slurm binaries are missing (testsuite/oracle rules).

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

func TestStatsSbcastLiveRealSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	c := realslurm.Start(t, realslurm.Options{Nodes: 2})
	cl := &client.Client{
		Controllers:  []string{c.CtldAddr()},
		Auth:         &auth.Munge{Client: c.Munge.Client()},
		SlurmUserUID: c.SlurmUserUID,
		Sweeps:       2,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	g := msg.Registry()
	send := func(mt msgtype.Type, body any) *client.Reply {
		t.Helper()
		r, err := cl.Call(ctx, mt, encodeJob(t, g, mt, body))
		if err != nil {
			t.Fatalf("%v: %v", mt, err)
		}
		return r
	}

	// A real sbatch job that runs (sleep), so the counters and the RPC
	// tables are not all empty and there is a credential to ask for.
	out, err := c.Command(ctx, "sbatch", "--parsable", "-N2", "-o", "/dev/null", "-D", c.Dir,
		"--wrap=sleep 60").CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v\n%s", err, out)
	}
	id64, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 32)
	if err != nil {
		t.Fatalf("sbatch printed %q", out)
	}
	jobID := uint32(id64)
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		_ = c.Command(cctx, "scancel", strconv.Itoa(int(jobID))).Run()
	})

	// sbcast asks for the whole job: no step, array task or het component.
	req := msg.SelectedStep{
		StepID:       msg.StepID{JobID: jobID, StepID: pack.NoVal, StepHetComp: pack.NoVal},
		ArrayTaskID:  pack.NoVal,
		HetJobOffset: pack.NoVal,
	}
	var r *client.Reply
	for {
		r = send(msgtype.REQUEST_JOB_SBCAST_CRED, req)
		if r.Frame.Header.MsgType != msgtype.RESPONSE_SLURM_RC {
			break
		}
		// The controller answers ESLURM_JOB_PENDING until the job runs;
		// ctx bounds the wait.
		if err := client.ReturnCode(&r.Frame); slurmerr.Code(err) != slurmerr.ESLURM_JOB_PENDING {
			t.Fatalf("REQUEST_JOB_SBCAST_CRED: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %d did not start: %v", jobID, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	if r.Frame.Header.MsgType != msgtype.RESPONSE_JOB_SBCAST_CRED {
		t.Fatalf("REQUEST_JOB_SBCAST_CRED: reply %v", r.Frame.Header.MsgType)
	}
	sb := mustDecode(t, g, r.Frame).(msg.JobSbcastCredResponse)
	cr := sb.Cred
	t.Logf("sbcast cred: job %d nodes %q user %q uid %d gid %d gids %v step %d, %d-byte signature",
		cr.JobID, cr.Nodes.Value, cr.UserName.Value, cr.UID, cr.GID, cr.GIDs, cr.StepID, len(cr.Signature))
	if sb.JobID != jobID || cr.JobID != jobID || sb.NodeList.Value != "n[1-2]" || cr.Nodes != sb.NodeList ||
		cr.UID != uint32(os.Getuid()) || cr.GID != uint32(os.Getgid()) || cr.Expiration <= cr.Ctime {
		t.Errorf("sbcast reply %#v", sb)
	}
	// cred/munge signs with munge_encode of the packed fields; the
	// signature is the credential string with its NUL.
	sig := cr.Signature
	if sig[len(sig)-1] != 0 {
		t.Fatalf("signature does not end in NUL: %q", sig)
	}
	dec, err := c.Munge.Client().Decode(ctx, string(sig[:len(sig)-1]))
	if err != nil {
		t.Fatalf("munge decode of the signature: %v", err)
	}
	signed, err := cr.SignedBytes(codec.Version2205)
	if err != nil || !bytes.Equal(dec.Payload, signed) {
		t.Errorf("signed payload differs (%v)\nmunge %x\nours  %x", err, dec.Payload, signed)
	}

	// An unknown job is refused with a return code.
	bad := req
	bad.StepID.JobID = jobID + 1000
	if r := send(msgtype.REQUEST_JOB_SBCAST_CRED, bad); r.Frame.Header.MsgType != msgtype.RESPONSE_SLURM_RC ||
		slurmerr.Code(client.ReturnCode(&r.Frame)) != slurmerr.ESLURM_INVALID_JOB_ID {
		t.Errorf("credential of an unknown job: %v %v", r.Frame.Header.MsgType, client.ReturnCode(&r.Frame))
	}

	// sdiag: the full reply (command 1), then a reset (command 0, an
	// operator's), which answers without the scheduling block and with
	// the RPC tables cleared.
	stats := func(cmd uint16) msg.StatsInfoResponse {
		t.Helper()
		r := send(msgtype.REQUEST_STATS_INFO, msg.StatsInfoRequest{CommandID: cmd})
		if r.Frame.Header.MsgType != msgtype.RESPONSE_STATS_INFO {
			t.Fatalf("stats %d: reply %v (rc %v)", cmd, r.Frame.Header.MsgType, client.ReturnCode(&r.Frame))
		}
		return mustDecode(t, g, r.Frame).(msg.StatsInfoResponse)
	}
	full := stats(msg.StatsCommandGet)
	s := full.Sched
	t.Logf("stats: parts %d submitted %d started %d running %d threads %d cycles %d, %d rpc types, %d users, %d queued, %d pending",
		full.PartsPacked, s.JobsSubmitted, s.JobsStarted, s.JobsRunning, s.ServerThreadCount, s.ScheduleCycleCounter,
		len(full.RPCTypes), len(full.RPCUsers), len(full.RPCQueue), len(full.RPCPending))
	// jobs_pending and jobs_running are a periodic snapshot, so only the
	// event counters are checked.
	if full.PartsPacked != 1 || s.JobsSubmitted < 1 || s.JobsStarted < 1 || s.ReqTime == 0 || s.ServerThreadCount == 0 {
		t.Errorf("stats %#v", full)
	}
	seen := map[msgtype.Type]bool{}
	for _, x := range full.RPCTypes {
		seen[msgtype.Type(x.Type)] = x.Count > 0
	}
	for _, mt := range []msgtype.Type{msgtype.REQUEST_SUBMIT_BATCH_JOB, msgtype.REQUEST_JOB_SBCAST_CRED} {
		if !seen[mt] {
			t.Errorf("stats: no count for %v in %#v", mt, full.RPCTypes)
		}
	}
	reset := stats(msg.StatsCommandReset)
	if reset.PartsPacked != 0 || reset.Sched != (msg.SchedStats{}) || len(reset.RPCTypes) != 0 {
		t.Errorf("reset reply %#v", reset)
	}
	t.Logf("reset: %d rpc types, %d users", len(reset.RPCTypes), len(reset.RPCUsers))
}
