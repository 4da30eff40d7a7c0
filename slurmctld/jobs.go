package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/jobcred/mungesign"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/slurmctld/ctld"
	"github.com/goslurm/goslurm/slurmctld/jobs"
	"github.com/goslurm/goslurm/slurmctld/state"
)

// credSigner picks the step credential signer (CredType). It runs before
// privileges are dropped: the HMAC key file may be readable by root only.
func credSigner(cfg *ctld.Config, local munge.Codec) (jobcred.Signer, error) {
	c := cfg.Conf
	switch c.CredType {
	case "", jobcred.CredTypeMunge:
		mc := &munge.Client{}
		if s, ok := c.AuthInfo.Get("socket"); ok {
			mc.Socket = s
		}
		s := &mungesign.Signer{Client: mc, Codec: local, SlurmdUID: cfg.SlurmdUID}
		if v, ok := c.AuthInfo.Get("ttl"); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				s.TTL = time.Duration(n) * time.Second
			}
		}
		return s, nil
	case jobcred.CredTypeHMAC:
		opts, err := slurmauth.ParseAuthInfo(c.AuthInfo)
		if err != nil {
			return nil, err
		}
		path := slurmauth.KeyPath(opts, cfg.Path, os.Getenv)
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("credential key %s: not a regular file or readable by others", path)
		}
		secret := make([]byte, st.Size())
		if _, err := f.ReadAt(secret, 0); err != nil {
			return nil, err
		}
		return jobcred.NewHMACSigner(jobcred.HMACKey{Secret: secret})
	}
	return nil, fmt.Errorf("CredType=%s is not supported", c.CredType)
}

// lookupUser is the passwd/group lookup the job manager puts into batch and
// step credentials.
func lookupUser(uid uint32) (jobs.User, bool) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return jobs.User{}, false
	}
	out := jobs.User{Name: u.Username, Gecos: u.Name, Dir: u.HomeDir}
	if g, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
		out.GID = uint32(g)
	}
	out.Shell = ctld.LoginShell(u.Username)
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if g, err := strconv.ParseUint(s, 10, 32); err == nil {
				out.Groups = append(out.Groups, uint32(g))
			}
		}
	}
	return out, true
}

func lookupGroup(name string) (uint32, bool) {
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, false
	}
	id, err := strconv.ParseUint(g.Gid, 10, 32)
	return uint32(id), err == nil
}

// groupName is gid_to_string for the site hooks' SLURM_JOB_GROUP.
func groupName(gid uint32) string {
	g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10))
	if err != nil {
		return ""
	}
	return g.Name
}

func jobsConfig(cfg *ctld.Config) (jobs.Config, error) {
	jcfg, err := jobs.ConfigFromConf(cfg.Conf, cfg.SlurmUID)
	if err != nil {
		return jcfg, err
	}
	// Cached for GroupUpdateTime as slurmctld's group cache: uncached,
	// a lookup per pending job per scheduling pass dominates the
	// controller's CPU when short jobs turn over.
	jcfg.Users = jobs.CachedUsers(lookupUser, time.Duration(cfg.Conf.GroupUpdateTime)*time.Second, time.Now)
	jcfg.Hooks.GroupName = groupName
	return jcfg, nil
}

// nodeStateName is the file in StateSaveLocation with the DOWN/DRAIN/FAIL
// node states.
const nodeStateName = "node_state.json"

