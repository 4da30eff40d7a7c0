package ctld

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/gres"
)

// SavedNode is a node's state as the controller saves it. The default
// start (slurmctld without -R) takes back what 22.05's does from it: DOWN,
// DRAIN, FAIL, MAINT and the reboot flags (REBOOT_REQUESTED,
// REBOOT_ISSUED) with the reason for nodes slurm.conf leaves UNKNOWN,
// Comment and Extra where slurm.conf sets none, and for every node the
// next state, last response and reboot request time. With -R it takes
// back the state, reason, features (available and active), comment,
// extra and CpuBind too (RecoverFull). Everything else comes back from
// the node's registration or from slurm.conf.
type SavedNode struct {
	Name       string `json:"name"`
	Down       bool   `json:"down,omitempty"`
	Drain      bool   `json:"drain,omitempty"`
	Fail       bool   `json:"fail,omitempty"`
	Reason     string `json:"reason,omitempty"`
	ReasonTime int64  `json:"reason_time,omitempty"`
	ReasonUID  uint32 `json:"reason_uid,omitempty"`

	// Version 2.
	State       uint32 `json:"state,omitempty"`
	Features    string `json:"features,omitempty"`
	FeaturesAct string `json:"features_act,omitempty"`
	// FeaturesActEmpty: FeaturesAct is an empty string, not NULL.
	FeaturesActEmpty bool   `json:"features_act_empty,omitempty"`
	Comment          string `json:"comment,omitempty"`
	Extra            string `json:"extra,omitempty"`
	CPUBind          uint32 `json:"cpu_bind,omitempty"`
	// Weight is saved (as 22.05 saves its node record's weight) but not
	// recovered: 22.05's -R keeps slurm.conf's weight (its saved value is
	// the configured one).
	Weight uint32 `json:"weight,omitempty"`

	// Version 2, added later (files without them still load: absent is
	// NO_VAL and 0, what a node without a reboot under way has). 22.05
	// saves and restores them whatever the start: a reboot requested or
	// issued before a restart completes, or times out, after it.
	//
	// NextState is next_state (nil: NO_VAL, none).
	NextState *uint32 `json:"next_state,omitempty"`
	// BootReqTime is boot_req_time: when the reboot was sent.
	BootReqTime int64 `json:"boot_req_time,omitempty"`
	// LastResponse is last_response: a node that rebooted while the
	// controller was down is seen to have done so.
	LastResponse int64 `json:"last_response,omitempty"`
	// PowerSaveReqTime is power_save_req_time: when the node was set
	// POWERING_DOWN (its SuspendTimeout counts from it).
	PowerSaveReqTime int64 `json:"power_save_req_time,omitempty"`

	// GresRecs are the gres.conf records the node's slurmd last
	// registered (GresRegistered: it did, maybe with none). Jobs get
	// GRES device indices from them, so a job started after a restart
	// and before the node registers again must see the same devices
	// as the jobs still running there.
	GresRecs       []gres.Record `json:"gres_recs,omitempty"`
	GresRegistered bool          `json:"gres_registered,omitempty"`
}

// restoredFlags are the state flags the default start takes back for a
// node slurm.conf leaves UNKNOWN (load_all_node_state with state_only),
// besides DOWN, DRAIN and FAIL.
const restoredFlags = msg.NodeStateMaint | msg.NodeStateRebootRequested | msg.NodeStateRebootIssued

// savedNextState is the NextState field for a node's next state.
func savedNextState(next uint32) *uint32 {
	if next == noVal {
		return nil
	}
	return &next
}

// restoreReboot takes back what 22.05 restores of every saved node,
// whatever the start: the next state, the reboot request time and the
// last response.
func restoreReboot(n *Node, s *SavedNode) {
	n.NextState = noVal
	if s.NextState != nil {
		n.NextState = *s.NextState
	}
	n.BootReqTime, n.LastResponse = s.BootReqTime, s.LastResponse
	n.PowerSaveReqTime = s.PowerSaveReqTime
	// 22.05 does not save booting_node_bitmap; a node still powering up
	// is awaited (and times out) again.
	n.psBooting = n.Has(msg.NodeStatePoweringUp)
	if s.GresRegistered && n.gresRecs == nil {
		n.gresRecs = append([]gres.Record{}, s.GresRecs...)
	}
	n.resuming = resumingAtBuild(n)
}

