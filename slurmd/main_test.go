package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/testsuite/oracle"
)

// The test binary doubles as slurmd: with runAsSlurmd set it runs Main on
// its arguments (this is also how a daemonizing slurmd re-executes itself).
const runAsSlurmd = "GOSLURM_TEST_RUN_SLURMD"

func TestMain(m *testing.M) {
	if os.Getenv(runAsSlurmd) != "" {
		os.Exit(Main(os.Args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestFlags(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"-V"}, 0, "slurm 22.05.8\n", ""},
		{[]string{"-h"}, 0, "Usage: slurmd [OPTIONS]", ""},
		{[]string{"-C"}, 0, "CPUs=", ""},
		{[]string{"-x"}, 1, "", "Usage: slurmd"},
		{[]string{"-Z"}, 1, "", "not supported"},
		{[]string{"--conf-server", "h"}, 1, "", "configless"},
		{[]string{"-D", "-f", "/nonexistent/slurm.conf"}, 1, "", "slurmd: fatal:"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(append([]string{"slurmd"}, tc.args...), &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
			}
		})
	}
}

// writeConf writes a slurm.conf for nodes n1 and n2 on this host, each with
// its own port, and %n-expanded spool, pid and log paths.
func writeConf(t *testing.T) (dir, conf string, ports [2]int) {
	t.Helper()
	dir = t.TempDir()
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	// The controller is a port nobody listens on: registration keeps
	// retrying in the background, which is what slurmd does.
	text := fmt.Sprintf(`ClusterName=t
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=1
SlurmUser=%d
SlurmdSpoolDir=%s/spool/%%n
SlurmdPidFile=%s/run-%%n.pid
SlurmdLogFile=%s/log-%%n.log
SlurmdParameters=config_overrides
CommunicationParameters=NoInAddrAny
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d CPUs=1
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d CPUs=1
PartitionName=p Nodes=ALL
`, os.Getuid(), dir, dir, dir, ports[0], ports[1])
	conf = filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, conf, ports
}

func slurmdCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), runAsSlurmd+"=1"), env...)
	return cmd
}

func waitFile(t *testing.T, path string) []byte {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return b
		}
	}
	t.Fatalf("%s never appeared", path)
	return nil
}

// TestTwoNodesOneHost runs two foreground slurmd (-N n1, -N n2) on one host:
// per-node port, spool, pid and log files; READY=1 to NOTIFY_SOCKET; SIGTERM
// ends them and removes their pid files.
func TestTwoNodesOneHost(t *testing.T) {
	dir, conf, ports := writeConf(t)
	notify := filepath.Join(dir, "notify.sock")
	nl, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notify, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()

	var cmds []*exec.Cmd
	for _, n := range []string{"n1", "n2"} {
		cmd := slurmdCmd(t, []string{"NOTIFY_SOCKET=" + notify, "SLURM_CONF=" + conf}, "-D", "-N", n)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("%s stderr:\n%s", n, errb.String())
			}
		})
	}
	for i := 0; i < 2; i++ {
		_ = nl.SetReadDeadline(time.Now().Add(20 * time.Second))
		buf := make([]byte, 256)
		n, err := nl.Read(buf)
		if err != nil {
			t.Fatalf("sd_notify: %v", err)
		}
		if !strings.Contains(string(buf[:n]), "READY=1") {
			t.Errorf("notify message %q", buf[:n])
		}
	}
	for i, n := range []string{"n1", "n2"} {
		pid := strings.TrimSpace(string(waitFile(t, filepath.Join(dir, "run-"+n+".pid"))))
		if pid != strconv.Itoa(cmds[i].Process.Pid) {
			t.Errorf("%s pid file %q, process %d", n, pid, cmds[i].Process.Pid)
		}
		if st, err := os.Stat(filepath.Join(dir, "spool", n)); err != nil || !st.IsDir() {
			t.Errorf("%s spool dir: %v", n, err)
		}
		if log := string(waitFile(t, filepath.Join(dir, "log-"+n+".log"))); !strings.Contains(log, "slurmd version 22.05.8 started") {
			t.Errorf("%s log: %q", n, log)
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", ports[i]), 5*time.Second)
		if err != nil {
			t.Errorf("%s not listening on its Port: %v", n, err)
		} else {
			c.Close()
		}
	}
	// A second slurmd for n1 finds the pid file locked.
	var out bytes.Buffer
	dup := slurmdCmd(t, []string{"SLURM_CONF=" + conf}, "-D", "-N", "n1")
	dup.Stderr = &out
	if err := dup.Run(); err == nil || !strings.Contains(out.String(), "pidfile") {
		t.Errorf("second slurmd for n1: %v %s", err, out.String())
	}
	for i, cmd := range cmds {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("n%d exit: %v", i+1, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("n%d did not stop on SIGTERM", i+1)
		}
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("run-n%d.pid", i+1))); !os.IsNotExist(err) {
			t.Errorf("n%d pid file left: %v", i+1, err)
		}
	}
}

// TestDaemonizes: without -D the command returns at once and a detached
// slurmd keeps running (found through its pid file).
func TestDaemonizes(t *testing.T) {
	dir, conf, _ := writeConf(t)
	cmd := slurmdCmd(t, nil, "-f", conf, "-N", "n2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("slurmd: %v %s", err, out)
	}
	pidText := strings.TrimSpace(string(waitFile(t, filepath.Join(dir, "run-n2.pid"))))
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("daemon %d not running: %v", pid, err)
	}
	if sid, _ := unix.Getsid(pid); sid != pid {
		t.Errorf("daemon session %d, want its own (%d)", sid, pid)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for deadline := time.Now().Add(20 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("daemon did not stop on SIGTERM")
		}
	}
}

// TestPrintConfigMatchesRealSlurmd compares -C with the real `slurmd -C`
// on this machine (UpTime may tick between the two runs).
func TestPrintConfigMatchesRealSlurmd(t *testing.T) {
	bin := "/usr/sbin/slurmd"
	if d := os.Getenv(oracle.DirEnv); d != "" {
		bin = filepath.Join(d, "slurmd")
	}
	if _, err := os.Stat(bin); err != nil {
		oracle.Unavailable(t, "real slurmd not found: "+err.Error())
	}
	want, err := exec.Command(bin, "-C").Output()
	if err != nil {
		t.Fatalf("real slurmd -C: %v", err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"slurmd", "-C"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	first := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
	if first(out.String()) != first(string(want)) {
		t.Errorf("ours:  %q\nreal:  %q", out.String(), want)
	}
	if !strings.HasPrefix(strings.SplitN(out.String(), "\n", 3)[1], "UpTime=") {
		t.Errorf("no UpTime line: %q", out.String())
	}
}
