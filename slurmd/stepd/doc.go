// Package stepd is the per-step supervisor of goslurm's slurmd, the role of
// Slurm's slurmstepd, and slurmd's handle on it.
//
// One supervisor process (bin/slurmstepd, which calls Main) runs per step.
// slurmd's Manager starts it in its own session and writes the node's
// Config and the launch request to its stdin (the request packed by
// protocol/msg exactly as the wire carries it; nothing in argv). The
// supervisor answers "ok" once it listens on its socket,
// <SlurmdSpoolDir>/<NodeName>_<jobid>.<stepid> as in Slurm, and from then
// on needs slurmd for nothing: a slurmd that dies or restarts leaves its
// steps running, and a new Manager finds them by scanning those sockets
// (Running). The socket speaks the subset of slurmstepd's own protocol that
// slurmd uses (state, signal, terminate, uid, pid); every request is
// authorized by the caller's SO_PEERCRED uid: root, SlurmUser or the
// step's owner.
//
// A batch step runs the Prolog as root with a clean environment (when
// Config.RunProlog), writes the script to <spool>/job%05u/slurm_script
// (0700, the user's), and starts it through the exec helper, the same
// binary started with the user's groups, gid and uid applied by the kernel
// at fork (the helper re-checks them and refuses to go on otherwise). As
// the user, the helper enters the work dir, opens stdin and the
// stdout/stderr files (Slurm's % patterns, --open-mode, O_NOFOLLOW), hands
// the supervisor a copy of stderr for Slurm's "*** JOB n CANCELLED ***"
// lines, and execs the script with the environment of protocol-daemon.md
// §6 (BatchEnv, checked against a real 22.05 job). The supervisor waits,
// forwards signals to the step's processes, runs SIG_TERM_KILL (SIGCONT,
// SIGTERM, KillWait, SIGKILL) for time limits and terminations, kills what
// is left, runs the Epilog as root (when Config.RunEpilog), and reports
// REQUEST_COMPLETE_BATCH_SCRIPT with the raw wait status (SIG_OOM after an
// out-of-memory kill), retrying as slurmstepd does.
//
// An srun step (REQUEST_LAUNCH_TASKS) starts this node's tasks the same
// way, streams their stdio to srun (io init keyed by the credential
// signature, 10-byte frame headers, EOF frames; stdin back), sends
// RESPONSE_LAUNCH_TASKS and one MESSAGE_TASK_EXIT per task to srun's
// response port, and REQUEST_STEP_COMPLETE for its rank to slurmctld.
// With LAUNCH_PTY (srun --pty) task 0 runs on a pseudo-terminal in its own
// session (pty.go): the terminal's output is its one stdout stream, and
// window size changes come from srun's SLURM_PTY_PORT.
//
// Process tracking is a process group per task, or with
// ProctrackType=proctrack/cgroup a step cgroup from package cgroup
// (task/cgroup limits from the credential's cores and memory), which also
// catches daemonized processes and out-of-memory kills.
//
// Prolog and Epilog: Slurm's slurmd runs them, once per job per node, on
// the first launch and on REQUEST_TERMINATE_JOB. The supervisor runs them
// only when slurmd asks it to (Config.RunProlog / RunEpilog), so the two
// never both run them.
package stepd
