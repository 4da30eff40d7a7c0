package sched

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestPlaceOneBlockMatchesPlaceBlocks checks the one-block shortcut
// against the general placement on random candidate sets: whenever it
// places, the general case places the same way.
func TestPlaceOneBlockMatchesPlaceBlocks(t *testing.T) {
	const nn, f = 150, 16
	s := snap(mkNodes(nn, f, 64000))
	c := newCluster(s)
	rng := rand.New(rand.NewPCG(9, 4))
	placed := 0
	for iter := 0; iter < 20000; iter++ {
		opts := []jobOpt{tasks(uint32(1 + rng.IntN(60)))}
		if rng.IntN(4) == 0 {
			opts = append(opts, nodesN(1, uint32(1+rng.IntN(80))))
		}
		j := mkJob(1, opts...)
		r, why := c.newRequest(&j, 0)
		if why != ReasonNone {
			continue
		}
		density := 1 + rng.IntN(100)
		var cands, caps []int
		for ni := 0; ni < nn; ni++ {
			if rng.IntN(100) < density {
				cands = append(cands, ni)
				caps = append(caps, 1+rng.IntN(f))
			}
		}
		fast, ok := c.placeOneBlock(r, cands, caps)
		if !ok {
			continue
		}
		placed++
		slow, sok := c.placeBlocks(r, cands, caps, nil)
		if !sok || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("iter %d: tasks %d nodes %d-%d: one block %+v, general %+v (%t)", iter, r.tasks, r.minN, r.maxN, fast, slow, sok)
		}
	}
	if placed < 5000 {
		t.Fatalf("only %d placements by one block", placed)
	}
}
