// Package mungetest starts a private munged for tests: its own key, socket,
// pid, seed and log files in a fresh directory, stopped when the test ends.
//
// When munged (Debian package "munge") is not installed the test is skipped
// with the reason, unless GOSLURM_REQUIRE_ORACLE=1, in which case it fails.
package mungetest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// Options configure a private munged. The zero value generates a random key.
type Options struct {
	// KeyFile is copied into the daemon's directory (mode 0400) and used as
	// its key; "" generates a random 128-byte key.
	KeyFile string
	// Origin is passed as --origin; "" means 127.0.0.1, so the origin
	// address in decoded credentials is predictable.
	Origin string
	// MaxTTL, when > 0, is passed as --max-ttl (seconds).
	MaxTTL int
	// Force passes --force (run despite insecure file permissions).
	Force bool
	// Args are extra munged arguments.
	Args []string
}

// Daemon is a running private munged.
type Daemon struct {
	Dir     string // private directory (mode 0755, so other uids can reach the socket)
	Socket  string
	KeyFile string
	LogFile string

	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Tool returns the path of an oracle binary (munged, munge, unmunge), or
// skips the test (fails it under GOSLURM_REQUIRE_ORACLE=1) when missing.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin"} {
		if fi, serr := os.Stat(filepath.Join(dir, name)); serr == nil && fi.Mode()&0o111 != 0 {
			return filepath.Join(dir, name)
		}
	}
	oracle.Unavailable(t, fmt.Sprintf("%s not found (install the Debian package \"munge\"): %v", name, err))
	return ""
}

// Start launches a private munged in the foreground and waits until its
// socket accepts connections. It is stopped (SIGTERM, then SIGKILL) and its
// directory removed when the test ends.
func Start(t testing.TB, opts Options) *Daemon {
	t.Helper()
	bin := Tool(t, "munged")

	// A short path: sockaddr_un holds 108 bytes and t.TempDir() embeds the
	// test name.
	dir, err := os.MkdirTemp("", "munged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// munged insists that everyone can search the socket's directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d := &Daemon{
		Dir:     dir,
		Socket:  filepath.Join(dir, "munge.socket"),
		KeyFile: filepath.Join(dir, "munge.key"),
		LogFile: filepath.Join(dir, "munged.log"),
		done:    make(chan struct{}),
	}
	var key []byte
	if opts.KeyFile != "" {
		if key, err = os.ReadFile(opts.KeyFile); err != nil {
			t.Fatal(err)
		}
	} else {
		key = make([]byte, 128)
		_, _ = rand.Read(key)
	}
	if err := os.WriteFile(d.KeyFile, key, 0o400); err != nil {
		t.Fatal(err)
	}
	origin := opts.Origin
	if origin == "" {
		origin = "127.0.0.1"
	}
	args := []string{
		"--foreground",
		"--socket=" + d.Socket,
		"--key-file=" + d.KeyFile,
		"--pid-file=" + filepath.Join(dir, "munged.pid"),
		"--seed-file=" + filepath.Join(dir, "munged.seed"),
		"--log-file=" + d.LogFile,
		"--origin=" + origin,
	}
	if opts.MaxTTL > 0 {
		args = append(args, fmt.Sprintf("--max-ttl=%d", opts.MaxTTL))
	}
	if opts.Force {
		args = append(args, "--force")
	}
	args = append(args, opts.Args...)

	logf, err := os.OpenFile(filepath.Join(dir, "munged.stderr"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	d.cmd = exec.Command(bin, args...)
	d.cmd.Stdout = logf
	d.cmd.Stderr = logf
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start munged: %v", err)
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		d.Stop()
		if t.Failed() {
			t.Logf("munged output:\n%s", d.Output())
		}
	})

	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-d.done:
			t.Fatalf("munged exited during start-up (%v):\n%s", d.err, d.Output())
		default:
		}
		if fi, err := os.Stat(d.Socket); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("munged socket %s did not appear in 10s:\n%s", d.Socket, d.Output())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Client returns a munge client for this daemon with quick failure (no
// Slurm-level socket retries), which suits tests.
func (d *Daemon) Client() *munge.Client {
	return &munge.Client{Socket: d.Socket, SocketRetries: -1}
}

// Output returns what munged wrote to stdout and stderr (its log, in
// foreground mode).
func (d *Daemon) Output() string {
	b, _ := os.ReadFile(filepath.Join(d.Dir, "munged.stderr"))
	l, _ := os.ReadFile(d.LogFile)
	return string(bytes.TrimSpace(append(b, l...)))
}

// Stop terminates munged (SIGTERM, SIGKILL after 5 s) and waits for it.
// It is safe to call more than once.
func (d *Daemon) Stop() {
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// Exited reports whether munged has exited, and with what.
func (d *Daemon) Exited() (bool, error) {
	select {
	case <-d.done:
		if d.err != nil && !errors.Is(d.err, os.ErrProcessDone) {
			return true, d.err
		}
		return true, nil
	default:
		return false, nil
	}
}
