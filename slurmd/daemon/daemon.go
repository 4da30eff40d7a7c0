// Package daemon is goslurm's slurmd without its command line: the RPC
// handlers a Slurm 22.05 controller and srun drive (registration, ping,
// health check, energy update, reconfigure, shutdown, reboot, the job kill
// family, batch and task launch, signals), credential checks before any launch,
// and forwarding as an interior node of Slurm's message trees.
//
// What runs steps is behind the Steps interface (package slurmd/stepd);
// what detects hardware is a HardwareFunc (package slurmd/hwinfo).
// The transport is protocol/server.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmd/bcast"
)

// SlurmVersion is the release string registration reports.
const SlurmVersion = "22.05.8"

// Options configure a Daemon. Config, Auth and CredVerifier are required.
type Options struct {
	Config *Config
	// Auth verifies requests and signs replies and the daemon's own
	// messages (auth.Munge, server.SharedMunge or slurmauth.Slurm).
	Auth auth.Authenticator
	// AcceptAuthSlurm lets frames carry auth/slurm (103) credentials
	// (AuthType=auth/slurm, goslurm's built-in auth).
	AcceptAuthSlurm bool
	// CredVerifier checks job credential signatures (munge or goslurm's
	// HMAC scheme, per CredType).
	CredVerifier jobcred.SignatureVerifier
	// Steps supervises steps; nil refuses every launch with
	// ESLURM_NOT_SUPPORTED.
	Steps Steps
	// Hardware detects the node; nil means BasicHardware.
	Hardware HardwareFunc
	// Gres are the node's merged GRES records (slurmd/hwinfo.LoadGres),
	// reported in every registration; nil reports none.
	Gres []*conf.NodeGresRecord
	// Stats reads load, free memory and uptime; nil means HostStats.
	Stats func() Stats
	// Clock returns the time; nil means time.Now.
	Clock func() time.Time
	// ClearState (-c) discards the saved credential state.
	ClearState bool
	// Reload re-reads the configuration (REQUEST_RECONFIGURE, SIGHUP);
	// nil keeps the current one.
	Reload func() (*Config, error)
	// Shutdown is called for an authorized REQUEST_SHUTDOWN.
	Shutdown func()
	Log      *slog.Logger
}

// Daemon is one slurmd.
type Daemon struct {
	opts  Options
	log   *slog.Logger
	clock func() time.Time
	steps Steps
	creds *credState
	bcast *bcast.Service
	srv   *server.Server
	cd    *codec.Codec

	mu          sync.Mutex
	cfg         *Config
	ctl         *client.Client
	startTime   time.Time // first registration
	registered  bool
	tres        []msg.TresRec
	terminating map[uint32]bool
	prologs     prologs

	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
	regKick chan struct{}
}

// New checks opts, loads the credential state from the spool directory and
// returns a daemon ready to Serve.
func New(opts Options) (*Daemon, error) {
	if opts.Config == nil || opts.Auth == nil || opts.CredVerifier == nil {
		return nil, errors.New("daemon: Config, Auth and CredVerifier are required")
	}
	d := &Daemon{opts: opts, log: opts.Log, clock: opts.Clock, steps: opts.Steps,
		terminating: map[uint32]bool{}, regKick: make(chan struct{}, 1)}
	if d.log == nil {
		d.log = slog.Default()
	}
	if d.clock == nil {
		d.clock = time.Now
	}
	if d.steps == nil {
		d.steps = noSteps{}
	}
	if d.opts.Hardware == nil {
		d.opts.Hardware = BasicHardware
	}
	if d.opts.Stats == nil {
		d.opts.Stats = HostStats
	}
	d.cd = &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: opts.AcceptAuthSlurm}
	cs, err := newCredState(opts.CredVerifier, d.clock, opts.Config.CredExpire, opts.Config.SpoolDir)
	if err != nil {
		return nil, err
	}
	if err := cs.load(opts.ClearState); err != nil {
		return nil, fmt.Errorf("cannot restore credential state: %w", err)
	}
	d.creds = cs
	d.bcast = d.newBcast()
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.setConfig(opts.Config)
	d.srv = &server.Server{
		Auth: opts.Auth, Handler: d.mux(), Codec: d.cd,
		Forwarder: d.forwarder(),
		Timeout:   opts.Config.MessageTimeout,
		ReplyRUID: d.replyRUID,
		Log:       d.log,
	}
	return d, nil
}

