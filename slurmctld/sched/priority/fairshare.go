package priority

import (
	"math"
	"sort"
)

// refresh recomputes shares, normalized and effective usage and the
// fair-share factor of every association if anything changed since the
// last time. Slurm does this once per decay pass; here it happens on the
// first read after a change, so factors are never staler than the usage.
func (u *Usage) refresh() {
	if !u.dirty {
		return
	}
	u.dirty = false
	u.setLevelShares(u.root)
	u.root.usageNorm = 1
	u.root.usageEfctv = 1
	u.root.sharesNorm = 1
	u.setLevel(u.root, u.root.raw)
	if u.fairTree {
		u.fairTreeRank()
	}
}

// setLevelShares gives every child the sum of its level's raw shares.
func (u *Usage) setLevelShares(a *assoc) {
	var sum uint32
	for _, c := range a.children {
		sum += c.shares
	}
	for _, c := range a.children {
		c.levelShares = sum
		u.setLevelShares(c)
	}
}

// setLevel computes the shares and usage of parent's children, then
// recurses. The whole level's normalized usage is needed before any
// effective usage under DEPTH_OBLIVIOUS (the siblings' ratio).
func (u *Usage) setLevel(parent *assoc, rootRaw float64) {
	for _, a := range parent.children {
		level := 0.0
		if a.levelShares != 0 {
			level = float64(a.shares) / float64(a.levelShares)
		}
		// set_assoc_usage_norm
		a.usageNorm = 0
		if rootRaw != 0 {
			a.usageNorm = min(a.raw/rootRaw, 1)
		}
		if u.fairTree || parent == u.root {
			// _normalize_assoc_shares_fair_tree (and the traditional
			// one's first level): the share within the level.
			a.sharesNorm = level
		} else {
			// _normalize_assoc_shares_traditional: the product of the
			// level ratios from a up to the root's children.
			a.sharesNorm = level * parent.sharesNorm
		}
	}
	for _, a := range parent.children {
		switch {
		case u.fairTree:
			u.setFairTreeUsage(a)
		case parent == u.root:
			a.usageEfctv = a.usageNorm
		case u.depthOblivious:
			u.setDepthObliviousUsage(a)
		case a.levelShares == 0:
			// Nobody at this level has shares: inherit the parent's.
			a.usageEfctv = parent.usageEfctv
		default:
			// _set_usage_efctv: UE = UA + (UE_parent - UA) * S / S_level
			level := float64(a.shares) / float64(a.levelShares)
			a.usageEfctv = a.usageNorm + (parent.usageEfctv-a.usageNorm)*level
		}
		if !u.fairTree && a.user != "" {
			a.factor = classicFactor(a.usageEfctv, a.sharesNorm, u.damp)
		}
		u.setLevel(a, rootRaw)
	}
}

// setFairTreeUsage is _calc_assoc_fs's input: usage within the parent and
// the level fair-share S/U (+Inf without usage, 0 without shares).
func (u *Usage) setFairTreeUsage(a *assoc) {
	a.usageEfctv = 0
	if a.parent.raw != 0 {
		a.usageEfctv = a.raw / a.parent.raw
	}
	switch {
	case a.sharesNorm == 0:
		a.levelFS = 0
	case a.usageEfctv == 0:
		a.levelFS = math.Inf(1)
	default:
		a.levelFS = a.sharesNorm / a.usageEfctv
	}
}

// depthObliviousF is the fixed tuning constant of
// _depth_oblivious_set_usage_efctv.
const depthObliviousF = 5.0

