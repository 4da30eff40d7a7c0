// Command slurmd is goslurm's compute node daemon, a drop-in for Slurm
// 22.05's slurmd: same options, same slurm.conf, same wire protocol, so a
// real slurmctld drives it like its own (see slurmd/daemon).
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/alecthomas/kong"

	"github.com/goslurm/goslurm/slurmd/daemon"
	"github.com/goslurm/goslurm/slurmd/hwinfo"
)

// CLI is slurmd's command line (Slurm 22.05's options).
type CLI struct {
	Boot        bool   `short:"b" help:"Report node reboot now."`
	Clean       bool   `short:"c" help:"Start clean: discard the saved credential state."`
	PrintConfig bool   `short:"C" help:"Print node configuration information and exit."`
	Conf        string `name:"conf" placeholder:"node-parameters" help:"Dynamic node configuration, works with -Z."`
	ConfServer  string `name:"conf-server" placeholder:"host[:port]" help:"Get configs from slurmctld at host[:port]."`
	Stepd       string `short:"d" placeholder:"stepd" help:"Pathname to the slurmstepd program."`
	Foreground  bool   `short:"D" help:"Run daemon in foreground."`
	ConfFile    string `short:"f" placeholder:"config" help:"Read configuration from the specified file."`
	Future      bool   `short:"F" help:"Start as Dynamic Future node."`
	PrintGres   bool   `short:"G" help:"Print node's GRES configuration and exit."`
	Help        bool   `short:"h" help:"Print this help message."`
	LogFile     string `short:"L" placeholder:"logfile" help:"Log messages to the file logfile."`
	Mlock       bool   `short:"M" help:"Use mlock() to lock slurmd pages into memory."`
	Nice        *int   `short:"n" placeholder:"value" help:"Run the daemon at the specified nice value."`
	NodeName    string `short:"N" placeholder:"node" help:"Run the daemon for specified nodename."`
	SetWD       bool   `short:"s" help:"Change working directory to SlurmdLogFile/SlurmdSpoolDir."`
	Verbose     int    `short:"v" type:"counter" help:"Verbose mode. Multiple -v's increase verbosity."`
	Version     bool   `short:"V" help:"Print version information and exit."`
	Dynamic     bool   `short:"Z" help:"Start as Dynamic Normal node."`
}

// usage lists the options as `slurmd -h` does.
const usage = `Usage: slurmd [OPTIONS]
   -b                         Report node reboot now.
   -c                         Start clean (discard saved credential state).
   -C                         Print node configuration information and exit.
   --conf                     Dynamic node configuration, works with -Z.
   --conf-server host[:port]  Get configs from slurmctld at ` + "`host[:port]`" + `.
   -d stepd                   Pathname to the slurmstepd program.
   -D                         Run daemon in foreground.
   -f config                  Read configuration from the specified file.
   -F[feature]                Start as Dynamic Future node w/optional Feature.
   -G                         Print node's GRES configuration and exit.
   -h                         Print this help message.
   -L logfile                 Log messages to the file ` + "`logfile'" + `.
   -M                         Use mlock() to lock slurmd pages into memory.
   -n value                   Run the daemon at the specified nice value.
   -N node                    Run the daemon for specified nodename.
   -s                         Change working directory to SlurmdLogFile/SlurmdSpoolDir.
   -v                         Verbose mode. Multiple -v's increase verbosity.
   -V                         Print version information and exit.
   -Z                         Start as Dynamic Normal node.
`

func main() {
	os.Exit(Main(os.Args, os.Stdout, os.Stderr))
}

type exitCode int

// Main parses args and runs slurmd; it returns the exit status.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	var cli CLI
	parser, err := kong.New(&cli,
		kong.Name("slurmd"),
		kong.Writers(stdout, stderr),
		kong.NoDefaultHelp(),
		kong.Exit(func(c int) { panic(exitCode(c)) }),
	)
	if err != nil {
		fmt.Fprintf(stderr, "slurmd: %v\n", err)
		return 1
	}
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(exitCode)
			if !ok {
				panic(r)
			}
			code = int(c)
		}
	}()
	if _, err := parser.Parse(args[1:]); err != nil {
		fmt.Fprintf(stderr, "slurmd: %v\n", err)
		fmt.Fprint(stderr, usage)
		return 1
	}
	switch {
	case cli.Help:
		fmt.Fprint(stdout, usage)
		return 0
	case cli.Version:
		fmt.Fprintf(stdout, "slurm %s\n", daemon.SlurmVersion)
		return 0
	case cli.PrintConfig:
		return printConfig(stdout, stderr)
	}
	for _, u := range []struct {
		set  bool
		what string
	}{
		{cli.Dynamic, "-Z (dynamic nodes)"},
		{cli.Future, "-F (dynamic future nodes)"},
		{cli.Conf != "", "--conf (dynamic nodes)"},
		{cli.ConfServer != "", "--conf-server (configless mode)"},
		{cli.PrintGres, "-G"},
	} {
		if u.set {
			fmt.Fprintf(stderr, "slurmd: error: %s is not supported by goslurm's slurmd\n", u.what)
			return 1
		}
	}
	return run(&cli, stderr)
}

// confPath is -f, else $SLURM_CONF, else the default.
func confPath(cli *CLI) string {
	if cli.ConfFile != "" {
		return cli.ConfFile
	}
	if v := os.Getenv("SLURM_CONF"); v != "" {
		return v
	}
	return "/etc/slurm/slurm.conf"
}

// printConfig is -C: the detected node line, as `slurmd -C` prints it.
func printConfig(stdout, stderr io.Writer) int {
	n, err := hwinfo.Detect(hwinfo.Options{SkipTmpDisk: true})
	if err != nil {
		fmt.Fprintf(stderr, "slurmd: error: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, hwinfo.FormatNodeLine(n))
	return 0
}

// hardware is the detection registration uses (slurmd/hwinfo).
func hardware(tmpFS string) (daemon.Hardware, error) {
	n, err := hwinfo.Detect(hwinfo.Options{TmpFS: tmpFS})
	if err != nil {
		return daemon.Hardware{}, err
	}
	l := n.Topology.Layout
	return daemon.Hardware{
		CPUs: clamp16(l.CPUs), Boards: clamp16(l.Boards), Sockets: clamp16(l.Sockets),
		Cores: clamp16(l.CoresPerSocket), Threads: clamp16(l.ThreadsPerCore),
		RealMemory: n.RealMemory, TmpDisk: n.TmpDisk,
	}, nil
}

func clamp16(v int) uint16 {
	return uint16(min(max(v, 0), 0xffff))
}
