package ctld

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/client"
)

// TestHeartbeatFileFormat: 16 bytes, write time and SlurmctldHost index as
// big-endian uint64 (what 22.05's heartbeat thread writes and
// get_last_heartbeat reads), mode 0600, no heartbeat.new left behind.
func TestHeartbeatFileFormat(t *testing.T) {
	dir := t.TempDir()
	at := time.Unix(1700000123, 0)
	if err := WriteHeartbeat(dir, at, 1); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "heartbeat"))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0, 0, 0x65, 0x53, 0xf1, 0x7b, 0, 0, 0, 0, 0, 0, 0, 1}
	if !bytes.Equal(b, want) {
		t.Errorf("heartbeat bytes %x, want %x", b, want)
	}
	st, err := os.Stat(filepath.Join(dir, "heartbeat"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("heartbeat mode %v (%v), want 0600", st.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "heartbeat.new")); !os.IsNotExist(err) {
		t.Errorf("heartbeat.new left: %v", err)
	}
	got, idx, err := ReadHeartbeat(dir)
	if err != nil || got != at.Unix() || idx != 1 {
		t.Errorf("ReadHeartbeat = %d, %d, %v", got, idx, err)
	}
	// A second beat replaces the file.
	if err := WriteHeartbeat(dir, at.Add(time.Second), 0); err != nil {
		t.Fatal(err)
	}
	if got, idx, err := ReadHeartbeat(dir); err != nil || got != at.Unix()+1 || idx != 0 {
		t.Errorf("after the second beat: %d, %d, %v", got, idx, err)
	}
}

// TestReadHeartbeatBroken: a missing or short file gives time 0 (or the
// time alone) and index -1, as get_last_heartbeat.
func TestReadHeartbeatBroken(t *testing.T) {
	var full [16]byte
	binary.BigEndian.PutUint64(full[:8], 42)
	binary.BigEndian.PutUint64(full[8:], 3)
	cases := []struct {
		name    string
		content []byte // nil: no file
		at      int64
		idx     int
		err     bool
	}{
		{"missing", nil, 0, -1, true},
		{"empty", []byte{}, 0, -1, true},
		{"time only", full[:8], 42, -1, true},
		{"truncated index", full[:12], 42, -1, true},
		{"whole", full[:], 42, 3, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.content != nil {
				if err := os.WriteFile(filepath.Join(dir, "heartbeat"), tc.content, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			at, idx, err := ReadHeartbeat(dir)
			if at != tc.at || idx != tc.idx || (err != nil) != tc.err {
				t.Errorf("ReadHeartbeat = %d, %d, %v; want %d, %d, error %v", at, idx, err, tc.at, tc.idx, tc.err)
			}
		})
	}
}

func TestHeartbeatBeat(t *testing.T) {
	for _, tc := range []struct{ timeout, beat time.Duration }{
		{120 * time.Second, 30 * time.Second},
		{300 * time.Second, 30 * time.Second},
		{6 * time.Second, time.Second},
		{20 * time.Second, 5 * time.Second},
		{3 * time.Second, time.Second},
		{0, time.Second},
	} {
		if got := heartbeatBeat(tc.timeout); got != tc.beat {
			t.Errorf("heartbeatBeat(%v) = %v, want %v", tc.timeout, got, tc.beat)
		}
	}
}

func hbConfig(dir string, hosts int) *Config {
	c := &conf.Config{StateSaveLocation: dir, SlurmctldTimeout: 6}
	for i := 0; i < hosts; i++ {
		c.SlurmctldHost = append(c.SlurmctldHost, conf.ControllerHost{Host: "h" + string(rune('1'+i))})
	}
	return &Config{Conf: c}
}

// TestStandbyLastAlive: a heartbeat newer than the last answer, written by
// a controller before this backup, counts as an answer; one written by a
// controller after it (in control since a takeover) does not.
func TestStandbyLastAlive(t *testing.T) {
	last := time.Unix(1000, 500)
	cases := []struct {
		name  string
		write bool
		at    int64
		idx   int
		want  time.Time
		log   string
	}{
		{"no file", false, 0, 0, last, "heartbeat open attempt failed"},
		{"newer from the primary", true, 1010, 0, time.Unix(1010, 0), "trusting the filesystem"},
		{"same second", true, 1000, 0, last, "last_heartbeat 1000 from server 0"},
		{"older", true, 990, 0, last, "last_heartbeat 990 from server 0"},
		{"newer from a lower priority controller", true, 1010, 2, last, "Lower priority slurmctld is currently primary (2 > 1)"},
		{"newer from this backup", true, 1010, 1, time.Unix(1010, 0), "trusting the filesystem"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.write {
				if err := WriteHeartbeat(dir, time.Unix(tc.at, 0), tc.idx); err != nil {
					t.Fatal(err)
				}
			}
			var logBuf syncBuffer
			log := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			s := &Standby{Peers: &Peers{Index: 1, Log: log}, Log: log, Config: hbConfig(dir, 3)}
			if got := s.lastAlive(last); !got.Equal(tc.want) {
				t.Errorf("lastAlive = %v, want %v", got, tc.want)
			}
			if !strings.Contains(logBuf.String(), tc.log) {
				t.Errorf("log %q lacks %q", logBuf.String(), tc.log)
			}
		})
	}
	// Without a configuration (no StateSaveLocation) only answers count.
	s := &Standby{Peers: &Peers{Index: 1, Log: quietLog()}, Log: quietLog()}
	if got := s.lastAlive(last); !got.Equal(last) {
		t.Errorf("lastAlive without Config = %v", got)
	}
}

