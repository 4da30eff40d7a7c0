// Package sched is goslurm's scheduling core: a pure function from a
// Snapshot of the cluster (nodes, partitions, running allocations, the
// pending queue and a clock) to a Plan (which jobs start where, and why the
// others wait, with an expected start time when backfill can tell).
//
// The package does no I/O, never reads the wall clock (Snapshot.Now is the
// only time source) and starts no goroutines, so the controller can call it
// under its lock and a simulator can replay traces through the very same
// code. The controller validates and applies the Plan.
//
// Semantics follow Slurm 22.05:
//
//   - node selection as select/cons_tres (consumable cores, memory and
//     GRES) or select/linear (whole nodes): candidate nodes are the AND of
//     node bitmaps (partition, up, has free cores or idle, features,
//     not excluded), node configuration bitmaps tell cheaply whether a job
//     could ever fit, node groups are tried by Weight, lowest first, and
//     placement is best fit: one contiguous run of nodes if any fits (the
//     smallest such), else the fewest runs, largest first;
//   - a job that gives a node range (-N min-max) gets as many nodes as
//     are free up to its maximum (cons_tres asks for max_nodes and
//     settles for fewer); a suspended job's memory-only allocation
//     leaves its node idle for whole-node jobs (widen.go, state.go);
//   - a job that cannot run in a partition as configured waits with
//     job_limits_check's reason, in its order (PartitionConfig for
//     access or too many CPUs, PartitionDown/Inactive, then
//     PartitionNodeLimit, PartitionTimeLimit), then the account lists
//     as select_nodes applies them (AccountNotAllowed with Slurm's text;
//     a job whose account is not known never passes AllowAccounts and
//     always passes DenyAccounts, see Job.AccountUnknown);
//   - the main pass (sched/builtin, and sched/backfill's main pass alike)
//     walks the queue by priority and, per partition, stops at the first
//     job that cannot start;
//   - the backfill pass (sched/backfill) keeps a timeline of future free
//     resources, reserves the earliest start of each blocked job (whole
//     nodes for the job's run, as Slurm) and starts a lower priority job
//     only when that delays no reservation. A job queued in several
//     partitions is tested in each, reserved in each where it cannot
//     start now (in the first only with bf_one_resv_per_job), and its
//     expected start is the earliest; a job with --time-min below its
//     limit is tested, reserved and started with the time-min as its
//     limit (Start.TimeLimit), as 22.05's backfill does;
//   - a node's cores go to a job cyclically over its sockets, as
//     cons_tres's default distribution under CR_Core (corepick.go); a
//     job asking for GRES bound to cores (gres.conf Cores=, see
//     Node.GresBind) gets cores on the sockets of the devices it needs
//     first and the devices near its cores, and with
//     --gres-flags=enforce-binding only such cores (gresbind.go);
//   - OverSubscribe=YES:N (with --oversubscribe) and FORCE:N let jobs
//     share cores, up to N jobs a core, after idle cores; memory and GRES
//     stay per job (see oversubscribe.go for the rules and where they
//     differ from Slurm's rows).
//
// Job priorities are computed by the caller (package sched/priority);
// here they are only compared.
//
// Entry points: Schedule (main pass, then backfill when Config.Backfill),
// MainPass and Backfill alone (Slurm runs them on separate intervals,
// sched_interval and bf_interval), FromConf to build nodes, partitions and
// Config from a parsed slurm.conf.
//
// Not modelled (yet): gang scheduling and preemption (so OverSubscribe
// never time-slices, and jobs of different partitions share cores only
// through the per-core count), Slurm's per-partition rows as such (a
// sharing job needs each of its cores below N jobs, not one row free on
// all of them), advanced reservations, licenses, QOS and association
// limits, deadlines, topology, --contiguous together with --nodelist or
// feature counts (such jobs wait with BadConstraints), parentheses in
// --constraint. The backfill timeline plans future starts on idle cores
// only (a reservation never counts on sharing a core) and keeps a node
// that mixes sharing and non-sharing work closed to the other kind until
// all its jobs end. bf_continue is accepted but has no effect: a pass has
// no time budget, so it never stops early.
package sched
