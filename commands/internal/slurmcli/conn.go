package slurmcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// DefaultConfPath is where Debian's Slurm looks without SLURM_CONF.
const DefaultConfPath = "/etc/slurm/slurm.conf"

// Show flags of the info requests.
const (
	ShowAll    uint16 = 0x01
	ShowDetail uint16 = 0x02
	ShowLocal  uint16 = 0x10
)

// Conn is a command's link to slurmctld: the parsed slurm.conf and a
// client signing with the configured auth plugin.
type Conn struct {
	Conf   *conf.Config
	Client *client.Client
	reg    *codec.Registry

	// Verbose is the command's -v count; from 2 on, the first RPC logs
	// the plugin lines Slurm's debug level shows, on Log as Prog.
	Verbose int
	Log     io.Writer
	Prog    string
	// Flush, if set, runs before the Conn writes to Log: commands buffer
	// their stdout, and Slurm's log lines follow what was printed before.
	Flush        func()
	authLogged   bool
	selectLogged bool
}

// logSelect logs the select plugins' start-up, which Slurm does once,
// when it first unpacks job or node records.
func (c *Conn) logSelect(records int) {
	if c.selectLogged || records == 0 {
		return
	}
	c.selectLogged = true
	if c.Verbose < 1 || c.Log == nil {
		return
	}
	c.LogSelectPlugins(c.Log, c.Prog)
}

// Dial loads slurm.conf (SLURM_CONF, else DefaultConfPath) and prepares a
// client. It does not connect yet.
func Dial(getenv func(string) (string, bool)) (*Conn, error) {
	path := DefaultConfPath
	if v, ok := getenv("SLURM_CONF"); ok && v != "" {
		path = v
	}
	cfg, err := conf.Load(conf.OSFS{}, path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return newConn(cfg, path, getenv)
}

// newConn builds the client for a loaded configuration.
func newConn(cfg *conf.Config, path string, getenv func(string) (string, bool)) (*Conn, error) {
	if len(cfg.SlurmctldHost) == 0 {
		return nil, fmt.Errorf("%s: no SlurmctldHost", path)
	}
	var a auth.Authenticator
	switch cfg.AuthType {
	case "", "auth/munge":
		m := &auth.Munge{Client: &munge.Client{}}
		if s, ok := cfg.AuthInfo.Get("socket"); ok {
			m.Client.Socket = s
		}
		if s, ok := cfg.AuthInfo.Get("ttl"); ok {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				m.TTL = time.Duration(n) * time.Second
			}
		}
		a = m
	case "auth/slurm":
		// goslurm's built-in auth: tokens come from the local token
		// service (commands cannot read the key).
		o, err := slurmauth.ParseAuthInfo(cfg.AuthInfo)
		if err != nil {
			return nil, fmt.Errorf("AuthInfo: %w", err)
		}
		env := func(k string) string { v, _ := getenv(k); return v }
		paths := slurmauth.SackSocketPaths(cfg.ClusterName, env)
		if o.SackSocket != "" {
			paths = []string{o.SackSocket}
		}
		a = &slurmauth.Slurm{Sack: &slurmauth.SackClient{Paths: paths}, Cluster: cfg.ClusterName, TTL: o.TTL}
	default:
		return nil, fmt.Errorf("AuthType=%s is not supported", cfg.AuthType)
	}
	port := int(cfg.SlurmctldPort.First)
	if port == 0 {
		port = 6817
	}
	var ctlds []string
	for _, h := range cfg.SlurmctldHost {
		host := h.Addr
		if host == "" {
			host = h.Host
		}
		ctlds = append(ctlds, net.JoinHostPort(host, strconv.Itoa(port)))
	}
	timeout := time.Duration(cfg.MessageTimeout) * time.Second
	return &Conn{
		Conf: cfg,
		Client: &client.Client{
			Controllers: ctlds,
			Auth:        a,
			// The controller signs its replies with the cluster's auth: a
			// codec refusing auth/slurm sections could not read them.
			Codec:          &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: cfg.AuthType == "auth/slurm"},
			MessageTimeout: timeout,
			// Failover as Slurm's commands do it: a dead controller host
			// costs TCPTimeout, a backup in standby is retried for up to
			// SlurmctldTimeout.
			ConnectTimeout:   time.Duration(cfg.TCPTimeout) * time.Second,
			SlurmctldTimeout: time.Duration(cfg.SlurmctldTimeout) * time.Second,
		},
		reg: msg.Registry(),
	}, nil
}

