package sched

import (
	"math/rand/v2"
	"testing"
)

// TestFullNodesFailMatchesPlace checks the full-node failure test against
// placeOnce on random candidate sets: for jobs of its shape it must give
// exactly placeOnce's answer (it is used only to skip certain failures,
// but an exact match shows the reasoning follows placeOnce step by step).
func TestFullNodesFailMatchesPlace(t *testing.T) {
	const f = 8
	const nn = 200 // several bitmap words
	s := snap(mkNodes(nn, f, 64000))
	c := newCluster(s)
	rng := rand.New(rand.NewPCG(7, 11))
	fails, places := 0, 0
	for iter := 0; iter < 20000; iter++ {
		n := 1 + rng.IntN(40)
		j := mkJob(1, nodesN(uint32(n), uint32(n)), tasks(uint32(n*f)))
		r, why := c.newRequest(&j, 0)
		if why != ReasonNone {
			t.Fatalf("request: %v", why)
		}
		cc := &capClass{full: f}
		if !c.fullNodesShape(r, cc) {
			t.Fatal("not the full-node shape")
		}
		// Candidates: random nodes, mostly full when dense.
		density := 1 + rng.IntN(100)
		fullPct := rng.IntN(101)
		words := make([]uint64, (nn+63)/64)
		fullw := make([]uint64, len(words))
		ns := make([]sweepNode, nn)
		var cands, caps []int
		for ni := 0; ni < nn; ni++ {
			if rng.IntN(100) >= density {
				continue
			}
			v := f
			if rng.IntN(100) >= fullPct {
				v = 1 + rng.IntN(f-1)
			}
			words[ni/64] |= 1 << (ni % 64)
			if v == f {
				fullw[ni/64] |= 1 << (ni % 64)
			}
			ns[ni].cap = int32(v)
			cands = append(cands, ni)
			caps = append(caps, v)
		}
		got := c.fullNodesFailSet(words, fullw, ns, f, n)
		_, ok := c.placeOnce(r, cands, caps, nil)
		if got == ok {
			t.Fatalf("iter %d: need %d, cands %v caps %v: fullNodesFail %t, placeOnce ok %t", iter, n, cands, caps, got, ok)
		}
		if ok {
			places++
		} else {
			fails++
		}
	}
	if fails < 1000 || places < 1000 {
		t.Fatalf("unbalanced cases: %d fail, %d place", fails, places)
	}
}

// TestStillFailsMatchesFullTest follows random changes to a candidate set
// (nodes joining, leaving, changing capacity) and checks that whenever
// the incremental check says "still fails", the full test agrees.
func TestStillFailsMatchesFullTest(t *testing.T) {
	const f, nn = 8, 300
	s := snap(mkNodes(nn, f, 64000))
	c := newCluster(s)
	rng := rand.New(rand.NewPCG(3, 5))
	words := make([]uint64, (nn+63)/64)
	fullw := make([]uint64, len(words))
	ns := make([]sweepNode, nn)
	setNode := func(ni int, v int32) {
		words[ni/64] &^= 1 << (ni % 64)
		fullw[ni/64] &^= 1 << (ni % 64)
		ns[ni].cap = v
		if v > 0 {
			words[ni/64] |= 1 << (ni % 64)
		}
		if v == f {
			fullw[ni/64] |= 1 << (ni % 64)
		}
		if c.fnWit.ok {
			c.fnWit.changed = append(c.fnWit.changed, int32(ni))
		}
	}
	skipped := 0
	for round := 0; round < 200; round++ {
		need := 2 + rng.IntN(20)
		density := 20 + rng.IntN(70)
		fullPct := 20 + rng.IntN(70)
		c.fnWit.ok = false
		c.fnWit.changed = c.fnWit.changed[:0]
		for ni := 0; ni < nn; ni++ {
			v := int32(0)
			if rng.IntN(100) < density {
				v = f
				if rng.IntN(100) >= fullPct {
					v = int32(1 + rng.IntN(f-1))
				}
			}
			setNode(ni, v)
		}
		for step := 0; step < 200; step++ {
			for k := rng.IntN(4); k >= 0; k-- {
				v := int32(0)
				if rng.IntN(2) == 0 {
					v = int32(1 + rng.IntN(f))
				}
				setNode(rng.IntN(nn), v)
			}
			if c.fnWit.ok && c.stillFails(words, fullw, ns, f, need) {
				c.fnWit.changed = c.fnWit.changed[:0]
				// The full test, run on copies, must fail too.
				saved := c.fnWit
				saved.changed = nil
				if !c.fullNodesFailSet(words, fullw, ns, f, need) {
					t.Fatalf("round %d step %d: incremental check says fail, full test does not", round, step)
				}
				c.fnWit = saved
				skipped++
				continue
			}
			c.fnWit.ok = false
			c.fnWit.changed = c.fnWit.changed[:0]
			c.fullNodesFailSet(words, fullw, ns, f, need)
		}
	}
	if skipped < 1000 {
		t.Fatalf("only %d incremental answers", skipped)
	}
}
