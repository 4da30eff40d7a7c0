// Command salloc is goslurm's drop-in for Slurm 22.05's salloc: it gets a
// job allocation, runs a command (or the user's shell) with the
// allocation's environment, and relinquishes the allocation when the
// command ends, exiting with the command's status.
package main

import "os"

func main() {
	os.Exit(run(os.Args, sysIO()))
}
