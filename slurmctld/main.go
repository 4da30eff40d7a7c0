// Command slurmctld is goslurm's controller, a drop-in for Slurm 22.05's
// slurmctld: same options, same slurm.conf, same wire protocol, so real
// slurmd nodes and real user commands work against it (see slurmctld/ctld).
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/alecthomas/kong"

	"github.com/goslurm/goslurm/slurmctld/ctld"
)

// CLI is slurmctld's command line (Slurm 22.05's options).
type CLI struct {
	Clear      bool   `short:"c" help:"Do not recover state from last checkpoint."`
	Foreground bool   `short:"D" help:"Run daemon in foreground, with logging copied to stdout."`
	ConfFile   string `short:"f" placeholder:"file" help:"Use specified file for slurmctld configuration."`
	Help       bool   `short:"h" help:"Print this help message."`
	Ignore     bool   `short:"i" help:"Ignore errors found while reading in state files on startup."`
	LogFile    string `short:"L" placeholder:"logfile" help:"Log messages to the specified file."`
	Nice       *int   `short:"n" placeholder:"value" help:"Run the daemon at the specified nice value."`
	Recover    bool   `short:"R" help:"Recover full state from last checkpoint."`
	SetWD      bool   `short:"s" help:"Change working directory to SlurmctldLogFile/StateSaveLocation."`
	Verbose    int    `short:"v" type:"counter" help:"Verbose mode. Multiple -v's increase verbosity."`
	Version    bool   `short:"V" help:"Print version information and exit."`
}

// usage is what `slurmctld -h` prints after "Usage: <argv[0]> [OPTIONS]"
// (on standard error, as Slurm does).
const usage = `
  -c      	Do not recover state from last checkpoint.
  -D      	Run daemon in foreground, with logging copied to stdout.
  -f file 	Use specified file for slurmctld configuration.
  -h      	Print this help message.
  -i      	Ignore errors found while reading in state files on startup.
  -L logfile 	Log messages to the specified file.
  -n value 	Run the daemon at the specified nice value.
  -R      	Recover full state from last checkpoint.
  -s      	Change working directory to SlurmctldLogFile/StateSaveLocation.
  -v      	Verbose mode. Multiple -v's increase verbosity.
  -V      	Print version information and exit.
`

func main() {
	os.Exit(Main(os.Args, os.Stdout, os.Stderr))
}

type exitCode int

// Main parses args and runs slurmctld; it returns the exit status.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	var cli CLI
	parser, err := kong.New(&cli,
		kong.Name("slurmctld"),
		kong.Writers(stdout, stderr),
		kong.NoDefaultHelp(),
		kong.Exit(func(c int) { panic(exitCode(c)) }),
	)
	if err != nil {
		fmt.Fprintf(stderr, "slurmctld: %v\n", err)
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
	printUsage := func() { fmt.Fprintf(stderr, "Usage: %s [OPTIONS]%s", args[0], usage) }
	if _, err := parser.Parse(args[1:]); err != nil {
		// getopt's own message is off in slurmctld: just the usage.
		printUsage()
		return 1
	}
	switch {
	case cli.Help:
		printUsage()
		return 0
	case cli.Version:
		fmt.Fprintf(stdout, "slurm %s\n", ctld.Version)
		return 0
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
