package dump

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// TestLiveRealSrun captures a real cluster's srun on lo with the ports of
// its slurm.conf: the step creation, the launch, and the I/O stream that
// the launch announced (srun's ephemeral port, added to the filter when
// the launch went by).
func TestLiveRealSrun(t *testing.T) {
	needRoot(t)
	c := realslurm.Start(t, realslurm.Options{})
	ports, desc := DefaultPorts(c.Conf)
	if strings.Contains(desc, "not readable") {
		t.Fatalf("ports: %s", desc)
	}
	var out, notices syncBuffer
	ready := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Live(ctx, &out, Options{Brief: true}, LiveOptions{
			Interface: "lo", Ports: ports, FollowSrun: true, Notices: &notices,
			Ready: func() { close(ready) },
		})
		done <- err
	}()
	<-ready
	rctx, rcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer rcancel()
	b, err := c.Command(rctx, "srun", "-N1", "hostname").CombinedOutput()
	if err != nil {
		t.Fatalf("srun: %v\n%s", err, b)
	}
	// srun has exited, so every packet of its step is queued; the capture
	// reads what is queued before it stops.
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Live: %v\n%s", err, notices.String())
	}
	host := strings.TrimSpace(string(b)) // what hostname printed
	got := out.String()
	for _, want := range []string{
		" REQUEST_JOB_STEP_CREATE(",
		" REQUEST_LAUNCH_TASKS(",
		" RESPONSE_LAUNCH_TASKS(",
		" IO_INIT nodeid=0 ",
		fmt.Sprintf(" IO stdout gtask=0 ltask=0 len=%d %q", len(host)+1, host+"\n"),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in the capture", want)
		}
	}
	// Traffic goes on after srun exits (the job's termination), so a frame
	// may be cut by the end of the capture; nothing else may fail.
	bad := false
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, " ERROR ") && !strings.Contains(line, "ERROR the stream ends inside a frame") {
			bad = true
		}
	}
	if bad || t.Failed() {
		t.Errorf("capture:\n%s\nnotices:\n%s", got, notices.String())
	}
}
