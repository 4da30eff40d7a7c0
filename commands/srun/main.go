// Command srun is goslurm's drop-in for Slurm 22.05's srun: it gets an
// allocation (or uses the one it runs in), creates a job step, launches
// its tasks on the step's nodes, relays their stdio and signals, and exits
// with the status real srun reports.
package main

import (
	"os"
	"time"
)

func main() {
	cwd, _ := os.Getwd()
	os.Exit(run(os.Args, &procIO{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		environ: os.Environ(), cwd: cwd, now: time.Now}))
}