// setDepthObliviousUsage is _depth_oblivious_set_usage_efctv: the
// effective usage is R * shares_norm with R = ratio_p * ratio_l^k, where
// ratio_p is the parent's usage/shares ratio, ratio_l the association's
// ratio relative to its siblings', and k pulls R back toward 1 when the
// two point in opposite directions.
func (u *Usage) setDepthObliviousUsage(a *assoc) {
	p := a.parent
	if a.sharesNorm == 0 || p.sharesNorm == 0 || p.usageEfctv == 0 || a.usageNorm == 0 {
		a.usageEfctv = a.usageNorm
		return
	}
	ratioP := p.usageEfctv / p.sharesNorm
	ratioS := 0.0
	for _, s := range p.children {
		ratioS += s.usageNorm
	}
	ratioS /= p.sharesNorm
	ratioL := (a.usageNorm / a.sharesNorm) / ratioS
	k := 1.0
	if ratioP != 0 && ratioL != 0 && math.Log(ratioP)*math.Log(ratioL) < 0 {
		lp := depthObliviousF * math.Log(ratioP)
		k = 1 / (1 + lp*lp)
	}
	a.usageEfctv = ratioP * math.Pow(ratioL, k) * a.sharesNorm
}

// ClassicFactor is the NO_FAIR_TREE fair-share factor:
// 2^(-(effective usage / normalized shares) / dampening), 0 without shares.
func ClassicFactor(usageEfctv, sharesNorm float64, dampening uint16) float64 {
	return classicFactor(usageEfctv, sharesNorm, float64(max(dampening, 1)))
}

func classicFactor(usageEfctv, sharesNorm, damp float64) float64 {
	if sharesNorm <= 0 {
		return 0
	}
	return math.Pow(2, -((usageEfctv / sharesNorm) / damp))
}

// fairTreeRank is _apply_priority_fs: walk the tree depth first, each
// level sorted by level fair-share (highest first, users before accounts
// on ties), numbering users from the user count down; tied users share a
// rank, and the factor is rank / user count.
//
// Slurm sorts with qsort, so the order of tied accounts is unspecified;
// here ties are broken by name so results are reproducible. Slurm 22.05
// also has code to merge the children of tied accounts, but its test can
// never succeed after sorting (users precede tied accounts), so it is not
// reproduced; the tie itself is carried into the first child, as in Slurm.
func (u *Usage) fairTreeRank() {
	if u.userCount == 0 {
		return
	}
	rank := uint32(u.userCount)
	rnt := rank
	u.fairTreeLevel(u.root.children, &rank, &rnt, false)
}

func (u *Usage) fairTreeLevel(siblings []*assoc, rank, rnt *uint32, accountTied bool) {
	sorted := make([]*assoc, len(siblings))
	copy(sorted, siblings)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.levelFS != b.levelFS {
			return a.levelFS > b.levelFS
		}
		if (a.user != "") != (b.user != "") {
			return a.user != ""
		}
		if a.user != b.user {
			return a.user < b.user
		}
		return a.account < b.account
	})
	var prev float64
	for i, a := range sorted {
		tied := false
		if i == 0 {
			tied = accountTied
		} else {
			tied = prev == a.levelFS
		}
		if a.user != "" {
			if !tied {
				*rank = *rnt
			}
			a.factor = float64(*rank) / float64(u.userCount)
			*rnt--
		} else {
			u.fairTreeLevel(a.children, rank, rnt, tied)
		}
		prev = a.levelFS
	}
}

// Assoc is one association as sshare shows it.
type Assoc struct {
	Account, Parent string
	User            string // "" for an account
	RawShares       uint32
	NormShares      float64
	RawUsage        float64
	NormUsage       float64
	EffectvUsage    float64
	LevelFS         float64 // Fair Tree only
	FairShare       float64 // users only
}

// Associations lists every association depth first, children in the
// order they were added (root first), with current values.
func (u *Usage) Associations() []Assoc {
	u.refresh()
	var out []Assoc
	u.walk(u.root, func(a *assoc) {
		r := Assoc{
			Account: a.account, User: a.user, RawShares: a.shares,
			NormShares: a.sharesNorm, RawUsage: a.raw, NormUsage: a.usageNorm,
			EffectvUsage: a.usageEfctv, LevelFS: a.levelFS, FairShare: a.factor,
		}
		if a.parent != nil {
			r.Parent = a.parent.account
		}
		out = append(out, r)
	})
	return out
}
