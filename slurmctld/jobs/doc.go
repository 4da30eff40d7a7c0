// Package jobs is slurmctld's job manager: the job table and every
// transition a job goes through in Slurm 22.05 (job_mgr.c, job_scheduler.c,
// step_mgr.c, proc_req.c), as a library the controller core calls under its
// own lock.
//
// Design:
//
//   - No goroutines, no clock, no I/O. Every method takes the time (Unix
//     seconds) and the caller's authenticated identity (Caller), never the
//     identity a message body claims.
//   - Side effects are returned, not performed: an Outcome lists the Actions
//     the controller must carry out (launch a batch job on a node, send
//     REQUEST_TERMINATE_JOB to nodes, push RESPONSE_RESOURCE_ALLOCATION to a
//     waiting salloc/srun, SRUN_* messages) and the journal Ticket to wait on
//     before replying, so an acknowledged change is on disk first.
//   - Persistence goes through Journal (records of whole job states, so replay
//     is "last record wins") and WriteSnapshot/LoadSnapshot of the whole table; the
//     controller wires slurmctld/state in with StoreJournal.
//   - Scheduling uses the pure slurmctld/sched package: Snapshot builds its
//     input from the job table and the node/partition view the controller
//     passes in (Cluster); ApplyPlan takes its Plan (Schedule does both).
//   - Step credentials are built here (Body) but signed by the caller outside
//     its lock (StepGrant.Sign), since a munge signer talks to munged.
//
// What a pending job array is: one meta record (job id = array job id,
// ArrayTaskID NO_VAL) holding the pending task ids; tasks are split off into
// records of their own, with new job ids, when they start, and the last task
// takes over the meta record, as Slurm does.
//
// Wiring it into the controller (all calls under the controller's lock;
// then unlock, Outcome.Wait, reply, carry out Outcome.Actions):
//
//	start-up       m := jobs.New(cfg, nil); st, _ := state.Open(dir, opts, m)
//	               (m is the state.Loader); m.Recovered(now);
//	               m.SetJournal(jobs.StoreJournal(st)); snapshots with
//	               st.Snapshot(ctx, st.LastSeq(), m.WriteSnapshot) under the
//	               read lock
//	SUBMIT_BATCH_JOB          Submit, then Schedule
//	RESOURCE_ALLOCATION       Allocate (runs a pass itself)
//	JOB_WILL_RUN              WillRun
//	JOB_INFO / JOB_USER_INFO  JobInfoMsg (uid ^0 = all); LastUpdate for 1900
//	JOB_INFO_SINGLE           JobInfoSingle
//	JOB_STEP_INFO             StepInfo
//	KILL_JOB, CANCEL_JOB_STEP Kill
//	UPDATE_JOB                Update (hold, uhold, release, limits, ...)
//	JOB_REQUEUE               Requeue
//	JOB_READY                 JobReady
//	JOB_ALLOCATION_INFO       AllocationInfo
//	HET_JOB_ALLOC_INFO        HetAllocationInfo
//	SUBMIT_BATCH_HET_JOB      SubmitHet
//	HET_JOB_ALLOCATION        AllocateHet
//	JOB_STEP_CREATE           CreateStep, then StepGrant.Sign outside the lock
//	STEP_COMPLETE             StepComplete
//	COMPLETE_JOB_ALLOCATION   CompleteAllocation
//	COMPLETE_BATCH_SCRIPT     CompleteBatch
//	MESSAGE_EPILOG_COMPLETE   EpilogComplete (also for a 4002 kill reply)
//	launch reply != 0         LaunchFailed
//	node DOWN                 NodeDown
//	periodic (1 s)            Tick; Schedule on events and every
//	                          sched_interval (backfill every bf_interval)
//	node table                NodeUsage gives AllocCPUs/AllocMem/RunJobs
package jobs
