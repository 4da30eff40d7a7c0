package sched

import (
	"strings"
	"testing"
)

// TestBlockSizesKeepPlans schedules the same snapshots with different
// block sizes and refinement points: the block index only decides how
// much a search skips, so every plan must be the same.
func TestBlockSizesKeepPlans(t *testing.T) {
	var snaps []func() *Snapshot
	for seed := uint64(1); seed <= 40; seed++ {
		snaps = append(snaps, func() *Snapshot { return randomSnapshot(1000+seed, 4) })
	}
	snaps = append(snaps,
		func() *Snapshot { return benchSnapshot(300, 3000) },
		func() *Snapshot { return wholeNodesSnapshot(300, 3000) },
	)
	text := func(p *Plan) string {
		var b strings.Builder
		writePlan(&b, p)
		return b.String()
	}
	defer func(r, b int) { refineAt, testBlockBuckets = r, b }(refineAt, testBlockBuckets)
	for i, mk := range snaps {
		refineAt, testBlockBuckets = 2000, 0
		want := text(Backfill(mk()))
		for _, v := range []struct{ blk, refine int }{{1, 1 << 30}, {7, 3}, {32, 1 << 30}, {128, 5}, {500, 40}} {
			testBlockBuckets, refineAt = v.blk, v.refine
			if got := text(Backfill(mk())); got != want {
				t.Errorf("snapshot %d, blocks of %d refined after %d searches: plan differs", i, v.blk, v.refine)
			}
		}
	}
}
