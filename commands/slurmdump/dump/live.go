package dump

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pcap"
	"github.com/goslurm/goslurm/protocol/pcap/live"
)

// LiveOptions configure a live capture.
type LiveOptions struct {
	// Interface to capture on ("lo", "eth0", "any").
	Interface string
	// Ports the kernel filter lets through. Empty: DefaultPorts.
	Ports []pcap.PortRange
	// FollowSrun adds the ports srun listens on (its I/O and response
	// ports, read from each REQUEST_LAUNCH_TASKS) to the filter, so its
	// I/O connections are captured too. Best effort: a connection opened
	// before the launch request was decoded is missed.
	FollowSrun bool
	// Count stops after this many messages (0: until ctx is done).
	Count int
	// Write, when set, also receives every captured packet as a pcap file.
	Write io.Writer
	// Limits bound what is held for unfinished connections.
	Limits pcap.StreamLimits
	// Notices receives the "listening on" line, dropped-stream and
	// end-of-capture notices (nil: discarded).
	Notices io.Writer
	// Ready, when set, is called once packets are being captured.
	Ready func()
}

// snapLen is what one packet may carry: a 64 KiB loopback segment with its
// headers.
const snapLen = 262144

// maxFollowed bounds the srun ports added to the filter; the oldest go
// first.
const maxFollowed = 64

// maxDrain bounds the packets read after the capture was told to stop.
const maxDrain = 10000

// DefaultPorts returns the Slurm ports of the slurm.conf at path
// (SlurmctldPort, SlurmdPort and the nodes' Port, SrunPortRange, the
// slurmdbd port), or
// 6817-6819 when it cannot be read.
func DefaultPorts(path string) ([]pcap.PortRange, string) {
	c, err := conf.Load(conf.OSFS{}, path)
	if err != nil {
		return []pcap.PortRange{{First: 6817, Last: 6819}}, "6817-6819 (slurm.conf not readable)"
	}
	var rs []pcap.PortRange
	if r := c.SlurmctldPort; r.Count > 0 {
		rs = append(rs, pcap.PortRange{First: r.First, Last: r.First + r.Count - 1})
	} else {
		rs = append(rs, pcap.PortRange{First: 6817, Last: 6817})
	}
	if c.SlurmdPort > 0 && c.SlurmdPort < 1<<16 {
		rs = append(rs, pcap.PortRange{First: uint16(c.SlurmdPort), Last: uint16(c.SlurmdPort)})
	}
	dbd := uint16(6819)
	if c.AccountingStoragePort != 0 {
		dbd = c.AccountingStoragePort
	}
	rs = append(rs, pcap.PortRange{First: dbd, Last: dbd})
	for _, n := range c.Nodes {
		if n.Port != 0 { // a slurmd of its own port (several on one host)
			rs = append(rs, pcap.PortRange{First: n.Port, Last: n.Port})
		}
	}
	if r := c.SrunPortRange; r.Count > 0 {
		rs = append(rs, pcap.PortRange{First: r.First, Last: r.First + r.Count - 1})
	}
	rs = pcap.MergePorts(rs)
	return rs, portsString(rs) + " (from " + path + ")"
}

func portsString(rs []pcap.PortRange) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return strings.Join(s, ",")
}

// linkName is tcpdump's name of a link type.
func linkName(t uint32) string {
	if t == pcap.LinkEthernet {
		return "EN10MB (Ethernet)"
	}
	return "LINUX_SLL (Linux cooked v1)"
}

