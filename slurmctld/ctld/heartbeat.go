package ctld

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The heartbeat file, as 22.05 keeps it (heartbeat.c): the controller in
// control writes StateSaveLocation/heartbeat every min(SlurmctldTimeout/4,
// 30 s) when backups are configured, and a backup whose pings go
// unanswered reads it before taking over, so a primary that is busy or
// cut off from the backup's network but still writing the shared state
// keeps control. The file is 16 bytes: the write time (Unix seconds) and
// the writer's SlurmctldHost index, each a big-endian uint64, so real and
// goslurm controllers in one pair read each other's.

// HeartbeatFile is the file's name in StateSaveLocation.
const HeartbeatFile = "heartbeat"

// heartbeatLen is the file's size: two uint64.
const heartbeatLen = 16

// WriteHeartbeat writes the heartbeat file in dir as 22.05 does: to
// heartbeat.new (mode 0600, synced), then linked over heartbeat.
func WriteHeartbeat(dir string, now time.Time, index int) error {
	path := filepath.Join(dir, HeartbeatFile)
	tmp := path + ".new"
	// A fresh file, never one found there: a symlink planted at
	// heartbeat.new must not make the controller write elsewhere.
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("heartbeat file creation failed to %s: %w", tmp, err)
	}
	var b [heartbeatLen]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.Unix()))
	binary.BigEndian.PutUint64(b[8:], uint64(index))
	_, err = f.Write(b[:])
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("heartbeat write failed to %s: %w", tmp, err)
	}
	// A hard link, not a rename, as 22.05: a reader holding the old file
	// open keeps reading whole contents.
	_ = os.Remove(path)
	err = os.Link(tmp, path)
	_ = os.Remove(tmp)
	if err != nil {
		return fmt.Errorf("unable to create link for %s -> %s: %w", tmp, path, err)
	}
	return nil
}

// ReadHeartbeat reads dir's heartbeat file: when it was written and by
// which controller (index -1 when the file holds no index). A missing or
// short file is an error; the time read before it, if any, is returned.
func ReadHeartbeat(dir string) (at int64, index int, err error) {
	path := filepath.Join(dir, HeartbeatFile)
	var f *os.File
	// The writer replaces the file under a reader: try the open again.
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		// No symlink, and no blocking on a FIFO planted there.
		if f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0); err == nil {
			break
		}
	}
	if err != nil {
		return 0, -1, fmt.Errorf("heartbeat open attempt failed from %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return 0, -1, fmt.Errorf("heartbeat read failed from %s: not a regular file", path)
	}
	var b [heartbeatLen]byte
	n, err := io.ReadFull(f, b[:])
	switch {
	case n < 8:
		return 0, -1, fmt.Errorf("heartbeat read failed from %s: %w", path, errShort(err))
	case n < heartbeatLen:
		return int64(binary.BigEndian.Uint64(b[:8])), -1, fmt.Errorf("heartbeat read failed from %s: %w", path, errShort(err))
	}
	return int64(binary.BigEndian.Uint64(b[:8])), int(int64(binary.BigEndian.Uint64(b[8:]))), nil
}

func errShort(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// heartbeatBeat is the period: a quarter of SlurmctldTimeout, at most
// 30 s. 22.05 computes it in whole seconds and would spin at 0; one
// second is the floor here.
func heartbeatBeat(timeout time.Duration) time.Duration {
	beat := min((timeout/time.Second)/4, 30) * time.Second
	return max(beat, time.Second)
}

// runHeartbeat writes the heartbeat file until ctx ends (heartbeat_start
// to heartbeat_stop). dir and timeout are read on every beat: a
// reconfigure may change StateSaveLocation or SlurmctldTimeout.
func runHeartbeat(ctx context.Context, cfg func() *Config, index int, now func() time.Time, log *slog.Logger) {
	beat := heartbeatBeat(time.Duration(cfg().Conf.SlurmctldTimeout) * time.Second)
	log.Debug(fmt.Sprintf("Heartbeat thread started, beating every %d seconds.", beat/time.Second))
	for {
		c := cfg()
		t := now()
		log.Debug(fmt.Sprintf("Heartbeat at %d", t.Unix()))
		if err := WriteHeartbeat(c.Conf.StateSaveLocation, t, index); err != nil {
			log.Error("_heartbeat_thread: " + err.Error())
		}
		beat = heartbeatBeat(time.Duration(c.Conf.SlurmctldTimeout) * time.Second)
		timer := time.NewTimer(beat)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}
