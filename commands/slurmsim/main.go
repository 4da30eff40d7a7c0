// Command slurmsim replays Standard Workload Format traces through goslurm's
// scheduling core (slurmctld/sched) with a simulated clock and prints FIFO
// and backfill side by side: utilization, waits, bounded slowdown and
// fragmentation. See doc/scheduling-simulation.md for the semantics.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/goslurm/goslurm/slurmctld/sched"
	"github.com/goslurm/goslurm/slurmctld/sched/sim"
)

const description = `Replay SWF workload traces (plain or gzip) through goslurm's scheduler.

The cluster is shaped from the trace header (MaxNodes nodes of
MaxProcs/MaxNodes CPUs, single-CPU nodes when only one is given), with one
partition. Each job asks for its requested processors as one-CPU tasks, its
requested time (rounded up to minutes) as time limit, and runs for its
recorded run time, cut at the limit. Records that cannot be simulated are
counted and skipped. One table per trace is printed (Markdown).`

// CLI is the command line.
type CLI struct {
	Traces       []string `arg:"" name:"TRACE" help:"SWF trace files (.swf or .swf.gz)."`
	Jobs         int      `name:"jobs" short:"n" placeholder:"N" help:"Simulate only the first N usable jobs of each trace (0 = all)."`
	Policy       string   `name:"policy" enum:"fifo,backfill,both" default:"both" help:"Scheduler to simulate: fifo (sched/builtin), backfill (sched/backfill) or both."`
	BFInterval   int64    `name:"bf-interval" default:"30" placeholder:"SEC" help:"bf_interval: seconds between backfill passes."`
	BFWindow     int64    `name:"bf-window" default:"1440" placeholder:"MIN" help:"bf_window: minutes of future the backfill timeline covers."`
	BFResolution int64    `name:"bf-resolution" default:"60" placeholder:"SEC" help:"bf_resolution: seconds of the backfill timeline's resolution."`
	BFMaxJobTest int      `name:"bf-max-job-test" default:"0" placeholder:"N" help:"bf_max_job_test: jobs a backfill pass considers (0 = the whole queue)."`
	Nodes        int      `name:"nodes" placeholder:"N" help:"Override the number of nodes from the header."`
	CPUsPerNode  int      `name:"cpus-per-node" placeholder:"N" help:"Override the CPUs per node from the header."`
	Progress     bool     `name:"progress" help:"Report the simulated time reached to standard error, every simulated week."`
}

func main() {
	os.Exit(Main(os.Args, os.Stdout, os.Stderr))
}

type exitCode int

// Main runs slurmsim and returns its exit status: 0, 1 when a trace cannot be
// read or simulated, 2 for usage errors.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	var cli CLI
	exited := false
	parser, err := kong.New(&cli,
		kong.Name("slurmsim"),
		kong.Description(description),
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { exited = true; panic(exitCode(c)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		fmt.Fprintf(stderr, "slurmsim: %v\n", err)
		return 2
	}
	defer func() {
		if exited {
			if c, ok := recover().(exitCode); ok {
				code = int(c)
				if code != 0 {
					code = 2
				}
			}
		}
	}()
	if len(args) > 0 {
		args = args[1:]
	}
	if _, err := parser.Parse(args); err != nil {
		fmt.Fprintf(stderr, "slurmsim: %v\n", err)
		fmt.Fprintf(stderr, "Try 'slurmsim --help' for more information.\n")
		return 2
	}
	if cli.BFInterval <= 0 || cli.BFResolution <= 0 || cli.BFWindow <= 0 {
		fmt.Fprintf(stderr, "slurmsim: --bf-interval, --bf-window and --bf-resolution must be positive\n")
		return 2
	}
	var policies []sim.Policy
	switch cli.Policy {
	case "fifo":
		policies = []sim.Policy{sim.FIFO}
	case "backfill":
		policies = []sim.Policy{sim.Backfill}
	default:
		policies = []sim.Policy{sim.FIFO, sim.Backfill}
	}
	bf := sched.DefaultBackfillConfig()
	bf.Interval = cli.BFInterval
	bf.Window = cli.BFWindow * 60
	bf.Resolution = cli.BFResolution
	bf.MaxJobTest = cli.BFMaxJobTest
	fmt.Fprintf(stdout, "<!-- slurmsim %s -->\n", strings.Join(args, " "))
	for _, path := range cli.Traces {
		if err := runTrace(stdout, stderr, path, &cli, policies, bf); err != nil {
			fmt.Fprintf(stderr, "slurmsim: %s: %v\n", path, err)
			return 1
		}
	}
	return 0
}

type outcome struct {
	res  *sim.Result
	wall time.Duration
}

func runTrace(w, stderr io.Writer, path string, cli *CLI, policies []sim.Policy, bf sched.BackfillConfig) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	readStart := time.Now()
	tr, err := sim.ReadTrace(f, sim.ReadOptions{MaxJobs: cli.Jobs, Nodes: cli.Nodes, CPUsPerNode: cli.CPUsPerNode})
	if err != nil {
		return err
	}
	readWall := time.Since(readStart)
	var outs []outcome
	for _, p := range policies {
		start := time.Now()
		opt := sim.Options{Policy: p, BF: &bf, BaseTime: max(tr.Header.UnixStartTime, 0)}
		if cli.Progress {
			name := filepath.Base(path)
			opt.ProgressEvery = 7 * 86400
			opt.Progress = func(now int64, finished int) {
				fmt.Fprintf(stderr, "slurmsim: %s %v: day %d, %d/%d jobs finished, %s\n",
					name, p, now/86400, finished, len(tr.Jobs), time.Since(start).Round(time.Second))
			}
		}
		res, err := sim.Run(tr, opt)
		if err != nil {
			return fmt.Errorf("%v: %w", p, err)
		}
		outs = append(outs, outcome{res: res, wall: time.Since(start)})
	}
	printTable(w, filepath.Base(path), tr, outs, readWall)
	return nil
}
