package realslurm

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFreePortsDistinct(t *testing.T) {
	ports, locks, err := freePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, l := range locks {
			l.Close()
		}
	}()
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] || p < 1024 || p > 65535 {
			t.Fatalf("bad or duplicate port %d in %v", p, ports)
		}
		seen[p] = true
	}
	// A second reservation in the same process must avoid the held ones.
	more, locks2, err := freePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, l := range locks2 {
			l.Close()
		}
	}()
	for _, p := range more {
		if seen[p] {
			t.Fatalf("port %d reserved twice", p)
		}
	}
}

// TestStartStop brings up a real two-node cluster, checks it with real
// sinfo, and checks that Stop leaves no daemon behind.
func TestStartStop(t *testing.T) {
	c := Start(t, Options{Nodes: 2})
	out, err := c.Command(context.Background(), "sinfo", "-h", "-N", "-o", "%N %T").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(out)); strings.Join(got, " ") != "n1 idle n2 idle" {
		t.Fatalf("sinfo: %q", out)
	}
	var pids []int
	for _, p := range c.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	dir := c.Dir
	c.Stop()
	c.release()
	time.Sleep(50 * time.Millisecond)
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("pid %d still alive after Stop", pid)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists: %v", dir, err)
	}
}
