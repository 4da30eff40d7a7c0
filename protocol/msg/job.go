package msg

// Job-side building blocks shared by the job descriptor, job records, step
// records and allocation responses (reference §3 composite helpers), the
// submit response, and the registration of every job codec. The records
// themselves live in jobdesc.go, jobinfo.go, step.go and alloc.go. They use
// the conventions of small.go (NullString, HexBitmap, PackedDouble, walks).

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// Special step ids (slurm.h).
const (
	StepIDBatch       uint32 = 0xfffffffb // SLURM_BATCH_SCRIPT
	StepIDExtern      uint32 = 0xfffffffc // SLURM_EXTERN_CONT
	StepIDPending     uint32 = 0xfffffffd // SLURM_PENDING_STEP
	StepIDInteractive uint32 = 0xfffffffa // SLURM_INTERACTIVE_STEP
	StepIDMaxNormal   uint32 = 0xfffffff0 // SLURM_MAX_NORMAL_STEP_ID: ids from here on are special
)

// StepID is a slurm_step_id_t as pack_step_id packs it in 22.05: u32 job_id,
// u32 step_id, u32 step_het_comp. (25.11 prepends a u64 sluid.)
type StepID struct {
	JobID       uint32
	StepID      uint32
	StepHetComp uint32
}

func walkStepID(w fieldWalker, p *StepID) {
	w.u32(&p.JobID)
	w.u32(&p.StepID)
	w.u32(&p.StepHetComp)
}

// SelectPlugin is the plugin id that starts a packed select_jobinfo. For the
// plugins a 22.05 cluster runs outside Cray (cons_res, linear, cons_tres) the
// job data that follows is empty, so the id is all there is.
type SelectPlugin uint32

// Select plugin ids (slurm.h select_plugin_type).
const (
	SelectConsRes  SelectPlugin = 101
	SelectLinear   SelectPlugin = 102
	SelectConsTres SelectPlugin = 109
)

// walkSelectJobinfo handles select_g_select_jobinfo_pack/unpack. Ids of
// plugins whose job data is not empty (Cray) or unknown ids fail with
// ErrPlugin, in both directions: Slurm's client fails the whole unpack for an
// id it has no plugin for.
func walkSelectJobinfo(w fieldWalker, p *SelectPlugin) {
	w.u32((*uint32)(p))
	switch *p {
	case SelectConsRes, SelectLinear, SelectConsTres:
	default:
		if w.err() == nil {
			jobFail(w, fmt.Errorf("%w: select plugin %d", ErrPlugin, uint32(*p)))
		}
	}
}

// MultiCore is a multi_core_data_t: the socket/core/thread request of a job.
// On the wire a nil *MultiCore is the single byte 0, a present one 0xff and
// nine u16.
type MultiCore struct {
	BoardsPerNode   uint16
	SocketsPerBoard uint16
	SocketsPerNode  uint16
	CoresPerSocket  uint16
	ThreadsPerCore  uint16
	NtasksPerBoard  uint16
	NtasksPerSocket uint16
	NtasksPerCore   uint16
	PlaneSize       uint16
}

func walkMultiCore(w fieldWalker, p **MultiCore) {
	var flag uint8
	if !w.decoding() && *p != nil {
		flag = 0xff
	}
	flag = valU8(w, flag)
	if w.decoding() {
		*p = nil
		if w.err() != nil || flag == 0 {
			return
		}
		if flag != 0xff {
			w.fail(fmt.Errorf("msg: multi_core flag %#x, want 0 or 0xff", flag))
			return
		}
		*p = new(MultiCore)
	} else if flag == 0 {
		return
	}
	m := *p
	w.u16(&m.BoardsPerNode)
	w.u16(&m.SocketsPerBoard)
	w.u16(&m.SocketsPerNode)
	w.u16(&m.CoresPerSocket)
	w.u16(&m.ThreadsPerCore)
	w.u16(&m.NtasksPerBoard)
	w.u16(&m.NtasksPerSocket)
	w.u16(&m.NtasksPerCore)
	w.u16(&m.PlaneSize)
}

// CronEntry is a cron_entry_t (scrontab). On the wire a nil *CronEntry is
// the byte 0; a present one is 1 followed by its fields. (Slurm takes any
// non-zero byte as present; this codec insists on 1 so that a decoded entry
// re-encodes to the same bytes.)
type CronEntry struct {
	Flags      uint32
	Minute     HexBitmap
	Hour       HexBitmap
	DayOfMonth HexBitmap
	Month      HexBitmap
	DayOfWeek  HexBitmap
	Cronspec   NullString
	LineStart  uint32
	LineEnd    uint32
}

func walkCronEntry(w fieldWalker, p **CronEntry) {
	var set uint8
	if !w.decoding() && *p != nil {
		set = 1
	}
	set = valU8(w, set)
	if w.decoding() {
		*p = nil
		if w.err() != nil || set == 0 {
			return
		}
		if set != 1 {
			w.fail(fmt.Errorf("msg: cron_entry flag %d, want 0 or 1", set))
			return
		}
		*p = new(CronEntry)
	} else if set == 0 {
		return
	}
	c := *p
	w.u32(&c.Flags)
	w.bitmap(&c.Minute)
	w.bitmap(&c.Hour)
	w.bitmap(&c.DayOfMonth)
	w.bitmap(&c.Month)
	w.bitmap(&c.DayOfWeek)
	w.str(&c.Cronspec)
	w.u32(&c.LineStart)
	w.u32(&c.LineEnd)
}

// jobFail records err in w; when w is encoding the error also matches
// codec.ErrEncode.
func jobFail(w fieldWalker, err error) {
	if !w.decoding() {
		err = fmt.Errorf("%w: %w", codec.ErrEncode, err)
	}
	w.fail(err)
}

