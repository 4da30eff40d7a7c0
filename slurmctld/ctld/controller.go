package ctld

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
	"github.com/goslurm/goslurm/slurmctld/sched"
	"github.com/goslurm/goslurm/slurmctld/trigger"
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
	// Verbose is how many -v slurmctld was started with: they set the
	// log level (SlurmctldDebug) at start-up and every reconfigure.
	Verbose int
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

	mu sync.RWMutex
	// gresUsed caches the nodes' GresUsed= (gres.go).
	gresUsed gresUsedCache
	// rebootChecked is the PERIODIC_TIMEOUT boundary of the last reboot
	// time-out check (runReboots).
	rebootChecked  int64
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

	// keptHW holds, for nodes whose hardware slurm.conf changed since the
	// controller started, the hardware they had then: 22.05 shows the new
	// values but its node records, which the select plugin allocates
	// from, keep the old ones until slurmctld restarts.
	keptHW map[string]nodeHW

	jobs    *jobCore   // nil until AttachJobs
	control *Control   // set by Control.Install: Run acts as the controller in control
	resv    resvTable  // advanced reservations (resv.go)
	admin   adminState // what the debug RPCs changed (admin_rpc.go)
	// topo is topology.conf as last read, filled under the read lock
	// (rpcTopoInfo).
	topo atomic.Pointer[topoCache]

	muxMu sync.RWMutex
	mux   server.Mux
	kick  chan struct{}

	diag ctldDiag // sdiag's statistics (diag.go)

	trig  *trigger.Manager // event triggers (admin_trigger.go, trigger_run.go)
	trigS trigState

	ps      *powerState // power saving (powersave.go); nil until runPowerSave starts
	psProcs powerProcs  // the power programs running (powersave_run.go)
	// powerKill: nodes whose jobs power_down_force kills (tickJobs).
	powerKill []string
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
	// REQUEST_JOB_INFO answers from cached packed records (rpcJobInfo);
	// a daemon's registry has the reply already (RegisterBackupBodies).
	if !jobs.AcceptsPackedJobInfo(c.cd.Bodies) {
		if err := jobs.RegisterPackedJobInfo(c.cd.Bodies); err != nil {
			return nil, err
		}
	}
	c.boot = c.now().Unix()
	c.trig = trigger.New()
	c.trig.Log = c.triggerLog
	c.diag.stats.init(c.boot)
	c.diag.rpc.clear()
	if err := c.load(opts.Config, nil, false); err != nil {
		return nil, err
	}
	c.mux = c.defaultMux()
	return c, nil
}

