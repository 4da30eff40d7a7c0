package main

import (
	"bytes"
	"context"
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

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/ctld"
)

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"-V"}, 0, "slurm 22.05.8\n", ""},
		{[]string{"-h"}, 0, "", "Usage: slurmctld [OPTIONS]" + usage},
		{[]string{"-x"}, 1, "", "Usage: slurmctld [OPTIONS]" + usage},
		{[]string{"-f"}, 1, "", "Usage: slurmctld [OPTIONS]" + usage},
		{[]string{"-D", "-f", "/nonexistent/slurm.conf"}, 1, "", "slurmctld: fatal: "},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{"slurmctld"}, tc.args...), &out, &errb)
		if code != tc.code || out.String() != tc.stdout || !strings.HasPrefix(errb.String(), tc.errs) {
			t.Errorf("%v: code %d stdout %q stderr %q", tc.args, code, out.String(), errb.String())
		}
	}
}

// freePort asks the kernel for a port nothing listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func writeConf(t *testing.T, dir string, port int) string {
	t.Helper()
	conf := fmt.Sprintf(`ClusterName=main
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmUser=%d
AuthType=auth/munge
AuthInfo=socket=%s/munge.socket
StateSaveLocation=%s
SlurmctldPidFile=%s/slurmctld.pid
SlurmctldLogFile=%s/slurmctld.log
CommunicationParameters=NoCtldInAddrAny
SelectType=select/cons_tres
NodeName=n1 NodeAddr=127.0.0.1 CPUs=1 RealMemory=100
PartitionName=p Nodes=ALL Default=YES
`, port, os.Geteuid(), dir, dir, dir, dir)
	path := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func buildSelf(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "slurmctld")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestDaemonize starts slurmctld without -D: the command returns at once,
