package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/slurmd/stepd"
)

// TestStepdConfig: what every supervisor learns about the node comes from
// slurm.conf as resolved for it; Prolog and Epilog stay with the daemon.
func TestStepdConfig(t *testing.T) {
	dir, conf, _ := writeConf(t)
	extra := "ProctrackType=proctrack/cgroup\nSelectType=select/cons_tres\nKillWait=7\nProlog=/bin/true\nEpilog=/bin/true\n" +
		"PrologEpilogTimeout=20\nJobFileAppend=1\nAuthInfo=socket=/run/m.sock\n" +
		"NodeName=n3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=1 Sockets=1 CoresPerSocket=2 ThreadsPerCore=2 RealMemory=3000\n"
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, append(b, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(conf, "n3")
	if err != nil {
		t.Fatal(err)
	}
	got := stepdConfig(cfg)
	want := stepd.Config{
		NodeName: "n3", Hostname: cfg.Hostname, SpoolDir: filepath.Join(dir, "spool", "n3"),
		ClusterName: "t", ConfPath: conf, Controllers: cfg.Controllers, SelectPluginID: 109,
		SlurmUserUID: uint32(os.Getuid()), NodeCPUs: 4, ThreadsPerCore: 2, RealMemoryMB: 3000,
		PrologEpilogTimeout: 20 * time.Second,
		ProctrackType:       "proctrack/cgroup", CgroupConf: filepath.Join(dir, "cgroup.conf"), MultipleSlurmd: true,
		KillWait: 7 * time.Second, JobFileAppend: true, AuthType: "auth/munge", MungeSocket: "/run/m.sock",
		LogFile:          filepath.Join(dir, "log-n3.log"),
		SlurmctldTimeout: 120 * time.Second, TCPTimeout: 2 * time.Second, // slurm.conf defaults
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stepd.Config (-want +got):\n%s", d)
	}
	if got.RunProlog || got.RunEpilog || got.Prolog != "" || got.Epilog != "" {
		t.Error("the supervisors must not run Prolog or Epilog: the daemon does, once per job")
	}
}

func TestCheckStepd(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		mode os.FileMode
		ok   bool
	}{
		{"world-executable", 0o755, true},
		{"owner-only", 0o700, false},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), tc.mode); err != nil {
			t.Fatal(err)
		}
		if err := checkStepd(&CLI{Stepd: p}); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if err := checkStepd(&CLI{Stepd: filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing slurmstepd passed")
	}
}