// The val* helpers walk a value that lives in a local variable (a flag or
// count computed from the record): passing the local's address through the
// fieldWalker interface would move it to the heap on every call.

func valU8(w fieldWalker, v uint8) uint8 {
	switch x := w.(type) {
	case *encoder:
		x.w.U8(v)
		return v
	case *decoder:
		return x.r.U8()
	}
	t := v // only this path lets the value escape
	w.u8(&t)
	return t
}

func valU16(w fieldWalker, v uint16) uint16 {
	switch x := w.(type) {
	case *encoder:
		x.w.U16(v)
		return v
	case *decoder:
		return x.r.U16()
	}
	t := v // only this path lets the value escape
	w.u16(&t)
	return t
}

func valU32(w fieldWalker, v uint32) uint32 {
	switch x := w.(type) {
	case *encoder:
		x.w.U32(v)
		return v
	case *decoder:
		return x.r.U32()
	}
	t := v // only this path lets the value escape
	w.u32(&t)
	return t
}

func valStr(w fieldWalker, v NullString) NullString {
	switch x := w.(type) {
	case *encoder:
		x.w.OptStr(v.Value, v.Valid)
		return v
	case *decoder:
		v.Value, v.Valid = x.r.OptStr()
		return v
	}
	t := v // only this path lets the value escape
	w.str(&t)
	return t
}

// walkU16s, walkU32s and walkU64s walk pack16/32/64_array values (u32 count,
// nil when 0).
func walkU16s(w fieldWalker, s *[]uint16) {
	walkArray(w, s, 2, func(w fieldWalker, p *uint16) { w.u16(p) })
}

func walkU32s(w fieldWalker, s *[]uint32) {
	walkArray(w, s, 4, func(w fieldWalker, p *uint32) { w.u32(p) })
}

func walkU64s(w fieldWalker, s *[]uint64) {
	walkArray(w, s, 8, func(w fieldWalker, p *uint64) { w.u64(p) })
}

// walkEnvArray walks a packstr_array that Slurm checks with envcount: no
// element may be NULL (the job environment and SPANK environment).
func walkEnvArray(w fieldWalker, s *[]NullString, what string) {
	walkStrArray(w, s)
	for i, e := range *s {
		if !e.Valid && w.err() == nil {
			jobFail(w, fmt.Errorf("msg: %s entry %d is NULL", what, i))
		}
	}
}

// walkHetCount walks the u16 record count of the het-job list messages;
// Slurm rejects 0xffff. A decoded count is bounded by minSize bytes per record.
func walkHetCount(w fieldWalker, n int, minSize int, what string) int {
	c := uint16(n)
	if !w.decoding() && n >= int(pack.NoVal16)+1 {
		w.fail(fmt.Errorf("%w: %d %s records", codec.ErrEncode, n, what))
		return 0
	}
	c = valU16(w, c)
	if !w.decoding() {
		return n
	}
	if w.err() != nil {
		return 0
	}
	if c > pack.NoVal16 {
		w.fail(fmt.Errorf("msg: %s count %#x", what, c))
		return 0
	}
	if d, ok := w.(*decoder); ok && int(c) > d.r.Remaining()/minSize {
		w.fail(fmt.Errorf("%w: %d %s records of at least %d bytes, %d bytes remain", pack.ErrTooLong, c, what, minSize, d.r.Remaining()))
		return 0
	}
	return int(c)
}

// SubmitResponse is RESPONSE_SUBMIT_BATCH_JOB (submit_response_msg_t). The
// controller sends StepID = StepIDBatch.
type SubmitResponse struct {
	JobID            uint32
	StepID           uint32
	ErrorCode        uint32
	JobSubmitUserMsg NullString
}

func walkSubmitResponse(w fieldWalker, _ codec.Version, b *SubmitResponse) {
	w.u32(&b.JobID)
	w.u32(&b.StepID)
	w.u32(&b.ErrorCode)
	w.str(&b.JobSubmitUserMsg)
}

func init() { registrars = append(registrars, registerJob) }

func registerJob(g *codec.Registry) {
	desc := bodyCodec("job_desc", walkJobDesc)
	for _, t := range []msgtype.Type{
		msgtype.REQUEST_SUBMIT_BATCH_JOB, msgtype.REQUEST_RESOURCE_ALLOCATION,
		msgtype.REQUEST_JOB_WILL_RUN, msgtype.REQUEST_UPDATE_JOB,
	} {
		g.Register(t, desc)
	}
	descs := bodyCodec("job_desc list", walkJobDescList)
	g.Register(msgtype.REQUEST_HET_JOB_ALLOCATION, descs)
	g.Register(msgtype.REQUEST_SUBMIT_BATCH_HET_JOB, descs)
	g.Register(msgtype.RESPONSE_SUBMIT_BATCH_JOB, bodyCodec("RESPONSE_SUBMIT_BATCH_JOB", walkSubmitResponse))
	g.Register(msgtype.RESPONSE_JOB_INFO, bodyCodec("RESPONSE_JOB_INFO", walkJobInfoMsg))
	g.Register(msgtype.RESPONSE_JOB_STEP_INFO, bodyCodec("RESPONSE_JOB_STEP_INFO", walkStepInfoMsg))
	alloc := bodyCodec("resource_allocation_response", walkAllocation)
	g.Register(msgtype.RESPONSE_RESOURCE_ALLOCATION, alloc)
	g.Register(msgtype.RESPONSE_JOB_ALLOCATION_INFO, alloc)
	g.Register(msgtype.RESPONSE_HET_JOB_ALLOCATION, bodyCodec("RESPONSE_HET_JOB_ALLOCATION", walkHetAllocation))
}
