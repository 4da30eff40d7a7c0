package interop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// TestSlurmdReboot drives `scontrol reboot` at goslurm's slurmd (n1) and a
// real slurmd (n2) under a real slurmctld. RebootProgram is a harmless
// script that only records its arguments: nothing here reboots the
// machine. Both nodes must end up alike; then our slurmd restarts with -b,
// as if the node had come back, and the controller must take it back as
// idle.
func TestSlurmdReboot(t *testing.T) {
	const ours, real = "n1", "n2"
	bin := buildSlurmd(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(dir, "calls")
	prog := filepath.Join(dir, "fake-reboot.sh")
	script := "#!/bin/sh\necho \"[$*]\" >> '" + calls + "'\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := realslurm.Start(t, realslurm.Options{
		Nodes:     2,
		External:  []string{ours},
		ExtraConf: []string{`RebootProgram="` + prog + ` now"`, "ResumeTimeout=600"},
	})
	p, err := c.Launch("goslurmd-"+ours, bin, nil, "-D", "-vvv", "-N", ours, "-f", c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, c, p, ours, "idle", 60*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if out, err := c.Command(ctx, "scontrol", "reboot", "n[1-2]").CombinedOutput(); err != nil {
		t.Fatalf("scontrol reboot %s: %v\n%s", ours, err, out)
	}
	readCalls := func() string {
		b, _ := os.ReadFile(calls)
		return string(b)
	}
	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(readCalls(), "\n") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("RebootProgram calls %q; our log:\n%s", readCalls(), c.Log(ours))
		}
		time.Sleep(200 * time.Millisecond)
	}
	issued := time.Now()
	// The controller sends no features, so RebootProgram runs as written,
	// once on each node.
	if got := readCalls(); got != "[now]\n[now]\n" {
		t.Errorf("RebootProgram calls %q, want one call with argument now per node", got)
	}
	for _, n := range []string{ours, real} {
		if !strings.Contains(c.Log(n), "Node reboot request being processed") {
			t.Errorf("%s slurmd log lacks the reboot request:\n%s", kind(n == ours), c.Log(n))
		}
	}
	show := showNode(t, c, ours)
	t.Logf("after the reboot request:\n%s", show)
	for _, want := range []string{"State=DOWN+REBOOT_ISSUED ", "reboot issued"} {
		if !strings.Contains(show, want) {
			t.Errorf("scontrol show node %s lacks %q", ours, want)
		}
	}
	if st := nodeStates(t, c); st[ours] != "reboot^" || st[real] != st[ours] {
		t.Errorf("sinfo states while the reboot is pending: %v, want reboot^ for both", st)
	}
	if a, b := nodeLine(showNode(t, c, real), "State="), nodeLine(show, "State="); a != b {
		t.Errorf("State line: real %q, ours %q", a, b)
	}

	// Come back as a rebooted node: -b counts uptime from slurmd's start,
	// so the boot time is after the request (whole seconds on the wire,
	// hence the pause past the second the request was issued in).
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("our slurmd did not stop on SIGTERM")
	}
	time.Sleep(time.Until(issued.Add(1100 * time.Millisecond)))
	if p, err = c.Launch("goslurmd-"+ours, bin, nil, "-D", "-vvv", "-b", "-N", ours, "-f", c.Conf); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, p, ours, "idle", 60*time.Second)
	show = showNode(t, c, ours)
	t.Logf("after slurmd -b:\n%s", show)
	if !strings.Contains(show, "State=IDLE ") {
		t.Errorf("after slurmd -b, %s is not idle", ours)
	}
	for _, bad := range []string{"REBOOT", "Reason="} {
		if strings.Contains(show, bad) {
			t.Errorf("after slurmd -b, scontrol show node %s shows %q", ours, bad)
		}
	}
	if got := readCalls(); got != "[now]\n[now]\n" {
		t.Errorf("RebootProgram calls %q after the restart, want still one per node", got)
	}
}

// nodeLine returns the trimmed line of `scontrol show node` output that
// starts with prefix.
func nodeLine(show, prefix string) string {
	for _, l := range strings.Split(show, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
