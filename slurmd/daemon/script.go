package daemon

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// scriptEnv is the environment of Prolog and Epilog (prep_script_slurmd):
// built from scratch, nothing inherited from slurmd or the job's user.
func (d *Daemon) scriptEnv(context string, job, uid, gid uint32, nodes, workDir string) []string {
	cfg := d.config()
	env := []string{
		"PATH=/usr/bin:/bin:/usr/sbin:/sbin",
		"SLURM_SCRIPT_CONTEXT=" + context,
		"SLURM_JOB_ID=" + strconv.FormatUint(uint64(job), 10),
		"SLURM_JOBID=" + strconv.FormatUint(uint64(job), 10),
		"SLURM_JOB_UID=" + strconv.FormatUint(uint64(uid), 10),
		"SLURM_UID=" + strconv.FormatUint(uint64(uid), 10),
		"SLURM_JOB_GID=" + strconv.FormatUint(uint64(gid), 10),
		"SLURMD_NODENAME=" + cfg.NodeName,
		"SLURM_CONF=" + cfg.ConfPath,
	}
	if cfg.Conf.ClusterName != "" {
		env = append(env, "SLURM_CLUSTER_NAME="+cfg.Conf.ClusterName)
	}
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		env = append(env, "SLURM_JOB_USER="+u.Username)
	}
	if nodes != "" {
		env = append(env, "SLURM_JOB_NODELIST="+nodes, "SLURM_NODELIST="+nodes)
	}
	if workDir != "" {
		env = append(env, "SLURM_JOB_WORK_DIR="+workDir)
	}
	return env
}

// runScripts runs a comma-separated list of scripts in order (Prolog= and
// Epilog= take lists and globs in 22.05), stopping at the first failure.
func runScripts(ctx context.Context, list string, env []string, timeout time.Duration) error {
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		paths := []string{p}
		if strings.ContainsAny(p, "*?[") {
			m, err := filepath.Glob(p)
			if err != nil {
				return err
			}
			paths = m
		}
		for _, path := range paths {
			if err := runScript(ctx, path, env, timeout); err != nil {
				return err
			}
		}
	}
	return nil
}

// runScript runs one script as this (root) process with exactly env, in
// /, with no standard input, in its own process group (killed as a whole
// on timeout). timeout 0 means none.
func runScript(ctx context.Context, path string, env []string, timeout time.Duration) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s: not an absolute path", path)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Env = env
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 512 {
			msg = msg[:512]
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: timed out: %w", path, ctx.Err())
		}
		return fmt.Errorf("%s: %w: %s", path, err, msg)
	}
	return nil
}
