package jobs

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// Mail types (slurm.h MAIL_*): the bits of --mail-type.
const (
	MailBegin         uint16 = 1 << 0
	MailEnd           uint16 = 1 << 1
	MailFail          uint16 = 1 << 2
	MailRequeue       uint16 = 1 << 3
	MailTime100       uint16 = 1 << 4
	MailTime90        uint16 = 1 << 5
	MailTime80        uint16 = 1 << 6
	MailTime50        uint16 = 1 << 7
	MailStageOut      uint16 = 1 << 8
	MailArrayTasks    uint16 = 1 << 9
	MailInvalidDepend uint16 = 1 << 10
)

// mailProgTimeout is MAIL_PROG_TIMEOUT: MailProg is killed after it.
const mailProgTimeout = 120

// HookConfig is what the site hooks read from slurm.conf: MailProg,
// PrologSlurmctld/EpilogSlurmctld and the job completion plugin.
type HookConfig struct {
	MailProg, MailDomain             string
	PrologSlurmctld, EpilogSlurmctld string
	// PrologEpilogTimeout in seconds; 0 or 65534 (NO_VAL16): none.
	PrologEpilogTimeout int
	JobCompType         string // jobcomp/filetxt, jobcomp/script, or none
	JobCompLoc          string
	// GroupName resolves a gid (gid_to_string); nil: the number.
	GroupName func(gid uint32) string
}

// hookConfigFromConf reads the hooks' slurm.conf settings.
func hookConfigFromConf(c *conf.Config) HookConfig {
	h := HookConfig{MailProg: c.MailProg, MailDomain: c.MailDomain,
		PrologSlurmctld: c.PrologSlurmctld, EpilogSlurmctld: c.EpilogSlurmctld,
		PrologEpilogTimeout: int(c.PrologEpilogTimeout), JobCompLoc: c.JobCompLoc}
	switch c.JobCompType {
	case "jobcomp/filetxt", "jobcomp/script":
		h.JobCompType = c.JobCompType
	}
	if h.PrologEpilogTimeout == int(NoVal16) {
		h.PrologEpilogTimeout = 0
	}
	return h
}

// ScriptKind says which hook a Script is.
type ScriptKind uint8

const (
	ScriptMail          ScriptKind = iota + 1 // MailProg: fire and forget
	ScriptPrologCtld                          // PrologSlurmctld: PrologDone when it ends
	ScriptEpilogCtld                          // EpilogSlurmctld: EpilogDone when it ends
	ScriptJobCompScript                       // jobcomp/script: JobCompLoc run at the end
	ScriptJobCompFile                         // jobcomp/filetxt: Line appended to Path
)

// Name is the hook's name in slurmctld's log lines.
func (k ScriptKind) Name() string {
	switch k {
	case ScriptMail:
		return "MailProg"
	case ScriptPrologCtld:
		return "PrologSlurmctld"
	case ScriptEpilogCtld:
		return "EpilogSlurmctld"
	case ScriptJobCompScript:
		return "jobcomp/script"
	}
	return "jobcomp/filetxt"
}

// Script is a site hook the controller runs outside the job lock, as
// slurmscriptd does for slurmctld: Argv[0] with Env (nothing inherited),
// killed after Timeout seconds (0: never). For ScriptJobCompFile, Line
// is appended to Path instead.
type Script struct {
	Kind    ScriptKind
	JobID   uint32
	Argv    []string
	Env     []string
	Timeout int
	Path    string
	Line    string
	// complete fills in what needs the cluster view (TakeScripts).
	complete func(s *Script, cl *Cluster)
}

// hookState is the manager's bookkeeping of the hooks.
type hookState struct {
	scripts []Script
	// epilog: jobs whose EpilogSlurmctld still runs; they stay COMPLETING.
	epilog map[uint32]bool
	// requeueCause is the path of the requeue being made (requeued).
	requeueCause requeueCause
	// restart: recovered jobs RestartActions still has work for.
	restart []uint32
	// prolog: jobs whose PrologSlurmctld still runs (a job waiting for
	// its nodes to power up waits for it too).
	prolog map[uint32]bool
}

// TakeScripts returns the hooks the calls since the last one asked for;
// cl is the cluster view of the call (the jobcomp record needs it).
func (m *Manager) TakeScripts(cl *Cluster) []Script {
	s := m.hooks.scripts
	m.hooks.scripts = nil
	for i := range s {
		if s[i].complete != nil {
			s[i].complete(&s[i], cl)
			s[i].complete = nil
		}
	}
	return s
}

func (m *Manager) addScript(s Script) {
	if s.Kind == ScriptPrologCtld {
		if m.hooks.prolog == nil {
			m.hooks.prolog = map[uint32]bool{}
		}
		m.hooks.prolog[s.JobID] = true
	}
	m.hooks.scripts = append(m.hooks.scripts, s)
}

// mailUser is _get_mail_user: --mail-user, else the user's name with
// MailDomain appended.
func (m *Manager) mailUser(given, userName string, uid uint32) string {
	if given != "" {
		return given
	}
	if userName == "" {
		userName = strconv.FormatUint(uint64(uid), 10)
	}
	if m.cfg.Hooks.MailDomain != "" {
		return userName + "@" + m.cfg.Hooks.MailDomain
	}
	return userName
}