func (d *Daemon) setConfig(cfg *Config) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cfg = cfg
	d.ctl = &client.Client{
		Controllers:    cfg.Controllers,
		Auth:           d.opts.Auth,
		SlurmUserUID:   cfg.SlurmUID,
		MessageTimeout: cfg.MessageTimeout,
		Codec:          d.cd,
		// SlurmctldHost order with failover to the backups, as
		// slurm_send_recv_controller_msg.
		SlurmctldTimeout: cfg.SlurmctldTimeout,
		ConnectTimeout:   cfg.TCPTimeout,
	}
}

func (d *Daemon) config() *Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

func (d *Daemon) controller() *client.Client {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ctl
}

func (d *Daemon) forwarder() *forward.Forwarder {
	return &forward.Forwarder{
		Resolve: func(node string) (string, error) { return d.config().Resolve(node) },
		Codec:   d.cd,
		// Fixed at start, like the listening port.
		MessageTimeout: d.opts.Config.MessageTimeout,
		TCPTimeout:     d.opts.Config.TCPTimeout,
		TreeWidth:      d.opts.Config.TreeWidth,
	}
}

// replyRUID is _resp_msg_setup: SlurmUser and SlurmdUser get replies any
// uid can decode, everyone else replies restricted to themselves.
func (d *Daemon) replyRUID(id auth.Identity) uint32 {
	cfg := d.config()
	if id.UID == cfg.SlurmUID || id.UID == cfg.SlurmdUID {
		return auth.UIDAny
	}
	return id.UID
}

// Serve answers requests on ln and registers with the controller (retrying
// as slurmd does) until Shutdown. It returns server.ErrServerClosed after
// Shutdown.
func (d *Daemon) Serve(ln net.Listener) error {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.registrationEngine()
	}()
	d.kickRegistration()
	return d.srv.Serve(ln)
}

// Listen opens the node's slurmd port.
func (d *Daemon) Listen() (net.Listener, error) {
	addr := d.config().ListenAddr()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("unable to bind listen port (%s): %w", addr, err)
	}
	return ln, nil
}

// Shutdown stops serving, waits for requests in progress (bounded by ctx)
// and stops the background work.
func (d *Daemon) Shutdown(ctx context.Context) error {
	d.cancel()
	err := d.srv.Shutdown(ctx)
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	return err
}

// Reconfigure re-reads the configuration (when a Reload is set) and
// registers again, as slurmd does on SIGHUP and REQUEST_RECONFIGURE.
func (d *Daemon) Reconfigure() {
	if d.opts.Reload != nil {
		cfg, err := d.opts.Reload()
		if err != nil {
			d.log.Error(fmt.Sprintf("Unable to reconfigure: %v; keeping the current configuration", err))
		} else if cfg.NodeName != d.config().NodeName || cfg.Port != d.config().Port {
			d.log.Error("reconfigure: NodeName or Port changed; restart slurmd to apply it")
		} else {
			d.setConfig(cfg)
			d.log.Info("Reconfigured")
		}
	}
	d.mu.Lock()
	d.registered = false
	d.mu.Unlock()
	d.kickRegistration()
}

// Steps returns the step supervisor in use.
func (d *Daemon) Steps() Steps { return d.steps }

// Tres returns the TRES list the controller sent in its last
// RESPONSE_NODE_REGISTRATION (nil before one arrived). A real slurmd
// launches nothing before it has one.
func (d *Daemon) Tres() []msg.TresRec {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tres
}

// Registered reports whether a registration was answered since the last
// start or reconfigure.
func (d *Daemon) Registered() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.registered
}
