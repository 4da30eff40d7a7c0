// Command slurmdump prints the Slurm messages in a pcap capture: a tcpdump
// for Slurm, for debugging a mixed goslurm / Slurm cluster. The work is done
// by package dump; see its Main.
package main

import (
	"os"

	"github.com/goslurm/goslurm/commands/slurmdump/dump"
)

func main() {
	os.Exit(dump.Main(os.Args, dump.OSIO()))
}