// SavedState is the node state file: the node and partition tables.
type SavedState struct {
	Version    int              `json:"version"`
	Nodes      []SavedNode      `json:"nodes"`
	Partitions []SavedPartition `json:"partitions,omitempty"`
}

// nodeStateVersion is the format of the node state file. Version 1 held
// DOWN/DRAIN/FAIL nodes only; it is still read.
const nodeStateVersion = 2

// savedState is what the state file must hold now. Called under the lock.
func (c *Controller) savedState() SavedState {
	st := SavedState{Version: nodeStateVersion, Nodes: make([]SavedNode, 0, len(c.nodes))}
	for _, n := range c.nodes {
		st.Nodes = append(st.Nodes, SavedNode{
			Name: n.Name, Down: n.IsDown(), Drain: n.IsDrain(), Fail: n.IsFail(),
			Reason: n.Reason, ReasonTime: n.ReasonTime, ReasonUID: n.ReasonUID,
			State: n.State, Features: n.Features, FeaturesAct: n.FeaturesAct, FeaturesActEmpty: n.actEmpty,
			Comment: n.Comment, Extra: n.Extra, CPUBind: n.CPUBind, Weight: n.Weight,
			NextState: savedNextState(n.NextState), BootReqTime: n.BootReqTime, LastResponse: n.LastResponse,
			PowerSaveReqTime: n.PowerSaveReqTime,
			GresRecs:         n.gresRecs, GresRegistered: n.gresRecs != nil,
		})
	}
	for _, p := range c.parts {
		st.Partitions = append(st.Partitions, savePartition(p))
	}
	return st
}

// RestoreNodes applies saved node states as slurmctld's default start
// does (load_all_node_state with state_only), at start-up before serving.
// Nodes no longer in the configuration are ignored.
func (c *Controller) RestoreNodes(saved []SavedNode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	powerSave := c.cfg.Conf.SuspendProgram != "" && c.cfg.Conf.ResumeProgram != ""
	var cleared []string
	now := c.now().Unix()
	for i := range saved {
		s := &saved[i]
		n := c.nodeIndex[s.Name]
		if n == nil {
			continue
		}
		if n.Has(msg.NodeStateCloud) && s.State != 0 {
			// A CLOUD node, which slurm.conf starts powered down, takes
			// back its saved state whole (a node up stays up); without
			// power saving its power flags go.
			st := s.State
			const power = msg.NodeStatePoweredDown | msg.NodeStatePoweringDown | msg.NodeStatePoweringUp
			if !powerSave && st&power != 0 {
				st &^= power
				cleared = append(cleared, n.Name)
			}
			n.State = st | msg.NodeStateCloud
		} else if n.IsUnknown() {
			// A version 1 file has no State: nothing more.
			if restorePower(n, s.State, powerSave) {
				cleared = append(cleared, n.Name)
			}
			n.State |= s.State & restoredFlags
			if s.Down {
				n.State = msg.NodeStateDown | (n.State &^ msg.NodeStateBase)
			}
			if s.Drain {
				n.State |= msg.NodeStateDrain
			}
			if s.Fail {
				n.State |= msg.NodeStateFail
			}
		}
		if n.Extra == "" {
			n.Extra = s.Extra
		}
		if n.Comment == "" {
			n.Comment = s.Comment
		}
		if n.Reason == "" {
			n.Reason, n.ReasonTime, n.ReasonUID = s.Reason, s.ReasonTime, s.ReasonUID
		}
		restoreReboot(n, s)
		if !n.Has(msg.NodeStatePoweredDown) {
			n.LastBusy = now
		}
	}
	if len(cleared) > 0 {
		c.log.Info("Cleared POWER_SAVE flag from nodes " + hostlist.Compress(cleared))
	}
	c.lastNodeUpdate = now
}

// restorePower is the default start's recovery of the power saving flags
// of a node slurm.conf leaves UNKNOWN: with power saving configured a
// node saved POWERED_DOWN or POWERING_DOWN comes back IDLE with that
// flag, one POWERING_UP keeps it; without, the flags are dropped and it
// reports so (the caller logs the nodes).
func restorePower(n *Node, saved uint32, powerSave bool) (cleared bool) {
	down := saved & (msg.NodeStatePoweredDown | msg.NodeStatePoweringDown)
	up := saved & msg.NodeStatePoweringUp
	if down == 0 && up == 0 {
		return false
	}
	if !powerSave {
		return true
	}
	if down != 0 {
		n.State = msg.NodeStateIdle | n.State&^msg.NodeStateBase | down
	}
	n.State |= up
	return false
}

