package client_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// TestStandbyRetry: a backup in standby answers ESLURM_IN_STANDBY_MODE
// until it takes over; the call is retried after SlurmctldTimeout/2 and
// gets the answer of the new controller.
func TestStandbyRetry(t *testing.T) {
	good, _ := setup(t)
	var calls atomic.Int32
	backup := startFake(t, good, good, func(codec.Frame, auth.Identity) *codec.Frame {
		if calls.Add(1) == 1 {
			return rcFrame(slurmerr.ESLURM_IN_STANDBY_MODE)
		}
		return rcFrame(0)
	})
	c := &client.Client{Controllers: []string{closedAddr(t), backup.ln.Addr().String()}, Auth: good,
		SlurmctldTimeout: 200 * time.Millisecond}
	r, err := c.Call(context.Background(), msgtype.REQUEST_JOB_INFO, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.ReturnCode(&r.Frame); err != nil || r.Controller != 1 {
		t.Fatalf("reply from %d: %v", r.Controller, err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests to the backup, want 2", n)
	}
}

// TestStandbyGivesUp: after 1.5 SlurmctldTimeout of standby answers the
// caller gets ESLURM_IN_STANDBY_MODE; a single controller gets it at once.
func TestStandbyGivesUp(t *testing.T) {
	good, _ := setup(t)
	standby := startFake(t, good, good, func(codec.Frame, auth.Identity) *codec.Frame {
		return rcFrame(slurmerr.ESLURM_IN_STANDBY_MODE)
	})
	cases := []struct {
		name string
		ctls []string
	}{
		{"with backup", []string{closedAddr(t), standby.ln.Addr().String()}},
		{"single controller", []string{standby.ln.Addr().String()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &client.Client{Controllers: tc.ctls, Auth: good, SlurmctldTimeout: 100 * time.Millisecond}
			err := c.CallRC(context.Background(), msgtype.REQUEST_JOB_INFO, nil)
			if slurmerr.Code(err) != slurmerr.ESLURM_IN_STANDBY_MODE {
				t.Fatalf("%v", err)
			}
		})
	}
}

// TestUseBackup: once a backup answered, the next call goes to the
// backups first; ESLURM_IN_STANDBY_USE_BACKUP from the primary sends the
// retry to the backups.
func TestUseBackup(t *testing.T) {
	good, _ := setup(t)
	var primaryUp atomic.Bool
	var primaryReqs atomic.Int32
	primary := startFake(t, good, good, func(codec.Frame, auth.Identity) *codec.Frame {
		primaryReqs.Add(1)
		if !primaryUp.Load() {
			return nil
		}
		return rcFrame(slurmerr.ESLURM_IN_STANDBY_USE_BACKUP)
	})
	backup := startFake(t, good, good, func(codec.Frame, auth.Identity) *codec.Frame { return rcFrame(0) })
	c := &client.Client{Controllers: []string{primary.ln.Addr().String(), backup.ln.Addr().String()}, Auth: good,
		SlurmctldTimeout: time.Minute}
	// The primary accepts but says it is in standby: the backup answers.
	primaryUp.Store(true)
	r, err := c.Call(context.Background(), msgtype.REQUEST_JOB_INFO, nil)
	if err != nil || r.Controller != 1 {
		t.Fatalf("first call: %v (controller %+v)", err, r)
	}
	// Sticky: the primary is not asked again.
	before := primaryReqs.Load()
	r, err = c.Call(context.Background(), msgtype.REQUEST_JOB_INFO, nil)
	if err != nil || r.Controller != 1 {
		t.Fatalf("second call: %v", err)
	}
	if primaryReqs.Load() != before {
		t.Error("the primary was asked again after the backup answered")
	}
}

// TestConnectTimeout: each connect attempt is bounded by ConnectTimeout
// (TCPTimeout), 2 s by default, not by MessageTimeout.
func TestConnectTimeout(t *testing.T) {
	good, _ := setup(t)
	cases := []struct {
		name string
		set  time.Duration
		want time.Duration
	}{
		{"default", 0, client.DefaultTCPTimeout},
		{"TCPTimeout=5", 5 * time.Second, 5 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var left time.Duration
			c := &client.Client{Controllers: []string{"192.0.2.1:6817"}, Auth: good, Sweeps: 1,
				MessageTimeout: time.Minute, ConnectTimeout: tc.set,
				Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
					dl, _ := ctx.Deadline()
					left = time.Until(dl)
					return nil, context.DeadlineExceeded
				}}
			_ = c.CallRC(context.Background(), msgtype.REQUEST_PING, nil)
			if left <= 0 || left > tc.want {
				t.Errorf("connect deadline in %v, want at most %v", left, tc.want)
			}
		})
	}
}
