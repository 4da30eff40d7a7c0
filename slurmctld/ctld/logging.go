package ctld

import (
	"strconv"

	"github.com/goslurm/goslurm/slurmd/slurmlog"
)

// The controller's log level follows 22.05's update_logging, which runs
// at start-up and on every reconfigure: slurm.conf is read again
// (SlurmctldDebug, info when unset), then slurmctld's -v flags, when
// there are any, replace it with info raised one step per flag, whatever
// slurm.conf says. What scontrol setdebug set lapses: it only changed the
// running configuration, which the reconfigure replaced.

// ctldDebugLevel is SlurmctldDebug as update_logging leaves it, a
// log_level_t number: with verbose -v flags info+verbose (debug5 at
// most), else slurm.conf's level (conf, "" when unset: info).
func ctldDebugLevel(conf string, verbose int) uint16 {
	if verbose > 0 {
		return uint16(min(3+verbose, len(logLevelNames)-1))
	}
	return logLevel(conf, 3)
}

// updateLogging gives the running log the level and DebugFlags of the
// configuration in force (after a reconfigure, slurm.conf's and the -v
// flags'). Called under the write lock.
func (c *Controller) updateLogging() {
	lc, ok := c.log.Handler().(logControl)
	if !ok {
		return
	}
	if l, err := slurmlog.ParseLevel(strconv.Itoa(int(c.slurmctldDebug()))); err == nil {
		lc.SetLevel(l)
	}
	lc.SetDebugFlags(c.cfg.Conf.DebugFlags)
}
