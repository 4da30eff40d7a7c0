// Command slurmstepd supervises one job step for goslurm's slurmd (the role
// of Slurm's slurmstepd). slurmd starts it and sends the launch request on
// its standard input; it is not meant to be run by hand. See package
// slurmd/stepd.
package main

import (
	"os"

	"github.com/goslurm/goslurm/slurmd/stepd"
)

func main() {
	os.Exit(stepd.Main(os.Args[1:]))
}
