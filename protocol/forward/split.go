package forward

import (
	"github.com/goslurm/goslurm/hostlist"
)

// DefaultTreeWidth is slurm.conf's TreeWidth default in 22.05.
const DefaultTreeWidth = 50

// SpanSizes is 22.05's set_span: for total nodes and a tree width it returns
// width counters, the number of nodes each span carries besides its head.
// When total <= width every counter is 0 (every node is its own head).
// Otherwise spans are filled round-robin width nodes at a time, and the last
// short chunk is dealt out as the C loop does. width 0 means
// DefaultTreeWidth.
func SpanSizes(total, width int) []int {
	if width <= 0 {
		width = DefaultTreeWidth
	}
	span := make([]int, width)
	if total <= width {
		return span
	}
	left := total
	for left > 0 {
		for i := 0; i < width; i++ {
			if width-i >= left {
				// The remaining nodes fit in the heads still to come:
				// they become heads of their own (a fresh span) or
				// join span i.
				if span[i] != 0 {
					span[i] += left
				}
				left = 0
				break
			} else if left <= width {
				if span[i] == 0 {
					left-- // span i's head
				}
				span[i] += left
				left = 0
				break
			}
			if span[i] == 0 {
				left-- // span i's head
			}
			span[i] += width
			left -= width
		}
	}
	return span
}

// Split is route/default's route_split_hostlist_treewidth: it cuts nodes,
// in the order given, into consecutive spans of 1+SpanSizes(len, width)[i]
// nodes. Each span's first node is its head; the rest is the forward list
// the head gets. The result has at most width spans. Duplicates are not
// removed (Plan does that, as start_msg_tree and forward_msg do first).
func Split(nodes []string, width int) [][]string {
	if len(nodes) == 0 {
		return nil
	}
	span := SpanSizes(len(nodes), width)
	var out [][]string
	for i := 0; len(nodes) > 0; i++ {
		n := 1
		if i < len(span) {
			n += span[i]
		}
		n = min(n, len(nodes))
		out = append(out, nodes[:n:n])
		nodes = nodes[n:]
	}
	return out
}

// Plan parses a hostlist expression, sorts it and drops duplicates as
// hostlist_uniq does (Slurm sorts before splitting), and splits it with
// Split.
func Plan(nodelist string, width int) ([][]string, error) {
	hosts, err := UniqHosts(nodelist)
	if err != nil {
		return nil, err
	}
	return Split(hosts, width), nil
}

// UniqHosts expands a hostlist expression into the sorted, de-duplicated
// host order Slurm's trees use.
func UniqHosts(nodelist string) ([]string, error) {
	hl, err := hostlist.Parse(nodelist)
	if err != nil {
		return nil, err
	}
	hl.Uniq()
	return hl.Hosts(), nil
}

// Ranged is the forward.nodelist text for nodes, in their order (what
// hostlist_ranged_string gives for a hostlist built by shifting hosts off
// another).
func Ranged(nodes []string) string { return hostlist.Compress(nodes) }

// uniq sorts and de-duplicates names as hostlist_uniq does.
func uniq(names []string) []string {
	hl := hostlist.New()
	for _, n := range names {
		hl.PushHost(n)
	}
	hl.Uniq()
	return hl.Hosts()
}
