package stepd

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Slurm's completion retry policy (slurmstepd/mgr.c MAX_RETRY, RETRY_DELAY).
const (
	defaultCompleteRetries = 240
	defaultCompleteDelay   = 15 * time.Second
)

// newAuthenticator builds the signer for messages to slurmctld.
func newAuthenticator(cfg *Config) (auth.Authenticator, error) {
	switch cfg.AuthType {
	case "", "auth/munge":
		return &auth.Munge{Client: &munge.Client{Socket: cfg.MungeSocket}}, nil
	case "auth/slurm":
		key, err := slurmauth.LoadKey(cfg.AuthKeyFile)
		if err != nil {
			return nil, err
		}
		return &slurmauth.Slurm{Key: key, Cluster: cfg.ClusterName}, nil
	}
	return nil, fmt.Errorf("stepd: AuthType %q is not supported", cfg.AuthType)
}

// complete sends REQUEST_COMPLETE_BATCH_SCRIPT, retrying while slurmctld
// cannot be reached, as slurmstepd does. An answer from slurmctld, whatever
// its code, ends the retries.
func (b *batch) complete(slurmRC int, status uint32) {
	body := msg.CompleteBatchScript{JobID: b.req.JobID, JobRC: status, SlurmRC: uint32(slurmRC),
		UserID: b.uid, NodeName: msg.Str(b.cfg.NodeName)}
	if err := sendComplete(b.cfg, &body); err != nil {
		b.log.Error("Unable to send job complete message", "err", err)
		return
	}
	b.log.Info("job complete reported", "job_rc", status, "slurm_rc", slurmRC)
}

func sendComplete(cfg *Config, body *msg.CompleteBatchScript) error {
	bc, _ := msg.Registry().Lookup(msgtype.REQUEST_COMPLETE_BATCH_SCRIPT)
	var w pack.Writer
	if err := bc.Encode(&w, codec.Current, body); err != nil {
		return err
	}
	return callCtld(cfg, msgtype.REQUEST_COMPLETE_BATCH_SCRIPT, w.Bytes())
}

// callCtld sends one RC-answered request to slurmctld, retrying while it
// cannot be reached (Slurm's 240 tries 15 s apart unless configured).
// ESLURM_ALREADY_DONE and ESLURM_INVALID_JOB_ID count as delivered, as in
// slurmstepd.
func callCtld(cfg *Config, mt msgtype.Type, body []byte) error {
	authn, err := newAuthenticator(cfg)
	if err != nil {
		return err
	}
	cl := &client.Client{Controllers: cfg.Controllers, Auth: authn, SlurmUserUID: cfg.SlurmUserUID, Sweeps: 1,
		SlurmctldTimeout: cfg.SlurmctldTimeout, ConnectTimeout: cfg.TCPTimeout,
		Codec: &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: cfg.AuthType == "auth/slurm"}}
	retries, delay := cfg.CompleteRetries, cfg.CompleteRetryDelay
	if retries <= 0 {
		retries = defaultCompleteRetries
	}
	if delay <= 0 {
		delay = defaultCompleteDelay
	}
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = cl.CallRC(ctx, mt, body)
		cancel()
		code := slurmerr.Code(err)
		switch {
		case err == nil, code == slurmerr.ESLURM_ALREADY_DONE, code == slurmerr.ESLURM_INVALID_JOB_ID:
			return nil
		case !isCommError(err):
			return err
		case i >= retries:
			return err
		}
		time.Sleep(delay)
	}
}

// isCommError tells "slurmctld not reached" from "slurmctld said no".
func isCommError(err error) bool {
	var se slurmerr.Error
	if errors.As(err, &se) {
		return se.Code >= 1000 && se.Code < 2000
	}
	return true
}

// scriptEnv is the clean environment of Prolog and Epilog (prep/script's
// slurmd variables): nothing of the user's environment.
func scriptEnv(cfg *Config, req *msg.BatchJobLaunch, userName, context string) []string {
	var e Env
	e.Set("SLURM_JOB_ID", u32(req.JobID))
	e.Set("SLURM_JOBID", u32(req.JobID))
	e.Set("SLURM_JOB_UID", u32(req.UID))
	e.Set("SLURM_UID", u32(req.UID))
	e.Set("SLURM_JOB_USER", userName)
	e.Set("SLURM_JOB_GID", u32(req.GID))
	if req.Partition.Valid {
		e.Set("SLURM_JOB_PARTITION", req.Partition.Value)
	}
	if req.Account.Valid {
		e.Set("SLURM_JOB_ACCOUNT", req.Account.Value)
	}
	if req.Nodes.Valid {
		e.Set("SLURM_JOB_NODELIST", req.Nodes.Value)
		e.Set("SLURM_NODELIST", req.Nodes.Value)
	}
	e.Set("SLURM_JOB_CPUS_PER_NODE", compressedU16(req.CPUsPerNode, req.CPUCountReps))
	if req.WorkDir.Valid {
		e.Set("SLURM_JOB_WORK_DIR", req.WorkDir.Value)
	}
	e.Set("SLURM_SCRIPT_CONTEXT", context)
	e.Set("SLURMD_NODENAME", cfg.NodeName)
	e.Set("SLURM_CLUSTER_NAME", cfg.ClusterName)
	e.Set("SLURM_CONF", cfg.ConfPath)
	for _, kv := range req.SpankJobEnv {
		if k, v, ok := strings.Cut(kv.Value, "="); ok && kv.Valid {
			if !strings.HasPrefix(k, "SPANK_") {
				k = "SPANK_" + k
			}
			e.Set(k, v)
		}
	}
	return e
}

// runScript runs Prolog or Epilog as root (the supervisor's identity) with
// env only, in its own process group, killed at PrologEpilogTimeout.
func runScript(cfg *Config, path, context string, env []string) error {
	cmd := exec.Command(path)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s %s: %w", context, path, err)
	}
	var timer *time.Timer
	if cfg.PrologEpilogTimeout > 0 {
		timer = time.AfterFunc(cfg.PrologEpilogTimeout, func() { unix.Kill(-cmd.Process.Pid, unix.SIGKILL) })
	}
	err := cmd.Wait()
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", context, path, err)
	}
	return nil
}
