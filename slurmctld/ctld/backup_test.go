package ctld

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func rcOf(t *testing.T, resp *server.Response) int {
	t.Helper()
	if resp.MsgType != msgtype.RESPONSE_SLURM_RC {
		t.Fatalf("reply %v, want RESPONSE_SLURM_RC", resp.MsgType)
	}
	switch b := resp.Body.(type) {
	case codec.ReturnCode:
		return int(int32(b.RC))
	case *codec.ReturnCode:
		return int(int32(b.RC))
	}
	t.Fatalf("body %T", resp.Body)
	return 0
}

// TestStandbyServe: what a backup in standby answers (_background_process_msg).
func TestStandbyServe(t *testing.T) {
	const slurmUID = 500
	s := &Standby{
		Peers:     &Peers{Index: 1, Log: quietLog()},
		SlurmUser: func(uid uint32) bool { return uid == 0 || uid == slurmUID },
		Log:       quietLog(),
	}
	cases := []struct {
		name string
		t    msgtype.Type
		uid  uint32
		rc   int
	}{
		{"ping from anyone", msgtype.REQUEST_PING, 1000, 0},
		{"control from SlurmUser", msgtype.REQUEST_CONTROL, slurmUID, slurmerr.ESLURM_DISABLED},
		{"control from a user", msgtype.REQUEST_CONTROL, 1000, slurmerr.ESLURM_IN_STANDBY_MODE},
		{"shutdown from a user", msgtype.REQUEST_SHUTDOWN, 1000, slurmerr.ESLURM_IN_STANDBY_MODE},
		{"takeover from a user", msgtype.REQUEST_TAKEOVER, 1000, slurmerr.ESLURM_IN_STANDBY_MODE},
		{"config", msgtype.REQUEST_CONFIG, 0, slurmerr.ESLURM_IN_STANDBY_USE_BACKUP},
		{"submit", msgtype.REQUEST_SUBMIT_BATCH_JOB, 1000, slurmerr.ESLURM_IN_STANDBY_MODE},
		{"job info", msgtype.REQUEST_JOB_INFO, 0, slurmerr.ESLURM_IN_STANDBY_MODE},
		{"node registration", msgtype.MESSAGE_NODE_REGISTRATION_STATUS, 0, slurmerr.ESLURM_IN_STANDBY_MODE},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &server.Request{Header: codec.Header{MsgType: tc.t}, Identity: auth.Identity{UID: tc.uid}}
			if got := rcOf(t, s.Serve(context.Background(), r)); got != tc.rc {
				t.Errorf("rc %d, want %d", got, tc.rc)
			}
		})
	}
	resp := s.Serve(context.Background(), &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_CONTROL_STATUS}})
	if resp.MsgType != msgtype.RESPONSE_CONTROL_STATUS || resp.Body != (ControlStatus{BackupInx: 1}) {
		t.Errorf("control status: %v %+v", resp.MsgType, resp.Body)
	}
	var shut atomic.Bool
	s.Shutdown = func() { shut.Store(true) }
	resp = s.Serve(context.Background(), &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_SHUTDOWN}, Identity: auth.Identity{UID: slurmUID}})
	if rcOf(t, resp) != 0 || resp.After == nil {
		t.Fatal("shutdown from SlurmUser not accepted")
	}
	resp.After(nil)
	if !shut.Load() {
		t.Error("shutdown not called after the reply")
	}
}

func TestControlStatusBody(t *testing.T) {
	g := codec.NewRegistry()
	RegisterBackupBodies(g)
	bc, _ := g.Lookup(msgtype.RESPONSE_CONTROL_STATUS)
	w := pack.NewWriter(nil)
	if err := bc.Encode(w, codec.Version2205, ControlStatus{BackupInx: 1, ControlTime: 1700000000}); err != nil {
		t.Fatal(err)
	}
	// pack16 backup_inx, pack_time control_time.
	want := []byte{0, 1, 0, 0, 0, 0, 0x65, 0x53, 0xf1, 0x00}
	if string(w.Bytes()) != string(want) {
		t.Fatalf("% x, want % x", w.Bytes(), want)
	}
	s, err := ParseControlStatus(w.Bytes())
	if err != nil || s != (ControlStatus{1, 1700000000}) {
		t.Fatalf("%+v %v", s, err)
	}
}

