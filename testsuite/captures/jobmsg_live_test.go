package captures

// Job bodies against a live real Slurm 22.05 controller (testsuite/realslurm):
// our job_desc encoder submits a batch job and asks for an allocation; the
// controller's RESPONSE_SUBMIT_BATCH_JOB, RESPONSE_RESOURCE_ALLOCATION,
// RESPONSE_JOB_ALLOCATION_INFO, RESPONSE_JOB_INFO (with SHOW_DETAIL, so
// job_resources is sent) and RESPONSE_JOB_STEP_INFO all decode, use their
// body up exactly and re-encode to the bytes the controller sent. These are
// the bodies the pcaps lack (step records, job_resources). Skipped when the
// Slurm binaries are missing (testsuite/oracle rules).

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

func TestJobBodiesLiveRealSlurm(t *testing.T) {
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

	// call sends body (encoded with our codec), and decodes the reply with
	// our codec, requiring type want and a byte-exact re-encode.
	call := func(mt msgtype.Type, body any, want msgtype.Type) any {
		t.Helper()
		var w pack.Writer
		if body != nil {
			bc, ok := g.Lookup(mt)
			if !ok {
				t.Fatalf("%v: no codec", mt)
			}
			if err := bc.Encode(&w, codec.Version2205, body); err != nil {
				t.Fatalf("%v: encode: %v", mt, err)
			}
		}
		r, err := cl.Call(ctx, mt, w.Bytes())
		if err != nil {
			t.Fatalf("%v: %v", mt, err)
		}
		f := r.Frame
		if f.Header.MsgType != want {
			t.Fatalf("%v: reply %v (rc %v), want %v", mt, f.Header.MsgType, client.ReturnCode(&f), want)
		}
		bc, ok := g.Lookup(want)
		if !ok {
			t.Fatalf("%v: no codec", want)
		}
		rd := pack.NewReader(f.Body)
		v, err := bc.Decode(rd, f.Header.Version)
		if err == nil {
			err = rd.Done()
		}
		if err != nil {
			t.Fatalf("%v: decode: %v\n%x", want, err, f.Body)
		}
		var out pack.Writer
		if err := bc.Encode(&out, f.Header.Version, v); err != nil || !bytes.Equal(out.Bytes(), f.Body) {
			t.Fatalf("%v: re-encode differs (%v)\n got %x\nwant %x", want, err, out.Bytes(), f.Body)
		}
		t.Logf("%v -> %v: %d body bytes decode and re-encode identically", mt, want, len(f.Body))
		return v
	}

	host, _ := os.Hostname()
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	desc := func(name string) *msg.JobDesc {
		j := msg.NewJobDesc()
		j.Name = msg.Str(name)
		j.UserID, j.GroupID = uid, gid
		j.AllocNode = msg.Str(host)
		j.AllocSID = uint32(os.Getpid())
		j.WorkDir = msg.Str(c.Dir)
		j.MinNodes = 1
		j.Environment = []msg.NullString{msg.Str("PATH=/usr/bin:/bin"), msg.Str("HOME=" + c.Dir)}
		j.TaskDist = 0x2000 // SLURM_DIST_UNKNOWN, as sbatch and srun send it
		j.SetDefaultBits()
		return j
	}

	// salloc -N1 --immediate: granted at once (both nodes are idle).
	a := desc("live-alloc")
	a.Immediate = 1
	a.OtherPort = 1 // a listener srun would open; never used here
	alloc := call(msgtype.REQUEST_RESOURCE_ALLOCATION, *a, msgtype.RESPONSE_RESOURCE_ALLOCATION).(msg.Allocation)
	if alloc.JobID == 0 || alloc.NodeCnt != 1 || !alloc.NodeList.Valid || len(alloc.CPUsPerNode) == 0 {
		t.Fatalf("allocation %#v", alloc)
	}
	// REQUEST_JOB_ALLOCATION_INFO {job_id, req_cluster NULL}.
	var req pack.Writer
	req.U32(alloc.JobID)
	req.NullStr()
	r, err := cl.Call(ctx, msgtype.REQUEST_JOB_ALLOCATION_INFO, req.Bytes())
	if err != nil || r.Frame.Header.MsgType != msgtype.RESPONSE_JOB_ALLOCATION_INFO {
		t.Fatalf("allocation info: %v %v", err, r)
	}
	info := mustDecode(t, g, r.Frame).(msg.Allocation)
	if info.JobID != alloc.JobID || info.NodeList != alloc.NodeList {
		t.Errorf("allocation info %#v, allocation %#v", info, alloc)
	}

	// sbatch: a sleeping batch job (CR_Core: it fits beside the allocation).
	b := desc("live-batch")
	b.Script = msg.Str("#!/bin/sh\nsleep 60\n")
	b.StdOut, b.StdIn = msg.Str("/dev/null"), msg.Str("/dev/null")
	b.MinCPUs = 1
	sub := call(msgtype.REQUEST_SUBMIT_BATCH_JOB, *b, msgtype.RESPONSE_SUBMIT_BATCH_JOB).(msg.SubmitResponse)
	if sub.JobID == 0 || sub.StepID != msg.StepIDBatch || sub.ErrorCode != 0 {
		t.Fatalf("submit response %#v", sub)
	}

	// Wait for the batch job to run, then read every job with details and
	// every step.
	var jobs msg.JobInfoMsg
	for {
		var w pack.Writer
		w.Time(0)
		w.U16(msg.ShowAll | msg.ShowDetail | msg.ShowLocal)
		w.U32(pack.NoVal)
		r, err := cl.Call(ctx, msgtype.REQUEST_JOB_INFO, w.Bytes())
		if err != nil || r.Frame.Header.MsgType != msgtype.RESPONSE_JOB_INFO {
			t.Fatalf("job info: %v", err)
		}
		jobs = mustDecode(t, g, r.Frame).(msg.JobInfoMsg)
		running := 0
		for _, j := range jobs.Jobs {
			if j.JobState&msg.JobStateBase == msg.JobRunning {
				running++
			}
		}
		if running == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("jobs never ran: %#v", jobs)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, j := range jobs.Jobs {
		if j.JobResrcs == nil || len(j.JobResrcs.CPUs) != 1 || j.JobResrcs.CoreBitmap.Null || j.NodeInx.Null {
			t.Errorf("job %d: running job without details: %#v %#v", j.JobID, j.JobResrcs, j.NodeInx)
		}
		t.Logf("job %d %q state %#x nodes %q node_inx %#v job_resources cpus %v core_bitmap %#v",
			j.JobID, j.Name.Value, j.JobState, j.Nodes.Value, j.NodeInx, j.JobResrcs.CPUs, j.JobResrcs.CoreBitmap)
	}

	var w pack.Writer
	w.Time(0)
	w.U32(pack.NoVal)
	w.U32(pack.NoVal)
	w.U32(pack.NoVal)
	w.U16(msg.ShowLocal)
	r, err = cl.Call(ctx, msgtype.REQUEST_JOB_STEP_INFO, w.Bytes())
	if err != nil || r.Frame.Header.MsgType != msgtype.RESPONSE_JOB_STEP_INFO {
		t.Fatalf("step info: %v", err)
	}
	steps := mustDecode(t, g, r.Frame).(msg.StepInfoMsg)
	found := false
	for _, s := range steps.Steps {
		t.Logf("step %d.%#x %q nodes %q node_inx %#v", s.StepID.JobID, s.StepID.StepID, s.Name.Value, s.Nodes.Value, s.NodeInx)
		if s.StepID.JobID == sub.JobID && s.StepID.StepID == msg.StepIDBatch {
			found = true
		}
	}
	if !found {
		t.Errorf("no batch step for job %d in %#v", sub.JobID, steps)
	}

	// Will-run and update requests are accepted in our encoding.
	wr := desc("live-willrun")
	r, err = cl.Call(ctx, msgtype.REQUEST_JOB_WILL_RUN, encodeJob(t, g, msgtype.REQUEST_JOB_WILL_RUN, *wr))
	if err != nil || r.Frame.Header.MsgType != msgtype.RESPONSE_JOB_WILL_RUN {
		t.Errorf("will run: %v %v", err, client.ReturnCode(&r.Frame))
	}
	up := msg.NewJobDesc()
	up.JobID = sub.JobID
	up.Comment = msg.Str("updated by goslurm")
	if err := cl.CallRC(ctx, msgtype.REQUEST_UPDATE_JOB, encodeJob(t, g, msgtype.REQUEST_UPDATE_JOB, *up)); err != nil {
		t.Errorf("update job: %v", err)
	}
}

func encodeJob(t *testing.T, g *codec.Registry, mt msgtype.Type, body any) []byte {
	t.Helper()
	bc, _ := g.Lookup(mt)
	var w pack.Writer
	if err := bc.Encode(&w, codec.Version2205, body); err != nil {
		t.Fatal(err)
	}
	return w.Bytes()
}

// mustDecode decodes f's body with g, requiring exact use and a byte-exact
// re-encode.
func mustDecode(t *testing.T, g *codec.Registry, f codec.Frame) any {
	t.Helper()
	bc, ok := g.Lookup(f.Header.MsgType)
	if !ok {
		t.Fatalf("%v: no codec", f.Header.MsgType)
	}
	rd := pack.NewReader(f.Body)
	v, err := bc.Decode(rd, f.Header.Version)
	if err == nil {
		err = rd.Done()
	}
	if err != nil {
		t.Fatalf("%v: decode: %v\n%x", f.Header.MsgType, err, f.Body)
	}
	var out pack.Writer
	if err := bc.Encode(&out, f.Header.Version, v); err != nil || !bytes.Equal(out.Bytes(), f.Body) {
		t.Fatalf("%v: re-encode differs (%v)", f.Header.MsgType, err)
	}
	t.Logf("%v: %d body bytes decode and re-encode identically", f.Header.MsgType, len(f.Body))
	return v
}
