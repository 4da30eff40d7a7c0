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
//   - the main pass (sched/builtin) walks the queue by priority and, per
//     partition, stops at the first job that cannot start;
//   - the backfill pass (sched/backfill) keeps a timeline of future free
//     resources, reserves the earliest start of each blocked job (whole
//     nodes for the job's run, as Slurm) and starts a lower priority job
//     only when that delays no reservation.
//
// Job priorities are computed by the caller (package sched/priority);
// here they are only compared.
//
// Entry points: Schedule (main pass, then backfill when Config.Backfill),
// MainPass and Backfill alone (Slurm runs them on separate intervals,
// sched_interval and bf_interval), FromConf to build nodes, partitions and
// Config from a parsed slurm.conf.
//
// Not modelled (yet): core sharing under OverSubscribe=YES/FORCE (treated
// as NO), --time-min, advanced reservations, licenses, QOS and association
// limits, preemption, topology, --contiguous together with --nodelist or
// feature counts (such jobs wait with BadConstraints), parentheses in
// --constraint. bf_continue is accepted but has no effect: a pass has no
// time budget, so it never stops early. A job queued in several partitions
// gets its reservation in the first partition where one fits, not the
// earliest of all.
package sched
