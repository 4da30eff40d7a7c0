package bcast

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// taskIDs is each thread's "Uid:", "Gid:" and "Groups:" lines.
func taskIDs(t *testing.T) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		var keep []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Uid:") || strings.HasPrefix(l, "Gid:") || strings.HasPrefix(l, "Groups:") {
				keep = append(keep, strings.Join(strings.Fields(l), " "))
			}
		}
		out[e.Name()] = strings.Join(keep, "; ")
	}
	return out
}

// After many asUser calls, every thread of the process (the main one
// included, which the runtime parks rather than ends) has the process's
// own file system identity and groups, and the process stays dumpable.
func TestAsUserLeavesNoIdentity(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	runtime.LockOSThread()
	want := taskIDs(t)[strconv.Itoa(unix.Gettid())]
	runtime.UnlockOSThread()
	u := User{UID: nobody, GID: nobody, Groups: []uint32{nobody}}
	var wg sync.WaitGroup
	for range 2000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := asUser(u, func() error { runtime.Gosched(); return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for tid, ids := range taskIDs(t) {
		if ids != want {
			t.Errorf("thread %s: %s, want %s", tid, ids, want)
		}
	}
	// wasDumpable: the process before its first identity change.
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); wasDumpable && (err != nil || d != 1) {
		t.Errorf("dumpable %d (%v) after asUser, want 1", d, err)
	}
}
