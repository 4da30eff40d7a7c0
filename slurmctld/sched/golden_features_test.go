package sched

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The features golden file pins plans of inputs using what the original
// golden set (golden_test.go) cannot express: OverSubscribe=YES:N and
// FORCE:N partitions, --oversubscribe jobs and --time-min. Same flag to
// rewrite it: -update-plans.
const goldenFeaturesFile = "testdata/plans_features.golden"

// featureSnapshot is randomSnapshot with sharing partitions, sharing jobs
// and time-min drawn from a second generator, so the first draws stay as
// they are.
func featureSnapshot(seed uint64, scale int) *Snapshot {
	s := randomSnapshot(seed, scale)
	rng := rand.New(rand.NewPCG(seed, 4242))
	for pi := range s.Partitions {
		p := &s.Partitions[pi]
		switch rng.IntN(4) {
		case 0:
			p.OverSubscribe, p.MaxShare = OverSubscribeYes, uint16(2+rng.IntN(3))
		case 1:
			p.OverSubscribe, p.MaxShare = OverSubscribeForce, uint16(1+rng.IntN(4))
		}
	}
	for i := range s.Running {
		a := &s.Running[i]
		a.Partition = s.Partitions[rng.IntN(len(s.Partitions))].Name
		a.Shared = !a.Exclusive && rng.IntN(3) == 0
	}
	for i := range s.Pending {
		j := &s.Pending[i]
		if j.Share == ShareDefault && rng.IntN(3) == 0 {
			j.Share = ShareOversubscribe
		}
		if rng.IntN(4) == 0 && j.TimeLimit != NoValue32 && j.TimeLimit != Infinite32 {
			j.TimeMin = uint32(1 + rng.IntN(int(j.TimeLimit)))
		}
	}
	return s
}

func featureCases() []goldenCase {
	var cases []goldenCase
	passes := []struct {
		name string
		f    func(*Snapshot) *Plan
	}{{"schedule", Schedule}, {"backfill", Backfill}, {"main", MainPass}}
	for seed := uint64(1); seed <= 150; seed++ {
		for _, ps := range passes {
			cases = append(cases, goldenCase{name: fmt.Sprintf("features/%d/%s", seed, ps.name), run: func() []*Plan {
				return []*Plan{ps.f(featureSnapshot(seed, 1))}
			}})
		}
	}
	for seed := uint64(1); seed <= 6; seed++ {
		cases = append(cases, goldenCase{name: fmt.Sprintf("features-large/%d", seed), run: func() []*Plan {
			return []*Plan{Schedule(featureSnapshot(1000+seed, 8))}
		}})
	}
	return cases
}

func TestGoldenFeaturePlans(t *testing.T) {
	want := map[string]string{}
	if !*updatePlans {
		f, err := os.Open(goldenFeaturesFile)
		if err != nil {
			t.Fatalf("%v (run with -update-plans to create it)", err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if name, sum, ok := strings.Cut(sc.Text(), " "); ok {
				want[name] = sum
			}
		}
		f.Close()
	}
	var out strings.Builder
	for _, gc := range featureCases() {
		var text strings.Builder
		for i, p := range gc.run() {
			fmt.Fprintf(&text, "plan %d\n", i)
			writePlan(&text, p)
			for _, st := range p.Starts {
				// The fields writePlan predates.
				fmt.Fprintf(&text, "start %d limit %d shared %t\n", st.JobID, st.TimeLimit, st.Alloc.Shared)
			}
		}
		sum := fmt.Sprintf("%x", sha256.Sum256([]byte(text.String())))
		fmt.Fprintf(&out, "%s %s\n", gc.name, sum)
		if !*updatePlans && want[gc.name] != sum {
			t.Errorf("%s: plan differs from the golden one (digest %s, want %s)", gc.name, sum, want[gc.name])
		}
	}
	if *updatePlans {
		if err := os.WriteFile(goldenFeaturesFile, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFeatureSnapshotsInvariants checks the feature snapshots' plans with
// the sharing checker: they exercise sharing over random running work.
func TestFeatureSnapshotsInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 150; seed++ {
		s := featureSnapshot(seed, 1)
		maxShare := 1
		for _, p := range s.Partitions {
			maxShare = max(maxShare, int(p.MaxShare))
		}
		p := Schedule(s)
		for _, st := range p.Starts {
			s.Running = append(s.Running, st.Alloc)
		}
		if err := checkSharing(s, maxShare); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
}
