package ctld

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/goslurm/goslurm/protocol/msg"
)

// SavedNode is the part of a node's state that survives a restart of the
// controller, as slurmctld's default recovery keeps it: DOWN, DRAIN and
// FAIL with their reason. Everything else comes back from the node's
// registration.
type SavedNode struct {
	Name       string `json:"name"`
	Down       bool   `json:"down,omitempty"`
	Drain      bool   `json:"drain,omitempty"`
	Fail       bool   `json:"fail,omitempty"`
	Reason     string `json:"reason,omitempty"`
	ReasonTime int64  `json:"reason_time,omitempty"`
	ReasonUID  uint32 `json:"reason_uid,omitempty"`
}

// nodeStateVersion is the format of the node state file.
const nodeStateVersion = 1

type nodeStateFile struct {
	Version int         `json:"version"`
	Nodes   []SavedNode `json:"nodes"`
}

// savedNodes lists the nodes whose state must survive a restart. Called
// under the lock.
func (c *Controller) savedNodes() []SavedNode {
	var out []SavedNode
	for _, n := range c.nodes {
		s := SavedNode{Name: n.Name, Down: n.IsDown(), Drain: n.IsDrain(), Fail: n.IsFail()}
		if !s.Down && !s.Drain && !s.Fail {
			continue
		}
		s.Reason, s.ReasonTime, s.ReasonUID = n.Reason, n.ReasonTime, n.ReasonUID
		out = append(out, s)
	}
	return out
}

// RestoreNodes applies saved node states (at start-up, before serving).
// Nodes no longer in the configuration are ignored.
func (c *Controller) RestoreNodes(saved []SavedNode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range saved {
		n := c.nodeIndex[s.Name]
		if n == nil {
			continue
		}
		if s.Down {
			n.State = msg.NodeStateDown | (n.State &^ msg.NodeStateBase)
		}
		if s.Drain {
			n.State |= msg.NodeStateDrain
		}
		if s.Fail {
			n.State |= msg.NodeStateFail
		}
		n.Reason, n.ReasonTime, n.ReasonUID = s.Reason, s.ReasonTime, s.ReasonUID
	}
	c.lastNodeUpdate = c.now().Unix()
}

// ReadNodeState reads a node state file; a missing file is no saved state.
func ReadNodeState(path string) ([]SavedNode, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f nodeStateFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != nodeStateVersion {
		return nil, fmt.Errorf("%s: unsupported version %d", path, f.Version)
	}
	return f.Nodes, nil
}

// writeNodeState replaces the node state file: new file, fsync, rename,
// fsync of the directory.
func writeNodeState(path string, nodes []SavedNode) error {
	data, err := json.Marshal(nodeStateFile{Version: nodeStateVersion, Nodes: nodes})
	if err != nil {
		return err
	}
	tmp := path + ".new"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// saveNodes writes the node state file when what it holds changed.
func (c *Controller) saveNodes() {
	jc := c.jobs
	if jc.opts.NodeStateFile == "" {
		return
	}
	c.mu.RLock()
	nodes := c.savedNodes()
	c.mu.RUnlock()
	data, _ := json.Marshal(nodes)
	if jc.nodesSaved != nil && string(data) == string(jc.nodesSaved) {
		return
	}
	if err := writeNodeState(jc.opts.NodeStateFile, nodes); err != nil {
		c.log.Error(fmt.Sprintf("node state save: %v", err))
		return
	}
	jc.nodesSaved = data
}
