// Package jobcred is the Slurm 22.05 job step credential (slurm_cred_t): the
// signed record slurmctld puts in RESPONSE_JOB_STEP_CREATE, which srun
// forwards unchanged in REQUEST_LAUNCH_TASKS and which slurmd checks before
// it starts anything. Unsigned copies of the same record travel in
// REQUEST_BATCH_JOB_LAUNCH, REQUEST_LAUNCH_PROLOG and the kill messages.
//
// What is here:
//
//   - Body, the credential fields in wire order (protocol 22.05), with an
//     exact packer and a bounded, strict unpacker: a body that unpacks packs
//     again to the same bytes (Credential keeps the received bytes anyway,
//     because a signed credential is never re-packed).
//   - Signer and SignatureVerifier, with HMACSigner/HMACVerifier, goslurm's
//     own munge-free scheme (CredTypeHMAC, only goslurm daemons understand
//     it). The munge scheme Slurm uses (cred/munge) lives in the mungesign
//     subpackage so that this package stays free of network I/O.
//   - Verifier, the slurmd side: signature, expiry window, replay cache,
//     revocation, and the launch request consistency checks (step id, uid,
//     gid, this node in the step and job host lists). It takes a clock; it
//     never reads the wall clock itself. ExportState and ImportState save
//     and restore its replay cache and revocations in a versioned format
//     (state.go), so slurmd keeps them across a restart.
//   - The I/O stream key srun and slurmstepd use to authenticate the stdio
//     connection: the credential's signature bytes (IOKey, IOInit).
//
// Facts are from Slurm 22.05.8 (src/common/slurm_cred.c, the cred/munge
// plugin, slurmd's req.c and io_hdr.c) and were checked against the real
// credentials in testsuite/captures.
package jobcred
