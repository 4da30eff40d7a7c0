package ctld

import "github.com/goslurm/goslurm/slurmctld/jobs"

// Every controller test checks that the job manager's index of the jobs
// holding nodes misses none (jobs.NodeUsage walks the whole table then).
func init() { jobs.VerifyNodeUsage = true }
