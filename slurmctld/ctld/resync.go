package ctld

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// levelVerbose is Slurm's verbose level (as slurmd/slurmlog numbers it).
const levelVerbose = slog.Level(-2)

// activity returns the controller's activity record (time_last_active
// of jobs and steps), made on first use with the controller's start as
// the load time of recovered jobs. Called under the lock.
func (c *Controller) activity() *jobs.Activity {
	if c.jobs.act == nil {
		c.jobs.act = jobs.NewActivity(c.boot)
	}
	return c.jobs.act
}

// resyncConfig is what the job checks read of slurm.conf.
func (c *Controller) resyncConfig() jobs.ResyncConfig {
	cfg := c.cfg
	rc := jobs.ResyncConfig{MsgTimeout: int64(cfg.MessageTimeout / time.Second)}
	if cfg.Conf != nil {
		rc.BatchStartTimeout = int64(cfg.Conf.BatchStartTimeout)
	}
	return rc
}

// validateJobsOnNode checks the job steps a registering node reports
// against the job table (jobs.ValidateJobsOnNode), logs what it found and
// refreshes the node table. Called under the write lock, after the
// node's boot time was taken from the registration.
func (c *Controller) validateJobsOnNode(reg *msg.NodeRegistration, n *Node, now int64) jobs.Outcome {
	if c.jobs == nil {
		return jobs.Outcome{}
	}
	cl, err := c.jobCluster()
	if err != nil {
		c.log.Error(fmt.Sprintf("validate_jobs_on_node: %v", err))
		return jobs.Outcome{}
	}
	r := jobs.NodeReport{Node: n.Name, Steps: reg.Steps, BootTime: n.BootTime}
	out, logs, err := c.jobs.m.ValidateJobsOnNode(r, c.activity(), c.resyncConfig(), cl, now)
	for _, l := range logs {
		c.log.Log(context.Background(), l.Level, l.Msg)
	}
	if err != nil {
		c.log.Error(fmt.Sprintf("validate_jobs_on_node: %v", err))
	}
	c.syncUsage(now)
	if jobsOnNode := n.RunJobs + n.CompletingJobs; jobsOnNode != len(reg.Steps) {
		// slurmd reports steps, not jobs, and only those running now.
		c.log.Log(context.Background(), slog.Level(-6), fmt.Sprintf("resetting job_count on node %s from %d to %d",
			n.Name, len(reg.Steps), jobsOnNode))
	}
	if len(out.Actions) > 0 {
		c.kickScheduler()
	}
	return out
}

// waitResync waits (outside the lock) until what a registration changed in
// the job table is on disk.
func (c *Controller) waitResync(ctx context.Context, out jobs.Outcome) {
	if err := out.Wait(ctx); err != nil {
		c.log.Error(fmt.Sprintf("job state save failed: %v", err))
	}
}
