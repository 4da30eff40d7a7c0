// Command sbatch is goslurm's drop-in for Slurm 22.05's sbatch: it reads a
// batch script (a file, stdin or --wrap), applies #SBATCH directives (and
// #PBS/#BSUB ones), the SBATCH_* environment and the command line in
// Slurm's order, and submits the job to slurmctld with
// REQUEST_SUBMIT_BATCH_JOB (REQUEST_SUBMIT_BATCH_HET_JOB for components
// separated by ":" or "#SBATCH hetjob"). What it sends is checked field
// by field against the real sbatch in testsuite/interop.
package main

import "os"

func main() {
	os.Exit(run(os.Args, sysIO()))
}
