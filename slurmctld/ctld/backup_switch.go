package ctld

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Switch is the server's handler across standby and control: the
// listening sockets stay open while the handler behind them changes.
// Requests are counted per handler so the state of the controller that
// steps down is closed only after the requests it was serving are done.
type Switch struct {
	mu  sync.RWMutex
	h   server.Handler
	gen *sync.WaitGroup
}

// Set installs h and returns a function that waits (until ctx ends) for
// the requests the previous handler is still serving. REQUEST_CONTROL is
// not counted: its handler waits for the switch itself.
func (s *Switch) Set(h server.Handler) (drain func(ctx context.Context) error) {
	s.mu.Lock()
	old := s.gen
	s.h, s.gen = h, new(sync.WaitGroup)
	s.mu.Unlock()
	return func(ctx context.Context) error {
		if old == nil {
			return nil
		}
		done := make(chan struct{})
		go func() { old.Wait(); close(done) }()
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Serve passes r to the current handler.
func (s *Switch) Serve(ctx context.Context, r *server.Request) *server.Response {
	s.mu.RLock()
	h, gen := s.h, s.gen
	if h != nil && r.Header.MsgType != msgtype.REQUEST_CONTROL {
		gen.Add(1)
		defer gen.Done()
	}
	s.mu.RUnlock()
	if h == nil {
		// Between modes: as a backup still in standby would answer.
		return server.RC(slurmerr.ESLURM_IN_STANDBY_MODE)
	}
	return h.Serve(ctx, r)
}

// Control is what a controller in control adds to its RPCs for the backup
// protocol (proc_req.c's REQUEST_CONTROL_STATUS, REQUEST_TAKEOVER and
// REQUEST_CONTROL): install it with Install after the controller is built.
type Control struct {
	// Index is this controller's place in SlurmctldHost.
	Index int
	// ControlTime is when it took control (Unix seconds).
	ControlTime int64
	// Relinquish is called for SlurmUser's REQUEST_CONTROL: stop serving
	// as controller, save state and (for a backup) return to standby. It
	// returns a channel closed once that is done; the reply waits for it,
	// at most ControlTimeout - 1 s, as 22.05 does.
	Relinquish func() <-chan struct{}
}

// Install sets c's handlers on ctl, and makes ctl's Run act as the
// controller in control: it runs SlurmctldPrimaryOnProg, writes the
// heartbeat file while backups are configured and, for the primary, runs
// SlurmctldPrimaryOffProg when it stops.
func (c *Control) Install(ctl *Controller) {
	ctl.mu.Lock()
	ctl.control = c
	ctl.mu.Unlock()
	ctl.Handle(msgtype.REQUEST_CONTROL_STATUS, server.HandlerFunc(func(context.Context, *server.Request) *server.Response {
		return &server.Response{MsgType: msgtype.RESPONSE_CONTROL_STATUS,
			Body: ControlStatus{BackupInx: uint16(c.Index), ControlTime: c.ControlTime}}
	}))
	ctl.Handle(msgtype.REQUEST_TAKEOVER, server.HandlerFunc(func(_ context.Context, r *server.Request) *server.Response {
		if !ctl.Config().SuperUser(r.Identity.UID) {
			ctl.log.Error(fmt.Sprintf("Security violation, TAKEOVER RPC from uid=%d", r.Identity.UID))
			return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
		}
		ctl.log.Info("Performing RPC: REQUEST_TAKEOVER : already in controller mode - skipping")
		return server.RC(0)
	}))
	ctl.Handle(msgtype.REQUEST_CONTROL, server.HandlerFunc(func(ctx context.Context, r *server.Request) *server.Response {
		if !ctl.Config().SuperUser(r.Identity.UID) {
			ctl.log.Error(fmt.Sprintf("Security violation, SHUTDOWN RPC from uid=%d", r.Identity.UID))
			return server.RC(slurmerr.ESLURM_USER_ID_MISSING)
		}
		ctl.log.Info("Performing RPC: REQUEST_CONTROL")
		done := c.Relinquish()
		t := time.NewTimer(ControlTimeout - time.Second)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			ctl.log.Error("_slurm_rpc_shutdown_controller: REQUEST_CONTROL reply but backup not completely done relinquishing control.  Old state possible")
		case <-ctx.Done():
		}
		return server.RC(0)
	}))
}