// load installs a configuration. On reconfigure (old != nil) the nodes
// that still exist keep what 22.05's _restore_node_state keeps: state
// (slurm.conf's DOWN and DRAIN still apply), reason unless slurm.conf sets
// one, comment, extra, and what registrations reported. Features and
// weight come from slurm.conf again, active features equal to them
// (_set_features without a node_features plugin), unless keepFeatures
// (SIGHUP) keeps them as they were. Partitions are slurm.conf's; Reconfigure
// restores the old ones as ReconfigFlags says.
//
// Their CPUs, sockets, cores, threads and memory are shown as slurm.conf
// now says (22.05 packs the config record's), while the scheduler keeps
// allocating what they had before (keptHW, ApplyKeptHardware: 22.05's
// node record keeps the old values until a restart). Registrations are
// checked against slurm.conf's new values, so a node that no longer fits
// is set INVAL and drained when it registers again.
//
// A configured CPU count that changed is ErrNeedRestart (after the new
// configuration is installed, as 22.05, whose reconfigure then answers
// ESLURM_NEED_RESTART and does not tell the nodes to reconfigure).
func (c *Controller) load(cfg *Config, old map[string]*Node, keepFeatures bool) error {
	now := c.now().Unix()
	nodes, err := newNodes(cfg.Conf, now, cfg.SlurmUID)
	if err != nil {
		return err
	}
	var needRestart error
	kept := map[string]nodeHW{}
	powerSave := cfg.Conf.SuspendProgram != "" && cfg.Conf.ResumeProgram != ""
	if old != nil {
		c.log.Info("restoring original state of nodes")
	}
	var cleared, added []string
	for _, n := range nodes {
		o := old[n.Name]
		if o == nil {
			if old != nil {
				added = append(added, n.Name)
			}
			continue
		}
		if restoreNode(n, o, powerSave) {
			cleared = append(cleared, n.Name)
		}
		// restore_node_features: scontrol's weight and (SIGHUP, recover
		// 2) features differ from slurm.conf; SIGHUP keeps both, a
		// reconfigure RPC neither. GRES are slurm.conf's either way.
		if o.Weight != n.Weight {
			c.log.Error(fmt.Sprintf("Node %s Weight(%d) differ from slurm.conf", n.Name, o.Weight))
			if keepFeatures {
				n.Weight = o.Weight
			}
		}
		if keepFeatures {
			if o.Features != n.Features {
				c.log.Error(fmt.Sprintf("Node %s Features(%s) differ from slurm.conf", n.Name, nullText(optStr(o.Features))))
			}
			n.setFeatures(o.Features, o.FeaturesAct)
			n.actEmpty = o.actEmpty
		}
		if o.CPUs != n.CPUs {
			c.log.Error(fmt.Sprintf("Configured cpu count change on %s (%d to %d)", n.Name, o.CPUs, n.CPUs))
			needRestart = ErrNeedRestart
		}
		hw, ok := c.keptHW[o.Name]
		if !ok {
			hw = hardwareOf(o)
		}
		if hw != hardwareOf(n) {
			kept[n.Name] = hw
		}
	}
	if len(cleared) > 0 {
		c.log.Info("Cleared POWER_SAVE flag from nodes " + hostlist.Compress(cleared))
	}
	if len(added) > 0 {
		c.log.Error("Nodes added to configuration (" + hostlist.Compress(added) + ")")
		c.log.Error("Reboot of all slurm daemons is recommended")
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
	c.keptHW = kept
	c.confUpdate, c.lastNodeUpdate, c.lastPartUpdate = now, now, now
	return needRestart
}

// ErrNeedRestart is ESLURM_NEED_RESTART: a reconfigure changed a node's
// configured CPU count, which takes effect only when slurmctld restarts.
var ErrNeedRestart error = slurmerr.Error{Code: slurmerr.ESLURM_NEED_RESTART}

// nodeHW is what the scheduler allocates of a node: CPUs, sockets (all
// boards), cores per socket, threads per core, memory.
type nodeHW struct {
	CPUs, Sockets, Cores, Threads uint16
	RealMemory                    uint64
}

func hardwareOf(n *Node) nodeHW {
	return nodeHW{CPUs: n.CPUs, Sockets: n.Sockets, Cores: n.Cores, Threads: n.Threads, RealMemory: n.RealMemory}
}

// ApplyKeptHardware gives the scheduler's view of the nodes (in node
// table order) the hardware kept across reconfigures: jobs are placed on
// the CPUs and memory the nodes had when slurmctld started, as 22.05's
// select plugin does, while scontrol and sinfo show slurm.conf's values.
// Called under the lock, when the view is built from the configuration.
func (c *Controller) ApplyKeptHardware(nodes []sched.Node) {
	for i := range nodes {
		hw, ok := c.keptHW[nodes[i].Name]
		if !ok {
			continue
		}
		n := &nodes[i]
		n.Sockets, n.CoresPerSocket, n.ThreadsPerCore = max(hw.Sockets, 1), max(hw.Cores, 1), max(hw.Threads, 1)
		n.CPUs = hw.CPUs
		if n.CPUs == 0 {
			n.CPUs = n.Sockets * n.CoresPerSocket * n.ThreadsPerCore
		}
		n.RealMemory = hw.RealMemory
	}
}

// restoreNode carries node o's run-time record over to n, built from the
// configuration read again. It reports whether power-saving flags were
// cleared (no SuspendProgram and ResumeProgram any more).
func restoreNode(n, o *Node, powerSave bool) (cleared bool) {
	confDown, confDrain, confCloud := n.IsDown(), n.IsDrain(), n.Has(msg.NodeStateCloud)
	if o.IsFuture() && !n.IsFuture() {
		n.State = n.State&msg.NodeStateBase | o.State&^msg.NodeStateBase
		if confCloud {
			// A FUTURE node was not up: as CLOUD it is powered down.
			n.State |= msg.NodeStatePoweredDown
		}
	} else {
		n.State = o.State
	}
	if confCloud {
		n.State |= msg.NodeStateCloud
	}
	if confDown {
		n.State = n.State&^msg.NodeStateBase | msg.NodeStateDown
	}
	if confDrain {
		n.State |= msg.NodeStateDrain
	}
	const power = msg.NodeStatePoweredDown | msg.NodeStatePoweringDown | msg.NodeStatePoweringUp
	if !powerSave && n.State&power != 0 {
		n.State &^= power
		cleared = true
	}
	n.NextState = o.NextState
	n.BootReqTime = o.BootReqTime // a reboot under way survives a reconfigure
	n.PowerSaveReqTime, n.psBooting = o.PowerSaveReqTime, o.psBooting
	// The devices slurmd registered stay known until it registers
	// again: jobs still running hold indices into them.
	n.gresRecs = o.gresRecs
	n.resuming = resumingAtBuild(n)
	if n.Reason == "" {
		n.Reason, n.ReasonTime, n.ReasonUID = o.Reason, o.ReasonTime, o.ReasonUID
	}
	// The weight is slurm.conf's again (real 22.05 shows it so, though
	// its node record copies the old one).
	n.Comment, n.Extra = o.Comment, o.Extra
	// The slurmd version and free memory are unknown until the node
	// registers again (as 22.05, which does not carry them over).
	n.Arch, n.OS = o.Arch, o.OS
	n.CPULoad, n.CPULoadTime = o.CPULoad, o.CPULoadTime
	n.BootTime, n.UpTime, n.SlurmdStartTime = o.BootTime, o.UpTime, o.SlurmdStartTime
	n.LastBusy, n.LastResponse, n.Owner = o.LastBusy, o.LastResponse, o.Owner
	n.AllocCPUs, n.AllocMem, n.RunJobs, n.CompletingJobs = o.AllocCPUs, o.AllocMem, o.RunJobs, o.CompletingJobs
	n.ProtocolVersion = o.ProtocolVersion
	if n.CPUSpecList == "" && o.CPUSpecList != "" && n.CoreSpecCnt == o.CoreSpecCnt {
		// The specialized cores the slurmd chose for CoreSpecCount stay
		// (read_config keeps the node's spec bitmap).
		n.CPUSpecList, n.specCores = o.CPUSpecList, o.specCores
	}
	return cleared
}

// restoreParts is _restore_part_state after a reconfigure: with
// KeepPartInfo the partitions keep what scontrol changed (and those only
// scontrol created come back), with KeepPartState only their State (of
// those slurm.conf still has); without either, slurm.conf's partitions
// stand. SIGHUP's reconfigure (signal) restores as KeepPartInfo unless
// KeepPartState alone is set. Called under the write lock, after load.
func (c *Controller) restoreParts(old []*Partition, oldDefault string, signal bool) {
	info, state := false, false
	for _, f := range c.cfg.Conf.ReconfigFlags {
		switch {
		case strings.EqualFold(f, "KeepPartInfo"):
			info = true
		case strings.EqualFold(f, "KeepPartState"):
			state = true
		}
	}
	full := info || (signal && !state)
	switch {
	case info || signal:
		c.log.Info("restoring original partition state")
	case state:
		c.log.Info("restoring original partition state only (up/down)")
	default:
		return
	}
	for _, o := range old {
		p := c.findPart(o.Name)
		switch {
		case p != nil && !full:
			if p.StateUp != o.StateUp {
				c.log.Info(fmt.Sprintf("Partition %s State differs from slurm.conf", p.Name))
				p.StateUp = o.StateUp
			}
		case p != nil:
			c.keepPartInfo(p, o)
		case !full:
			c.log.Info(fmt.Sprintf("Partition %s missing from slurm.conf, not restoring it", o.Name))
			continue
		default:
			c.log.Error(fmt.Sprintf("Partition %s missing from slurm.conf, restoring it", o.Name))
			cp := new(conf.Partition)
			*cp = *o.Conf
			p = &Partition{Name: o.Name, Conf: cp, StateUp: o.StateUp, Flags: o.Flags &^ msg.PartFlagDefault}
			c.parts = append(c.parts, p)
			c.relinkPartNodes(p, o)
		}
		p.sched = nil
	}
	cur := ""
	for _, p := range c.parts {
		if p.Flags&msg.PartFlagDefault != 0 {
			cur = p.Name
		}
	}
	if d := c.findPart(oldDefault); oldDefault != "" && oldDefault != cur && d != nil {
		c.log.Error("Default partition reset to " + oldDefault)
		for _, p := range c.parts {
			p.Flags &^= msg.PartFlagDefault
			p.sched = nil
		}
		d.Flags |= msg.PartFlagDefault
	}
	c.relinkPartitions()
}

// keepPartInfo gives partition p (from slurm.conf) the values of its
// record o before the reconfigure, for the fields 22.05 restores, each
// difference logged as "Partition X <field> differs from slurm.conf".
func (c *Controller) keepPartInfo(p, o *Partition) {
	n, x := p.Conf, o.Conf
	differs := func(field string, diff bool) bool {
		if diff {
			c.log.Error(fmt.Sprintf("Partition %s %s differs from slurm.conf", p.Name, field))
		}
		return diff
	}
	list := func(a, b conf.List) bool { return strings.Join(a, ",") != strings.Join(b, ",") }
	if differs("AllowAccounts", list(n.AllowAccounts, x.AllowAccounts)) {
		n.AllowAccounts = x.AllowAccounts
	}
	if differs("AllowNodes", list(n.AllocNodes, x.AllocNodes)) {
		n.AllocNodes = x.AllocNodes
	}
	if differs("AllowGroups", list(n.AllowGroups, x.AllowGroups)) {
		n.AllowGroups = x.AllowGroups
	}
	if differs("AllowQos", list(n.AllowQos, x.AllowQos)) {
		n.AllowQos = x.AllowQos
	}
	if differs("Alternate", n.Alternate != x.Alternate) {
		n.Alternate = x.Alternate
	}
	if differs("DefMemPerCPU", n.DefMemPerCPU != x.DefMemPerCPU || n.DefMemPerNode != x.DefMemPerNode) {
		n.DefMemPerCPU, n.DefMemPerNode = x.DefMemPerCPU, x.DefMemPerNode
	}
	if differs("DefaultTime", n.DefaultTime != x.DefaultTime) {
		n.DefaultTime = x.DefaultTime
	}
	if differs("DenyAccounts", list(n.DenyAccounts, x.DenyAccounts)) {
		n.DenyAccounts = x.DenyAccounts
	}
	if differs("DenyQos", list(n.DenyQos, x.DenyQos)) {
		n.DenyQos = x.DenyQos
	}
	for _, f := range []struct {
		name string
		bit  uint16
	}{{"Hidden", msg.PartFlagHidden}, {"DisableRootJobs", msg.PartFlagNoRoot},
		{"ExclusiveUser", msg.PartFlagExclusiveUser}, {"RootOnly", msg.PartFlagRootOnly},
		{"ReqResv", msg.PartFlagReqResv}, {"LLN", msg.PartFlagLLN}} {
		if differs(f.name, p.Flags&f.bit != o.Flags&f.bit) {
			p.Flags = p.Flags&^f.bit | o.Flags&f.bit
		}
	}
	if differs("GraceTime", n.GraceTime != x.GraceTime) {
		n.GraceTime = x.GraceTime
	}
	if differs("MaxCPUsPerNode", n.MaxCPUsPerNode != x.MaxCPUsPerNode) {
		n.MaxCPUsPerNode = x.MaxCPUsPerNode
	}
	if differs("MaxMemPerNode/MaxMemPerCPU", n.MaxMemPerCPU != x.MaxMemPerCPU || n.MaxMemPerNode != x.MaxMemPerNode) {
		n.MaxMemPerCPU, n.MaxMemPerNode = x.MaxMemPerCPU, x.MaxMemPerNode
	}
	if differs("MaxNodes", n.MaxNodes != x.MaxNodes) {
		n.MaxNodes = x.MaxNodes
	}
	if differs("OverSubscribe", n.MaxShare != x.MaxShare || !strings.EqualFold(n.OverSubscribe, x.OverSubscribe)) {
		n.MaxShare, n.OverSubscribe = x.MaxShare, x.OverSubscribe
	}
	if differs("MaxTime", n.MaxTime != x.MaxTime) {
		n.MaxTime = x.MaxTime
	}
	if differs("MinNodes", n.MinNodes != x.MinNodes) {
		n.MinNodes = x.MinNodes
	}
	if differs("Nodes", p.NodeList() != o.NodeList()) {
		c.relinkPartNodes(p, o)
	}
	if differs("OverTimeLimit", n.OverTimeLimit != x.OverTimeLimit) {
		n.OverTimeLimit = x.OverTimeLimit
	}
	if differs("PreemptMode", list(n.PreemptMode, x.PreemptMode)) {
		n.PreemptMode = x.PreemptMode
	}
	if differs("PriorityJobFactor", n.PriorityJobFactor != x.PriorityJobFactor) {
		n.PriorityJobFactor = x.PriorityJobFactor
	}
	if differs("PriorityTier", n.PriorityTier != x.PriorityTier) {
		n.PriorityTier = x.PriorityTier
	}
	if differs("QOS", n.QOS != x.QOS) {
		n.QOS = x.QOS
	}
	if differs("State", p.StateUp != o.StateUp) {
		p.StateUp = o.StateUp
	}
}

// relinkPartNodes gives p the members of o (its record before the
// reconfigure) that the new node table has, and o's Nodes= as written.
func (c *Controller) relinkPartNodes(p, o *Partition) {
	p.Nodes = p.Nodes[:0:0]
	for _, on := range o.Nodes {
		if n := c.nodeIndex[on.Name]; n != nil {
			p.Nodes = append(p.Nodes, n)
		}
	}
	sort.Slice(p.Nodes, func(a, b int) bool { return p.Nodes[a].Index < p.Nodes[b].Index })
	p.Conf.Nodes, p.Conf.NodeNames, p.Conf.NodeSets = o.Conf.Nodes, o.Conf.NodeNames, o.Conf.NodeSets
	p.keepShown, p.shownNodes = o.keepShown, o.shownNodes
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
	return c.serveCounted(ctx, h, r)
}

// Reconfigure reads slurm.conf again (REQUEST_RECONFIGURE). An
// error carrying a Slurm code (errors.As slurmerr.Error; ErrNeedRestart)
// is the reply's return code; after any error the nodes are not told to
// reconfigure.
func (c *Controller) Reconfigure() error { return c.reconfigure(false) }

// ReconfigureSignal is SIGHUP's reconfigure, 22.05's read_slurm_conf(2,
// true): as Reconfigure, but the nodes also keep the features and weight
// scontrol gave them, and the partitions what scontrol changed (as
// KeepPartInfo, or their State alone with KeepPartState alone).
func (c *Controller) ReconfigureSignal() error { return c.reconfigure(true) }

func (c *Controller) reconfigure(signal bool) error {
	if c.opts.Reload == nil {
		return nil
	}
	cfg, err := c.opts.Reload()
	if err != nil {
		return err
	}
	for _, p := range cfg.Problems() {
		c.log.Error(p)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	oldParts, oldDefault := c.parts, ""
	for _, p := range oldParts {
		if p.Flags&msg.PartFlagDefault != 0 {
			oldDefault = p.Name
		}
	}
	// ErrNeedRestart leaves the new configuration installed: the rest
	// of the reconfigure goes on, and the error is the answer.
	loadErr := c.load(cfg, c.nodeIndex, signal)
	if loadErr != nil && !errors.Is(loadErr, ErrNeedRestart) {
		return loadErr
	}
	c.restoreParts(oldParts, oldDefault, signal)
	c.adminFresh()    // what setdebug and setdebugflags set lapses
	c.updateLogging() // slurm.conf's level (or -v's) and DebugFlags again
	if c.jobs != nil && c.jobs.opts.Reconfig != nil {
		if err := c.jobs.opts.Reconfig(cfg); err != nil {
			return err
		}
	}
	if c.jobs != nil {
		c.jobs.m.RestoreLicenses(c.cfg.Conf.LicenseList, c.now().Unix())
	}
	if loadErr == nil {
		c.trig.Reconfig()
	}
	return loadErr
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
	var wg sync.WaitGroup
	defer wg.Wait()
	c.mu.RLock()
	ctrl := c.control
	c.mu.RUnlock()
	if ctrl != nil {
		c.inControl(ctx, ctrl, &wg)
	}
	wg.Add(4)
	go func() {
		defer wg.Done()
		c.runResv(ctx)
	}()
	go func() {
		defer wg.Done()
		c.runPowerSave(ctx)
	}()
	go func() {
		defer wg.Done()
		c.runTriggers(ctx)
	}()
	go func() {
		defer wg.Done()
		c.runReboots(ctx)
	}()
	if c.jobs == nil {
		c.pingCycle(ctx)
		return
	}
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

// inControl is what 22.05's main loop does on taking control, after
// "Running as primary controller": SlurmctldPrimaryOnProg, then the
// heartbeat while backups are configured. When ctx ends the heartbeat
// stops and the primary runs SlurmctldPrimaryOffProg (a backup runs it on
// entering standby again).
func (c *Controller) inControl(ctx context.Context, ctrl *Control, wg *sync.WaitGroup) {
	cfg := c.Config()
	if ctrl.Index == 0 {
		c.trig.PrimaryCtldResCtrl()
		c.trig.PrimaryCtldResOp()
	} else {
		c.trig.PrimaryCtldFail()
		c.trig.BackupCtldAsCtrl()
	}
	RunPrimaryProg(cfg, true, c.log)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if len(cfg.Conf.SlurmctldHost) < 2 {
			c.log.Debug("No backup controllers, not launching heartbeat.")
		} else {
			runHeartbeat(ctx, c.Config, ctrl.Index, c.now, c.log)
		}
		<-ctx.Done()
		if ctrl.Index == 0 {
			RunPrimaryProg(c.Config(), false, c.log)
		}
	}()
}