// the detached daemon writes its pid file and log, listens on
// SlurmctldPort, and stops on SIGTERM removing its pid file.
func TestDaemonize(t *testing.T) {
	bin := buildSelf(t)
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, port)
	cmd := exec.Command(bin, "-f", conf)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("slurmctld: %v\n%s", err, out)
	}
	pidFile := filepath.Join(dir, "slurmctld.pid")
	var pid int
	deadline := time.Now().Add(20 * time.Second)
	for pid == 0 {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "slurmctld.log"))
			t.Fatalf("no pid file\n%s", log)
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	for {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening on %d: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sid, _ := unix.Getsid(pid); sid != pid {
		t.Errorf("daemon is not a session leader (sid %d, pid %d)", sid, pid)
	}
	// logrotate: the log moved away, SIGUSR2 makes a new one (the
	// signal's own line is the old file's last; the signals are handled
	// in turn, so SIGTERM's goes to the new one).
	logPath := filepath.Join(dir, "slurmctld.log")
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	for {
		b, _ := os.ReadFile(logPath + ".1")
		if strings.Contains(string(b), "Logrotate signal (SIGUSR2) received") {
			break
		}
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatalf("no new log after SIGUSR2 (%q)", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatal("daemon did not stop on SIGTERM")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
	for file, want := range map[string]string{
		logPath + ".1": "slurmctld version 22.05.8 started on cluster main",
		logPath:        "Terminate signal (SIGTERM) received",
	} {
		if log, _ := os.ReadFile(file); !strings.Contains(string(log), want) {
			t.Errorf("%s lacks %q:\n%s", file, want, log)
		}
	}
}

// TestNotify runs slurmctld -D under a NOTIFY_SOCKET, as systemd's
// Type=notify does, and waits for READY=1.
func TestNotify(t *testing.T) {
	bin := buildSelf(t)
	dir := t.TempDir()
	conf := writeConf(t, dir, freePort(t))
	sock := filepath.Join(dir, "notify")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd := exec.Command(bin, "-D", "-f", conf)
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	l.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 256)
	n, err := l.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	if got := string(buf[:n]); got != "READY=1" {
		t.Errorf("notification %q, want READY=1", got)
	}
}

// TestBecomeSlurmUser starts slurmctld as root with SlurmUser=nobody: it
// opens its log and pid file as root, then runs as nobody.
func TestBecomeSlurmUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	bin := buildSelf(t)
	// Not t.TempDir: its parent is 0700 and nobody must reach the log's
	// directory.
	dir, err := os.MkdirTemp("", "slurmctld-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	conf := strings.Replace(readFile(t, writeConf(t, dir, port)), fmt.Sprintf("SlurmUser=%d", os.Geteuid()), "SlurmUser=nobody", 1)
	// The state is opened after the switch: StateSaveLocation belongs to
	// SlurmUser, as slurmctld requires.
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(state, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	conf = strings.Replace(conf, "StateSaveLocation="+dir+"\n", "StateSaveLocation="+state+"\n", 1)
	path := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-D", "-f", path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening: %v\n%s", err, readFile(t, filepath.Join(dir, "slurmctld.log")))
		}
		time.Sleep(50 * time.Millisecond)
	}
	status := readFile(t, fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	for _, line := range strings.Split(status, "\n") {
		if strings.HasPrefix(line, "Uid:") {
			if f := strings.Fields(line); len(f) < 5 || f[1] != "65534" || f[2] != "65534" || f[3] != "65534" {
				t.Errorf("running as %q, want nobody (65534) everywhere", line)
			}
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAuthSlurm serves with the built-in auth/slurm (security picks it
// for AuthType=auth/slurm): a client holding the key pings the controller
// and reads its node table. conf rejects AuthType=auth/slurm in slurm.conf
// as 22.05 does, so the setting is made on the parsed configuration.
func TestAuthSlurm(t *testing.T) {
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "slurm.key")
	key, err := slurmauth.GenerateKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ctld.LoadConfig(writeConf(t, dir, freePort(t)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Conf.AuthType = "auth/slurm"
	cfg.Conf.AuthInfo = conf.ParseOptions("key=" + keyPath + ",disable_sack")
	authn, acceptSlurm, err := security(cfg, nil)
	if err != nil || !acceptSlurm {
		t.Fatalf("security: %v %v", authn, err)
	}
	cd := &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: true}
	ctl, err := ctld.New(ctld.Options{Config: cfg, Auth: authn, Codec: cd})
	if err != nil {
		t.Fatal(err)
	}
	srv := &server.Server{Auth: authn, Handler: ctl, Codec: cd}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	cl := &client.Client{
		Controllers:  []string{ln.Addr().String()},
		Auth:         &slurmauth.Slurm{Key: key, Cluster: "main"},
		SlurmUserUID: uint32(os.Geteuid()),
		Codec:        cd,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.Ping(ctx, 0); err != nil {
		t.Fatalf("ping: %v", err)
	}
	var w pack.Writer
	bc, _ := msg.Registry().Lookup(msgtype.REQUEST_NODE_INFO)
	if err := bc.Encode(&w, codec.Current, msg.InfoRequest{ShowFlags: 0x10}); err != nil {
		t.Fatal(err)
	}
	rep, err := cl.Call(ctx, msgtype.REQUEST_NODE_INFO, w.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Frame.Header.MsgType != msgtype.RESPONSE_NODE_INFO {
		t.Fatalf("reply %v", rep.Frame.Header.MsgType)
	}
	// A client without the key is refused.
	other, _ := slurmauth.NewKey(bytes.Repeat([]byte{7}, 32))
	bad := &client.Client{Controllers: cl.Controllers, Auth: &slurmauth.Slurm{Key: other, Cluster: "main"}, Codec: cd, Sweeps: 1}
	if err := bad.Ping(ctx, 0); err == nil {
		t.Error("ping with a wrong key accepted")
	}
}

// TestParseArgs: getopt's "cdDf:hiL:n:rRsvV", clustered options, attached
// and separate arguments, the last of -c/-r/-R winning, operands skipped.
func TestParseArgs(t *testing.T) {
	five := 5
	for _, tc := range []struct {
		args []string
		want CLI
		err  bool
	}{
		{nil, CLI{}, false},
		{[]string{"-D", "-f", "/etc/x.conf"}, CLI{Foreground: true, ConfFile: "/etc/x.conf"}, false},
		{[]string{"-Dvvf/etc/x.conf"}, CLI{Foreground: true, Verbose: 2, ConfFile: "/etc/x.conf"}, false},
		{[]string{"-Dd"}, CLI{}, false},
		{[]string{"-cR"}, CLI{Recover: true}, false},
		{[]string{"-Rc"}, CLI{Clear: true}, false},
		{[]string{"-R", "-r"}, CLI{}, false},
		{[]string{"-i", "-s", "-L", "/tmp/log"}, CLI{Ignore: true, SetWD: true, LogFile: "/tmp/log"}, false},
		{[]string{"-n5"}, CLI{Nice: &five}, false},
		{[]string{"-n", "0"}, CLI{}, false},
		{[]string{"-n", "5x"}, CLI{}, false},
		{[]string{"operand", "-D"}, CLI{Foreground: true}, false},
		{[]string{"--", "-D"}, CLI{}, false},
		{[]string{"-hx"}, CLI{Help: true}, false},
		{[]string{"-V", "-x"}, CLI{Version: true}, false},
		{[]string{"-x"}, CLI{}, true},
		{[]string{"--clear"}, CLI{}, true},
		{[]string{"-L"}, CLI{}, true},
	} {
		var got CLI
		var errb bytes.Buffer
		err := parseArgs(&got, tc.args, &errb)
		if (err != nil) != tc.err {
			t.Errorf("%q: error %v, want error %v", tc.args, err, tc.err)
			continue
		}
		if tc.err {
			continue
		}
		gotNice, wantNice := -1, -1
		if got.Nice != nil {
			gotNice = *got.Nice
		}
		if tc.want.Nice != nil {
			wantNice = *tc.want.Nice
		}
		got.Nice, tc.want.Nice = nil, nil
		if got != tc.want || gotNice != wantNice {
			t.Errorf("%q: got %+v nice %d, want %+v nice %d", tc.args, got, gotNice, tc.want, wantNice)
		}
	}
}