// fakePrimary serves h on a loopback port with munge auth.
func fakePrimary(t *testing.T, a *auth.Munge, h server.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := msg.Registry()
	RegisterBackupBodies(reg)
	srv := &server.Server{Auth: a, Handler: h, Codec: &codec.Codec{Bodies: reg}, Log: quietLog()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return ln.Addr().String()
}

func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestStandbyWait: the backup takes over when the primary stops answering
// REQUEST_CONTROL_STATUS for SlurmctldTimeout, not while it answers, and
// not while StateSaveLocation is locked.
func TestStandbyWait(t *testing.T) {
	a := &auth.Munge{Client: mungetest.Start(t, mungetest.Options{}).Client()}
	primary := fakePrimary(t, a, &Standby{Peers: &Peers{Index: 0, Log: quietLog()}, Log: quietLog()})
	var locked atomic.Bool
	cases := []struct {
		name    string
		primary string
		locked  bool
		take    bool
	}{
		{"primary answers", primary, false, false},
		{"primary gone", closedAddr(t), false, true},
		{"primary gone, state locked", closedAddr(t), true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			locked.Store(tc.locked)
			s := &Standby{
				Peers: &Peers{Index: 1, Log: quietLog(), Names: []string{"p", "b"},
					Client: &client.Client{Controllers: []string{tc.primary, closedAddr(t)}, Auth: a, Sweeps: 1}},
				Timeout:     60 * time.Millisecond,
				StateLocked: func() (bool, error) { return locked.Load(), nil },
				Log:         quietLog(),
				Tick:        5 * time.Millisecond, StartDelay: -1,
			}
			// A negative case runs until the deadline: many ping periods.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if got := s.Wait(ctx); got != tc.take {
				t.Fatalf("took over: %v, want %v", got, tc.take)
			}
			if tc.locked {
				// The lock goes: it takes over.
				locked.Store(false)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if !s.Wait(ctx) {
					t.Fatal("did not take over once the state was free")
				}
			}
		})
	}
}

// TestSwitchDrain: the drain returned by Set waits for the requests of
// the previous handler, but not for REQUEST_CONTROL.
func TestSwitchDrain(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	slow := server.HandlerFunc(func(ctx context.Context, r *server.Request) *server.Response {
		started <- struct{}{}
		<-release
		return server.RC(0)
	})
	var sw Switch
	sw.Set(slow)
	go sw.Serve(context.Background(), &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_CONTROL}})
	<-started
	drain := sw.Set(server.HandlerFunc(func(context.Context, *server.Request) *server.Response { return server.RC(1) }))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := drain(ctx); err != nil {
		t.Fatalf("drain waited for REQUEST_CONTROL: %v", err)
	}
	sw.Set(slow)
	go sw.Serve(context.Background(), &server.Request{Header: codec.Header{MsgType: msgtype.REQUEST_PING}})
	<-started
	drain = sw.Set(nil)
	done := make(chan error, 1)
	go func() { done <- drain(context.Background()) }()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rc := rcOf(t, sw.Serve(context.Background(), &server.Request{})); rc != slurmerr.ESLURM_IN_STANDBY_MODE {
		t.Errorf("between modes: rc %d", rc)
	}
}

