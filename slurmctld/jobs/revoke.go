package jobs

// Real slurmd refuses a launch whose credential was created at or before
// the second it revoked the job's credentials (slurm_cred_revoked: ctime
// <= revoked), and the revocation time is the Time of the controller's
// kill message. Real slurmctld's guard is batch_requeue_fini (requeueFini):
// once the requeued job's nodes are clean its begin time is pushed past
// the credential lifetime. A StartTime=now given after that takes it
// back, and then only real's slower scheduling keeps the next launch out
// of the kill's second. Ours can be that fast, so a job killed this second
// waits for the next one.

// launchable reports whether j may start at now as far as the kill
// messages sent for it go; a job held back asks for a pass next second
// (RevokeWaitOver).
func (m *Manager) launchable(j *Job, now int64) bool {
	if now > j.revokedAt {
		return true
	}
	m.revokeWait = max(m.revokeWait, j.revokedAt+1)
	return false
}

// RevokeWaitOver reports, once, that a job held back by launchable may
// start now: the controller then runs a scheduling pass rather than wait
// for the next periodic one.
func (m *Manager) RevokeWaitOver(now int64) bool {
	if m.revokeWait == 0 || now < m.revokeWait {
		return false
	}
	m.revokeWait = 0
	return true
}
