package dump

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pcap"
)

// Exit codes.
const (
	ExitOK    = 0 // the capture was read (per-message errors are in the output)
	ExitRead  = 1 // the capture (or munged) could not be read or output failed
	ExitUsage = 2 // bad command line
)

const description = `Print the Slurm messages in a pcap capture (tcpdump -w), in capture order.

TCP streams are reassembled and split into Slurm RPC frames and srun I/O
streams. Each message prints its time, sender -> receiver, protocol version,
message type, body length and auth plugin, then its decoded body (where
goslurm has a codec for the type) or a hex dump. Anything that does not
decode prints a line with ERROR in it, and the dump goes on.

FILE is a classic pcap file (not pcapng) or "-" for standard input, e.g.
  tcpdump -i any -w cap.pcap 'tcp port 6817 or tcp port 6818'
  slurmdump cap.pcap

With -i INTERFACE instead of FILE, slurmdump captures live (Linux, needs
CAP_NET_RAW) and prints each message as soon as it is complete, until
interrupted or -c messages. The kernel keeps only TCP on the Slurm ports:
--port if given, otherwise SlurmctldPort, SlurmdPort, the slurmdbd port and
SrunPortRange of slurm.conf ($SLURM_CONF or /etc/slurm/slurm.conf), or
6817-6819 when it cannot be read; without --port the ports srun listens on
are added as each REQUEST_LAUNCH_TASKS goes by, so its I/O streams show too.
A connection idle for --idle, or holding more than --max-buffer bytes, or
beyond --max-conns open connections is dropped with an ERROR line saying so.
-w FILE also writes the captured packets as a pcap file.

With --munge-socket, every MUNGE credential is opened by that munged (it
must hold the cluster's key) and the line shows the uid and gid it carries,
its state (ok, or expired/rewound/replayed: old captures show "expired" but
the uid and gid are still shown) and whether its payload hash matches the
body (hash=ok or hash=mismatch).

In text output, structs with many fields leave out their zero-valued fields;
--json has all of them.

Exit status: 0 when the capture was read (or a live capture ended on SIGINT,
SIGTERM or -c), 1 when it cannot be read (not a pcap file, truncated,
unreadable; what was read is still printed) or a live capture cannot run
(no such interface, not permitted), 2 for usage errors.`

// CLI is the command line.
type CLI struct {
	File        string        `arg:"" optional:"" name:"FILE" help:"pcap file to read, or - for standard input."`
	Interface   string        `short:"i" name:"interface" placeholder:"IFACE" help:"Capture live on this interface (lo, eth0, any) instead of reading FILE."`
	Count       int           `short:"c" name:"count" placeholder:"N" help:"Live: stop after N messages."`
	WriteFile   string        `short:"w" name:"write" placeholder:"FILE" help:"Live: also write the captured packets to this pcap file."`
	Idle        time.Duration `name:"idle" default:"5m" help:"Live: drop a connection idle this long."`
	MaxConns    int           `name:"max-conns" default:"4096" help:"Live: most connections followed at once."`
	MaxBuffer   int           `name:"max-buffer" default:"67108864" placeholder:"BYTES" help:"Live: most bytes held for one direction of a connection."`
	Type        []string      `short:"t" name:"type" placeholder:"NAME|NUM" help:"Show only messages of this type: a Slurm name (REQUEST_PING, case-insensitive), a number (1008), or IO for srun I/O streams. Repeatable."`
	Port        []uint16      `name:"port" placeholder:"N" help:"Show only connections with an end on TCP port N (live: capture only these). Repeatable."`
	JSON        bool          `name:"json" help:"Write one JSON object per message (JSON Lines)."`
	Hex         bool          `short:"x" name:"hex" help:"Hex-dump bodies even when a codec can decode them."`
	Brief       bool          `short:"q" name:"brief" help:"Print only the summary line of each message."`
	MungeSocket string        `name:"munge-socket" placeholder:"PATH" help:"Open credentials with the munged listening on PATH (it needs the cluster's munge key)."`
}

// IO is where Main reads and writes.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// OSIO returns the process's standard streams.
func OSIO() IO { return IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr} }

type exitCode int

