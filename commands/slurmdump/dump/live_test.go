package dump

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pcap"
	"github.com/goslurm/goslurm/protocol/wire"
)

// pingServer answers every REQUEST_PING on a loopback port with
// RESPONSE_SLURM_RC 0, as slurmctld does.
func pingServer(t *testing.T) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			if f, err := wire.ReadFrame(c, nil, 0); err == nil && f.Header.MsgType == msgtype.REQUEST_PING {
				reply := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.NoneAuth(0, 0, "ctld"), []byte{0, 0, 0, 0})
				if b, err := reply.Marshal(); err == nil {
					_, _ = c.Write(b)
				}
			}
			c.Close()
		}
	}()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

// ping sends one REQUEST_PING and reads the reply.
func ping(port uint16) error {
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	f := codec.NewFrame(msgtype.REQUEST_PING, codec.NoneAuth(uint32(os.Getuid()), uint32(os.Getgid()), "client"), nil)
	b, err := f.Marshal()
	if err != nil {
		return err
	}
	if _, err := c.Write(b); err != nil {
		return err
	}
	r, err := wire.ReadFrame(c, nil, 0)
	if err != nil {
		return err
	}
	if r.Header.MsgType != msgtype.RESPONSE_SLURM_RC {
		return errors.New("reply " + r.Header.MsgType.String())
	}
	return nil
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW)")
	}
}

// liveResult waits for a capture, cancelling it (and failing) if it has not
// ended long after it should have, so a broken capture cannot hang the test.
func liveResult(t *testing.T, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Live: %v", err)
		}
	case <-time.After(60 * time.Second):
		cancel()
		<-done
		t.Fatal("the capture did not see the ping")
	}
}

// TestLiveLoopbackPing captures a ping round trip on lo and checks that the
// request and the reply are decoded, and that the -w copy reads back the same.
func TestLiveLoopbackPing(t *testing.T) {
	needRoot(t)
	port, other := pingServer(t), pingServer(t)
	var out, capture bytes.Buffer
	var notices syncBuffer
	ready := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Live(ctx, &out, Options{JSON: true}, LiveOptions{
			Interface: "lo",
			Ports:     []pcap.PortRange{{First: port, Last: port}},
			Count:     2,
			Write:     &capture,
			Notices:   &notices,
			Ready:     func() { close(ready) },
		})
		done <- err
	}()
	<-ready
	// Traffic on another port: the kernel filter drops it.
	if err := ping(other); err != nil {
		t.Fatal(err)
	}
	if err := ping(port); err != nil {
		t.Fatal(err)
	}
	liveResult(t, cancel, done)

	recs := decodeRecords(t, out.String())
	want := []struct{ typ, dir string }{{"REQUEST_PING", "to_server"}, {"RESPONSE_SLURM_RC", "to_client"}}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(recs), len(want), out.String())
	}
	for i, w := range want {
		r := recs[i]
		server := r.Dst
		if r.Dir == "to_client" {
			server = r.Src
		}
		if r.Kind != "rpc" || r.Header == nil || r.Header.MsgType != w.typ || r.Dir != w.dir || r.Conn != recs[0].Conn || r.Error != "" ||
			!strings.HasSuffix(server, ":"+strconv.Itoa(int(port))) {
			t.Errorf("record %d: %+v, want %s %s", i, r, w.typ, w.dir)
		}
	}
	if recs[0].Auth == nil || recs[0].Auth.Plugin != "auth/none" || recs[0].Auth.UID == nil || *recs[0].Auth.UID != uint32(os.Getuid()) {
		t.Errorf("request auth: %+v", recs[0].Auth)
	}
	if !strings.Contains(notices.String(), "listening on lo, link-type EN10MB") {
		t.Errorf("notices: %q", notices.String())
	}

	// The -w copy is a pcap file with the same two messages.
	var again bytes.Buffer
	st, err := Dump(context.Background(), bytes.NewReader(capture.Bytes()), &again, Options{JSON: true, Ports: []uint16{port}})
	if err != nil || st.Messages != 2 || st.Errors != 0 {
		t.Fatalf("reading the -w copy: %+v %v\n%s", st, err, again.String())
	}
	recs2 := decodeRecords(t, again.String())
	for i := range recs2 {
		if recs2[i].Header.MsgType != recs[i].Header.MsgType || recs2[i].Src != recs[i].Src || recs2[i].Time != recs[i].Time {
			t.Errorf("-w copy record %d: %+v, live %+v", i, recs2[i], recs[i])
		}
	}
}