// Live captures on an interface and writes each Slurm message to w as it
// completes, until ctx is done, Count messages were written, or an error.
func Live(ctx context.Context, w io.Writer, opts Options, lo LiveOptions) (Stats, error) {
	notices := lo.Notices
	if notices == nil {
		notices = io.Discard
	}
	ports := pcap.MergePorts(lo.Ports)
	portsDesc := portsString(ports)
	if len(ports) == 0 {
		path := os.Getenv("SLURM_CONF")
		if path == "" {
			path = "/etc/slurm/slurm.conf"
		}
		ports, portsDesc = DefaultPorts(path)
	}
	h, err := live.Open(lo.Interface, snapLen)
	if err != nil {
		return Stats{}, err
	}
	defer h.Close()
	var followed []pcap.PortRange
	setFilter := func() error {
		prog, err := pcap.PortFilter(h.LinkHeaderLen(), append(slices.Clone(ports), followed...), snapLen)
		if err != nil {
			return err
		}
		return h.SetFilter(prog)
	}
	if err := setFilter(); err != nil {
		return Stats{}, err
	}
	var pw *pcap.Writer
	if lo.Write != nil {
		if pw, err = pcap.NewWriter(lo.Write, h.LinkType(), snapLen); err != nil {
			return Stats{}, fmt.Errorf("writing capture: %w", err)
		}
	}
	if err := h.Start(); err != nil {
		return Stats{}, err
	}
	follow := ""
	if lo.FollowSrun {
		follow = " and srun's ports once launched"
	}
	fmt.Fprintf(notices, "slurmdump: listening on %s, link-type %s, tcp ports %s%s\n", lo.Interface, linkName(h.LinkType()), portsDesc, follow)
	if lo.Ready != nil {
		lo.Ready()
	}

	d := newDumper(ctx, w, opts)
	st := pcap.NewStreamer(d.cd, lo.Limits)
	done := func() bool { return lo.Count > 0 && d.stats.Messages >= lo.Count }
	emit := func(us []pcap.Unit) error {
		for _, u := range us {
			if done() {
				return nil
			}
			if d.ports != nil && !d.ports[u.Conn.Client.Port()] && !d.ports[u.Conn.Server.Port()] {
				d.stats.Filtered++
				continue
			}
			d.emit(u)
			if d.werr != nil {
				return d.werr
			}
			if lo.FollowSrun && u.Kind == pcap.UnitRPC && u.Frame.Header.MsgType == msgtype.REQUEST_LAUNCH_TASKS {
				if add := srunPorts(d, &u); len(add) > 0 {
					followed = append(followed, add...)
					if len(followed) > maxFollowed {
						followed = followed[len(followed)-maxFollowed:]
					}
					if err := setFilter(); err != nil {
						return err
					}
				}
			}
		}
		return d.flush()
	}

	lastExpire := time.Now()
	var runErr error
	drain := 0
	for !done() {
		wait := 200 * time.Millisecond
		if ctx.Err() != nil {
			// Stopping: take what is queued already (a busy interface
			// could refill the queue forever: bounded), then end.
			wait = 0
			if drain++; drain > maxDrain {
				break
			}
		}
		p, ok, err := h.Read(wait)
		if !ok && err == nil && ctx.Err() != nil {
			break
		}
		if err != nil {
			runErr = err
			break
		}
		if ok {
			if pw != nil {
				if err := pw.Write(p); err != nil {
					runErr = fmt.Errorf("writing capture: %w", err)
					break
				}
			}
			if s, ok := pcap.DecodeTCP(p); ok {
				if runErr = emit(st.Add(s)); runErr != nil {
					break
				}
			}
		}
		if now := time.Now(); now.Sub(lastExpire) >= time.Second {
			lastExpire = now
			if runErr = emit(st.Expire(now)); runErr != nil {
				break
			}
		}
	}
	if runErr == nil && !done() {
		// Interrupted: what is left of open connections.
		runErr = emit(st.Close())
	}
	if err := d.flush(); runErr == nil {
		runErr = err
	}
	got, dropped := h.Stats()
	fmt.Fprintf(notices, "slurmdump: %d messages, %d packets captured, %d packets dropped by kernel\n", d.stats.Messages, got, dropped)
	return d.stats, runErr
}

// srunPorts returns the ports of the srun behind a launch request.
func srunPorts(d *dumper, u *pcap.Unit) []pcap.PortRange {
	res := d.body(&u.Frame)
	if !res.decoded {
		return nil
	}
	var lt *msg.LaunchTasksRequest
	switch v := res.value.(type) {
	case *msg.LaunchTasksRequest:
		lt = v
	case msg.LaunchTasksRequest:
		lt = &v
	default:
		return nil
	}
	var out []pcap.PortRange
	for _, p := range append(slices.Clone(lt.IOPorts), lt.RespPorts...) {
		if p != 0 {
			out = append(out, pcap.PortRange{First: p, Last: p})
		}
	}
	return out
}
