package forward

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

func spanLens(spans [][]string) []int {
	var out []int
	for _, s := range spans {
		out = append(out, len(s))
	}
	return out
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("n%d", i+1)
	}
	return out
}

// TestSpanSizes pins 22.05's set_span results, worked out by hand from the
// C loop (slurm_protocol_api.c:set_span).
func TestSpanSizes(t *testing.T) {
	for _, tc := range []struct {
		total, width int
		sizes        []int // span lengths including heads
	}{
		{1, 1, []int{1}},
		{1, 50, []int{1}},
		{2, 1, []int{2}},    // width 1: one chain
		{3, 1, []int{3}},    // the head forwards to the other two
		{2, 2, []int{1, 1}}, // total <= width: every node a head
		{3, 2, []int{3}},    // quirk: not [2 1]; the head takes both others
		{4, 2, []int{3, 1}}, // not [2 2]
		{5, 2, []int{3, 2}}, //
		{6, 2, []int{3, 3}}, //
		{7, 2, []int{4, 3}}, // the short chunk goes back to span 0
		{10, 3, []int{4, 4, 2}},
		{4, 3, []int{4}},    // 4 > 3: span 0 takes a whole chunk of 3
		{5, 3, []int{4, 1}}, // the leftover node heads span 1 alone
		{50, 50, slices.Repeat([]int{1}, 50)},
		{50, 3, nil}, // checked below
		// 200 nodes, width 50: three spans of 51, then 47 single nodes.
		{200, 50, append([]int{51, 51, 51}, slices.Repeat([]int{1}, 47)...)},
	} {
		if tc.sizes == nil {
			continue
		}
		got := spanLens(Split(names(tc.total), tc.width))
		if !reflect.DeepEqual(got, tc.sizes) {
			t.Errorf("Split(%d nodes, width %d) spans %v, want %v", tc.total, tc.width, got, tc.sizes)
		}
	}
	// width 3 with 50 nodes: set_span deals 3 at a time round-robin, and
	// the last short chunk (2) goes to span 0.
	if got := SpanSizes(50, 3); !reflect.DeepEqual(got, []int{17, 15, 15}) {
		t.Errorf("SpanSizes(50, 3) = %v", got)
	}
	if got := SpanSizes(3, 2); !reflect.DeepEqual(got, []int{2, 0}) {
		t.Errorf("SpanSizes(3, 2) = %v", got)
	}
	if got := SpanSizes(5, 0); len(got) != DefaultTreeWidth {
		t.Errorf("width 0 gives %d counters, want TreeWidth default %d", len(got), DefaultTreeWidth)
	}
}

// TestSplitInvariants checks every split for 1..600 nodes and widths 1..64:
// at most width spans, spans are consecutive pieces of the input, nothing
// lost, and sizes match SpanSizes.
func TestSplitInvariants(t *testing.T) {
	for width := 1; width <= 64; width++ {
		for total := 1; total <= 600; total++ {
			in := names(total)
			spans := Split(in, width)
			if len(spans) > width {
				t.Fatalf("%d nodes width %d: %d spans", total, width, len(spans))
			}
			var cat []string
			sz := SpanSizes(total, width)
			for i, s := range spans {
				if len(s) != 1+sz[i] {
					t.Fatalf("%d nodes width %d: span %d has %d, set_span says %d", total, width, i, len(s), 1+sz[i])
				}
				cat = append(cat, s...)
			}
			if !slices.Equal(cat, in) {
				t.Fatalf("%d nodes width %d: spans %v do not cover the input", total, width, spans)
			}
			if total <= width && len(spans) != total {
				t.Fatalf("%d nodes width %d: want every node a head", total, width)
			}
		}
	}
}

func TestPlanSortsAndUniqs(t *testing.T) {
	spans, err := Plan("n3,n1,n2,n1,n[2-4]", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"n1", "n2", "n3"}, {"n4"}}
	if !reflect.DeepEqual(spans, want) {
		t.Fatalf("Plan = %v, want %v", spans, want)
	}
	if got := Ranged([]string{"n2", "n3", "n4", "a1"}); got != "n[2-4],a1" {
		t.Errorf("Ranged = %q", got)
	}
}

func TestReplyTimeout(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		msg, fwd   time.Duration
		cnt, width int
		want       time.Duration
	}{
		{10 * s, 10 * s, 0, 50, 10 * s},        // no forward list: the forward timeout
		{10 * s, 10 * s, 2, 50, 10 * s},        // (2+1)/50 = 0 steps
		{10 * s, 10 * s, 49, 50, 10*s + 20*s},  // 50/50 = 1 step
		{10 * s, 10 * s, 199, 50, 40*s + 50*s}, // 4 steps
		{10 * s, 5 * s, 2, 1, 30*s + 20*s},     // chain: 3 steps
		{2 * s, 1 * s, 9, 3, 6*s + 4*s},        // 10/3 = 3 steps
		{10 * s, 10 * s, 3, 0, 10 * s},         // width 0 = 50
	} {
		if got := ReplyTimeout(tc.msg, tc.fwd, tc.cnt, tc.width); got != tc.want {
			t.Errorf("ReplyTimeout(%v, %v, %d, %d) = %v, want %v", tc.msg, tc.fwd, tc.cnt, tc.width, got, tc.want)
		}
	}
}