// ErrNoChange is SLURM_NO_CHANGE_IN_DATA: the cached copy is current.
var ErrNoChange = slurmerr.Error{Code: slurmerr.SLURM_NO_CHANGE_IN_DATA}

// call is RPC for the load functions, whose reply must be of type want: a
// zero return code instead is an unexpected message.
func (c *Conn) call(ctx context.Context, mt msgtype.Type, body any, want msgtype.Type) (any, error) {
	v, err := c.RPC(ctx, mt, body, want)
	if err == nil && v == nil {
		err = client.ErrUnexpected
	}
	return v, err
}

// LoadJobs is slurm_load_jobs.
func (c *Conn) LoadJobs(ctx context.Context, lastUpdate int64, show uint16) (*msg.JobInfoMsg, error) {
	v, err := c.call(ctx, msgtype.REQUEST_JOB_INFO,
		msg.JobInfoRequest{LastUpdate: lastUpdate, ShowFlags: show | ShowLocal},
		msgtype.RESPONSE_JOB_INFO)
	if err != nil {
		return nil, err
	}
	m := v.(msg.JobInfoMsg)
	c.logSelect(len(m.Jobs))
	return &m, nil
}

// LoadJob is slurm_load_job: one job (an array or het job gives all its
// records).
func (c *Conn) LoadJob(ctx context.Context, id uint32, show uint16) (*msg.JobInfoMsg, error) {
	v, err := c.call(ctx, msgtype.REQUEST_JOB_INFO_SINGLE,
		msg.JobIDShowRequest{JobID: id, ShowFlags: show | ShowLocal},
		msgtype.RESPONSE_JOB_INFO)
	if err != nil {
		return nil, err
	}
	m := v.(msg.JobInfoMsg)
	c.logSelect(len(m.Jobs))
	return &m, nil
}

// LoadJobUser is slurm_load_job_user.
func (c *Conn) LoadJobUser(ctx context.Context, uid uint32, show uint16) (*msg.JobInfoMsg, error) {
	v, err := c.call(ctx, msgtype.REQUEST_JOB_USER_INFO,
		msg.JobUserInfoRequest{UserID: uid, ShowFlags: show | ShowLocal},
		msgtype.RESPONSE_JOB_INFO)
	if err != nil {
		return nil, err
	}
	m := v.(msg.JobInfoMsg)
	c.logSelect(len(m.Jobs))
	return &m, nil
}

// LoadPartitions is slurm_load_partitions.
func (c *Conn) LoadPartitions(ctx context.Context, lastUpdate int64, show uint16) (*msg.PartitionInfoResponse, error) {
	v, err := c.call(ctx, msgtype.REQUEST_PARTITION_INFO,
		msg.InfoRequest{LastUpdate: lastUpdate, ShowFlags: show | ShowLocal},
		msgtype.RESPONSE_PARTITION_INFO)
	if err != nil {
		return nil, err
	}
	m := v.(msg.PartitionInfoResponse)
	return &m, nil
}

// LoadNodes is slurm_load_node.
func (c *Conn) LoadNodes(ctx context.Context, lastUpdate int64, show uint16) (*msg.NodeInfoResponse, error) {
	v, err := c.call(ctx, msgtype.REQUEST_NODE_INFO,
		msg.InfoRequest{LastUpdate: lastUpdate, ShowFlags: show | ShowLocal},
		msgtype.RESPONSE_NODE_INFO)
	if err != nil {
		return nil, err
	}
	m := v.(msg.NodeInfoResponse)
	c.logSelect(len(m.Nodes))
	return &m, nil
}

