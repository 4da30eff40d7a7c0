package jobs

import "github.com/goslurm/goslurm/protocol/slurmerr"

// BatchScript handles REQUEST_BATCH_SCRIPT (scontrol write batch_script):
// the stored script of a batch job, for its owner, root or SlurmUser
// (Slurm also admits accounting operators, which need slurmdbd). Array
// tasks share their meta job's script.
func (m *Manager) BatchScript(id, uid uint32) (string, error) {
	j := m.jobs[id]
	if j == nil {
		return "", serr(slurmerr.ESLURM_INVALID_JOB_ID)
	}
	if !m.mayAct(uid, j) {
		return "", serr(slurmerr.ESLURM_USER_ID_MISSING)
	}
	if !j.Batch {
		return "", serr(slurmerr.ESLURM_JOB_SCRIPT_MISSING)
	}
	p, err := m.payload(j)
	if err != nil || p == nil {
		// Lost to damaged state (-i): Slurm's answer for a missing file.
		return "", serr(slurmerr.ESLURM_JOB_SCRIPT_MISSING)
	}
	return p.Script, nil
}
