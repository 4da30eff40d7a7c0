package sched

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bits-and-blooms/bitset"
)

// constraint is a parsed --constraint expression.
//
// Supported forms (Slurm's syntax):
//
//	a            nodes with feature a
//	a&b          nodes with both
//	a|b          nodes with either (nodes may differ)
//	a&b|c        & binds tighter than | (a and b, or c)
//	[a|b|c]      matching OR: every node has the same one of them; the
//	             alternatives are tried in order
//	a*4          at least 4 of the allocated nodes have a
//	[a*2&b*1]    2 nodes with a and 1 node with b
//
// Parentheses are not supported; a clear error says so.
type constraint struct {
	// or is a disjunction of conjunctions (plain form).
	or [][]string
	// alternatives is the matching-OR form: one plain feature set each.
	alternatives [][]string
	// counts are the "feature*n" terms (joined by &).
	counts []countTerm
}

type countTerm struct {
	feature string
	n       int
}

func parseConstraint(s string) (*constraint, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if strings.ContainsAny(s, "()") {
		return nil, fmt.Errorf("constraint %q: parentheses are not supported", s)
	}
	c := &constraint{}
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") {
			return nil, fmt.Errorf("constraint %q: unbalanced brackets", s)
		}
		inner := s[1 : len(s)-1]
		if strings.Contains(inner, "*") {
			if strings.Contains(inner, "|") {
				return nil, fmt.Errorf("constraint %q: counts with | are not supported", s)
			}
			return parseCounts(s, inner)
		}
		for _, alt := range strings.Split(inner, "|") {
			fs := strings.Split(alt, "&")
			for _, f := range fs {
				if f == "" {
					return nil, fmt.Errorf("constraint %q: empty feature", s)
				}
			}
			c.alternatives = append(c.alternatives, fs)
		}
		return c, nil
	}
	if strings.ContainsAny(s, "[]") {
		return nil, fmt.Errorf("constraint %q: brackets only around the whole expression are supported", s)
	}
	if strings.Contains(s, "*") {
		if strings.Contains(s, "|") {
			return nil, fmt.Errorf("constraint %q: counts with | are not supported", s)
		}
		return parseCounts(s, s)
	}
	for _, term := range strings.Split(s, "|") {
		fs := strings.Split(term, "&")
		for _, f := range fs {
			if f == "" {
				return nil, fmt.Errorf("constraint %q: empty feature", s)
			}
		}
		c.or = append(c.or, fs)
	}
	return c, nil
}

func parseCounts(whole, s string) (*constraint, error) {
	c := &constraint{}
	for _, t := range strings.Split(s, "&") {
		name, cnt, found := strings.Cut(t, "*")
		n := 1
		if found {
			v, err := strconv.Atoi(cnt)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("constraint %q: invalid count in %q", whole, t)
			}
			n = v
		}
		if name == "" {
			return nil, fmt.Errorf("constraint %q: empty feature", whole)
		}
		c.counts = append(c.counts, countTerm{feature: name, n: n})
	}
	return c, nil
}

// featureIndex maps feature names to node bitmaps.
type featureIndex struct {
	n    uint
	bits map[string]*bitset.BitSet
}

func newFeatureIndex(nodes []Node) *featureIndex {
	fi := &featureIndex{n: uint(len(nodes)), bits: map[string]*bitset.BitSet{}}
	for i := range nodes {
		for _, f := range nodes[i].Features {
			b := fi.bits[f]
			if b == nil {
				b = bitset.New(fi.n)
				fi.bits[f] = b
			}
			b.Set(uint(i))
		}
	}
	return fi
}

func (fi *featureIndex) get(f string) *bitset.BitSet {
	if b := fi.bits[f]; b != nil {
		return b
	}
	return bitset.New(fi.n)
}

func (fi *featureIndex) and(fs []string) *bitset.BitSet {
	out := fi.get(fs[0]).Clone()
	for _, f := range fs[1:] {
		out.InPlaceIntersection(fi.get(f))
	}
	return out
}

// nodeSets returns the node bitmaps the constraint allows, one per
// alternative to try in order (one entry unless matching OR), and for
// count constraints the per-term bitmaps.
func (fi *featureIndex) nodeSets(c *constraint) (alts []*bitset.BitSet, counts []*bitset.BitSet) {
	switch {
	case c == nil:
		return nil, nil
	case len(c.alternatives) > 0:
		for _, a := range c.alternatives {
			alts = append(alts, fi.and(a))
		}
		return alts, nil
	case len(c.counts) > 0:
		union := bitset.New(fi.n)
		for _, t := range c.counts {
			b := fi.get(t.feature)
			counts = append(counts, b)
			union.InPlaceUnion(b)
		}
		return []*bitset.BitSet{union}, counts
	default:
		out := bitset.New(fi.n)
		for _, term := range c.or {
			out.InPlaceUnion(fi.and(term))
		}
		return []*bitset.BitSet{out}, nil
	}
}
