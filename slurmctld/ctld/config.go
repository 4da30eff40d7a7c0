package ctld

import (
	"fmt"
	"net"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/sched/priority"
)

// Config is slurm.conf as the controller uses it.
type Config struct {
	Conf *conf.Config
	// Path is the file it was read from (SLURM_CONF in scontrol show
	// config).
	Path string

	SlurmUID, SlurmdUID uint32

	MessageTimeout time.Duration
	TCPTimeout     time.Duration
	SlurmdTimeout  time.Duration // 0: nodes are never timed out
	TreeWidth      int

	// ConfigOverrides is SlurmdParameters=config_overrides: registrations
	// are not checked against the configured resources.
	ConfigOverrides bool
	// NodeRegMemPercent is SlurmctldParameters=node_reg_mem_percent (-1
	// when unset: 90 for CLOUD nodes, 100 for others, regMemPercent): a
	// node reporting less than this share of its configured RealMemory
	// is invalid.
	NodeRegMemPercent float64
	// problems are what reading the configuration logs as errors and
	// goes on (Problems).
	problems        []string
	ReturnToService uint16
	SelectPlugin    msg.SelectPlugin
	// HashVal is the slurm.conf hash (confHash); NO_VAL when not read
	// from a file.
	HashVal uint32

	// Priority is the PriorityType and Priority* settings.
	Priority priority.Config
	// PriorityTrack: AccountingStorageType=accounting_storage/slurmdbd.
	// priority/multifactor then keeps fair-share usage itself (standing
	// in for slurmdbd's associations) and applies the age and fair-share
	// weights; without it Slurm 22.05 zeroes both weights.
	PriorityTrack bool
}

// LoadConfig reads slurm.conf.
func LoadConfig(path string) (*Config, error) {
	c, err := conf.Load(conf.OSFS{}, path)
	if err != nil {
		return nil, err
	}
	cfg, err := NewConfig(c, path)
	if err != nil {
		return nil, err
	}
	if cfg.HashVal, err = confHash(path); err != nil {
		return nil, err
	}
	return cfg, nil
}

// NewConfig derives the controller's configuration from a parsed slurm.conf.
func NewConfig(c *conf.Config, path string) (*Config, error) {
	cfg := &Config{
		Conf: c, Path: path,
		MessageTimeout:    secs(uint32(c.MessageTimeout)),
		TCPTimeout:        secs(uint32(c.TCPTimeout)),
		SlurmdTimeout:     secs(uint32(c.SlurmdTimeout)),
		TreeWidth:         int(c.TreeWidth),
		ConfigOverrides:   c.SlurmdParameters.Has("config_overrides"),
		NodeRegMemPercent: -1,
		ReturnToService:   c.ReturnToService,
		HashVal:           noVal,
	}
	var err error
	if cfg.SlurmUID, err = lookupUID(c.SlurmUser); err != nil {
		return nil, fmt.Errorf("invalid user for SlurmUser %s: %w", c.SlurmUser, err)
	}
	if cfg.SlurmdUID, err = lookupUID(c.SlurmdUser); err != nil {
		return nil, fmt.Errorf("invalid user for SlurmdUser %s: %w", c.SlurmdUser, err)
	}
	if v, ok := c.SlurmctldParameters.Get("node_reg_mem_percent"); ok {
		// strtod as validate_node_specs: the leading number counts, a
		// value without one is 0, and only one out of range is refused
		// (logged, the default kept).
		if f, ok := strtod(v); ok {
			cfg.NodeRegMemPercent = f
		} else {
			cfg.problems = append(cfg.problems, fmt.Sprintf("validate_node_specs: Unable to convert node_reg_mem_percent=%s value to double", v))
		}
	}
	switch c.SelectType {
	case "select/cons_tres":
		cfg.SelectPlugin = msg.SelectConsTres
	case "select/cons_res":
		cfg.SelectPlugin = msg.SelectConsRes
	case "select/linear", "":
		cfg.SelectPlugin = msg.SelectLinear
	default:
		return nil, fmt.Errorf("SelectType=%s is not supported by goslurm's slurmctld", c.SelectType)
	}
	if len(c.Frontends) > 0 {
		return nil, fmt.Errorf("FrontendName is not supported by goslurm's slurmctld")
	}
	if cfg.Priority, err = priority.FromConf(c); err != nil {
		return nil, err
	}
	cfg.PriorityTrack = strings.EqualFold(c.AccountingStorageType, "accounting_storage/slurmdbd")
	return cfg, nil
}

