package bcast

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"golang.org/x/sys/unix"
)

// A ping (Cleanup) arriving while a block is being written must not wait
// for that transfer: write holds the transfer's lock and then takes the
// service's to drop the finished transfer, so Cleanup taking the
// transfer's lock under the service's would deadlock both.
func TestCleanupDuringWrite(t *testing.T) {
	r := newSvcRig(t)
	c := r.userCred(t)
	path := filepath.Join(r.dir, "f")
	var once sync.Once
	var armed bool
	var mu sync.Mutex
	cleaned := make(chan struct{})
	r.svc.Clock = func() time.Time {
		mu.Lock()
		fire := armed
		armed = false
		mu.Unlock()
		if fire {
			// Called from write, under the transfer's lock.
			once.Do(func() {
				go func() { r.svc.Cleanup(); close(cleaned) }()
				select {
				case <-cleaned:
				case <-time.After(60 * time.Second):
					t.Error("Cleanup waits for a transfer whose block is being written")
				}
			})
		}
		return r.now
	}
	first := &msg.FileBcast{BlockNo: 1, Fname: msg.Str(path), Block: []byte("a"), UncompLen: 1, Cred: c}
	if rc := r.svc.Handle(context.Background(), first, r.user); rc != 0 {
		t.Fatalf("block 1: rc %d", rc)
	}
	mu.Lock()
	armed = true
	mu.Unlock()
	done := make(chan int, 1)
	go func() {
		last := &msg.FileBcast{BlockNo: 2, Flags: msg.FileBcastLastBlock, Fname: msg.Str(path), Block: []byte("b"),
			UncompLen: 1, BlockOffset: 1, Cred: c}
		done <- r.svc.Handle(context.Background(), last, r.user)
	}()
	select {
	case rc := <-done:
		if rc != 0 {
			t.Errorf("last block: rc %d", rc)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("last block and Cleanup deadlocked")
	}
	if n := r.svc.Transfers(); n != 0 {
		t.Errorf("%d transfers left", n)
	}
}

// A compressed block announcing a large decoded size costs memory in
// proportion to what it really decodes to, not to the announcement, and is
// refused with SLURM_ERROR as a decompression error.
func TestCompressedBlockMemory(t *testing.T) {
	junk := bytes.Repeat([]byte{0xff}, 5<<20) // a literal run past the input
	for _, c := range []struct {
		name  string
		block []byte
		n     uint32
	}{
		{"one byte announcing 1 GiB", []byte{0xf0}, 1 << 30},
		{"5 MiB of junk announcing 1 GiB", junk, 1 << 30},
		{"over MaxUncompressed", junk, MaxUncompressed + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newSvcRig(t)
			cred := r.userCred(t)
			req := &msg.FileBcast{BlockNo: 1, Flags: msg.FileBcastLastBlock, Fname: msg.Str(filepath.Join(r.dir, "f")),
				Compress: msg.CompressLZ4, UncompLen: c.n, Block: c.block, Cred: cred}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			rc := r.svc.Handle(context.Background(), req, r.user)
			runtime.ReadMemStats(&after)
			if rc != slurmerr.SLURM_ERROR {
				t.Errorf("rc %d, want SLURM_ERROR", rc)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("allocated %d MiB", grew>>20)
			}
			if n := r.svc.Transfers(); n != 0 {
				t.Errorf("%d transfers left", n)
			}
		})
	}
}

// With --force, block 1 to a name that is not a regular file is refused
// at once (ENXIO) rather than waiting for a FIFO's reader; a regular file
// opened that way is written in blocking mode.
func TestTransferNotRegularFile(t *testing.T) {
	r := newSvcRig(t)
	fifo := filepath.Join(r.dir, "fifo")
	if err := mkfifoOf(fifo, r.user); err != nil {
		t.Fatal(err)
	}
	// A reader keeps the FIFO's open from failing on its own.
	rd, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for _, c := range []struct {
		name, path string
	}{
		{"FIFO without reader", filepath.Join(r.dir, "fifo2")},
		{"FIFO with a reader", fifo},
		{"character device", "/dev/null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.path != fifo && c.path != "/dev/null" {
				if err := mkfifoOf(c.path, r.user); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan []int, 1)
			go func() { done <- r.send(r.freshCred(t), c.path, msg.FileBcastForce, []byte("x")) }()
			select {
			case rc := <-done:
				if rc[0] != int(unix.ENXIO) {
					t.Errorf("rc %v, want ENXIO", rc)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("block 1 waits on the file")
			}
			if n := r.svc.Transfers(); n != 0 {
				t.Errorf("%d transfers left", n)
			}
		})
	}
	path := filepath.Join(r.dir, "regular")
	if rc := r.send(r.freshCred(t), path, msg.FileBcastForce, []byte("a"), []byte("b")); rc[0] != 0 || rc[1] != 0 {
		t.Fatalf("regular file: rc %v", rc)
	}
	if b, _ := os.ReadFile(path); string(b) != "ab" {
		t.Errorf("regular file holds %q", b)
	}
}

var credSerial int64

// freshCred is a credential of the transfer's user not sent before.
func (r *svcRig) freshCred(t *testing.T) msg.SbcastCred {
	c := r.userCred(t)
	credSerial++
	c.Ctime -= credSerial
	return signCred(t, c)
}

// mkfifoOf makes a FIFO owned by u.
func mkfifoOf(path string, u Caller) error {
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return err
	}
	return os.Chown(path, int(u.UID), int(u.GID))
}