// clearState is -c: the saved jobs are forgotten (the journal and
// snapshots go; the lock file stays).
func clearState(dir string) error {
	for _, pat := range []string{"journal-*.wal", "snapshot-*.snap", "*.tmp", nodeStateName, nodeStateName + ".new"} {
		files, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// openJobs recovers the job table from StateSaveLocation (after privileges
// were dropped, so the files belong to SlurmUser) and attaches it to the
// controller. The returned function closes the store.
func openJobs(cli *CLI, cfg *ctld.Config, ctl *ctld.Controller, signer jobcred.Signer, log *slog.Logger) (func(), error) {
	jcfg, err := jobsConfig(cfg)
	if err != nil {
		return nil, err
	}
	dir := cfg.Conf.StateSaveLocation
	if dir == "" {
		return nil, fmt.Errorf("StateSaveLocation is not set")
	}
	if cli.Clear {
		log.Info("Clearing saved state (-c)")
		if err := clearState(dir); err != nil {
			return nil, fmt.Errorf("clearing %s: %w", dir, err)
		}
	}
	// A test aid: the test suites run our controller with the job
	// manager's index of jobs holding nodes checked after every call.
	if os.Getenv("GOSLURM_VERIFY_NODE_USAGE") == "1" {
		jobs.VerifyNodeUsage = true
	}
	m := jobs.New(jcfg, nil)
	st, err := state.Open(dir, state.Options{IgnoreErrors: cli.Ignore, Logger: log}, m)
	if err != nil {
		return nil, fmt.Errorf("state recovery from %s: %w (start with -i to skip damaged state, -c to discard it)", dir, err)
	}
	rec := st.Recovered()
	m.Recovered(time.Now().Unix())
	m.SetJournal(jobs.StoreJournal(st))
	log.Info(fmt.Sprintf("Recovered state of %d jobs (snapshot seq %d, %d journal records)", m.Len(), rec.SnapshotSeq, rec.Records))
	if len(rec.Skipped) > 0 {
		// Until a snapshot covers the damage, the next start would see it again.
		err := st.Snapshot(context.Background(), rec.LastSeq, m.WriteSnapshot)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("state save after recovery: %w", err)
		}
	}
	nodeFile := filepath.Join(dir, nodeStateName)
	saved, err := ctld.ReadSavedState(nodeFile)
	if err != nil && !cli.Ignore {
		st.Close()
		return nil, fmt.Errorf("node state recovery: %w (start with -i to skip it)", err)
	}
	switch {
	case saved != nil:
		ctl.RestoreNodes(saved.Nodes)
		// As load_all_node_state: the saved records of nodes the
		// configuration still has.
		n, gone := configuredNodes(ctl, saved.Nodes)
		if !cli.Recover {
			// With -R, RecoverFull names them.
			for _, name := range gone {
				log.Error(fmt.Sprintf("Node %s has vanished from configuration", name))
			}
		}
		log.Info(fmt.Sprintf("Recovered state of %d nodes", n))
	case err == nil && !cli.Recover:
		// With -R, recoverFull reads the file again and says so.
		log.Info(fmt.Sprintf("No node state file (%s) to recover", nodeFile))
	}
	err = ctl.AttachJobs(ctld.JobsOptions{
		Manager: m, Store: st, Signer: signer, Groups: lookupGroup, NodeStateFile: nodeFile,
		Reconfig: func(c *ctld.Config) error {
			jc, err := jobsConfig(c)
			if err != nil {
				return err
			}
			m.SetConfig(jc)
			return nil
		},
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	err = ctl.AttachPriority(ctld.PriorityOptions{StateFile: filepath.Join(dir, ctld.PriorityStateName), IgnoreState: cli.Ignore})
	if err != nil {
		st.Close()
		return nil, err
	}
	err = ctl.AttachReservations(ctld.ResvOptions{StateFile: filepath.Join(dir, ctld.ResvStateName), IgnoreState: cli.Ignore})
	if err != nil {
		st.Close()
		return nil, err
	}
	// After the jobs: job triggers name them. 22.05 skips the triggers with -c.
	err = ctl.AttachTriggers(ctld.TriggerOptions{StateFile: filepath.Join(dir, ctld.TriggerStateName), Recover: !cli.Clear, IgnoreState: cli.Ignore})
	if err != nil {
		st.Close()
		return nil, err
	}
	return func() {
		if err := st.Close(); err != nil {
			log.Error(fmt.Sprintf("state close: %v", err))
		}
	}, nil
}

// configuredNodes counts the saved node records whose node is in the
// configuration and names the others.
func configuredNodes(ctl *ctld.Controller, saved []ctld.SavedNode) (n int, gone []string) {
	ctl.View(func(nodes []*ctld.Node, _ []*ctld.Partition) {
		in := make(map[string]bool, len(nodes))
		for _, nd := range nodes {
			in[nd.Name] = true
		}
		for _, s := range saved {
			if in[s.Name] {
				n++
			} else {
				gone = append(gone, s.Name)
			}
		}
	})
	return n, gone
}
