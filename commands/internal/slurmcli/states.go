package slurmcli

import "strconv"

// Slurm's sentinel values.
const (
	NoVal16    = 0xfffe
	Infinite16 = 0xffff
	NoVal      = 0xfffffffe
	Infinite   = 0xffffffff
	NoVal64    = 0xfffffffffffffffe
)

// Job state base values and flags (slurm.h, 22.05).
const (
	JobPending   = 0
	JobRunning   = 1
	JobSuspended = 2
	JobComplete  = 3
	JobCancelled = 4
	JobFailed    = 5
	JobTimeout   = 6
	JobNodeFail  = 7
	JobPreempted = 8
	JobBootFail  = 9
	JobDeadline  = 10
	JobOOM       = 11
	JobEnd       = 12

	JobStateBase  = 0x000000ff
	JobStateFlags = 0xffffff00

	JobLaunchFailed = 1 << 8
	JobUpdateDB     = 1 << 9
	JobRequeue      = 1 << 10
	JobRequeueHold  = 1 << 11
	JobSpecialExit  = 1 << 12
	JobResizing     = 1 << 13
	JobConfiguring  = 1 << 14
	JobCompleting   = 1 << 15
	JobStopped      = 1 << 16
	JobReconfigFail = 1 << 17
	JobPowerUpNode  = 1 << 18
	JobRevoked      = 1 << 19
	JobRequeueFed   = 1 << 20
	JobResvDelHold  = 1 << 21
	JobSignaling    = 1 << 22
	JobStageOut     = 1 << 23
)

var jobFlagNames = []struct {
	flag        uint32
	long, short string
}{
	{JobCompleting, "COMPLETING", "CG"},
	{JobStageOut, "STAGE_OUT", "SO"},
	{JobConfiguring, "CONFIGURING", "CF"},
	{JobResizing, "RESIZING", "RS"},
	{JobRequeue, "REQUEUED", "RQ"},
	{JobRequeueFed, "REQUEUE_FED", "RF"},
	{JobRequeueHold, "REQUEUE_HOLD", "RH"},
	{JobSpecialExit, "SPECIAL_EXIT", "SE"},
	{JobStopped, "STOPPED", "ST"},
	{JobRevoked, "REVOKED", "RV"},
	{JobResvDelHold, "RESV_DEL_HOLD", "RD"},
	{JobSignaling, "SIGNALING", "SI"},
}

var jobBaseLong = []string{"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED",
	"FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}
var jobBaseShort = []string{"PD", "R", "S", "CD", "CA", "F", "TO", "NF", "PR", "BF", "DL", "OOM"}

// JobStateString is job_state_string: a flag state wins over the base.
func JobStateString(st uint32) string {
	for _, f := range jobFlagNames {
		if st&f.flag != 0 {
			return f.long
		}
	}
	if b := st & JobStateBase; int(b) < len(jobBaseLong) {
		return jobBaseLong[b]
	}
	return "?"
}

// JobStateCompact is job_state_string_compact.
func JobStateCompact(st uint32) string {
	for _, f := range jobFlagNames {
		if st&f.flag != 0 {
			return f.short
		}
	}
	if b := st & JobStateBase; int(b) < len(jobBaseShort) {
		return jobBaseShort[b]
	}
	return "?"
}

// JobStateNum is job_state_num: a base state or flag by long or compact
// name (case-insensitive); ok false if there is none.
func JobStateNum(name string) (uint32, bool) {
	test := func(st uint32) bool {
		return equalFold(name, JobStateString(st)) || equalFold(name, JobStateCompact(st))
	}
	for i := uint32(0); i < JobEnd; i++ {
		if test(i) {
			return i, true
		}
	}
	for _, f := range []uint32{JobCompleting, JobConfiguring, JobResizing, JobResvDelHold,
		JobRequeue, JobRequeueFed, JobRequeueHold, JobRevoked, JobSignaling,
		JobSpecialExit, JobStageOut, JobStopped} {
		if test(f) {
			return f, true
		}
	}
	return 0, false
}

// JobStateNamesList is the list squeue prints after an invalid state.
func JobStateNamesList() string {
	s := JobStateString(0)
	for i := uint32(1); i < JobEnd; i++ {
		s += "," + JobStateString(i)
	}
	for _, f := range []uint32{JobCompleting, JobConfiguring, JobResizing, JobResvDelHold,
		JobRequeue, JobRequeueFed, JobRequeueHold, JobRevoked, JobSignaling,
		JobSpecialExit, JobStageOut, JobStopped} {
		s += "," + JobStateString(f)
	}
	return s
}

// JobReasonString is job_reason_string.
func JobReasonString(r uint16) string {
	if s, ok := reasonNames[r]; ok {
		return s
	}
	return strconv.Itoa(int(r))
}

// JobShareString is job_share_string.
func JobShareString(shared uint16) string {
	switch shared {
	case 0:
		return "NO"
	case 1:
		return "YES"
	case 2:
		return "USER"
	case 3:
		return "MCS"
	}
	return "OK"
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// HasPrefixFold is xstrncasecmp(full, prefix, len(prefix)) == 0.
func HasPrefixFold(full, prefix string) bool {
	if len(prefix) > len(full) {
		// strncasecmp stops at full's NUL: a longer prefix never matches.
		return false
	}
	return equalFold(full[:len(prefix)], prefix)
}
