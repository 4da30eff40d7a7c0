package trigger

// ResTypeString is trigger_res_type: a resource type's name.
func ResTypeString(t uint16) string {
	names := [...]string{ResJob: "job", ResNode: "node", ResSlurmctld: "slurmctld", ResSlurmdbd: "slurmdbd",
		ResDatabase: "database", ResFrontEnd: "front_end", ResOther: "other"}
	if int(t) < len(names) && names[t] != "" {
		return names[t]
	}
	return "unknown"
}

// typeNames are trigger_type's names, for a single event bit.
var typeNames = map[uint32]string{
	TypeUp: "up", TypeDown: "down", TypeDrained: "drained", TypeFail: "fail", TypeIdle: "idle",
	TypeTime: "time", TypeFini: "fini", TypeReconfig: "reconfig",
	TypePriCtldFail: "primary_slurmctld_failure", TypePriCtldResOp: "primary_slurmctld_resumed_operation",
	TypePriCtldResCtrl: "primary_slurmctld_resumed_control", TypePriCtldAcctFul: "primary_slurmctld_acct_buffer_full",
	TypeBuCtldFail: "backup_slurmctld_failure", TypeBuCtldResOp: "backup_slurmctld_resumed_operation",
	TypeBuCtldAsCtrl: "backup_slurmctld_assumed_control", TypePriDbdFail: "primary_slurmdbd_failure",
	TypePriDbdResOp: "primary_slurmdbd_resumed_operation", TypePriDbFail: "primary_database_failure",
	TypePriDbResOp: "primary_database_resumed_operation", TypeBurstBuffer: "burst_buffer",
}

// TypeString is trigger_type: the name of an event type ("unknown" for a
// combination of several).
func TypeString(t uint32) string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return "unknown"
}

// Executable is _validate_trigger's permission test: the execute bit of
// the owner class when uid owns the file, else of the group class when
// gid is its group, else of others.
func Executable(perm, fileUID, fileGID, uid, gid uint32) bool {
	var modes uint32
	switch {
	case fileUID == uid:
		modes = perm >> 6 & 7
	case fileGID == gid:
		modes = perm >> 3 & 7
	default:
		modes = perm & 7
	}
	return modes&1 != 0
}
