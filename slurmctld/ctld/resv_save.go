package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

// ResvStateName is the file in StateSaveLocation that keeps the
// reservations across restarts (Slurm's resv_state; ours is JSON).
const ResvStateName = "resv_state.json"

// resvStateVersion is the format of ResvStateName.
const resvStateVersion = 1

type resvFile struct {
	Version      int
	TopSuffix    uint32
	Reservations []*resvRec
}

// ResvOptions configure AttachReservations.
type ResvOptions struct {
	// StateFile keeps the reservations (normally
	// StateSaveLocation/ResvStateName); "" means they are not saved.
	StateFile string
	// IgnoreState starts without reservations when the file cannot be
	// read (slurmctld -i); otherwise that is an error.
	IgnoreState bool
}

// AttachReservations recovers the saved reservations and has every
// change saved from then on. Slurm recovers reservations even with -c,
// so this is called on every start. Call it before serving.
func (c *Controller) AttachReservations(o ResvOptions) error {
	f, err := readResvState(o.StateFile)
	if err != nil {
		if !o.IgnoreState {
			return fmt.Errorf("reservation state recovery: %w (start with -i to skip it)", err)
		}
		c.log.Error(fmt.Sprintf("reservation state recovery: %v", err))
		f = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resv.file = o.StateFile
	now := c.now().Unix()
	c.resv.lastUpdate = now
	if f == nil {
		return nil
	}
	c.resv.top = f.TopSuffix
	c.resv.list = c.resv.list[:0]
	for _, r := range f.Reservations {
		// Nodes gone from slurm.conf leave the reservation
		// (_validate_node_choice keeps the rest).
		var nodes []string
		for _, n := range r.Nodes {
			if c.nodeIndex[n] != nil {
				nodes = append(nodes, n)
			}
		}
		r.Nodes = nodes
		r.Cores = slices.DeleteFunc(r.Cores, func(rc resvNodeCores) bool { return c.nodeIndex[rc.Node] == nil })
		c.resv.list = append(c.resv.list, r)
	}
	c.setResvNodeFlags(now)
	c.log.Info(fmt.Sprintf("Recovered state of %d reservations", len(c.resv.list)))
	return nil
}

// readResvState reads a reservation state file; a missing file (or no
// file name) is no saved state.
func readResvState(path string) (*resvFile, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f resvFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != resvStateVersion {
		return nil, fmt.Errorf("%s: unsupported version %d", path, f.Version)
	}
	for _, r := range f.Reservations {
		if r == nil || r.Name == "" {
			return nil, fmt.Errorf("%s: reservation without a name", path)
		}
	}
	return &f, nil
}

// saveResv writes the reservations when they changed since the last
// write: new file, fsync, rename, fsync of the directory. The table is
// encoded under the read lock and written outside it; a write never
// replaces a newer one.
func (c *Controller) saveResv(context.Context) {
	c.resv.saveMu.Lock()
	defer c.resv.saveMu.Unlock()
	c.mu.RLock()
	path, seq := c.resv.file, c.resv.seq
	if path == "" || seq == c.resv.saved {
		c.mu.RUnlock()
		return
	}
	data, err := json.Marshal(resvFile{Version: resvStateVersion, TopSuffix: c.resv.top, Reservations: c.resv.list})
	c.mu.RUnlock()
	if err == nil {
		err = writeStateFile(path, data)
	}
	if err != nil {
		c.log.Error(fmt.Sprintf("reservation state save: %v", err))
		return
	}
	c.resv.saved = seq
}
