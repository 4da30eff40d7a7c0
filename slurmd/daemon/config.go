package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/jobcred"
)

// Config is what the daemon needs from slurm.conf, resolved for the node it
// serves (NodeName, its port, and the %n/%h-expanded paths).
type Config struct {
	Conf     *conf.Config
	ConfPath string

	NodeName string
	Hostname string // short host name (gethostname up to the first dot)
	Node     conf.Node
	Line     *conf.NodeLine
	// Multiple is true when slurm.conf puts more than one node on this
	// host name: several slurmd share the host (and its munged).
	Multiple bool

	Port     uint16
	SpoolDir string
	PidFile  string
	LogFile  string
	TmpFS    string

	SlurmUID  uint32
	SlurmdUID uint32

	Controllers    []string // "host:port" in SlurmctldHost order
	MessageTimeout time.Duration
	// SlurmctldTimeout bounds the retries while a backup controller in
	// standby answers (protocol/client).
	SlurmctldTimeout time.Duration
	TCPTimeout       time.Duration
	TreeWidth        int
	KillWait         time.Duration
	ConfigOverrides  bool
	CredExpire       time.Duration
}

// ExpandPath substitutes %n (node name) and %h (host name) in a slurm.conf
// path, as slurm_conf_expand_slurmd_path does for SlurmdSpoolDir,
// SlurmdPidFile, SlurmdLogFile and TmpFS.
func ExpandPath(path, node, host string) string {
	if !strings.Contains(path, "%") {
		return path
	}
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] == '%' && i+1 < len(path) {
			switch path[i+1] {
			case 'n':
				b.WriteString(node)
				i++
				continue
			case 'h':
				b.WriteString(host)
				i++
				continue
			}
		}
		b.WriteByte(path[i])
	}
	return b.String()
}

// ShortHostname is gethostname() cut at the first dot, as slurmd uses it.
func ShortHostname() (string, error) {
	h, err := os.Hostname()
	if err != nil {
		return "", err
	}
	h, _, _ = strings.Cut(h, ".")
	return h, nil
}

// NewConfig resolves c for this slurmd. nodeName is -N (empty: the node
// whose NodeHostname, or NodeName, is this host's short name).
func NewConfig(c *conf.Config, confPath, nodeName, hostname string) (*Config, error) {
	idx := -1
	if nodeName != "" {
		i, ok := c.NodeIndex[nodeName]
		if !ok {
			return nil, fmt.Errorf("unable to determine this slurmd's NodeName: %s not in %s", nodeName, confPath)
		}
		idx = i
	} else {
		for i, n := range c.Nodes {
			if n.Hostname == hostname || n.Name == hostname {
				idx = i
				break
			}
		}
		if idx < 0 {
			return nil, fmt.Errorf("unable to determine this slurmd's NodeName")
		}
	}
	node := c.Nodes[idx]
	cfg := &Config{
		Conf: c, ConfPath: confPath,
		NodeName: node.Name, Hostname: hostname, Node: node,
		Line: c.NodeLines[node.Line],
		Port: node.Port,
	}
	if cfg.Port == 0 {
		cfg.Port = uint16(c.SlurmdPort)
	}
	sameHost := 0
	for _, n := range c.Nodes {
		if n.Hostname == node.Hostname {
			sameHost++
		}
	}
	cfg.Multiple = sameHost > 1 || nodeName != ""

	cfg.SpoolDir = ExpandPath(c.SlurmdSpoolDir, node.Name, hostname)
	cfg.PidFile = ExpandPath(c.SlurmdPidFile, node.Name, hostname)
	cfg.LogFile = ExpandPath(c.SlurmdLogFile, node.Name, hostname)
	cfg.TmpFS = ExpandPath(c.TmpFS, node.Name, hostname)

	var err error
	if cfg.SlurmUID, err = lookupUID(c.SlurmUser); err != nil {
		return nil, fmt.Errorf("SlurmUser: %w", err)
	}
	if cfg.SlurmdUID, err = lookupUID(c.SlurmdUser); err != nil {
		return nil, fmt.Errorf("SlurmdUser: %w", err)
	}
	port := int(c.SlurmctldPort.First)
	if port == 0 {
		port = 6817
	}
	for _, h := range c.SlurmctldHost {
		a := h.Addr
		if a == "" {
			a = h.Host
		}
		cfg.Controllers = append(cfg.Controllers, net.JoinHostPort(a, strconv.Itoa(port)))
	}
	if len(cfg.Controllers) == 0 {
		return nil, errors.New("no SlurmctldHost in the configuration")
	}
	cfg.MessageTimeout = secs(uint32(c.MessageTimeout), 10)
	cfg.SlurmctldTimeout = secs(uint32(c.SlurmctldTimeout), 120)
	cfg.TCPTimeout = secs(uint32(c.TCPTimeout), 2)
	cfg.KillWait = secs(uint32(c.KillWait), 30)
	cfg.TreeWidth = int(c.TreeWidth)
	cfg.ConfigOverrides = c.SlurmdParameters.Has("config_overrides")
	cfg.CredExpire = jobcred.DefaultExpirationWindow
	if v, ok := c.AuthInfo.Get("cred_expire"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || time.Duration(n)*time.Second < jobcred.MinExpirationWindow {
			return nil, fmt.Errorf("AuthInfo: invalid cred_expire=%s", v)
		}
		cfg.CredExpire = time.Duration(n) * time.Second
	}
	return cfg, nil
}

func secs(v, dflt uint32) time.Duration {
	if v == 0 {
		v = dflt
	}
	return time.Duration(v) * time.Second
}

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

// Resolve maps a node name to its slurmd's "addr:port" (NodeAddr, Port),
// for forwarding.
func (c *Config) Resolve(node string) (string, error) {
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

// ListenAddr is where the slurmd listens: the node's NodeAddr when
// CommunicationParameters=NoInAddrAny, otherwise every address.
func (c *Config) ListenAddr() string {
	host := ""
	if c.Conf.CommunicationParameters.Has("NoInAddrAny") {
		host = c.Node.Addr
		if host == "" {
			host = c.Node.Hostname
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(int(c.Port)))
}

// Authorized is _slurm_authorized_user: root or SlurmUser.
func (c *Config) Authorized(uid uint32) bool {
	return uid == 0 || uid == c.SlurmUID
}