// LoadNodeSingle is slurm_load_node_single.
func (c *Conn) LoadNodeSingle(ctx context.Context, name string, show uint16) (*msg.NodeInfoResponse, error) {
	v, err := c.call(ctx, msgtype.REQUEST_NODE_INFO_SINGLE,
		msg.NodeInfoSingleRequest{NodeName: msg.Str(name), ShowFlags: show | ShowLocal},
		msgtype.RESPONSE_NODE_INFO)
	if err != nil {
		return nil, err
	}
	m := v.(msg.NodeInfoResponse)
	c.logSelect(len(m.Nodes))
	return &m, nil
}

// Strerror is slurm_strerror for an error of this package or the client.
func Strerror(err error) string {
	if code := slurmerr.Code(err); code != 0 {
		return slurmerr.Message(code)
	}
	var se slurmerr.Error
	if errors.As(err, &se) {
		return se.Error()
	}
	return err.Error()
}

// LoadReservations is slurm_load_reservations.
func (c *Conn) LoadReservations(ctx context.Context, lastUpdate int64) (*msg.ReservationInfoResponse, error) {
	v, err := c.call(ctx, msgtype.REQUEST_RESERVATION_INFO, msg.LastUpdateRequest{LastUpdate: lastUpdate},
		msgtype.RESPONSE_RESERVATION_INFO)
	if err != nil {
		return nil, err
	}
	m := v.(msg.ReservationInfoResponse)
	return &m, nil
}

// LogSelectPlugins writes the lines Slurm's select plugins log at verbose
// level when a command unpacks job or node records.
func (c *Conn) LogSelectPlugins(w io.Writer, prog string) {
	arg := 0
	for _, p := range c.Conf.SelectTypeParameters {
		switch strings.ToUpper(p) {
		case "CR_CPU":
			arg |= 0x01
		case "CR_SOCKET":
			arg |= 0x02
		case "CR_CORE":
			arg |= 0x04
		case "CR_MEMORY":
			arg |= 0x10
		case "CR_CPU_MEMORY":
			arg |= 0x11
		case "CR_SOCKET_MEMORY":
			arg |= 0x12
		case "CR_CORE_MEMORY":
			arg |= 0x14
		}
	}
	fmt.Fprintf(w, "%s: select/cons_tres: common_init: select/cons_tres loaded\n", prog)
	fmt.Fprintf(w, "%s: select/cray_aries: init: Cray/Aries node selection plugin loaded\n", prog)
	fmt.Fprintf(w, "%s: select/linear: init: Linear node selection plugin loaded with argument %d\n", prog, arg)
	fmt.Fprintf(w, "%s: select/cons_res: common_init: select/cons_res loaded\n", prog)
}

// ClustersUnreachable prints what a 22.05 command prints for -M or
// SLURM_CLUSTERS when it cannot get the cluster list from slurmdbd (which
// goslurm's commands never can yet).
func ClustersUnreachable(w io.Writer, prog, names string, fromEnv bool) {
	fmt.Fprintf(w, "%s: error: Problem talking to database\n", prog)
	if strings.EqualFold(names, "all") {
		fmt.Fprintf(w, "%s: error: No clusters can be reached now. Contact your admin to resolve the problem.\n", prog)
		return
	}
	where := "--cluster"
	if fromEnv {
		where = "SLURM_CLUSTERS"
	}
	fmt.Fprintf(w, "%s: error: '%s' can't be reached now, or it is an invalid entry for %s.  Use 'sacctmgr list clusters' to see available clusters.\n", prog, names, where)
}

// LoadSteps is slurm_get_job_steps.
func (c *Conn) LoadSteps(ctx context.Context, req msg.JobStepInfoRequest) (*msg.StepInfoMsg, error) {
	v, err := c.call(ctx, msgtype.REQUEST_JOB_STEP_INFO, req, msgtype.RESPONSE_JOB_STEP_INFO)
	if err != nil {
		return nil, err
	}
	m := v.(msg.StepInfoMsg)
	c.logSelect(len(m.Steps))
	return &m, nil
}
