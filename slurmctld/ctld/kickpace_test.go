package ctld

import (
	"testing"
	"time"
)

func TestKickPacer(t *testing.T) {
	var p kickPacer
	t0 := time.Unix(1000, 0)
	if p.wait(t0) {
		t.Fatal("first kick waited")
	}
	if p.due() != nil {
		t.Fatal("due armed without a held kick")
	}
	// A pass of 40 ms: kicks during the next 40 ms wait, once.
	p.ran(t0, t0.Add(40*time.Millisecond))
	if !p.wait(t0.Add(50 * time.Millisecond)) {
		t.Fatal("kick 10 ms after a 40 ms pass ran at once")
	}
	if p.due() == nil {
		t.Fatal("held kick has no timer")
	}
	if !p.wait(t0.Add(200 * time.Millisecond)) {
		t.Fatal("second kick while one is held did not coalesce")
	}
	select {
	case <-p.due():
	case <-time.After(10 * time.Second):
		t.Fatal("held pass never came due")
	}
	p.ran(t0.Add(time.Second), t0.Add(time.Second+time.Millisecond))
	if p.due() != nil {
		t.Fatal("timer left armed after a pass")
	}
	if p.wait(t0.Add(time.Second + 2*time.Millisecond)) {
		t.Fatal("kick after the pass's cost was paid back waited")
	}
}