// writeProg writes an executable shell script that appends word to out.
func writeProg(t *testing.T, dir, name, word, out string, exit int) string {
	t.Helper()
	p := filepath.Join(dir, name)
	script := fmt.Sprintf("#!/bin/sh\necho %s >> %s\nexit %d\n", word, out, exit)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func progConfig(on, off string) *Config {
	return &Config{Conf: &conf.Config{SlurmctldPrimaryOnProg: on, SlurmctldPrimaryOffProg: off}}
}

// TestRunPrimaryProg: the program runs (its exit logged as 22.05 logs
// it); a program that cannot be executed is reported and skipped.
func TestRunPrimaryProg(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "events")
	ok := writeProg(t, dir, "on.sh", "on", out, 0)
	bad := writeProg(t, dir, "off.sh", "off", out, 3)
	noexec := filepath.Join(dir, "noexec.sh")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		cfg      *Config
		on       bool
		log, out string
	}{
		{"on", progConfig(ok, ""), true, "_wait_primary_prog: SlurmctldPrimaryOnProg completed successfully", "on\n"},
		{"off fails", progConfig(ok, bad), false, "_wait_primary_prog: SlurmctldPrimaryOffProg exit status 3:0", "off\n"},
		{"not executable", progConfig(noexec, ""), true, "_run_primary_prog: Invalid SlurmctldPrimaryOnProg: Permission denied", ""},
		{"missing", progConfig("", filepath.Join(dir, "nope")), false, "_run_primary_prog: Invalid SlurmctldPrimaryOffProg: No such file or directory", ""},
		{"unset", progConfig("", ""), false, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(out)
			var buf syncBuffer
			done := RunPrimaryProg(tc.cfg, tc.on, slog.New(slog.NewTextHandler(&buf, nil)))
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("program did not end")
			}
			if !strings.Contains(buf.String(), tc.log) {
				t.Errorf("log %q lacks %q", buf.String(), tc.log)
			}
			b, _ := os.ReadFile(out)
			if string(b) != tc.out {
				t.Errorf("program wrote %q, want %q", b, tc.out)
			}
		})
	}
}

// TestInControl: a controller in control runs SlurmctldPrimaryOnProg and,
// with a backup configured, writes the heartbeat file with its index;
// when it stops, the primary runs SlurmctldPrimaryOffProg and a backup
// does not (it runs it on entering standby).
func TestInControl(t *testing.T) {
	for _, tc := range []struct {
		name     string
		index    int
		backups  bool
		events   string
		hearbeat bool
	}{
		{"primary with backup", 0, true, "on\noff\n", true},
		{"backup in control", 1, true, "on\n", true},
		{"primary alone", 0, false, "on\noff\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "events")
			extra := fmt.Sprintf("StateSaveLocation=%s\nSlurmctldTimeout=8\nSlurmctldPrimaryOnProg=%s\nSlurmctldPrimaryOffProg=%s\n",
				dir, writeProg(t, dir, "on.sh", "on", out, 0), writeProg(t, dir, "off.sh", "off", out, 0))
			if tc.backups {
				extra += "SlurmctldHost=backup\n"
			}
			ctl, _ := newTestController(t, extra)
			(&Control{Index: tc.index}).Install(ctl)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			ctl.inControl(ctx, ctl.control, &wg)
			waitFile := func(want string) {
				t.Helper()
				deadline := time.Now().Add(60 * time.Second)
				for {
					b, _ := os.ReadFile(out)
					if string(b) == want {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("events %q, want %q", b, want)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			waitFile("on\n")
			if tc.hearbeat {
				deadline := time.Now().Add(60 * time.Second)
				for {
					at, idx, err := ReadHeartbeat(dir)
					if err == nil {
						if idx != tc.index || at != 1_800_000_000 {
							t.Errorf("heartbeat %d from %d, want %d from %d", at, idx, 1_800_000_000, tc.index)
						}
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("no heartbeat: %v", err)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			cancel()
			wg.Wait()
			waitFile(tc.events)
			if !tc.hearbeat {
				if _, _, err := ReadHeartbeat(dir); err == nil {
					t.Error("heartbeat written without a backup configured")
				}
			}
		})
	}
}