func (m *Manager) groupName(gid uint32) string {
	if m.cfg.Hooks.GroupName != nil {
		if n := m.cfg.Hooks.GroupName(gid); n != "" {
			return n
		}
	}
	return strconv.FormatUint(uint64(gid), 10)
}

func (m *Manager) userName(j *Job) string {
	if j.UserName != "" {
		return j.UserName
	}
	if u, ok := m.user(j.UserID); ok && u.Name != "" {
		return u.Name
	}
	return "nobody"
}

// orNull is how setenvf prints a NULL string.
func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

// commonEnv is job_common_env_vars: the environment MailProg and the
// slurmctld prolog/epilog get. complete adds the exit codes.
func (m *Manager) commonEnv(j *Job, complete bool) []string {
	var env []string
	set := func(k, v string) { env = append(env, k+"="+v) }
	set("SLURM_JOB_ACCOUNT", orNull(j.Account))
	if complete {
		ws := syscall.WaitStatus(j.ExitCode)
		code, sig := 0, 0
		if ws.Exited() {
			code = ws.ExitStatus()
		}
		if ws.Signaled() {
			sig = int(ws.Signal())
		}
		set("SLURM_JOB_DERIVED_EC", strconv.FormatUint(uint64(j.DerivedEC), 10))
		set("SLURM_JOB_EXIT_CODE2", fmt.Sprintf("%d:%d", code, sig))
		set("SLURM_JOB_EXIT_CODE", strconv.FormatUint(uint64(j.ExitCode), 10))
	}
	if j.ArrayJobID != 0 && j.ArrayTaskID != NoVal {
		set("SLURM_ARRAY_JOB_ID", strconv.FormatUint(uint64(j.ArrayJobID), 10))
		set("SLURM_ARRAY_TASK_ID", strconv.FormatUint(uint64(j.ArrayTaskID), 10))
		env = append(env, m.arrayEnvSup(j)...)
	}
	if m.cfg.ClusterName != "" {
		set("SLURM_CLUSTER_NAME", m.cfg.ClusterName)
	}
	if j.Comment != "" {
		set("SLURM_JOB_COMMENT", j.Comment)
	}
	set("SLURM_JOB_GID", strconv.FormatUint(uint64(j.GroupID), 10))
	set("SLURM_JOB_GROUP", m.groupName(j.GroupID))
	set("SLURM_JOBID", strconv.FormatUint(uint64(j.ID), 10))
	set("SLURM_JOB_ID", strconv.FormatUint(uint64(j.ID), 10))
	if j.Licenses != "" {
		set("SLURM_JOB_LICENSES", j.Licenses)
	}
	set("SLURM_JOB_NAME", orNull(j.Name))
	set("SLURM_JOB_NODELIST", orNull(j.nodeList()))
	if len(j.NodeCPUs) > 0 {
		set("SLURM_JOB_CPUS_PER_NODE", compressedCounts(j.NodeCPUs))
		set("SLURM_JOB_NUM_NODES", strconv.Itoa(len(j.NodeCPUs)))
	}
	part := j.Partition
	if part == "" {
		part = joinPartitions(j.Partitions)
	}
	set("SLURM_JOB_PARTITION", orNull(part))
	if j.Reservation != "" {
		set("SLURM_JOB_RESERVATION", j.Reservation)
	}
	set("SLURM_JOB_RESTART_COUNT", strconv.Itoa(int(j.RestartCnt)))
	set("SLURM_JOB_UID", strconv.FormatUint(uint64(j.UserID), 10))
	set("SLURM_JOB_USER", m.userName(j))
	if j.Features != "" {
		set("SLURM_JOB_CONSTRAINTS", j.Features)
	}
	if j.StdErr != "" {
		set("SLURM_JOB_STDERR", j.StdErr)
	}
	if j.StdIn != "" {
		set("SLURM_JOB_STDIN", j.StdIn)
	}
	if j.StdOut != "" {
		set("SLURM_JOB_STDOUT", j.StdOut)
	}
	if j.WorkDir != "" {
		set("SLURM_JOB_WORK_DIR", j.WorkDir)
	}
	return env
}

// compressedCounts is uint32_compressed_to_str: "2(x3),1".
func compressedCounts(v []uint32) string {
	var parts []string
	for i := 0; i < len(v); {
		k := i + 1
		for k < len(v) && v[k] == v[i] {
			k++
		}
		if k-i > 1 {
			parts = append(parts, fmt.Sprintf("%d(x%d)", v[i], k-i))
		} else {
			parts = append(parts, strconv.FormatUint(uint64(v[i]), 10))
		}
		i = k
	}
	return strings.Join(parts, ",")
}

// secsString is secs2time_str.
func secsString(s int64) string {
	if s < 0 {
		return "INVALID"
	}
	d, h, mi, se := s/86400, (s/3600)%24, (s/60)%60, s%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, mi, se)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, mi, se)
}

// jobStateBaseName is job_state_string of the base state.
func jobStateBaseName(j *Job) string { return jobStateString(j.State & msg.JobStateBase) }

// atoiPrefix is atoi: the leading digits of s, 0 without any.
func atoiPrefix(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}
