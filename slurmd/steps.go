package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmd/daemon"
	"github.com/goslurm/goslurm/slurmd/stepd"
)

// stepdConfig is what every step supervisor (slurmstepd) learns about this
// node: slurm.conf as resolved for it, the node's configured CPUs, threads
// and memory (the controller's core bitmaps and memory limits are in those
// terms), and cgroup.conf beside slurm.conf.
//
// Prolog and Epilog belong to the daemon (once per job per node: on the
// first launch or REQUEST_LAUNCH_PROLOG, and on REQUEST_TERMINATE_JOB), so
// the supervisors never run them.
func stepdConfig(cfg *daemon.Config) stepd.Config {
	c := cfg.Conf
	sc := stepd.Config{
		NodeName:       cfg.NodeName,
		Hostname:       cfg.Hostname,
		SpoolDir:       cfg.SpoolDir,
		ClusterName:    c.ClusterName,
		ConfPath:       cfg.ConfPath,
		Controllers:    cfg.Controllers,
		SelectPluginID: selectPluginID(c.SelectType),
		SlurmUserUID:   cfg.SlurmUID,
		ProctrackType:  c.ProctrackType,
		CgroupConf:     filepath.Join(filepath.Dir(cfg.ConfPath), "cgroup.conf"),
		MultipleSlurmd: cfg.Multiple,
		KillWait:       cfg.KillWait,
		JobFileAppend:  c.JobFileAppend == 1,
		AuthType:       c.AuthType,
		LogFile:        cfg.LogFile,

		SlurmctldTimeout: cfg.SlurmctldTimeout,
		TCPTimeout:       cfg.TCPTimeout,
	}
	if l := cfg.Line; l != nil {
		sc.NodeCPUs = int(l.CPUs)
		sc.ThreadsPerCore = int(l.ThreadsPerCore)
		sc.RealMemoryMB = uint64(l.RealMemory)
	}
	if sc.AuthType == "" {
		sc.AuthType = "auth/munge"
	}
	if s, ok := c.AuthInfo.Get("socket"); ok {
		sc.MungeSocket = s
	}
	if sc.AuthType == "auth/slurm" {
		if opts, err := slurmauth.ParseAuthInfo(c.AuthInfo); err == nil {
			sc.AuthKeyFile = slurmauth.KeyPath(opts, cfg.ConfPath, nil)
		}
	}
	if t := c.PrologEpilogTimeout; t > 0 && t < 0xfffe {
		sc.PrologEpilogTimeout = time.Duration(t) * time.Second
	}
	return sc
}

// newSteps wires slurmd/stepd's Manager (one slurmstepd per step, reached
// through its socket in the spool dir) into the daemon. The supervisor
// binary is -d, else slurmstepd next to this slurmd.
func newSteps(cli *CLI, cfg *daemon.Config) stepd.DaemonSteps {
	m := stepd.NewManager(stepdConfig(cfg))
	m.StepdPath = cli.Stepd
	return stepd.DaemonSteps{Manager: m}
}

// selectPluginID is the select plugin id SLURM_WORKING_CLUSTER carries.
func selectPluginID(t string) uint32 {
	switch t {
	case "select/cons_res":
		return uint32(msg.SelectConsRes)
	case "select/cons_tres":
		return uint32(msg.SelectConsTres)
	}
	return uint32(msg.SelectLinear)
}

// checkStepd warns at start-up when the supervisor binary cannot serve:
// missing, or not executable by other users (the exec helper runs it as
// the job's user). Launches would fail with the same error later.
func checkStepd(cli *CLI) error {
	path := cli.Stepd
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		path = filepath.Join(filepath.Dir(exe), "slurmstepd")
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("slurmstepd: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o001 == 0 {
		return fmt.Errorf("slurmstepd %s (mode %v) is not executable by job users", path, st.Mode())
	}
	return nil
}
