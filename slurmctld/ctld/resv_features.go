package ctld

import (
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Features= of reservations: the nodes a NodeCnt= reservation picks
// must have them. The expression is read as a job's --constraint
// (build_feature_list) and evaluated left to right as
// valid_feature_counts does, active features first, then available
// ones when too few nodes have them active.

type featOp uint8

const (
	featEnd featOp = iota
	featAnd
	featOr
	featXand
	featXor
)

type resvFeat struct {
	name  string
	count int
	paren int
	op    featOp
}

// parseResvFeatures is build_feature_list for a reservation: commas are
// taken as '&' (and the reservation keeps the rewritten string). Errors
// are ESLURM_INVALID_FEATURE, as Slurm's.
func parseResvFeatures(s string) (string, []resvFeat, error) {
	s = strings.ReplaceAll(s, ",", "&")
	bad := resvErr(slurmerr.ESLURM_INVALID_FEATURE)
	var out []resvFeat
	name := ""
	have := false
	count, paren, bracket, sets := 0, 0, 0, 0
	add := func(op featOp) {
		out = append(out, resvFeat{name: name, count: count, paren: paren, op: op})
		name, have, count = "", false, 0
	}
	for i := 0; i <= len(s); i++ {
		ch := byte(0)
		if i < len(s) {
			ch = s[i]
		}
		switch ch {
		case '*':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(s[i+1 : j])
			if !have || err != nil || n <= 0 || paren != 0 {
				return "", nil, bad
			}
			count = n
			i = j - 1
		case '&', '|':
			if !have {
				return "", nil, bad
			}
			op := featAnd
			switch {
			case ch == '|' && paren == 0 && bracket > 0:
				op = featXor
			case ch == '|':
				op = featOr
			case paren == 0 && bracket > 0:
				op = featXand
			}
			add(op)
		case '[':
			if have || bracket > 0 {
				return "", nil, bad
			}
			bracket++
			if sets++; sets > 1 {
				return "", nil, bad
			}
		case ']':
			if !have || bracket == 0 {
				return "", nil, bad
			}
			bracket--
		case '(':
			if have || paren > 0 {
				return "", nil, bad
			}
			paren++
		case ')':
			if !have || paren == 0 {
				return "", nil, bad
			}
			paren--
		case 0:
			if have {
				add(featEnd)
			}
		default:
			if !have {
				have = true
			}
			name += string(ch)
		}
	}
	if bracket != 0 || paren != 0 {
		return "", nil, bad
	}
	return s, out, nil
}

// featureNodes returns the nodes (by name) of cand that satisfy the
// expression, evaluated on active (or available) features; counts
// (name*n) leave the nodes unfiltered, as in Slurm.
func featureNodes(feats []resvFeat, cand []*Node, active bool) map[string]bool {
	has := func(n *Node, f string) bool {
		list := n.Features
		if active {
			list = n.FeaturesAct
		}
		for _, x := range strings.Split(list, ",") {
			if x == f {
				return true
			}
		}
		return false
	}
	all := func() map[string]bool {
		m := make(map[string]bool, len(cand))
		for _, n := range cand {
			m[n.Name] = true
		}
		return m
	}
	feature := all()
	work := feature
	var parenSet map[string]bool
	lastOp, lastParenOp := featAnd, featAnd
	lastParen := 0
	haveCount := false
	for _, f := range feats {
		if lastParen < f.paren {
			lastParenOp, lastOp = lastOp, featAnd
			parenSet = all()
			work = parenSet
		}
		for _, n := range cand {
			in := has(n, f.name)
			switch lastOp {
			case featAnd:
				work[n.Name] = work[n.Name] && in
			case featOr:
				work[n.Name] = work[n.Name] || in
			}
		}
		haveCount = haveCount || f.count > 0
		if lastParen > f.paren {
			for _, n := range cand {
				switch lastParenOp {
				case featAnd:
					feature[n.Name] = feature[n.Name] && work[n.Name]
				default:
					feature[n.Name] = feature[n.Name] || work[n.Name]
				}
			}
			work = feature
		}
		lastOp, lastParen = f.op, f.paren
	}
	if haveCount {
		return all()
	}
	out := map[string]bool{}
	for name, ok := range work {
		if ok {
			out[name] = true
		}
	}
	return out
}

// checkResvFeatures validates a reservation's Features= against the
// nodes: every name must be some node's available feature. Exclusive
// OR ([a|b]) is refused as Slurm refuses it for reservations; matching
// counts per feature ([a*1&b*2]) is not implemented here and refused.
func (c *Controller) checkResvFeatures(s string) (string, []resvFeat, error) {
	s, feats, err := parseResvFeatures(s)
	if err != nil {
		return "", nil, err
	}
	avail := map[string]bool{}
	for _, n := range c.nodes {
		for _, f := range strings.Split(n.Features, ",") {
			avail[f] = true
		}
	}
	for _, f := range feats {
		if !avail[f.name] {
			return "", nil, resvErr(slurmerr.ESLURM_INVALID_FEATURE)
		}
	}
	for _, f := range feats {
		switch f.op {
		case featXor:
			return "", nil, resvErr(slurmerr.ESLURM_INVALID_FEATURE)
		case featXand:
			return "", nil, resvErr(slurmerr.ESLURM_NOT_SUPPORTED)
		}
	}
	return s, feats, nil
}

// featureFilter is _select_nodes' feature step: of the candidate nodes,
// those with the features active, or available when fewer than count
// have them active; fewer than count either way is
// ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE.
func featureFilter(feats []resvFeat, cand []*Node, count uint32) (map[string]bool, error) {
	ok := featureNodes(feats, cand, true)
	if uint32(len(ok)) < count {
		ok = featureNodes(feats, cand, false)
	}
	if uint32(len(ok)) < count {
		return nil, resvErr(slurmerr.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE)
	}
	return ok, nil
}
