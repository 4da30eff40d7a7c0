package msg

import (
	"fmt"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// benchJobs returns a RESPONSE_JOB_INFO of n jobs shaped like a busy
// cluster's squeue answer: on a 1,024-node cluster, half the jobs run (node
// list, node_inx bitmap of 1,024 bits, batch host, TRES strings), half pend
// (reason, requested features); every job has a name, work dir, command,
// output paths and a multi_core block, as slurmctld 22.05 sends them.
func benchJobs(n int) JobInfoMsg {
	const nodes = 1024
	m := JobInfoMsg{LastUpdate: 1763700000, LastBackfill: 1763699990, Jobs: make([]JobInfo, n)}
	for i := range m.Jobs {
		id := uint32(1000 + i)
		j := JobInfo{
			ArrayTaskID: pack.NoVal, AssocID: 7, DelayBoot: pack.NoVal, JobID: id, UserID: 1000 + uint32(i%50),
			GroupID: 1000, Profile: 0, BatchFlag: 1, ShowFlags: ShowLocal, AllocSID: 4242,
			TimeLimit: 1440, TimeMin: 0, Nice: 0x80000000, SubmitTime: 1763690000 + int64(i),
			EligibleTime: 1763690001 + int64(i), AccrueTime: 1763690001, Priority: 4294000000 - id,
			BillableTres: PackDouble(16), Cluster: Str("anchor"), Partition: Str("compute"),
			Account: Str(fmt.Sprintf("proj%03d", i%200)), QOS: Str("normal"),
			Name: Str(fmt.Sprintf("sim-%06d", i)), UserName: Str(fmt.Sprintf("user%02d", i%50)),
			AllocNode: Str("login01"), SelectJobinfo: SelectConsTres,
			WorkDir: Str(fmt.Sprintf("/home/user%02d/runs/%d", i%50, i)),
			Command: Str(fmt.Sprintf("/home/user%02d/runs/%d/job.sh", i%50, i)),
			NumCPUs: 16, NumNodes: 1, Requeue: 1, NtasksPerNode: pack.NoVal16, NtasksPerTres: pack.NoVal16,
			NumTasks: 16, Shared: pack.NoVal16, CPUFreqMin: pack.NoVal, CPUFreqMax: pack.NoVal,
			CPUFreqGov: pack.NoVal, CoreSpec: pack.NoVal16, CPUsPerTask: 1, PnMinCPUs: 1,
			PnMinMemory: 0x8000000000000000 | 4000, ReqNodeInx: NullBitmap, ExcNodeInx: NullBitmap,
			StdErr:     Str(fmt.Sprintf("/home/user%02d/runs/%d/slurm-%d.out", i%50, i, id)),
			StdIn:      Str("/dev/null"),
			StdOut:     Str(fmt.Sprintf("/home/user%02d/runs/%d/slurm-%d.out", i%50, i, id)),
			MultiCore:  &MultiCore{SocketsPerNode: pack.NoVal16, CoresPerSocket: pack.NoVal16, ThreadsPerCore: pack.NoVal16, NtasksPerSocket: pack.NoVal16, NtasksPerCore: pack.NoVal16, PlaneSize: pack.NoVal16},
			Bitflags:   UseDefaultQOS | UseDefaultWCKey,
			TresReqStr: Str("cpu=16,mem=62.50G,node=1,billing=16"), StartProtocolVer: 0x2600,
			MailType: 0,
		}
		if i%2 == 0 {
			node := i % nodes
			j.JobState = JobRunning
			j.StartTime = 1763695000 + int64(i%1000)
			j.EndTime = j.StartTime + 1440*60
			j.Nodes = Str(fmt.Sprintf("n%04d", node))
			j.BatchHost = j.Nodes
			j.NodeInx = BitmapOf(nodes, node)
			j.TresAllocStr = Str("cpu=16,mem=62.50G,node=1,billing=16")
			j.Features = Str("avx2")
		} else {
			j.JobState = JobPending
			j.StateReason = 1 // WAIT_PRIORITY
			j.StartTime = 1763710000 + int64(i)
			j.EndTime = j.StartTime + 1440*60
			j.NodeInx = NullBitmap
			j.Features = Str("avx2&ib")
		}
		m.Jobs[i] = j
	}
	return m
}

func BenchmarkJobInfo10k(b *testing.B) {
	body := benchJobs(10000)
	c, _ := testRegistry().Lookup(msgtype.RESPONSE_JOB_INFO)
	var w pack.Writer
	if err := c.Encode(&w, codec.Version2205, body); err != nil {
		b.Fatal(err)
	}
	wire := w.Bytes()
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Decode(pack.NewReader(wire), codec.Version2205); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-shared", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Decode(pack.NewSharedReader(wire), codec.Version2205); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		b.ReportAllocs()
		buf := make([]byte, 0, len(wire))
		for b.Loop() {
			w := pack.NewWriter(buf[:0])
			if err := c.Encode(w, codec.Version2205, &body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The benchmark's body is a valid message: it round-trips.
func TestBenchJobsRoundTrip(t *testing.T) {
	checkRoundTrip(t, msgtype.RESPONSE_JOB_INFO, benchJobs(50), 3)
}
