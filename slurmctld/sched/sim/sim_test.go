package sim

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readHandmade(t *testing.T) *Trace {
	t.Helper()
	f, err := os.Open("testdata/handmade.swf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ReadTrace(f, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestReadTraceHandmade(t *testing.T) {
	tr := readHandmade(t)
	if tr.Cluster != (Cluster{Nodes: 4, CPUsPerNode: 1, MaxTimeMin: 20}) {
		t.Errorf("cluster %+v", tr.Cluster)
	}
	if want := (Skipped{Malformed: 1, TooBig: 1, NoRun: 1}); tr.Skipped != want {
		t.Errorf("skipped %+v, want %+v", tr.Skipped, want)
	}
	if len(tr.Jobs) != 5 || tr.Killed != 1 || !tr.Jobs[4].Killed || tr.Jobs[4].Run != 60 {
		t.Errorf("%d jobs, %d killed, job 5 %+v", len(tr.Jobs), tr.Killed, tr.Jobs[4])
	}
	if tr.Jobs[3].LimitMin != 20 || tr.Jobs[2].LimitMin != 5 {
		t.Errorf("limits %d %d", tr.Jobs[3].LimitMin, tr.Jobs[2].LimitMin)
	}
}

func TestReadTraceOptions(t *testing.T) {
	f, err := os.Open("testdata/handmade.swf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ReadTrace(f, ReadOptions{MaxJobs: 2, Nodes: 2, CPUsPerNode: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 2 || tr.Cluster.TotalCPUs() != 16 || tr.Cluster.MaxTimeMin != 10 {
		t.Errorf("%d jobs, cluster %+v", len(tr.Jobs), tr.Cluster)
	}
}

func TestMissingLimitGetsMaxTime(t *testing.T) {
	in := "; MaxProcs: 2\n" +
		"1 0 0 100 1 -1 -1 1 600 -1 1 1 1 -1 -1 -1 -1 -1\n" +
		"2 0 0 9000 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
	tr, err := ReadTrace(stringsReader(in), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// MaxTime is the longest request, 10 min; job 2 runs 9000 s without a
	// request, so it is cut at 600 s.
	if tr.Cluster.MaxTimeMin != 10 || tr.NoLimit != 1 || tr.Killed != 1 || tr.Jobs[1].Run != 600 || tr.Jobs[1].LimitMin != 0 {
		t.Errorf("cluster %+v nolimit %d killed %d job2 %+v", tr.Cluster, tr.NoLimit, tr.Killed, tr.Jobs[1])
	}
}

func TestShapeCluster(t *testing.T) {
	tests := []struct {
		name            string
		maxNodes, procs int64
		want            Cluster
		wantErr         bool
	}{
		{"KTH", 100, 100, Cluster{Nodes: 100, CPUsPerNode: 1}, false},
		{"RICC", 1024, 8192, Cluster{Nodes: 1024, CPUsPerNode: 8}, false},
		{"LCG procs only", -1, 24515, Cluster{Nodes: 24515, CPUsPerNode: 1}, false},
		{"nodes only", 16, -1, Cluster{Nodes: 16, CPUsPerNode: 1}, false},
		{"not a multiple", 3, 10, Cluster{Nodes: 10, CPUsPerNode: 1}, false},
		{"nothing", -1, -1, Cluster{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHeader(tc.maxNodes, tc.procs)
			got, err := ShapeCluster(h, 0, 0)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v", err)
			}
			if !tc.wantErr && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestHandmadeSchedules pins the schedule of testdata/handmade.swf, computed
// by hand (see the comment in the file), for both policies.
func TestHandmadeSchedules(t *testing.T) {
	type span struct{ start, end int64 }
	tests := []struct {
		policy Policy
		want   map[uint32]span
		// metrics computed by hand from the spans
		meanWait, p95, bsld, util, frag float64
		makespan                        int64
		backfilled                      int
	}{
		{
			policy:   FIFO,
			want:     map[uint32]span{1: {0, 600}, 2: {600, 1200}, 3: {1200, 1500}, 4: {1200, 1260}, 5: {1300, 1360}},
			meanWait: 2640.0 / 5, p95: 1080, bsld: 26.5 / 5, util: 4620.0 / (4 * 1500), makespan: 1500,
			// blocked 60..1200; 1 CPU idle during 60..600
			frag: 540.0 / (4 * 1140),
		},
		{
			policy:   Backfill,
			want:     map[uint32]span{1: {0, 600}, 2: {600, 1200}, 3: {120, 420}, 4: {1200, 1260}, 5: {1300, 1360}},
			meanWait: 1560.0 / 5, p95: 1020, bsld: 22.9 / 5, util: 4620.0 / (4 * 1360), makespan: 1360,
			// blocked 60..1200; 1 CPU idle during 60..120 and 420..600
			frag: 240.0 / (4 * 1140), backfilled: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.policy.String(), func(t *testing.T) {
			tr := readHandmade(t)
			res, err := Run(tr, Options{Policy: tc.policy, BaseTime: tr.Header.UnixStartTime})
			if err != nil {
				t.Fatal(err)
			}
			got := map[uint32]span{}
			for _, f := range res.Finished {
				got[f.ID] = span{f.Start, f.End}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(span{})); diff != "" {
				t.Fatalf("schedule (-want +got):\n%s", diff)
			}
			m := res.Metrics
			if res.Unstarted != 0 || m.Jobs != 5 || m.Killed != 1 || m.Backfilled != tc.backfilled {
				t.Errorf("unstarted %d jobs %d killed %d backfilled %d", res.Unstarted, m.Jobs, m.Killed, m.Backfilled)
			}
			if !near(m.MeanWait, tc.meanWait) || m.P95Wait != tc.p95 || !near(m.MeanBSLD, tc.bsld) ||
				!near(m.Utilization, tc.util) || m.Makespan != tc.makespan || !near(m.Fragmentation, tc.frag) {
				t.Errorf("metrics %+v", m)
			}
		})
	}
}

// TestChunkedMainPassSameSchedule checks that showing the main pass a short
// prefix of the queue (MainChunk) gives the same schedule as a long one.
func TestChunkedMainPassSameSchedule(t *testing.T) {
	for _, p := range []Policy{FIFO, Backfill} {
		tr := readHandmade(t)
		a, err := Run(tr, Options{Policy: p, MainChunk: 1})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(tr, Options{Policy: p, MainChunk: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a.Finished, b.Finished); diff != "" {
			t.Errorf("%v: chunk 1 vs 1000 (-1 +1000):\n%s", p, diff)
		}
	}
}

// TestShortcutsChangeNothing runs the first jobs of a real trace with and
// without the pass-skipping shortcuts and requires identical schedules.
func TestShortcutsChangeNothing(t *testing.T) {
	f, err := os.Open(tracesDir + "/KTH-SP2-1996-2.1-cln.swf.gz")
	if err != nil {
		t.Skipf("shared trace not available: %v", err)
	}
	defer f.Close()
	tr, err := ReadTrace(f, ReadOptions{MaxJobs: 400})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Policy{FIFO, Backfill} {
		fast, err := Run(tr, Options{Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		slow, err := Run(tr, Options{Policy: p, Exhaustive: true, MainChunk: 7})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(slow.Finished, fast.Finished); diff != "" {
			t.Errorf("%v: exhaustive vs shortcuts (-exhaustive +shortcuts):\n%s", p, diff)
		}
		if fast.MainSkipped+fast.BackfillSkipped == 0 {
			t.Errorf("%v: no pass was skipped; the test proves nothing", p)
		}
		if fast.Metrics.Backfilled == 0 && p == Backfill {
			t.Errorf("no job was backfilled; the test proves little")
		}
	}
}

func TestProgressCallback(t *testing.T) {
	tr := readHandmade(t)
	var times []int64
	_, err := Run(tr, Options{Policy: FIFO, ProgressEvery: 500, Progress: func(now int64, _ int) { times = append(times, now) }})
	if err != nil {
		t.Fatal(err)
	}
	// Events at 0, 60, 120, 180, 600, 1200, 1300, 1360, 1500: reported at
	// the first event of each 500 s stretch after the previous report.
	if diff := cmp.Diff([]int64{0, 600, 1200}, times); diff != "" {
		t.Errorf("progress times (-want +got):\n%s", diff)
	}
}
