// Package oracle finds the real Slurm 22.05 binaries that differential
// tests compare goslurm against, and prepares the minimal configuration
// they need to start.
//
// When a binary is missing, tests are skipped with the reason, unless the
// environment sets GOSLURM_REQUIRE_ORACLE=1 (CI does), in which case they
// fail.
package oracle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing oracle from
// a skip into a failure.
const RequireEnv = "GOSLURM_REQUIRE_ORACLE"

// DirEnv names a directory holding the real binaries; it is searched
// before the default locations.
const DirEnv = "GOSLURM_ORACLE_DIR"

// defaultDirs are where Debian's slurm-client installs the commands.
var defaultDirs = []string{"/usr/bin", "/usr/local/bin"}

// Required reports whether GOSLURM_REQUIRE_ORACLE is set to a true value.
func Required() bool {
	switch os.Getenv(RequireEnv) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// Find returns the path of the real Slurm binary name, or an error saying
// where it looked.
func Find(name string) (string, error) {
	dirs := defaultDirs
	if d := os.Getenv(DirEnv); d != "" {
		dirs = append([]string{d}, dirs...)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("real Slurm %q not found in %v (install Debian's slurm-client 22.05 or set %s)", name, dirs, DirEnv)
}

// Unavailable skips the test with reason, or fails it when the oracle is
// required.
func Unavailable(tb testing.TB, reason string) {
	tb.Helper()
	if Required() {
		tb.Fatalf("oracle required (%s=1) but unavailable: %s", RequireEnv, reason)
	}
	tb.Skipf("oracle unavailable: %s", reason)
}

// ConfText is a slurm.conf sufficient for commands that only read the
// configuration (scontrol's hostlist subcommands need one to start).
const ConfText = "ClusterName=difftest\n" +
	"SlurmctldHost=localhost\n" +
	"NodeName=localhost CPUs=1\n" +
	"PartitionName=p Nodes=localhost\n"

// WriteConf writes ConfText into dir and returns its path.
func WriteConf(dir string) (string, error) {
	p := filepath.Join(dir, "slurm.conf")
	return p, os.WriteFile(p, []byte(ConfText), 0o644)
}

// Oracle runs one real Slurm binary with a private configuration.
type Oracle struct {
	Path string // the real binary
	Conf string // SLURM_CONF given to it
	// Timeout bounds one run; zero means 30 seconds.
	Timeout time.Duration
}

// New finds the real binary name and writes a configuration in a
// temporary directory of tb. It skips or fails tb when the binary is
// missing or cannot start.
func New(tb testing.TB, name string) *Oracle {
	tb.Helper()
	return &Oracle{Path: Binary(tb, name), Conf: SlurmConf(tb)}
}

// Result is what one run produced.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int  // exit status; -1 when killed by a signal
	Signal         int  // the signal that killed it, or 0
	TimedOut       bool // killed after Timeout
}

// Run executes the binary with args (not including the program name) and
// exactly the environment env plus SLURM_CONF and a PATH; nothing else
// leaks in from the test's own environment. argv[0] is the binary's path.
func (o *Oracle) Run(args []string, env []string, stdin []byte) (Result, error) {
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.Path, args...)
	cmd.Env = append([]string{"SLURM_CONF=" + o.Conf, "PATH=/usr/bin:/bin"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	r := Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	if ctx.Err() != nil {
		r.TimedOut = true
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Signal = int(ws.Signal())
		}
	default:
		return r, err
	}
	return r, nil
}

// Binary returns the path of the real Slurm binary name, skipping or
// failing tb when it is missing.
func Binary(tb testing.TB, name string) string {
	tb.Helper()
	p, err := Find(name)
	if err != nil {
		Unavailable(tb, err.Error())
	}
	return p
}

// Scontrol returns the path of the real scontrol (see Binary).
func Scontrol(tb testing.TB) string {
	tb.Helper()
	return Binary(tb, "scontrol")
}

// SlurmConf writes ConfText into a temporary directory of tb and returns
// the file's path, for use as SLURM_CONF.
func SlurmConf(tb testing.TB) string {
	tb.Helper()
	p, err := WriteConf(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
