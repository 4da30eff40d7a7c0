// Command scontrol is goslurm's drop-in for Slurm's scontrol.
package main

import (
	"os"

	"github.com/goslurm/goslurm/commands/scontrol/cli"
)

func main() {
	os.Exit(cli.Main(os.Args, cli.OSIO()))
}
