// Package trigger is slurmctld's event trigger table (strigger): the
// REQUEST_TRIGGER_SET / GET / CLEAR / PULL rules, the events the
// controller notes as they happen, the periodic pass that decides which
// triggers fire, and the saved form of the table.
//
// It is pure: the controller supplies a Cluster view (nodes and jobs,
// read under its lock) and the time, and runs the Launches a pass
// returns itself, outside its lock. Behaviour follows slurmctld 22.05's
// trigger manager, including its quirks (listed where they matter).
package trigger

// Resource types (TRIGGER_RES_TYPE_*).
const (
	ResJob       uint16 = 1
	ResNode      uint16 = 2
	ResSlurmctld uint16 = 3
	ResSlurmdbd  uint16 = 4
	ResDatabase  uint16 = 5
	ResFrontEnd  uint16 = 6
	ResOther     uint16 = 7
)

// Event types (TRIGGER_TYPE_*), a bit each.
const (
	TypeUp             uint32 = 1 << 0
	TypeDown           uint32 = 1 << 1
	TypeFail           uint32 = 1 << 2
	TypeTime           uint32 = 1 << 3
	TypeFini           uint32 = 1 << 4
	TypeReconfig       uint32 = 1 << 5
	TypeIdle           uint32 = 1 << 7
	TypeDrained        uint32 = 1 << 8
	TypePriCtldFail    uint32 = 1 << 9
	TypePriCtldResOp   uint32 = 1 << 10
	TypePriCtldResCtrl uint32 = 1 << 11
	TypePriCtldAcctFul uint32 = 1 << 12
	TypeBuCtldFail     uint32 = 1 << 13
	TypeBuCtldResOp    uint32 = 1 << 14
	TypeBuCtldAsCtrl   uint32 = 1 << 15
	TypePriDbdFail     uint32 = 1 << 16
	TypePriDbdResOp    uint32 = 1 << 17
	TypePriDbFail      uint32 = 1 << 18
	TypePriDbResOp     uint32 = 1 << 19
	TypeBurstBuffer    uint32 = 1 << 20
)

// FlagPerm (TRIGGER_FLAG_PERM) keeps a trigger after it fires.
const FlagPerm uint16 = 1

// OffsetZero is the wire value of a zero offset: strigger sends the
// offset in seconds plus 0x8000 in a u16.
const OffsetZero = 0x8000

// Interval is TRIGGER_INTERVAL: seconds between two passes.
const Interval = 15

// MaxProgTime is MAX_PROG_TIME: a program still running this many
// seconds after it started is killed (its process group), and the fired
// trigger is forgotten then.
const MaxProgTime = 300

// Trigger states.
const (
	statePending uint8 = 0 // waiting for its event
	statePulled  uint8 = 1 // event seen, program due at Time
	stateDone    uint8 = 2 // program started at Time
)

// Wire error numbers that are not Slurm's own codes.
const (
	errnoEAGAIN = 11
	errnoESRCH  = 3
	errnoEINVAL = 22
)
