// Package ctld is the core of goslurm's slurmctld: the configuration as the
// controller reads it, the node and partition managers, the ping cycle and
// the RPC handlers real Slurm 22.05 commands and slurmd send.
//
// Design. A Controller owns the managers behind one lock (as Slurm's
// node/partition write locks, without its lock ordering problems: there is
// one) and answers messages through a server.Mux (protocol/server). Node
// state changes follow 22.05's node_mgr.c (validate_node_specs, update_node,
// ping_nodes): the same transitions, the same reason texts, the same flags.
//
// Jobs. AttachJobs wires a slurmctld/jobs Manager in: the job and step
// RPC handlers (jobs.go) call it under the controller's one lock, wait
// for the journal outside the lock, reply, then carry out the returned
// actions (jobactions.go: batch launch and kills through the forwarding
// Sender, pushes to srun/salloc, drains). Run then also drives Tick
// every second, a main scheduling pass on events (submit, completion,
// node up) and every sched_interval, backfill every bf_interval, state
// snapshots and the node state file (nodesave.go). The node table's
// Alloc*/RunJobs/CompletingJobs and ALLOCATED/IDLE/COMPLETING follow
// jobs.NodeUsage after every call; a DOWN node still holding jobs is
// handed to jobs.NodeDown by the tick.
//
// Extension points:
//
//   - Controller.Handle adds or replaces RPC handlers (without a job
//     manager, REQUEST_JOB_INFO is answered with an empty list and job
//     submission with ESLURM_NOT_SUPPORTED);
//   - Controller.View runs a function under the read lock with the node and
//     partition tables;
//   - Controller.Update runs a function under the write lock;
//   - Hooks.NodeUp is called (outside the lock) when a node becomes usable,
//     which is where Slurm calls queue_job_scheduler().
//
// The package does no I/O itself except through the protocol packages, and
// takes its clock from Options.Now so tests can drive time.
package ctld