// TestLiveMainText runs the command line: text output, -c, default follow
// off because --port is given; on lo (Ethernet framing) and on any (cooked
// framing, where lo's outgoing copies must be dropped).
func TestLiveMainText(t *testing.T) {
	needRoot(t)
	for _, iface := range []string{"lo", "any"} {
		t.Run(iface, func(t *testing.T) { liveMainText(t, iface) })
	}
}

func liveMainText(t *testing.T, iface string) {
	port := pingServer(t)
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"slurmdump", "-i", iface, "--port", strconv.Itoa(int(port)), "-c", "4", "-q"},
			IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
	}()
	// The capture may start at any point of a ping, so ping until it has
	// seen four messages: at least one whole round trip.
	var code int
	for running := true; running; {
		if err := ping(port); err != nil {
			t.Fatal(err)
		}
		select {
		case code = <-done:
			running = false
		case <-time.After(50 * time.Millisecond):
		}
	}
	out := stdout.String()
	if code != ExitOK || !strings.Contains(out, " REQUEST_PING(1008) body=0 auth/none") || !strings.Contains(out, " RESPONSE_SLURM_RC(8001) body=4 auth/none") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	if n := strings.Count(out, "\n"); n != 4 {
		t.Errorf("%d lines with -c 4 -q:\n%s", n, out)
	}
	if !strings.Contains(stderr.String(), "slurmdump: 4 messages, ") {
		t.Errorf("stderr: %q", stderr.String())
	}
}

// TestLiveNotPermitted runs the capture as nobody: a clear error, exit 1.
func TestLiveNotPermitted(t *testing.T) {
	if os.Getenv("SLURMDUMP_LIVE_CHILD") == "1" {
		os.Exit(Main([]string{"slurmdump", "-i", "lo"}, OSIO()))
	}
	needRoot(t)
	// The test binary must be reachable by nobody.
	dir, err := os.MkdirTemp("", "slurmdump-live")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dump.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestLiveNotPermitted$")
	cmd.Env = append(os.Environ(), "SLURMDUMP_LIVE_CHILD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitRead {
		t.Fatalf("run as nobody: %v, stderr %q", err, stderr.String())
	}
	want := "slurmdump: error: cannot capture on lo: operation not permitted (needs CAP_NET_RAW)\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

func decodeRecords(t *testing.T, s string) []Record {
	t.Helper()
	var out []Record
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		out = append(out, r)
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLiveSIGINT: an interrupted capture ends cleanly, exit 0, with its
// summary line, and leaves a readable -w file.
func TestLiveSIGINT(t *testing.T) {
	if os.Getenv("SLURMDUMP_LIVE_CHILD") == "2" {
		os.Exit(Main([]string{"slurmdump", "-i", "lo", "--port", os.Getenv("SLURMDUMP_PORT"), "-w", os.Getenv("SLURMDUMP_W")}, OSIO()))
	}
	needRoot(t)
	port := pingServer(t)
	w := filepath.Join(t.TempDir(), "live.pcap")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLiveSIGINT$")
	cmd.Env = append(os.Environ(), "SLURMDUMP_LIVE_CHILD=2", "SLURMDUMP_PORT="+strconv.Itoa(int(port)), "SLURMDUMP_W="+w)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	// until polls cond while the child runs.
	until := func(cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case err := <-exited:
				t.Fatalf("child ended: %v\n%s", err, stderr.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	until(func() bool { return strings.Contains(stderr.String(), "listening on lo") })
	if err := ping(port); err != nil {
		t.Fatal(err)
	}
	until(func() bool { return strings.Count(stdout.String(), " auth/none") >= 2 })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("after SIGINT: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "slurmdump: 2 messages, ") {
		t.Errorf("stderr: %q", stderr.String())
	}
	f, err := os.Open(w)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := Dump(context.Background(), f, io.Discard, Options{})
	if err != nil || st.Messages != 2 {
		t.Errorf("-w file: %+v %v", st, err)
	}
}
