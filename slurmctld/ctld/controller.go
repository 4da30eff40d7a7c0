package ctld

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
)

// Version is the Slurm release goslurm's controller reports.
const Version = "22.05.8"

// Hooks are the calls the job manager and the scheduler plug in.
type Hooks struct {
	// NodeUp runs (outside the lock) when a node becomes available for
	// jobs: registration, resume, return to service.
	NodeUp func(node string)
}

// Options configure a Controller.
type Options struct {
	Config *Config
	// Auth signs the controller's own requests (pings) and is the
	// server's authenticator.
	Auth auth.Authenticator
	// Codec encodes and decodes frames; nil means one with msg.Registry.
	Codec *codec.Codec
	// Reload reads slurm.conf again (REQUEST_RECONFIGURE, SIGHUP).
	Reload func() (*Config, error)
	// Shutdown is called for REQUEST_SHUTDOWN, after the reply.
	Shutdown func()
	Hooks    Hooks
	Log      *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the controller core.
type Controller struct {
	opts Options
	log  *slog.Logger
	now  func() time.Time
	cd   *codec.Codec
	boot int64

	mu             sync.RWMutex
	cfg            *Config
	confUpdate     int64
	nodes          []*Node
	nodeIndex      map[string]*Node
	parts          []*Partition
	lastNodeUpdate int64
	lastPartUpdate int64
	pingNow        bool
	regOffset      int
	lastPing       int64
	lastPingTO     int64

	jobs *jobCore // nil until AttachJobs

	muxMu sync.RWMutex
	mux   server.Mux
	kick  chan struct{}
}

// New builds a controller from its configuration.
func New(opts Options) (*Controller, error) {
	c := &Controller{opts: opts, log: opts.Log, now: opts.Now, cd: opts.Codec, kick: make(chan struct{}, 1)}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.cd == nil {
		c.cd = &codec.Codec{Bodies: msg.Registry()}
	}
	c.boot = c.now().Unix()
	if err := c.load(opts.Config, nil); err != nil {
		return nil, err
	}
	c.mux = c.defaultMux()
	return c, nil
}

// load installs a configuration. On reconfigure (old != nil), node state,
// reasons and what registrations reported are kept for nodes that still
// exist, as Slurm's read_slurm_conf does.
func (c *Controller) load(cfg *Config, old map[string]*Node) error {
	now := c.now().Unix()
	nodes, err := newNodes(cfg.Conf, now, cfg.SlurmUID)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		o := old[n.Name]
		if o == nil {
			continue
		}
		n.State, n.NextState = o.State, o.NextState
		n.Reason, n.ReasonTime, n.ReasonUID = o.Reason, o.ReasonTime, o.ReasonUID
		n.Version, n.Arch, n.OS = o.Version, o.Arch, o.OS
		n.CPULoad, n.FreeMem, n.CPULoadTime, n.FreeMemTime = o.CPULoad, o.FreeMem, o.CPULoadTime, o.FreeMemTime
		n.BootTime, n.UpTime, n.SlurmdStartTime = o.BootTime, o.UpTime, o.SlurmdStartTime
		n.LastBusy, n.LastResponse, n.Owner = o.LastBusy, o.LastResponse, o.Owner
		n.AllocCPUs, n.AllocMem, n.RunJobs, n.CompletingJobs = o.AllocCPUs, o.AllocMem, o.RunJobs, o.CompletingJobs
		n.ProtocolVersion = o.ProtocolVersion
	}
	idx := map[string]*Node{}
	for _, n := range nodes {
		idx[n.Name] = n
	}
	parts, err := newPartitions(cfg, nodes)
	if err != nil {
		return err
	}
	c.cfg, c.nodes, c.nodeIndex, c.parts = cfg, nodes, idx, parts
	c.confUpdate, c.lastNodeUpdate, c.lastPartUpdate = now, now, now
	return nil
}

// Config returns the configuration in force.
func (c *Controller) Config() *Config {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.cfg
}

// View runs f under the read lock with the node and partition tables;
// f must not keep them.
func (c *Controller) View(f func(nodes []*Node, parts []*Partition)) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f(c.nodes, c.parts)
}

// Update runs f under the write lock; it returns whether node data
// changed (so "no change" replies stay right).
func (c *Controller) Update(f func(nodes []*Node, parts []*Partition) (nodesChanged bool)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f(c.nodes, c.parts) {
		c.lastNodeUpdate = c.now().Unix()
	}
}

// Handle installs h for t, replacing the controller's own handler.
func (c *Controller) Handle(t msgtype.Type, h server.Handler) {
	c.muxMu.Lock()
	defer c.muxMu.Unlock()
	c.mux[t] = h
}

// Serve dispatches one request (the server.Handler of the controller).
func (c *Controller) Serve(ctx context.Context, r *server.Request) *server.Response {
	c.muxMu.RLock()
	h, ok := c.mux[r.Header.MsgType]
	c.muxMu.RUnlock()
	if !ok {
		c.log.Error("invalid RPC msg_type=" + r.Header.MsgType.String())
		return server.RC(server.EINVAL)
	}
	return h.Serve(ctx, r)
}

// Reconfigure reads slurm.conf again (REQUEST_RECONFIGURE, SIGHUP).
func (c *Controller) Reconfigure() error {
	if c.opts.Reload == nil {
		return nil
	}
	cfg, err := c.opts.Reload()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.load(cfg, c.nodeIndex); err != nil {
		return err
	}
	if c.jobs != nil && c.jobs.opts.Reconfig != nil {
		if err := c.jobs.opts.Reconfig(cfg); err != nil {
			return err
		}
	}
	return nil
}

// Sender returns the agent that sends to slurmd nodes through forwarding
// trees (TreeWidth).
func (c *Controller) Sender() *forward.Sender {
	cfg := c.Config()
	return &forward.Sender{
		Resolve:        cfg.ResolveNode,
		Auth:           c.opts.Auth,
		Codec:          c.cd,
		MessageTimeout: cfg.MessageTimeout,
		TCPTimeout:     cfg.TCPTimeout,
		TreeWidth:      cfg.TreeWidth,
	}
}

// Run drives the periodic work (the ping cycle, and the job manager's
// scheduling, time limits and snapshots once attached) until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.jobs == nil {
		c.pingCycle(ctx)
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.runJobs(ctx)
	}()
	c.pingCycle(ctx)
	wg.Wait()
	c.WaitActions()
}

func expandNodes(expr string) ([]string, error) {
	return hostlist.Expand(expr)
}