func secs(v uint32) time.Duration { return time.Duration(v) * time.Second }

func lookupUID(name string) (uint32, error) {
	if name == "" || name == "root" {
		return 0, nil
	}
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(u.Uid, 10, 32)
	return uint32(n), err
}

// ResolveNode maps a node name to its slurmd's "addr:port" (NodeAddr,
// Port), for the agent and forwarding trees.
func (c *Config) ResolveNode(node string) (string, error) {
	i, ok := c.Conf.NodeIndex[node]
	if !ok {
		return "", fmt.Errorf("node %s not in slurm.conf", node)
	}
	n := c.Conf.Nodes[i]
	addr := n.Addr
	if addr == "" {
		addr = n.Hostname
	}
	if addr == "" {
		addr = n.Name
	}
	port := n.Port
	if port == 0 {
		port = uint16(c.Conf.SlurmdPort)
	}
	return net.JoinHostPort(addr, strconv.Itoa(int(port))), nil
}

// ListenAddrs are the addresses slurmctld listens on: every port of
// SlurmctldPort's range, on the controller's address with
// CommunicationParameters=NoCtldInAddrAny, else on every address.
func (c *Config) ListenAddrs(host string) []string {
	bind := ""
	if c.Conf.CommunicationParameters.Has("NoCtldInAddrAny") {
		bind = host
	}
	pr := c.Conf.SlurmctldPort
	n := int(pr.Count)
	if n == 0 {
		n = 1
	}
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, net.JoinHostPort(bind, strconv.Itoa(int(pr.First)+i)))
	}
	return out
}

// ControllerIndex finds this host among SlurmctldHost: the index of the
// entry whose name is host (short names compared), or -1.
func (c *Config) ControllerIndex(host string) int {
	short := func(s string) string {
		if i := strings.IndexByte(s, '.'); i > 0 {
			return s[:i]
		}
		return s
	}
	for i, h := range c.Conf.SlurmctldHost {
		if h.Host == host || short(h.Host) == short(host) {
			return i
		}
	}
	return -1
}

// SuperUser is validate_super_user without accounting: root or SlurmUser.
func (c *Config) SuperUser(uid uint32) bool {
	return uid == 0 || uid == c.SlurmUID
}

// SlurmUser is validate_slurm_user: root or SlurmUser.
func (c *Config) SlurmUser(uid uint32) bool {
	return uid == 0 || uid == c.SlurmUID
}

// Problems are the configuration's non-fatal faults, in Slurm's words:
// slurm.conf's diagnostics (a key given twice, a value ignored) and
// values the controller falls back from. Slurm logs them as errors each
// time it reads the configuration.
func (cfg *Config) Problems() []string {
	var out []string
	if cfg.Conf != nil {
		for _, w := range cfg.Conf.Warnings {
			out = append(out, w.Msg)
		}
	}
	return append(out, cfg.problems...)
}

// strtod is C's strtod on s: the longest leading number (after blanks),
// 0 when there is none; false for one out of range (ERANGE).
func strtod(s string) (float64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	sign := 0
	if t != "" && (t[0] == '+' || t[0] == '-') {
		sign = 1
	}
	if rest := strings.ToLower(t[sign:]); strings.HasPrefix(rest, "inf") || strings.HasPrefix(rest, "nan") {
		f, _ := strconv.ParseFloat(t[:sign+3], 64)
		return f, true
	}
	n := conf.FloatPrefix(t)
	if n == 0 {
		return 0, true
	}
	f, err := strconv.ParseFloat(t[:n], 64)
	if err != nil {
		return 0, false // out of range: ERANGE
	}
	return f, true
}
