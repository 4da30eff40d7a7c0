// Command slurmctld is goslurm's controller, a drop-in for Slurm 22.05's
// slurmctld: same options, same slurm.conf, same wire protocol, so real
// slurmd nodes and real user commands work against it (see slurmctld/ctld).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/slurmctld/ctld"
)

// CLI is slurmctld's command line (Slurm 22.05's options).
type CLI struct {
	Clear      bool   // -c: do not recover state
	Foreground bool   // -D (-d: daemonize, the default)
	ConfFile   string // -f file
	Help       bool   // -h
	Ignore     bool   // -i: ignore errors in state files
	LogFile    string // -L logfile
	Nice       *int   // -n value
	Recover    bool   // -R: recover full state (-r: the default recovery)
	SetWD      bool   // -s
	Verbose    int    // -v, repeated
	Version    bool   // -V
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
	// Linking runtime/pprof (for the benchmark hooks) turns heap sampling
	// on: a stack walk every 512 KiB allocated and a 1.4 MB bucket table,
	// for a profile nobody reads unless the memory dumps are on.
	runtime.MemProfileRate = ctld.MemProfileRate()
	ctld.SetGCPercent()
	os.Exit(Main(os.Args, os.Stdout, os.Stderr))
}

// Main parses args and runs slurmctld; it returns the exit status.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	var cli CLI
	printUsage := func() { fmt.Fprintf(stderr, "Usage: %s [OPTIONS]%s", args[0], usage) }
	if err := parseArgs(&cli, args[1:], stderr); err != nil {
		// getopt's own message is off in slurmctld (opterr = 0): just
		// the usage.
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

// errOption is an unknown option or one missing its argument.
var errOption = errors.New("bad option")

// parseArgs is slurmctld's getopt(argc, argv, "cdDf:hiL:n:rRsvV"): short
// options, clustered or not, an option's argument attached or next;
// operands are skipped (GNU getopt moves them to the end, and slurmctld
// ignores them) and "--" ends the options. -h and -V stop the parse, as
// slurmctld acts on them at once. A hand-written parser rather than a
// library: the options are few, and a reflection-driven parser keeps the
// linker from dropping unused methods, which costs the daemon megabytes
// of mapped binary.
func parseArgs(cli *CLI, args []string, stderr io.Writer) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		for k := 1; k < len(a); k++ {
			opt := a[k]
			switch opt {
			case 'c':
				cli.Clear, cli.Recover = true, false
			case 'd':
				cli.Foreground = false
			case 'D':
				cli.Foreground = true
			case 'h':
				cli.Help = true
				return nil
			case 'i':
				cli.Ignore = true
			case 'r':
				cli.Clear, cli.Recover = false, false
			case 'R':
				cli.Clear, cli.Recover = false, true
			case 's':
				cli.SetWD = true
			case 'v':
				cli.Verbose++
			case 'V':
				cli.Version = true
				return nil
			case 'f', 'L', 'n':
				val := a[k+1:]
				if val == "" {
					if i+1 >= len(args) {
						return fmt.Errorf("%w: -%c needs an argument", errOption, opt)
					}
					i++
					val = args[i]
				}
				setArg(cli, opt, val, stderr)
				k = len(a)
			default:
				return fmt.Errorf("%w: -%c", errOption, opt)
			}
		}
	}
	return nil
}

func setArg(cli *CLI, opt byte, val string, stderr io.Writer) {
	switch opt {
	case 'f':
		cli.ConfFile = val
	case 'L':
		cli.LogFile = val
	case 'n':
		// strtol: a number with nothing after it; else the option is
		// ignored, as slurmctld does. 0 leaves the nice value alone.
		cli.Nice = nil
		v := strings.TrimLeft(val, " \t\n")
		if v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintf(stderr, "slurmctld: error: Invalid option for -n option (nice value), ignored\n")
			return
		}
		if n != 0 {
			cli.Nice = &n
		}
	}
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
