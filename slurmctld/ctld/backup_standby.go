package ctld

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Standby is a backup controller waiting to take over (run_backup): its
// RPC handler (_background_process_msg) and its watch on the controllers
// before it. Set the exported fields, then use it as the server's handler
// and call Wait.
type Standby struct {
	Peers *Peers
	// Timeout is SlurmctldTimeout.
	Timeout time.Duration
	// MessageTimeout bounds the REQUEST_SHUTDOWN and REQUEST_CONTROL a
	// takeover sends (half of it, 2 s to CONTROL_TIMEOUT).
	MessageTimeout time.Duration
	// SlurmUser is validate_slurm_user (root or SlurmUser).
	SlurmUser func(uid uint32) bool
	// StateLocked reports whether another controller holds
	// StateSaveLocation's lock; nil means never.
	StateLocked func() (bool, error)
	// Shutdown is called for SlurmUser's REQUEST_SHUTDOWN, after the reply.
	Shutdown func()
	Log      *slog.Logger
	// Tick is the loop's period (1 s) and StartDelay the set-up time given
	// to the primary first (5 s); tests shorten them.
	Tick, StartDelay time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Config, when set, names the SlurmctldPrimaryOffProg run on entering
	// standby and the StateSaveLocation whose heartbeat file (written by
	// the controller in control) counts as an answer from a controller
	// before this one.
	Config *Config

	mu           sync.Mutex
	lastResponse time.Time
	takeover     bool
	wake         chan struct{}
}

func (s *Standby) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Standby) init() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
}

// Serve is _background_process_msg.
func (s *Standby) Serve(ctx context.Context, r *server.Request) *server.Response {
	t := r.Header.MsgType
	if t == msgtype.REQUEST_PING {
		return server.RC(0)
	}
	super := s.SlurmUser != nil && s.SlurmUser(r.Identity.UID)
	switch {
	case super && t == msgtype.REQUEST_SHUTDOWN:
		s.Log.Info("Performing background RPC: REQUEST_SHUTDOWN")
		return &server.Response{MsgType: msgtype.RESPONSE_SLURM_RC, Body: rc0(), After: func(error) {
			if s.Shutdown != nil {
				s.Shutdown()
			}
		}}
	case super && t == msgtype.REQUEST_TAKEOVER:
		s.Log.Info("Performing background RPC: REQUEST_TAKEOVER")
		_ = s.Peers.Relinquish(ctx, s.relinquishTimeout(), false)
		select {
		case <-ctx.Done():
		case <-time.After(takeoverWait):
		}
		s.init()
		s.mu.Lock()
		s.takeover = true
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
		return server.RC(0)
	case super && t == msgtype.REQUEST_CONTROL:
		s.Log.Debug("Ignoring RPC: REQUEST_CONTROL")
		s.mu.Lock()
		s.lastResponse = s.now()
		s.mu.Unlock()
		return server.RC(slurmerr.ESLURM_DISABLED)
	case t == msgtype.REQUEST_CONTROL_STATUS:
		return &server.Response{MsgType: msgtype.RESPONSE_CONTROL_STATUS,
			Body: ControlStatus{BackupInx: uint16(s.Peers.Index)}}
	case t == msgtype.REQUEST_CONFIG:
		s.Log.Error("REQUEST_CONFIG received while in standby.")
		return server.RC(slurmerr.ESLURM_IN_STANDBY_USE_BACKUP)
	}
	s.Log.Error(fmt.Sprintf("Invalid RPC received %s while in standby mode", t))
	return server.RC(slurmerr.ESLURM_IN_STANDBY_MODE)
}

// relinquishTimeout is _shutdown_primary_controller's shutdown_timeout.
func (s *Standby) relinquishTimeout() time.Duration {
	t := s.MessageTimeout / 2
	return min(max(t, 2*time.Second), ControlTimeout)
}

// Wait is run_backup's loop: it returns true when this controller is to
// take over, false when ctx ended first.
func (s *Standby) Wait(ctx context.Context) bool {
	s.init()
	tick, delay := s.Tick, s.StartDelay
	if tick <= 0 {
		tick = time.Second
	}
	if delay < 0 {
		delay = 0
	} else if delay == 0 {
		delay = 5 * time.Second
	}
	if s.Config != nil {
		RunPrimaryProg(s.Config, false, s.Log)
	}
	s.Log.Info("slurmctld running in background mode")
	s.mu.Lock()
	s.lastResponse = s.now()
	s.mu.Unlock()
	// Give the primary time to set up.
	if !s.sleep(ctx, delay) {
		return false
	}
	var lastPing time.Time
	for {
		if !s.sleep(ctx, tick) {
			return false
		}
		s.mu.Lock()
		takeover := s.takeover
		s.mu.Unlock()
		if s.Timeout > 0 && !takeover && s.now().Sub(lastPing) < s.Timeout/3 {
			continue
		}
		lastPing = s.now()
		if s.Peers.PingHigher(ctx) {
			s.mu.Lock()
			s.lastResponse = s.now()
			s.mu.Unlock()
			continue
		}
		if ctx.Err() != nil {
			return false
		}
		s.mu.Lock()
		last := s.lastResponse
		takeover = s.takeover
		s.mu.Unlock()
		if !takeover && s.now().Sub(s.lastAlive(last)) <= s.Timeout {
			continue
		}
		if s.stateHeld() {
			continue
		}
		s.Log.Error(fmt.Sprintf("ControlMachine %s not responding, BackupController%d %s taking over",
			s.Peers.name(0), s.Peers.Index, s.Peers.name(s.Peers.Index)))
		return true
	}
}

// lastAlive is when the controllers before this one were last known
// alive: their last answer, or the heartbeat file's time when it is later
// and was written by one of them (a controller after this one in control
// writes it too, and says nothing about those before).
func (s *Standby) lastAlive(last time.Time) time.Time {
	if s.Config == nil || s.Config.Conf.StateSaveLocation == "" {
		return last
	}
	at, idx, err := ReadHeartbeat(s.Config.Conf.StateSaveLocation)
	if err != nil {
		s.Log.Error("get_last_heartbeat: " + err.Error())
	}
	s.Log.Debug(fmt.Sprintf("run_backup: last_heartbeat %d from server %d", at, idx))
	switch {
	case idx > s.Peers.Index:
		s.Log.Info(fmt.Sprintf("Lower priority slurmctld is currently primary (%d > %d)", idx, s.Peers.Index))
	case at > last.Unix():
		s.Log.Debug(fmt.Sprintf("Last message to the controller was at %d, but the last heartbeat was written at %d, trusting the filesystem instead of the network and not asserting control at this time.", last.Unix(), at))
		return time.Unix(at, 0)
	}
	return last
}

// stateHeld is goslurm's guard: a controller still holding
// StateSaveLocation's lock is alive, whatever the network says.
func (s *Standby) stateHeld() bool {
	if s.StateLocked == nil {
		return false
	}
	held, err := s.StateLocked()
	switch {
	case err != nil:
		s.Log.Error(fmt.Sprintf("StateSaveLocation lock check: %v; not taking over", err))
		return true
	case held:
		s.Log.Error("Controllers before this one are not responding, but StateSaveLocation is still locked by another slurmctld; not taking over")
		return true
	}
	return false
}

// sleep waits d, or less after REQUEST_TAKEOVER; false when ctx ended.
func (s *Standby) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-s.wake:
	}
	return true
}
