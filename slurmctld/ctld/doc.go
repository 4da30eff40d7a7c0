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
// Extension points for the job manager and the scheduler (a later wave):
//
//   - Controller.Handle adds or replaces RPC handlers (REQUEST_JOB_INFO is
//     answered with an empty list until a job manager replaces it);
//   - Controller.View runs a function under the read lock with the node and
//     partition tables (the scheduler takes its snapshot there);
//   - Controller.Update runs a function under the write lock (a plan
//     applier allocates nodes there: Node.AllocCPUs/AllocMem and the
//     ALLOCATED/MIXED base states);
//   - Hooks.NodeUp is called (outside the lock) when a node becomes usable,
//     which is where Slurm calls queue_job_scheduler().
//
// The package does no I/O itself except through the protocol packages, and
// takes its clock from Options.Now so tests can drive time.
package ctld