// RecoverFull is slurmctld -R: the saved node and partition records
// replace what slurm.conf says (load_all_node_state without state_only,
// load_all_part_state). Saved partitions slurm.conf no longer has are
// created again; saved nodes it no longer has are ignored. A version 1
// file only held DOWN/DRAIN/FAIL nodes: it is applied as RestoreNodes.
func (c *Controller) RecoverFull(st *SavedState) {
	if st == nil {
		return
	}
	if st.Version < 2 {
		c.RestoreNodes(st.Nodes)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	powerSave := c.cfg.Conf.SuspendProgram != "" && c.cfg.Conf.ResumeProgram != ""
	var cleared []string
	for i := range st.Nodes {
		s := &st.Nodes[i]
		n := c.nodeIndex[s.Name]
		if n == nil {
			c.log.Error(fmt.Sprintf("Node %s has vanished from configuration", s.Name))
			continue
		}
		n.State = s.State
		// Without power saving nothing will resume or suspend the node:
		// its power flags go (load_all_node_state).
		const power = msg.NodeStatePoweredDown | msg.NodeStatePoweringDown | msg.NodeStatePoweringUp
		if !powerSave && n.State&power != 0 {
			n.State &^= power
			cleared = append(cleared, n.Name)
		}
		restoreReboot(n, s)
		n.Reason, n.ReasonTime, n.ReasonUID = s.Reason, s.ReasonTime, s.ReasonUID
		n.Comment, n.Extra, n.CPUBind = s.Comment, s.Extra, s.CPUBind
		if n.Features != s.Features {
			c.log.Error(fmt.Sprintf("Node %s Features(%s) differ from slurm.conf", n.Name, s.Features))
		}
		n.setFeatures(s.Features, s.FeaturesAct)
		n.actEmpty = s.FeaturesActEmpty && s.FeaturesAct == ""
	}
	if len(cleared) > 0 {
		c.log.Info("Cleared POWER_SAVE flag from nodes " + hostlist.Compress(cleared))
	}
	for _, sp := range st.Partitions {
		c.restorePartition(sp)
	}
	c.log.Info(fmt.Sprintf("Recovered state of %d partitions", len(st.Partitions)))
	c.relinkPartitions()
	now := c.now().Unix()
	c.lastNodeUpdate, c.lastPartUpdate = now, now
}

// ReadSavedState reads the node state file; a missing file is no saved
// state (nil).
func ReadSavedState(path string) (*SavedState, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f SavedState
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != 1 && f.Version != nodeStateVersion {
		return nil, fmt.Errorf("%s: unsupported version %d", path, f.Version)
	}
	return &f, nil
}

// savedNodes lists the DOWN, DRAIN and FAIL nodes (what a version 1
// file held). Called under the lock.
func (c *Controller) savedNodes() []SavedNode {
	var out []SavedNode
	for _, s := range c.savedState().Nodes {
		if s.Down || s.Drain || s.Fail {
			out = append(out, s)
		}
	}
	return out
}

// writeNodeState writes a state file holding these nodes only.
func writeNodeState(path string, nodes []SavedNode) error {
	data, err := json.Marshal(SavedState{Version: nodeStateVersion, Nodes: nodes})
	if err != nil {
		return err
	}
	return writeStateFile(path, data)
}

// ReadNodeState reads the nodes of a node state file; a missing file is no
// saved state.
func ReadNodeState(path string) ([]SavedNode, error) {
	st, err := ReadSavedState(path)
	if st == nil || err != nil {
		return nil, err
	}
	return st.Nodes, nil
}

// writeStateFile replaces a state file: new file, fsync, rename,
// fsync of the directory.
func writeStateFile(path string, data []byte) error {
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

// saveNodes writes the node state file (nodes and partitions) when what
// it holds changed.
func (c *Controller) saveNodes() {
	jc := c.jobs
	if jc.opts.NodeStateFile == "" {
		return
	}
	c.mu.RLock()
	st := c.savedState()
	c.mu.RUnlock()
	data, err := json.Marshal(st)
	if err != nil {
		c.log.Error(fmt.Sprintf("node state save: %v", err))
		return
	}
	if jc.nodesSaved != nil && string(data) == string(jc.nodesSaved) {
		return
	}
	if err := writeStateFile(jc.opts.NodeStateFile, data); err != nil {
		c.log.Error(fmt.Sprintf("node state save: %v", err))
		return
	}
	jc.nodesSaved = data
}
