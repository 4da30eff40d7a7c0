package jobs

import (
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// Submission check of --constraint, as 22.05's build_feature_list and
// _valid_feature_list: the expression must parse and every feature it
// names must be available on some node of the cluster (any partition:
// whether the job's partitions can satisfy it is the node selection's
// business). Without a node_features plugin users may ask for available
// features, not only active ones.

// featOp is how a feature joins the next one.
type featOp uint8

const (
	featEnd  featOp = iota
	featAnd         // a&b outside brackets, or inside parentheses
	featOr          // a|b outside brackets, or inside parentheses
	featXAnd        // a*n&b*m inside brackets
	featXOr         // [a|b] matching OR
)

type featTerm struct {
	name  string
	count int
	paren int
	op    featOp
}

// parseFeatures splits a constraint into terms; ok is false for the
// syntax build_feature_list refuses. A feature's name runs from its first
// character to the next operator; what follows a count up to the next
// operator is ignored, as there.
func parseFeatures(s string) (terms []featTerm, ok bool) {
	start, end := -1, -1 // the current feature's name is s[start:end]
	count, bracket, paren, sets := 0, 0, 0, 0
	name := func(i int) string {
		if end < 0 {
			end = i
		}
		return s[start:end]
	}
	add := func(i int, op featOp) {
		terms = append(terms, featTerm{name: name(i), count: count, paren: paren, op: op})
		start, end, count = -1, -1, 0
	}
	for i := 0; i <= len(s); i++ {
		var ch byte
		if i < len(s) {
			ch = s[i]
		}
		switch {
		case ch == '*':
			if start >= 0 {
				name(i)
			}
			j := i + 1
			if j < len(s) && (s[j] == '+' || s[j] == '-') {
				j++
			}
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(s[i+1 : j])
			if err != nil || start < 0 || n <= 0 || paren != 0 {
				return nil, false
			}
			count = n
			i = j - 1
		case ch == '&' || ch == '|':
			if start < 0 {
				return nil, false
			}
			op := featAnd
			if ch == '|' {
				op = featOr
			}
			if paren == 0 && bracket > 0 {
				op += featXAnd - featAnd
			}
			add(i, op)
		case ch == '[':
			if start >= 0 || bracket > 0 {
				return nil, false
			}
			bracket++
			if sets++; sets > 1 {
				return nil, false
			}
		case ch == ']':
			if start < 0 || bracket == 0 {
				return nil, false
			}
			name(i)
			bracket--
		case ch == '(':
			if start >= 0 || paren > 0 {
				return nil, false
			}
			paren++
		case ch == ')':
			if start < 0 || paren == 0 {
				return nil, false
			}
			name(i)
			paren--
		case ch == 0:
			if start >= 0 {
				add(i, featEnd)
			}
		case start < 0:
			start = i
		}
	}
	if bracket != 0 || paren != 0 {
		return nil, false
	}
	return terms, true
}

// checkFeatures validates a constraint (commas already turned into '&')
// against the features available in the cluster: 0 or the Slurm code.
func checkFeatures(s string, nodes []sched.Node) int {
	terms, ok := parseFeatures(s)
	if !ok {
		return slurmerr.ESLURM_INVALID_FEATURE
	}
	bracket, paren := 0, 0
	hasXAnd, hasXOr := false, false
	for _, t := range terms {
		if t.op == featXOr || t.op == featXAnd {
			bracket = t.paren + 1
		}
		if t.paren > paren {
			paren = t.paren
		}
		if t.paren < paren {
			paren = t.paren
		}
		if !featureAvailable(t.name, nodes) {
			return slurmerr.ESLURM_INVALID_FEATURE
		}
		if t.op == featXAnd && t.count == 0 || t.op == featXOr && t.count != 0 {
			return slurmerr.ESLURM_INVALID_FEATURE
		}
		if bracket > paren && t.op != featXOr && t.op != featXAnd {
			if hasXAnd && t.count == 0 || hasXOr && t.count != 0 {
				return slurmerr.ESLURM_INVALID_FEATURE
			}
			bracket, hasXAnd, hasXOr = 0, false, false
		}
		hasXAnd = hasXAnd || t.op == featXAnd
		hasXOr = hasXOr || t.op == featXOr
	}
	return 0
}

func featureAvailable(name string, nodes []sched.Node) bool {
	for i := range nodes {
		for _, f := range nodes[i].AvailFeatures {
			if f == name {
				return true
			}
		}
	}
	return false
}

// normalizeFeatures turns the commas users write for '&' into '&', as
// slurmctld rewrites the job's constraint.
func normalizeFeatures(s string) string {
	return strings.ReplaceAll(s, ",", "&")
}
