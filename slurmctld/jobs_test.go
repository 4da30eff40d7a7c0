package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/slurmctld/ctld"
)

// TestNodeStateRecoveryLog: the start-up says how many saved node records
// it took back (those of configured nodes, as load_all_node_state counts
// them), names the ones no longer configured, and says so when there is
// no node state file.
func TestNodeStateRecoveryLog(t *testing.T) {
	for _, tc := range []struct {
		name  string
		saved *ctld.SavedState
		want  []string
	}{
		{"no file", nil, []string{"No node state file ("}},
		{"saved", &ctld.SavedState{Version: 2, Nodes: []ctld.SavedNode{{Name: "n1", Drain: true, Reason: "x"}, {Name: "gone"}}},
			[]string{"Recovered state of 1 nodes", "Node gone has vanished from configuration"}},
		{"idle nodes count too", &ctld.SavedState{Version: 2, Nodes: []ctld.SavedNode{{Name: "n1", State: 1}}},
			[]string{"Recovered state of 1 nodes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, err := ctld.LoadConfig(writeConf(t, dir, freePort(t)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.saved != nil {
				b, err := json.Marshal(tc.saved)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, nodeStateName), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, nil))
			ctl, err := ctld.New(ctld.Options{Config: cfg, Log: log})
			if err != nil {
				t.Fatal(err)
			}
			closeJobs, err := openJobs(&CLI{}, cfg, ctl, nil, log)
			if err != nil {
				t.Fatal(err)
			}
			closeJobs()
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, buf.String())
				}
			}
			if strings.Contains(buf.String(), "down, drained or failed") {
				t.Errorf("old message:\n%s", buf.String())
			}
		})
	}
}
