package priority

import "testing"

func TestBasicAssign(t *testing.T) {
	type step struct {
		nice       int32
		want       uint32
		wantLowest uint32
	}
	const first = 4294901759 // 0xfffeffff
	tests := []struct {
		name    string
		recover []uint32
		steps   []step
	}{
		{"fifo", nil, []step{
			{0, first, first}, {0, first - 1, first - 1}, {0, first - 2, first - 2},
		}},
		{"positive nice lowers only that job", nil, []step{
			{100, first - 100, first}, {0, first - 1, first - 1},
		}},
		{"negative nice raises only that job", nil, []step{
			{-100, first + 100, first}, {0, first - 1, first - 1},
		}},
		{"nice that would reach 1 is ignored, base stays", []uint32{5}, []step{
			// prio 4 is not above 10+1, so nice is not applied; 4+10
			// is above the base 5, which does not move.
			{10, 4, 5}, {0, 4, 4},
		}},
		{"nice just small enough applies", []uint32{20}, []step{
			{10, 9, 19},
		}},
		{"bottom", []uint32{2}, []step{
			{0, 1, 1}, {0, 1, 1}, {5, 1, 1},
		}},
		{"most negative nice", []uint32{10}, []step{
			{-2147483645, 9 + 2147483645, 9},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBasic()
			for _, p := range tt.recover {
				b.Recover(p)
			}
			for i, s := range tt.steps {
				if got := b.Assign(s.nice); got != s.want {
					t.Errorf("step %d: Assign(%d) = %d, want %d", i, s.nice, got, s.want)
				}
				if b.Lowest() != s.wantLowest {
					t.Errorf("step %d: Lowest() = %d, want %d", i, b.Lowest(), s.wantLowest)
				}
			}
		})
	}
}

func TestBasicNegativeNiceWraps(t *testing.T) {
	b := NewBasic() // base 0xffff0000: prio 0xfffeffff + 2147483645 wraps
	got := b.Assign(-2147483645)
	want := uint32(0xfffeffff + uint64(2147483645) - 1<<32)
	if got != want {
		t.Fatalf("Assign = %d, want %d (modulo 2^32, as slurmctld)", got, want)
	}
}

func TestBasicSyncBoost(t *testing.T) {
	b := NewBasic()
	for _, p := range []uint32{1000, 5000, 1, 0} {
		b.Recover(p)
	}
	boost := b.SyncBoost()
	if want := TopPriority - 5000; boost != want {
		t.Fatalf("SyncBoost = %d, want %d", boost, want)
	}
	if got, want := b.Assign(0), 1000+boost-1; got != want {
		t.Fatalf("after boost Assign = %d, want %d", got, want)
	}

	small := NewBasic()
	small.Recover(TopPriority - 10)
	if got := small.SyncBoost(); got != 0 {
		t.Fatalf("SyncBoost with little drift = %d, want 0", got)
	}
	if got := NewBasic().SyncBoost(); got != 0 {
		t.Fatalf("SyncBoost with nothing recovered = %d, want 0", got)
	}
}
