package sched

// Reason is a Slurm job state reason (enum job_state_reason, 22.05
// numbering, as on the wire).
type Reason uint16

// The reasons this package sets. Numbers are 22.05's.
const (
	ReasonNone            Reason = 0   // WAIT_NO_REASON "None"
	ReasonPriority        Reason = 1   // WAIT_PRIORITY
	ReasonDependency      Reason = 2   // WAIT_DEPENDENCY
	ReasonResources       Reason = 3   // WAIT_RESOURCES
	ReasonPartNodeLimit   Reason = 4   // WAIT_PART_NODE_LIMIT
	ReasonPartTimeLimit   Reason = 5   // WAIT_PART_TIME_LIMIT
	ReasonPartDown        Reason = 6   // WAIT_PART_DOWN
	ReasonPartInactive    Reason = 7   // WAIT_PART_INACTIVE
	ReasonHeld            Reason = 8   // WAIT_HELD (admin)
	ReasonBeginTime       Reason = 9   // WAIT_TIME
	ReasonReservation     Reason = 14  // WAIT_RESERVATION
	ReasonReqNodeNotAvail Reason = 15  // WAIT_NODE_NOT_AVAIL
	ReasonHeldUser        Reason = 16  // WAIT_HELD_USER
	ReasonBadConstraints  Reason = 21  // FAIL_BAD_CONSTRAINTS
	ReasonAccount         Reason = 38  // WAIT_ACCOUNT "AccountNotAllowed"
	ReasonPartConfig      Reason = 178 // WAIT_PART_CONFIG
)

var reasonNames = map[Reason]string{
	ReasonNone:            "None",
	ReasonPriority:        "Priority",
	ReasonDependency:      "Dependency",
	ReasonResources:       "Resources",
	ReasonPartNodeLimit:   "PartitionNodeLimit",
	ReasonPartTimeLimit:   "PartitionTimeLimit",
	ReasonPartDown:        "PartitionDown",
	ReasonPartInactive:    "PartitionInactive",
	ReasonHeld:            "JobHeldAdmin",
	ReasonBeginTime:       "BeginTime",
	ReasonReservation:     "Reservation",
	ReasonReqNodeNotAvail: "ReqNodeNotAvail",
	ReasonHeldUser:        "JobHeldUser",
	ReasonBadConstraints:  "BadConstraints",
	ReasonAccount:         "AccountNotAllowed",
	ReasonPartConfig:      "PartitionConfig",
}

// String returns the name squeue shows for the reason.
func (r Reason) String() string {
	if s, ok := reasonNames[r]; ok {
		return s
	}
	return "Unknown"
}
