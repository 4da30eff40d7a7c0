package ctld

import (
	"strings"

	"github.com/goslurm/goslurm/protocol/msg"
)

// State=CLOUD nodes: they start powered down (configState), are hidden
// from the node listings while powered down unless PrivateData=cloud
// (nodeHidden), are resumed and suspended by power saving like other
// nodes, and their addresses go to the jobs on them in an alias list
// (set_job_alias_list), which the job manager builds from cloudAliases.

// cloudAliases returns each CLOUD node's alias entry,
// "name:[addr]:hostname", by node index ("" for other nodes), reusing
// dst; nil when there is no CLOUD node or with
// SlurmctldParameters=cloud_dns (the names resolve). Under the lock.
func (c *Controller) cloudAliases(dst []string) []string {
	if c.cloudDNS() {
		return nil
	}
	found := false
	for _, n := range c.nodes {
		if n.Has(msg.NodeStateCloud) {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	if len(dst) != len(c.nodes) {
		dst = make([]string, len(c.nodes))
	}
	for i, n := range c.nodes {
		switch {
		case !n.Has(msg.NodeStateCloud):
			dst[i] = ""
		case !isAlias(dst[i], n):
			dst[i] = n.Name + ":[" + n.Addr + "]:" + n.Hostname
		}
	}
	return dst
}

// isAlias reports whether s is n's alias entry, without building it.
func isAlias(s string, n *Node) bool {
	rest, ok := strings.CutPrefix(s, n.Name+":[")
	if !ok {
		return false
	}
	addr, host, ok := strings.Cut(rest, "]:")
	return ok && addr == n.Addr && host == n.Hostname
}

// cloudDNS reports SlurmctldParameters=cloud_dns.
func (c *Controller) cloudDNS() bool {
	for _, o := range c.cfg.Conf.SlurmctldParameters {
		if strings.EqualFold(o.Name, "cloud_dns") {
			return true
		}
	}
	return false
}
