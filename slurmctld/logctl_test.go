package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/slurmctld/ctld"
	"github.com/goslurm/goslurm/slurmd/slurmlog"
)

// TestSetupLogControlled: the daemon's logger lets the debug RPCs change
// its level and DebugFlags (ctld finds the setters on its handler), in the
// log file and on standard error alike.
func TestSetupLogControlled(t *testing.T) {
	dir := t.TempDir()
	c, err := conf.Parse("slurm.conf", []byte("ClusterName=t\nSlurmctldHost=localhost\nSlurmUser=root\nSlurmctldDebug=info\n"+
		"SlurmctldLogFile="+filepath.Join(dir, "ctld.log")+"\nNodeName=n1\nPartitionName=p Nodes=n1\n"), conf.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	log, file, err := setupLog(&CLI{Foreground: true}, &ctld.Config{Conf: c}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	lc, ok := log.Handler().(interface {
		SetLevel(slog.Level)
		SetDebugFlags([]string)
	})
	if !ok {
		t.Fatalf("handler %T has no level and flag setters", log.Handler())
	}
	log.Debug("hidden at info")
	lc.SetLevel(slurmlog.LevelDebug)
	lc.SetDebugFlags([]string{"Backfill"})
	log.Debug("shown at debug")
	slurmlog.Flag(log, "Backfill").Info("flag on")
	slurmlog.Flag(log, "Gres").Info("flag off")
	log.Log(context.Background(), slurmlog.LevelDebug2, "hidden at debug")
	want := "slurmctld: debug:  shown at debug\nslurmctld: BACKFILL: flag on\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}
