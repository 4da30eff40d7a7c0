package main

import "github.com/goslurm/goslurm/slurmctld/jobs"

// The daemon's tests check the job manager's holders index too.
func init() { jobs.VerifyNodeUsage = true }
