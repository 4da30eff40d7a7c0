package cgroup

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
)

// Version is the cgroup hierarchy flavour a Layout targets.
type Version int

const (
	// V1 is the legacy hierarchy: one mount per controller under the
	// mountpoint (Slurm's cgroup/v1 plugin).
	V1 Version = 1
	// V2 is the unified hierarchy (Slurm's cgroup/v2 plugin).
	V2 Version = 2
)

func (v Version) String() string {
	switch v {
	case V1:
		return "cgroup/v1"
	case V2:
		return "cgroup/v2"
	}
	return "cgroup/unknown"
}

// Special step ids (slurm.h). They match protocol/msg's StepID* constants;
// they are repeated here so this package does not pull in the codec.
const (
	StepBatch       uint32 = 0xfffffffb // SLURM_BATCH_SCRIPT
	StepExtern      uint32 = 0xfffffffc // SLURM_EXTERN_CONT
	StepPending     uint32 = 0xfffffffd // SLURM_PENDING_STEP
	StepInteractive uint32 = 0xfffffffa // SLURM_INTERACTIVE_STEP
	NoVal           uint32 = 0xfffffffe // NO_VAL (no het component)
)

// StepID names a step the way slurmstepd names its cgroup.
type StepID struct {
	JobID   uint32
	StepID  uint32
	HetComp uint32 // NoVal when the step is not a het component
}

// DirName is the step's directory name: "step_<id>", where id is what
// Slurm's log_build_step_id_str prints without prefix and job
// ("batch", "extern", "interactive", "TDB", "7", "7+1").
func (s StepID) DirName() string {
	var id string
	switch s.StepID {
	case StepBatch:
		id = "batch"
	case StepExtern:
		id = "extern"
	case StepInteractive:
		id = "interactive"
	case StepPending:
		id = "TDB" // sic: Slurm's spelling
	default:
		id = strconv.FormatUint(uint64(s.StepID), 10)
	}
	if s.HetComp != NoVal {
		id += "+" + strconv.FormatUint(uint64(s.HetComp), 10)
	}
	return "step_" + id
}

// IsSpecial reports whether the step is batch, extern or interactive:
// Slurm applies no step-level device rules to those.
func (s StepID) IsSpecial() bool {
	return s.StepID == StepBatch || s.StepID == StepExtern || s.StepID == StepInteractive
}

// Controller names, as mounted on v1 (the v2 file prefixes differ for
// cpuacct, which is "cpu" there).
const (
	Freezer = "freezer"
	Cpuset  = "cpuset"
	Memory  = "memory"
	Devices = "devices"
	Cpuacct = "cpuacct"
)

// Layout says where Slurm 22.05 puts step cgroups on this node.
//
// v1: <Mountpoint>/<controller><Prepend>/uid_<uid>/job_<job>/step_<step>,
// the same relative path under every controller. Prepend is "/slurm", or
// "/slurm_<nodename>" when slurmd is built for several slurmd per host
// (MULTIPLE_SLURMD, as Debian's 22.05 package is).
//
// v2: <Mountpoint>/<ScopeDir>/job_<job>/step_<step>/{slurm,user/task_<n>}
// with ScopeDir "system.slice/slurmstepd.scope", or
// "system.slice/<nodename>_slurmstepd.scope" for multiple slurmd. v2 has no
// uid level.
type Layout struct {
	Version    Version
	Mountpoint string // CgroupMountpoint, no trailing '/'
	Prepend    string // v1 only, starts with '/'
	ScopeDir   string // v2 only, relative to Mountpoint
}

// LayoutOptions are the node facts a Layout depends on.
type LayoutOptions struct {
	// NodeName is slurmd's node name (-N or the detected one).
	NodeName string
	// MultipleSlurmd selects Slurm's MULTIPLE_SLURMD naming (/slurm_%n on
	// v1, <node>_slurmstepd.scope on v2). Debian's slurmd 22.05 is built
	// this way, so interop with it on one host wants true.
	MultipleSlurmd bool
}

// ErrLayout reports an unusable layout (bad version, empty node name...).
var ErrLayout = errors.New("cgroup: invalid layout")

// NewLayout builds the layout for version v from cgroup.conf.
func NewLayout(v Version, cfg *conf.CgroupConfig, o LayoutOptions) (Layout, error) {
	mp := "/sys/fs/cgroup"
	if cfg != nil && cfg.CgroupMountpoint != "" {
		mp = strings.TrimSuffix(cfg.CgroupMountpoint, "/")
	}
	l := Layout{Version: v, Mountpoint: mp}
	switch v {
	case V1:
		l.Prepend = "/slurm"
		if o.MultipleSlurmd && o.NodeName != "" {
			// Slurm expands "/slurm_%n" (first %n only) and falls back
			// to "/slurm" when it has no node name.
			l.Prepend = strings.Replace("/slurm_%n", "%n", o.NodeName, 1)
		}
	case V2:
		l.ScopeDir = "system.slice/slurmstepd.scope"
		if o.MultipleSlurmd {
			if o.NodeName == "" {
				return Layout{}, fmt.Errorf("%w: multiple slurmd on v2 needs a node name", ErrLayout)
			}
			l.ScopeDir = "system.slice/" + o.NodeName + "_slurmstepd.scope"
		}
	default:
		return Layout{}, fmt.Errorf("%w: version %d", ErrLayout, v)
	}
	if strings.Contains(o.NodeName, "/") {
		return Layout{}, fmt.Errorf("%w: node name %q contains '/'", ErrLayout, o.NodeName)
	}
	return l, nil
}