// TestStandbyHeartbeatHoldsOff: no controller before the backup answers,
// but the primary keeps writing the heartbeat file: the backup does not
// take over while it does, and does once it stops.
func TestStandbyHeartbeatHoldsOff(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	clock := time.Unix(5000, 0)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	// The primary's address refuses connections: its pings fail at once.
	s := &Standby{
		Peers:   deadPeers(t),
		Timeout: 6 * time.Second, Tick: time.Millisecond, StartDelay: -1,
		Log: quietLog(), Now: now, Config: hbConfig(dir, 2),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	took := make(chan bool, 1)
	go func() { took <- s.Wait(ctx) }()
	// 60 heartbeats, each a second after the last, each written before
	// the clock reaches it: more than SlurmctldTimeout passes in all.
	for i := 0; i < 60; i++ {
		mu.Lock()
		clock = clock.Add(time.Second)
		at := clock
		mu.Unlock()
		if err := WriteHeartbeat(dir, at, 0); err != nil {
			t.Fatal(err)
		}
		select {
		case <-took:
			t.Fatalf("backup took over at heartbeat %d while the primary wrote it", i)
		case <-time.After(20 * time.Millisecond):
		}
	}
	// The heartbeats stop; the clock moves past SlurmctldTimeout.
	mu.Lock()
	clock = clock.Add(10 * time.Second)
	mu.Unlock()
	select {
	case ok := <-took:
		if !ok {
			t.Fatal("Wait returned false")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("backup did not take over once the heartbeat stopped")
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
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

// deadPeers is a backup (index 1) whose primary refuses connections.
func deadPeers(t *testing.T) *Peers {
	return &Peers{Index: 1, Log: quietLog(), Names: []string{"p", "b"},
		Client: &client.Client{Controllers: []string{closedAddr(t), closedAddr(t)}, Sweeps: 1}}
}

// A symlink planted at heartbeat.new or heartbeat is not followed: the
// write replaces it and leaves its target alone, and the read refuses a
// heartbeat that is not a regular file.
func TestHeartbeatNoSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, HeartbeatFile+".new")); err != nil {
		t.Fatal(err)
	}
	if err := WriteHeartbeat(dir, time.Unix(1800000000, 0), 1); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("symlink target written: %q", b)
	}
	if at, idx, err := ReadHeartbeat(dir); err != nil || at != 1800000000 || idx != 1 {
		t.Fatalf("read back %d %d %v", at, idx, err)
	}
	other := t.TempDir()
	if err := os.Symlink(target, filepath.Join(other, HeartbeatFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadHeartbeat(other); err == nil {
		t.Fatal("heartbeat read through a symlink")
	}
}
