package ctld

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

func factorsReq(uid uint32, q msg.PriorityFactorsRequest) *server.Request {
	return &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_PRIORITY_FACTORS, Version: codec.Current},
		Body: q, Identity: auth.Identity{UID: uid, GID: uid}}
}

func factorsOf(t *testing.T, resp *server.Response) *msg.PriorityFactorsResponse {
	t.Helper()
	b, ok := resp.Body.(*msg.PriorityFactorsResponse)
	if resp.MsgType != msgtype.RESPONSE_PRIORITY_FACTORS || !ok {
		t.Fatalf("reply %v %+v", resp.MsgType, resp.Body)
	}
	return b
}

// TestPriorityFactorsRPC: sprio's request lists the pending job with its
// weighted factors and the TRES table; filters and PrivateData=jobs
// apply; no match is no list.
func TestPriorityFactorsRPC(t *testing.T) {
	ctl, _, m := prioController(t, "PriorityWeightTRES=Node=1000\nPrivateData=jobs\nAccountingStorageTRES=gres/gpu\nAccountingStorageType=accounting_storage/slurmdbd\n", "")
	ctx := context.Background()
	sub, ok := ctl.Serve(ctx, submitReq(2)).Body.(*msg.SubmitResponse)
	if !ok {
		t.Fatal("submit failed")
	}
	j := m.Job(sub.JobID)
	if !j.Pending() {
		t.Fatalf("job state %#x", j.State)
	}
	b := factorsOf(t, ctl.Serve(ctx, factorsReq(0, msg.PriorityFactorsRequest{})))
	if len(b.Factors) != 1 {
		t.Fatalf("records %+v", b.Factors)
	}
	f := b.Factors[0]
	names := []msg.NullString{msg.Str("cpu"), msg.Str("mem"), msg.Str("energy"), msg.Str("node"), msg.Str("billing"),
		msg.Str("fs/disk"), msg.Str("vmem"), msg.Str("pages"), msg.Str("gres/gpu")}
	if f.JobID != sub.JobID || f.PartitionName.String() != "debug" || f.JobSize.Float64() != 50000 ||
		f.Nice != 0x80000000 || f.Site != 0x80000000 || f.DirectPrio != 0 {
		t.Errorf("record %+v", f)
	}
	if !slices.Equal(f.TRESNames, names) || f.TRESCount != uint32(len(names)) || len(f.TRES) != len(names) ||
		f.TRESWeights[3].Float64() != 1000 || math.Abs(f.TRES[3].Float64()-2000.0/3) > 1e-6 {
		t.Errorf("TRES %v %d %v %v", f.TRESNames, f.TRESCount, f.TRES, f.TRESWeights)
	}
	for _, tc := range []struct {
		name string
		uid  uint32
		q    msg.PriorityFactorsRequest
		want int
	}{
		{"other user, private jobs", 1000, msg.PriorityFactorsRequest{}, 0},
		{"job filter", 0, msg.PriorityFactorsRequest{JobIDs: []uint32{sub.JobID + 1}}, 0},
		{"user filter", 0, msg.PriorityFactorsRequest{UIDs: []uint32{0}}, 1},
		{"partition filter", 0, msg.PriorityFactorsRequest{Partitions: msg.Str("nosuch,debug")}, 1},
		{"unknown partition", 0, msg.PriorityFactorsRequest{Partitions: msg.Str("nosuch")}, 0},
	} {
		b := factorsOf(t, ctl.Serve(ctx, factorsReq(tc.uid, tc.q)))
		if len(b.Factors) != tc.want || tc.want == 0 && b.Factors != nil {
			t.Errorf("%s: %+v", tc.name, b.Factors)
		}
	}
}

// TestPriorityFactorsBasic: priority/basic answers an empty list.
func TestPriorityFactorsBasic(t *testing.T) {
	ctl, _ := newTestController(t, "")
	if err := ctl.AttachJobs(JobsOptions{Manager: jobs.New(jobs.DefaultConfig(), &jobs.MemJournal{})}); err != nil {
		t.Fatal(err)
	}
	if err := ctl.AttachPriority(PriorityOptions{}); err != nil {
		t.Fatal(err)
	}
	close(ctl.jobs.stop)
	b := factorsOf(t, ctl.Serve(context.Background(), factorsReq(0, msg.PriorityFactorsRequest{})))
	if b.Factors == nil || len(b.Factors) != 0 {
		t.Errorf("basic: %+v", b.Factors)
	}
}