// Main runs slurmdump with args (args[0] is the program name) and returns
// the exit status.
func Main(args []string, sio IO) (code int) {
	var cli CLI
	exited := false
	parser, err := kong.New(&cli,
		kong.Name("slurmdump"),
		kong.Description(description),
		kong.Writers(sio.Stdout, sio.Stderr),
		kong.Exit(func(c int) { exited = true; panic(exitCode(c)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "slurmdump: %v\n", err)
		return ExitUsage
	}
	defer func() {
		if exited {
			if c, ok := recover().(exitCode); ok {
				code = int(c)
				if code != 0 {
					code = ExitUsage
				}
			}
		}
	}()
	if len(args) > 0 {
		args = args[1:]
	}
	if _, err := parser.Parse(args); err != nil {
		fmt.Fprintf(sio.Stderr, "slurmdump: %v\n", err)
		fmt.Fprintf(sio.Stderr, "Try 'slurmdump --help' for more information.\n")
		return ExitUsage
	}
	opts, err := cli.options()
	if err != nil {
		fmt.Fprintf(sio.Stderr, "slurmdump: %v\n", err)
		return ExitUsage
	}
	if cli.MungeSocket != "" {
		st, err := os.Stat(cli.MungeSocket)
		if err == nil && st.Mode()&os.ModeSocket == 0 {
			err = errors.New("not a socket")
		}
		if err != nil {
			fmt.Fprintf(sio.Stderr, "slurmdump: munge socket %s: %v\n", cli.MungeSocket, err)
			return ExitRead
		}
		opts.Munge = &munge.Client{Socket: cli.MungeSocket, SocketRetries: -1, Attempts: 2}
	}

	if cli.Interface != "" {
		return cli.live(opts, sio)
	}
	var in io.Reader
	name := cli.File
	if name == "-" {
		in, name = sio.Stdin, "standard input"
	} else {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(sio.Stderr, "slurmdump: %v\n", err)
			return ExitRead
		}
		defer f.Close()
		in = f
	}
	_, err = Dump(context.Background(), in, sio.Stdout, opts)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "slurmdump: %s: %v\n", name, err)
		return ExitRead
	}
	return ExitOK
}

// options turns the flags into Options.
func (c *CLI) options() (Options, error) {
	switch {
	case c.File == "" && c.Interface == "":
		return Options{}, errors.New("expected FILE or -i INTERFACE")
	case c.File != "" && c.Interface != "":
		return Options{}, errors.New("give FILE or -i INTERFACE, not both")
	case c.Interface == "" && (c.Count != 0 || c.WriteFile != ""):
		return Options{}, errors.New("-c and -w go with -i INTERFACE")
	case c.Count < 0 || c.MaxConns < 1 || c.MaxBuffer < 1 || c.Idle <= 0:
		return Options{}, errors.New("-c, --idle, --max-conns and --max-buffer must be positive")
	}
	o := Options{JSON: c.JSON, Hex: c.Hex, Brief: c.Brief, Ports: c.Port}
	for _, arg := range c.Type {
		for _, s := range strings.Split(arg, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			if strings.EqualFold(s, "IO") {
				o.IO = true
				continue
			}
			t, err := ParseType(s)
			if err != nil {
				return Options{}, err
			}
			o.Types = append(o.Types, t)
		}
	}
	for _, p := range c.Port {
		if p == 0 {
			return Options{}, errors.New("--port: 0 is not a port")
		}
	}
	return o, nil
}

// ParseType reads a message type given as Slurm's name (any case) or as a
// number.
func ParseType(s string) (msgtype.Type, error) {
	if n, err := strconv.ParseUint(s, 0, 16); err == nil {
		return msgtype.Type(n), nil
	}
	if t, ok := msgtype.Lookup(strings.ToUpper(s)); ok {
		return t, nil
	}
	return 0, fmt.Errorf("--type: unknown message type %q (give a Slurm name such as REQUEST_PING, or a number)", s)
}

// live runs a live capture until SIGINT/SIGTERM or -c messages.
func (c *CLI) live(opts Options, sio IO) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lo := LiveOptions{
		Interface:  c.Interface,
		FollowSrun: len(c.Port) == 0,
		Count:      c.Count,
		Limits:     pcap.StreamLimits{Idle: c.Idle, MaxConns: c.MaxConns, MaxBuffer: c.MaxBuffer},
		Notices:    sio.Stderr,
	}
	for _, p := range c.Port {
		lo.Ports = append(lo.Ports, pcap.PortRange{First: p, Last: p})
	}
	var wf *os.File
	if c.WriteFile != "" {
		f, err := os.Create(c.WriteFile)
		if err != nil {
			fmt.Fprintf(sio.Stderr, "slurmdump: error: %v\n", err)
			return ExitRead
		}
		wf = f
		bw := bufio.NewWriter(f)
		lo.Write = bw
	}
	_, err := Live(ctx, sio.Stdout, opts, lo)
	if wf != nil {
		if ferr := lo.Write.(*bufio.Writer).Flush(); ferr != nil && err == nil {
			err = fmt.Errorf("writing %s: %w", c.WriteFile, ferr)
		}
		if cerr := wf.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("writing %s: %w", c.WriteFile, cerr)
		}
	}
	if err != nil {
		fmt.Fprintf(sio.Stderr, "slurmdump: error: %v\n", err)
		return ExitRead
	}
	return ExitOK
}
