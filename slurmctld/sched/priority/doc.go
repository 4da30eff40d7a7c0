// Package priority computes job priorities as Slurm 22.05's priority
// plugins do, for the scheduler (package sched compares the uint32 values
// it produces; it does not import this package, nor this package it).
//
// The package is pure: no I/O, no goroutines, and no wall clock. Every
// time is a Unix-seconds parameter, so the controller and the trace
// simulator drive it with the same code.
//
// # Pieces
//
//   - Config: the Priority* keys of slurm.conf with Slurm's defaults
//     (FromConf, DefaultConfig, Validate).
//   - Basic: priority/basic, FIFO. The first job gets TopPriority-1
//     (0xfffeffff) and each later one one less; nice shifts a job without
//     moving the base (job_mgr.c set_job_prio with priority_p_set).
//   - Multifactor: priority/multifactor. The priority is
//     Σ weight·factor (age, association, fair-share, job size, partition,
//     QOS, TRES) + site factor − nice, clamped to [1, 2^32−1] and truncated,
//     0 for held jobs, as _get_priority_internal computes it, including
//     the normalizations (partition PriorityJobFactor over the largest one,
//     QOS priority over the largest QOS priority), PriorityFavorSmall,
//     SMALL_RELATIVE_TO_TIME, ACCRUE_ALWAYS, INCR_ONLY and the NO_NORMAL_*
//     flags. For a job submitted to several partitions, PriorityArray
//     gives its priority in each (Slurm's priority_array: the job's own
//     factors with each partition's partition and TRES parts).
//   - Detail and PartitionDetail: a job's weighted factors one by one,
//     the TRES factors per TRES, as sprio receives them
//     (priority_factors_object_t), in its own partition and in each of
//     several.
//   - Billing: the billable TRES of a partition's TRESBillingWeights
//     (assoc_mgr_tres_weighted, with PriorityFlags=MAX_TRES), which sets
//     the billing TRES of jobs and partitions and what running jobs are
//     charged for fair-share.
//   - Usage: fair-share state. An account tree with users under accounts
//     (equal shares unless given), charged with billing-seconds, decayed
//     exponentially with PriorityDecayHalfLife, reset on the
//     PriorityUsageResetPeriod calendar, giving each user's fair-share
//     factor by Fair Tree (22.05's default) or by the classic formula
//     2^(−effective usage / normalized shares / FairShareDampeningFactor)
//     with PriorityFlags=NO_FAIR_TREE (effective usage as the classic
//     algorithm, or as DEPTH_OBLIVIOUS with that flag).
//
// Checked against real slurmctld 22.05 (oracle_test.go, skipped when the
// binaries are missing): priority/basic numbering with nice, and the job
// size, partition and nice parts of priority/multifactor, favoring large
// and small jobs. Age, fair-share and QOS need slurmdbd in real Slurm and
// are pinned to hand-computed values instead.
//
// # Where this differs from Slurm, and why
//
// Real Slurm only does fair-share (and age) with slurmdbd: without it,
// priority/multifactor logs "PriorityWeightFairshare can only be used
// with SlurmDBD, ignoring" and zeroes both weights. goslurm has no
// accounting database yet, so Usage keeps the association tree and its
// decayed usage itself, and both weights work without one. The controller
// (slurmctld/jobs.Priority) uses Usage only when slurm.conf names
// accounting_storage/slurmdbd, standing in for the database; otherwise it
// zeroes both weights as Slurm does. Consequences:
//
//   - Associations come from the caller (AddAccount, AddUser) instead of
//     sacctmgr. An association first seen in Charge or FairShareFactor is
//     created with one share, an unknown account directly under root; a
//     job without an association in Slurm gets fair-share 0.
//   - Usage is whatever the caller charges (billing-seconds: CPU-seconds
//     unless it applies TRESBillingWeights or a QOS UsageFactor); QOS
//     usage, GrpTRESRunMins and the other limits' counters are not kept.
//     Usage.State and RestoreUsage give the controller what to save
//     across restarts (Slurm's assoc_usage and last_decay_ran files).
//   - Charge stamps usage with its own time and decays it exactly from
//     then. Slurm adds a running job's usage at each decay pass, decayed
//     over the whole pass; charging cpus·period at the start of each
//     period gives the same numbers.
//   - Factors are recomputed on the first read after any change, not
//     only at each decay pass, so they can be fresher than Slurm's (at
//     most PriorityCalcPeriod stale there).
//   - The decay multiplier is Slurm's own approximation, 1 − 0.693/h per
//     second (DecayFactor), so one half-life leaves 0.50007 of the usage
//     for h = 7 days, not exactly half; kept so numbers match sshare.
//   - Fair Tree ties between sibling accounts are broken by name (Slurm:
//     qsort order, unspecified). The merge of tied accounts' children in
//     22.05 never triggers (see fairTreeRank) and is not reproduced.
//   - Not implemented: Fairshare=parent associations, site_factor
//     plugins (the caller may pass a site factor value), the
//     multi-cluster and federation parts, PriorityParameters.
//   - ParseTRESWeights rejects hexadecimal, NaN and infinite weights,
//     which C's strtod would accept.
//
// Deciding when a job is eligible to accrue age (begin time passed, not
// held, dependencies met; ACCRUE_ALWAYS: from submission) and whether to
// recompute running jobs (CALCULATE_RUNNING) is left to the caller, as is
// calling Usage.Decay every Config.CalcPeriod.
package priority