// StepPaths are the directories of one step, relative to a controller
// mount (v1) or to the unified mount (v2), each starting with '/'.
type StepPaths struct {
	User string // v1: <prepend>/uid_<uid>; v2: empty (no such level)
	Job  string
	Step string
	// v2 only: the step's two leaves' parents.
	StepSlurm string // step/slurm: the supervisor
	StepUser  string // step/user: holds task_<n> and task_special
}

// Paths returns where step id of user uid lives.
func (l Layout) Paths(uid uint32, id StepID) StepPaths {
	switch l.Version {
	case V1:
		u := path.Join(l.Prepend, "uid_"+strconv.FormatUint(uint64(uid), 10))
		j := path.Join(u, "job_"+strconv.FormatUint(uint64(id.JobID), 10))
		return StepPaths{User: u, Job: j, Step: path.Join(j, id.DirName())}
	default:
		j := path.Join("/", l.ScopeDir, "job_"+strconv.FormatUint(uint64(id.JobID), 10))
		s := path.Join(j, id.DirName())
		return StepPaths{Job: j, Step: s, StepSlurm: s + "/slurm", StepUser: s + "/user"}
	}
}

// TaskDir is the name of the directory of task n ("task_<n>"); on v2,
// pids added without a task id go to "task_special".
func TaskDir(task uint32) string {
	return "task_" + strconv.FormatUint(uint64(task), 10)
}

// TaskSpecial is the v2 leaf for pids added to a step without a task id.
const TaskSpecial = "task_special"

// ControllerDir is the absolute directory of controller ctl on v1.
func (l Layout) ControllerDir(ctl string) string {
	return path.Join(l.Mountpoint, ctl)
}

// Abs joins a relative step path to its mount: for v1 under controller
// ctl, for v2 (ctl ignored) under the unified mount.
func (l Layout) Abs(ctl, rel string) string {
	if l.Version == V1 {
		return path.Join(l.Mountpoint, ctl, rel)
	}
	return path.Join(l.Mountpoint, rel)
}

// ParseStepPath is the inverse of Paths for adoption: it takes a step
// directory relative to the mount (as Paths returns it, or as found in
// /proc/<pid>/cgroup) and returns its uid (v1 only) and step id.
func (l Layout) ParseStepPath(rel string) (uid uint32, id StepID, err error) {
	rel = path.Clean("/" + rel)
	parts := strings.Split(strings.TrimPrefix(rel, "/"), "/")
	bad := func() (uint32, StepID, error) {
		return 0, StepID{}, fmt.Errorf("%w: %q is not a step cgroup of %s", ErrLayout, rel, l.Version)
	}
	var base []string
	if l.Version == V1 {
		base = strings.Split(strings.TrimPrefix(l.Prepend, "/"), "/")
	} else {
		base = strings.Split(l.ScopeDir, "/")
	}
	if len(parts) < len(base)+2 {
		return bad()
	}
	for i, b := range base {
		if parts[i] != b {
			return bad()
		}
	}
	rest := parts[len(base):]
	if l.Version == V1 {
		if len(rest) != 3 || !strings.HasPrefix(rest[0], "uid_") {
			return bad()
		}
		u, err := strconv.ParseUint(strings.TrimPrefix(rest[0], "uid_"), 10, 32)
		if err != nil {
			return bad()
		}
		uid = uint32(u)
		rest = rest[1:]
	} else if len(rest) != 2 {
		return bad()
	}
	if !strings.HasPrefix(rest[0], "job_") || !strings.HasPrefix(rest[1], "step_") {
		return bad()
	}
	j, err := strconv.ParseUint(strings.TrimPrefix(rest[0], "job_"), 10, 32)
	if err != nil {
		return bad()
	}
	id, ok := parseStepDir(strings.TrimPrefix(rest[1], "step_"))
	if !ok {
		return bad()
	}
	id.JobID = uint32(j)
	return uid, id, nil
}

func parseStepDir(s string) (StepID, bool) {
	id := StepID{HetComp: NoVal}
	if i := strings.IndexByte(s, '+'); i >= 0 {
		h, err := strconv.ParseUint(s[i+1:], 10, 32)
		if err != nil {
			return StepID{}, false
		}
		id.HetComp = uint32(h)
		s = s[:i]
	}
	switch s {
	case "batch":
		id.StepID = StepBatch
	case "extern":
		id.StepID = StepExtern
	case "interactive":
		id.StepID = StepInteractive
	case "TDB":
		id.StepID = StepPending
	default:
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return StepID{}, false
		}
		id.StepID = uint32(n)
	}
	return id, true
}
