package msg

import (
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Bodies of the administrative and informational client messages the
// commands send besides the job, node and partition ones: batch scripts,
// licenses, topology, the debug and scheduling-log settings, auth tokens,
// the pid-to-job lookup, the configless reply, sbcast's credential request
// and X11 forwarding (22.05 layouts from slurm_protocol_pack.c).
// Reservations are in reservation.go.

// BatchScriptResponse is RESPONSE_BATCH_SCRIPT: the job's script as one
// packstr (_pack_job_script_msg).
type BatchScriptResponse struct {
	Script NullString
}

func walkBatchScript(w fieldWalker, _ codec.Version, b *BatchScriptResponse) { w.str(&b.Script) }

// License is one slurm_license_info_t record. Slurm's unpacker derives
// "available" (total - in_use, or 0); Available does the same.
type License struct {
	Name     NullString
	Total    uint32
	InUse    uint32
	Reserved uint32
	Remote   uint8
}

// Available is the free count scontrol prints.
func (l License) Available() uint32 {
	if l.Total < l.InUse {
		return 0
	}
	return l.Total - l.InUse
}

// licenseMinSize is the smallest license record: NULL name, three u32, u8.
const licenseMinSize = 4 + 12 + 1

// LicenseInfoResponse is RESPONSE_LICENSE_INFO: u32 count, time
// last_update, then count records. The count comes before the time, so the
// array is walked by hand.
type LicenseInfoResponse struct {
	LastUpdate int64
	Licenses   []License
}

func walkLicenseInfo(w fieldWalker, _ codec.Version, b *LicenseInfoResponse) {
	n := w.count(len(b.Licenses), licenseMinSize)
	w.time(&b.LastUpdate)
	walkCounted(w, &b.Licenses, n, func(w fieldWalker, l *License) {
		w.str(&l.Name)
		w.u32(&l.Total)
		w.u32(&l.InUse)
		w.u32(&l.Reserved)
		w.u8(&l.Remote)
	})
}

// walkCounted walks the items of an array whose count was walked already
// (by count) with other fields between the count and the items.
func walkCounted[T any](w fieldWalker, s *[]T, n int, item func(fieldWalker, *T)) {
	if w.decoding() {
		if w.err() != nil || n == 0 {
			*s = nil
			return
		}
		*s = make([]T, n)
	}
	for i := range *s {
		item(w, &(*s)[i])
		if w.err() != nil {
			return
		}
	}
}

// TopoSwitch is one topo_info_t record (one switch of topology.conf).
type TopoSwitch struct {
	Level     uint16
	LinkSpeed uint32
	Name      NullString
	Nodes     NullString
	Switches  NullString
}

// TopoInfoResponse is RESPONSE_TOPO_INFO: u32 count, then the switches.
type TopoInfoResponse struct {
	Switches []TopoSwitch
}

func walkTopoInfo(w fieldWalker, _ codec.Version, b *TopoInfoResponse) {
	walkArray(w, &b.Switches, 2+4+12, func(w fieldWalker, t *TopoSwitch) {
		w.u16(&t.Level)
		w.u32(&t.LinkSpeed)
		w.str(&t.Name)
		w.str(&t.Nodes)
		w.str(&t.Switches)
	})
}

// SetDebugLevelRequest is REQUEST_SET_DEBUG_LEVEL (slurmctld's log level,
// 0 quiet .. 9 debug5) and REQUEST_SET_SCHEDLOG_LEVEL (0 or 1): u32 level.
type SetDebugLevelRequest struct {
	Level uint32
}

func walkSetDebugLevel(w fieldWalker, _ codec.Version, b *SetDebugLevelRequest) { w.u32(&b.Level) }

// SetDebugFlagsRequest is REQUEST_SET_DEBUG_FLAGS: the DebugFlags bits to
// clear, then those to set (u64 each, minus first).
type SetDebugFlagsRequest struct {
	Minus uint64
	Plus  uint64
}

func walkSetDebugFlags(w fieldWalker, _ codec.Version, b *SetDebugFlagsRequest) {
	w.u64(&b.Minus)
	w.u64(&b.Plus)
}

// SetFSDampeningFactorRequest is REQUEST_SET_FS_DAMPENING_FACTOR: u16.
type SetFSDampeningFactorRequest struct {
	Factor uint16
}

func walkSetFSDampening(w fieldWalker, _ codec.Version, b *SetFSDampeningFactorRequest) {
	w.u16(&b.Factor)
}

// StatsInfoRequest is REQUEST_STATS_INFO (sdiag): u16 command_id (0 reset,
// operators only; 1 get: StatsCommandReset, StatsCommandGet).
type StatsInfoRequest struct {
	CommandID uint16
}

func walkStatsInfoRequest(w fieldWalker, _ codec.Version, b *StatsInfoRequest) { w.u16(&b.CommandID) }

// JobIDRequest is REQUEST_JOB_ID (scontrol pidinfo, sent to the local
// slurmd): u32 pid.
type JobIDRequest struct {
	PID uint32
}

func walkJobIDRequest(w fieldWalker, _ codec.Version, b *JobIDRequest) { w.u32(&b.PID) }

// JobIDResponse is RESPONSE_JOB_ID: u32 job_id, u32 return_code.
type JobIDResponse struct {
	JobID      uint32
	ReturnCode uint32
}

func walkJobIDResponse(w fieldWalker, _ codec.Version, b *JobIDResponse) {
	w.u32(&b.JobID)
	w.u32(&b.ReturnCode)
}

// TokenRequest is REQUEST_AUTH_TOKEN (scontrol token): u32 lifespan, str
// username.
type TokenRequest struct {
	Lifespan uint32
	Username NullString
}

func walkTokenRequest(w fieldWalker, _ codec.Version, b *TokenRequest) {
	w.u32(&b.Lifespan)
	w.str(&b.Username)
}

// TokenResponse is RESPONSE_AUTH_TOKEN: str token.
type TokenResponse struct {
	Token NullString
}

func walkTokenResponse(w fieldWalker, _ codec.Version, b *TokenResponse) { w.str(&b.Token) }

// ConfigFile is one config_file_t of RESPONSE_CONFIG. Exists is the packed
// bool byte as sent (Slurm reads any non-zero byte as true).
type ConfigFile struct {
	Exists  uint8
	Name    NullString
	Content NullString
}

// ConfigResponse is RESPONSE_CONFIG (configless fetch, 21.08+ layout): a
// NO_VAL-able list of files, then str slurmd_spooldir.
type ConfigResponse struct {
	Files          []ConfigFile `slurm:"nullable"`
	SlurmdSpoolDir NullString
}

func walkConfigResponse(w fieldWalker, _ codec.Version, b *ConfigResponse) {
	walkList(w, &b.Files, 1+8, func(w fieldWalker, f *ConfigFile) {
		w.u8(&f.Exists)
		w.str(&f.Name)
		w.str(&f.Content)
	})
	w.str(&b.SlurmdSpoolDir)
}

// SelectedStep is slurm_selected_step_t: REQUEST_JOB_SBCAST_CRED (sbcast
// asks for the credential of a job or step): step_id, u32 array_task_id,
// u32 het_job_offset.
type SelectedStep struct {
	StepID       StepID
	ArrayTaskID  uint32
	HetJobOffset uint32
}

func walkSelectedStep(w fieldWalker, _ codec.Version, b *SelectedStep) {
	walkStepID(w, &b.StepID)
	w.u32(&b.ArrayTaskID)
	w.u32(&b.HetJobOffset)
}

// NetForwardMsg is SRUN_NET_FORWARD (X11 forwarding): u32 job_id, u32
// flags, u16 port, str target.
type NetForwardMsg struct {
	JobID  uint32
	Flags  uint32
	Port   uint16
	Target NullString
}

func walkNetForward(w fieldWalker, _ codec.Version, b *NetForwardMsg) {
	w.u32(&b.JobID)
	w.u32(&b.Flags)
	w.u16(&b.Port)
	w.str(&b.Target)
}

func init() { registrars = append(registrars, registerAdmin) }

func registerAdmin(g *codec.Registry) {
	g.Register(msgtype.RESPONSE_BATCH_SCRIPT, bodyCodec("RESPONSE_BATCH_SCRIPT", walkBatchScript))
	g.Register(msgtype.RESPONSE_LICENSE_INFO, bodyCodec("RESPONSE_LICENSE_INFO", walkLicenseInfo))
	g.Register(msgtype.RESPONSE_TOPO_INFO, bodyCodec("RESPONSE_TOPO_INFO", walkTopoInfo))
	lvl := bodyCodec("set_debug_level", walkSetDebugLevel)
	g.Register(msgtype.REQUEST_SET_DEBUG_LEVEL, lvl)
	g.Register(msgtype.REQUEST_SET_SCHEDLOG_LEVEL, lvl)
	g.Register(msgtype.REQUEST_SET_DEBUG_FLAGS, bodyCodec("REQUEST_SET_DEBUG_FLAGS", walkSetDebugFlags))
	g.Register(msgtype.REQUEST_SET_FS_DAMPENING_FACTOR,
		bodyCodec("REQUEST_SET_FS_DAMPENING_FACTOR", walkSetFSDampening))
	g.Register(msgtype.REQUEST_STATS_INFO, bodyCodec("REQUEST_STATS_INFO", walkStatsInfoRequest))
	g.Register(msgtype.REQUEST_JOB_ID, bodyCodec("REQUEST_JOB_ID", walkJobIDRequest))
	g.Register(msgtype.RESPONSE_JOB_ID, bodyCodec("RESPONSE_JOB_ID", walkJobIDResponse))
	g.Register(msgtype.REQUEST_AUTH_TOKEN, bodyCodec("REQUEST_AUTH_TOKEN", walkTokenRequest))
	g.Register(msgtype.RESPONSE_AUTH_TOKEN, bodyCodec("RESPONSE_AUTH_TOKEN", walkTokenResponse))
	g.Register(msgtype.RESPONSE_CONFIG, bodyCodec("RESPONSE_CONFIG", walkConfigResponse))
	g.Register(msgtype.REQUEST_JOB_SBCAST_CRED, bodyCodec("REQUEST_JOB_SBCAST_CRED", walkSelectedStep))
	g.Register(msgtype.SRUN_NET_FORWARD, bodyCodec("SRUN_NET_FORWARD", walkNetForward))
	// RESPONSE_SLURM_REROUTE_MSG is a u8 "cluster record follows" and the
	// record, a federation matter like RESPONSE_FED_INFO: its body type is
	// FedInfoResponse, and only the form without a record is supported.
	g.Register(msgtype.RESPONSE_SLURM_REROUTE_MSG, bodyCodec("RESPONSE_SLURM_REROUTE_MSG", walkFedInfo))
}
