package bcast

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
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
