package main

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/conf"
)

// rlimitNames are Slurm's propagated resource limits, in its order.
var rlimitNames = []struct {
	name     string
	resource int
}{
	{"CPU", unix.RLIMIT_CPU}, {"FSIZE", unix.RLIMIT_FSIZE}, {"DATA", unix.RLIMIT_DATA},
	{"STACK", unix.RLIMIT_STACK}, {"CORE", unix.RLIMIT_CORE}, {"RSS", unix.RLIMIT_RSS},
	{"NPROC", unix.RLIMIT_NPROC}, {"NOFILE", unix.RLIMIT_NOFILE}, {"MEMLOCK", unix.RLIMIT_MEMLOCK},
	{"AS", unix.RLIMIT_AS},
}

// rlimitEnv is srun's _set_rlimit_env: SLURM_RLIMIT_<NAME>=<soft limit>
// for each limit PropagateResourceLimits[Except] propagates (all by
// default); slurmstepd sets them on the tasks. Go raises its own soft
// NOFILE limit to the hard one at start-up, so NOFILE is the raised value
// when the two differed.
func rlimitEnv(c *conf.Config, set func(k, v string)) {
	for _, r := range rlimitNames {
		if !propagates(c, r.name) {
			continue
		}
		var rl unix.Rlimit
		if err := unix.Getrlimit(r.resource, &rl); err != nil {
			continue
		}
		set("SLURM_RLIMIT_"+r.name, strconv.FormatUint(rl.Cur, 10))
	}
}

func propagates(c *conf.Config, name string) bool {
	has := func(l conf.List, s string) bool {
		for _, x := range l {
			for _, f := range strings.Split(x, ",") {
				if strings.EqualFold(strings.TrimSpace(f), s) {
					return true
				}
			}
		}
		return false
	}
	if len(c.PropagateResourceLimitsExcept) > 0 {
		return !has(c.PropagateResourceLimitsExcept, name) && !has(c.PropagateResourceLimitsExcept, "ALL")
	}
	if len(c.PropagateResourceLimits) > 0 {
		if has(c.PropagateResourceLimits, "NONE") {
			return false
		}
		return has(c.PropagateResourceLimits, "ALL") || has(c.PropagateResourceLimits, name)
	}
	return true
}
