package msg

// Conventions for every typed body of this package
//
//   - Strings: Slurm tells a NULL string (u32 0) from "" (u32 1, 0x00), and
//     both occur on the wire. Every packstr field is a NullString, whose zero
//     value is NULL, which is also Slurm's default for an unset char*. Use
//     Str("x") to set one; NullString.String() reads it.
//   - Lists that Slurm packs with a NO_VAL count when absent (slurm_pack_list,
//     key-pair lists, the job id list of REQUEST_JOB_INFO) are Go slices
//     tagged `slurm:"nullable"`: nil is NO_VAL (no list), a non-nil empty
//     slice is count 0. Every other slice (packstr_array, record arrays) is
//     decoded as nil when its count is 0.
//   - Doubles travel as the bits of value*1e6; PackedDouble keeps those bits
//     so a body re-encodes to the same bytes. Float64 converts.
//   - Bitmaps (pack_bit_str_hex) are HexBitmap: the bit count and the hex
//     text as sent.
//   - Times (pack_time) are int64 Unix seconds.
//
// Each record is described once, by a walk function that visits its fields in
// wire order with a fieldWalker; the decoder and the encoder are the same
// walk with a reading or a writing walker, so the two cannot disagree. Walks
// take the protocol version, so a later release can branch inside them.
// Decoders return a zero value with the error: never a partial message.
// Decoders do not insist that the body is used up; the frame layer checks
// body_length, and the tests check Reader.Done.

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// NullString is a packstr value: Valid false is NULL.
type NullString struct {
	Value string
	Valid bool
}

// Str returns a non-NULL NullString holding s.
func Str(s string) NullString { return NullString{Value: s, Valid: true} }

// String returns the value; NULL reads as "".
func (s NullString) String() string { return s.Value }

// GoString shows NULL distinctly, for test failure messages.
func (s NullString) GoString() string {
	if !s.Valid {
		return "NULL"
	}
	return strconv.Quote(s.Value)
}

// PackedDouble is a packdouble value as carried on the wire: the IEEE-754 bits
// of value*1e6.
type PackedDouble uint64

// PackDouble returns the wire form of f.
func PackDouble(f float64) PackedDouble { return PackedDouble(math.Float64bits(f * 1e6)) }

// Float64 returns the value the sender packed.
func (d PackedDouble) Float64() float64 { return math.Float64frombits(uint64(d)) / 1e6 }

// HexBitmap is a pack_bit_str_hex value. Null is a NULL bitmap (u32 NO_VAL
// alone). Otherwise NBits is the bitmap size and Hex the text Slurm sends
// ("0x" and upper-case hex digits, bit 0 the lowest bit of the last digit).
type HexBitmap struct {
	Null  bool
	NBits uint32
	Hex   NullString
}

// NullBitmap is the NULL bitmap.
var NullBitmap = HexBitmap{Null: true}

// BitmapOf returns the bitmap of nbits bits with the given bits set, as Slurm
// formats it.
func BitmapOf(nbits int, set ...int) HexBitmap {
	digits := (nbits + 3) / 4
	if digits == 0 {
		digits = 1
	}
	d := make([]byte, digits)
	for _, i := range set {
		if i >= 0 && i < nbits {
			d[digits-1-i/4] |= 1 << (i % 4)
		}
	}
	const hexd = "0123456789ABCDEF"
	for i := range d {
		d[i] = hexd[d[i]]
	}
	return HexBitmap{NBits: uint32(nbits), Hex: Str("0x" + string(d))}
}

// Bits returns the indexes of the set bits below NBits, in increasing order.
func (b HexBitmap) Bits() ([]int, error) {
	if err := b.check(); err != nil || b.Null || b.NBits == 0 {
		return nil, err
	}
	h := hexDigits(b.Hex.Value)
	var out []int
	for k := 0; k < len(h); k++ {
		v := hexValue(h[len(h)-1-k])
		for j := 0; j < 4; j++ {
			if v&(1<<j) != 0 {
				out = append(out, k*4+j)
			}
		}
	}
	return out, nil
}

// check reports what Bits would fail on, without building the list: a
// reply of 10,000 jobs carries as many bitmaps.
func (b HexBitmap) check() error {
	if b.Null || b.NBits == 0 {
		return nil
	}
	h := hexDigits(b.Hex.Value)
	for k := 0; k < len(h); k++ {
		c := h[len(h)-1-k]
		v := hexValue(c)
		if v < 0 {
			return fmt.Errorf("msg: bad hex digit %q in bitmap", c)
		}
		if v == 0 || k*4+3 < int(b.NBits) {
			continue
		}
		for j := 0; j < 4; j++ {
			if i := k*4 + j; v&(1<<j) != 0 && i >= int(b.NBits) {
				return fmt.Errorf("msg: bitmap bit %d beyond size %d", i, b.NBits)
			}
		}
	}
	return nil
}

func hexDigits(h string) string {
	if len(h) >= 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X') {
		return h[2:]
	}
	return h
}

// hexValue is the digit's value, -1 for a byte that is not one.
func hexValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}

// KeyPair is one config_key_pair_t: a name and its value.
type KeyPair struct {
	Name  NullString
	Value NullString
}

// PluginParams is one config_plugin_params_t: a plugin name and its
// key-value list (nil is NO_VAL).
type PluginParams struct {
	Name     NullString
	KeyPairs []KeyPair `slurm:"nullable"`
}

// JobDefault is one job_defaults_t record (DefMemPerCPU and friends on a
// partition or cluster): u16 type, u64 value.
type JobDefault struct {
	Type  uint16
	Value uint64
}

// ErrPlugin reports a plugin id inside a record (select_nodeinfo) whose data
// layout this codec does not know; Slurm fails the whole unpack likewise.
var ErrPlugin = errors.New("msg: unknown plugin id")

// ---------------------------------------------------------------------------
// Walkers.

type fieldWalker interface {
	decoding() bool
	u8(*uint8)
	u16(*uint16)
	u32(*uint32)
	u64(*uint64)
	time(*int64)
	str(*NullString)
	dbl(*PackedDouble)
	bitmap(*HexBitmap)
	// listCount handles the count of a NO_VAL-able list; count the count of
	// a plain array. Both bound a decoded count by minSize bytes per element.
	listCount(n int, present bool, minSize int) (int, bool)
	count(n int, minSize int) int
	fail(error)
	err() error
}

type decoder struct{ r *pack.Reader }

func (d *decoder) decoding() bool      { return true }
func (d *decoder) u8(p *uint8)         { *p = d.r.U8() }
func (d *decoder) u16(p *uint16)       { *p = d.r.U16() }
func (d *decoder) u32(p *uint32)       { *p = d.r.U32() }
func (d *decoder) u64(p *uint64)       { *p = d.r.U64() }
func (d *decoder) time(p *int64)       { *p = d.r.Time() }
func (d *decoder) str(p *NullString)   { p.Value, p.Valid = d.r.OptStr() }
func (d *decoder) dbl(p *PackedDouble) { *p = PackedDouble(d.r.U64()) }
func (d *decoder) fail(err error)      { d.r.Fail(err) }
func (d *decoder) err() error          { return d.r.Err() }
func (d *decoder) count(_ int, minSize int) int {
	return d.r.Count(minSize)
}
func (d *decoder) listCount(_ int, _ bool, minSize int) (int, bool) {
	return d.r.ListCount(minSize)
}

func (d *decoder) bitmap(p *HexBitmap) {
	n := d.r.U32()
	if n == pack.NoVal {
		*p = HexBitmap{Null: true}
		return
	}
	*p = HexBitmap{NBits: n}
	d.str(&p.Hex)
	if d.r.Err() != nil || n == 0 {
		return
	}
	// Slurm parses the text into a bitmap of n bits and fails the unpack
	// when it does not fit.
	if err := p.check(); err != nil || !p.Hex.Valid {
		d.r.Fail(fmt.Errorf("msg: malformed bitmap %q (%d bits): %v", p.Hex.Value, n, err))
	}
}

type encoder struct {
	w *pack.Writer
	e error
}

func (e *encoder) decoding() bool      { return false }
func (e *encoder) u8(p *uint8)         { e.w.U8(*p) }
func (e *encoder) u16(p *uint16)       { e.w.U16(*p) }
func (e *encoder) u32(p *uint32)       { e.w.U32(*p) }
func (e *encoder) u64(p *uint64)       { e.w.U64(*p) }
func (e *encoder) time(p *int64)       { e.w.Time(*p) }
func (e *encoder) str(p *NullString)   { e.w.OptStr(p.Value, p.Valid) }
func (e *encoder) dbl(p *PackedDouble) { e.w.U64(uint64(*p)) }
func (e *encoder) err() error          { return e.e }
func (e *encoder) fail(err error) {
	if e.e == nil {
		e.e = err
	}
}

func (e *encoder) count(n int, _ int) int {
	if uint64(n) >= uint64(pack.NoVal) {
		e.fail(fmt.Errorf("%w: %d elements", codec.ErrEncode, n))
	}
	e.w.U32(uint32(n))
	return n
}

func (e *encoder) listCount(n int, present bool, _ int) (int, bool) {
	if present && uint64(n) >= uint64(pack.NoVal) {
		e.fail(fmt.Errorf("%w: %d elements", codec.ErrEncode, n))
	}
	e.w.ListCount(n, present)
	return n, present
}

func (e *encoder) bitmap(p *HexBitmap) {
	if p.Null {
		e.w.U32(pack.NoVal)
		return
	}
	if p.NBits == pack.NoVal {
		e.fail(fmt.Errorf("%w: bitmap of NO_VAL bits", codec.ErrEncode))
	}
	e.w.U32(p.NBits)
	e.str(&p.Hex)
}

// walkArray walks a plain counted array (u32 count, no NO_VAL); a decoded
// count of 0 gives nil.
func walkArray[T any](w fieldWalker, s *[]T, minSize int, item func(fieldWalker, *T)) {
	n := w.count(len(*s), minSize)
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

// walkList walks a NO_VAL-able list: nil is NO_VAL.
func walkList[T any](w fieldWalker, s *[]T, minSize int, item func(fieldWalker, *T)) {
	n, ok := w.listCount(len(*s), *s != nil, minSize)
	if w.decoding() {
		if w.err() != nil || !ok {
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

func walkStrArray(w fieldWalker, s *[]NullString) {
	walkArray(w, s, 4, func(w fieldWalker, p *NullString) { w.str(p) })
}

func walkKeyPair(w fieldWalker, k *KeyPair) {
	w.str(&k.Name)
	w.str(&k.Value)
}

func walkKeyPairs(w fieldWalker, l *[]KeyPair) { walkList(w, l, 8, walkKeyPair) }

func walkPluginParams(w fieldWalker, l *[]PluginParams) {
	walkList(w, l, 8, func(w fieldWalker, p *PluginParams) {
		w.str(&p.Name)
		walkKeyPairs(w, &p.KeyPairs)
	})
}

func walkJobDefaults(w fieldWalker, l *[]JobDefault) {
	walkList(w, l, 10, func(w fieldWalker, j *JobDefault) {
		w.u16(&j.Type)
		w.u64(&j.Value)
	})
}

// bodyCodec builds a BodyCodec for body type T from its walk. Encode accepts
// T or *T.
func bodyCodec[T any](name string, walk func(fieldWalker, codec.Version, *T)) codec.BodyCodec {
	return codec.BodyCodec{
		Decode: func(r *pack.Reader, v codec.Version) (any, error) {
			if err := checkVersion(name, v); err != nil {
				return nil, err
			}
			var b T
			walk(&decoder{r: r}, v, &b)
			if err := r.Err(); err != nil {
				return nil, fmt.Errorf("msg: decode %s: %w", name, err)
			}
			return b, nil
		},
		Encode: func(w *pack.Writer, v codec.Version, body any) error {
			if err := checkVersion(name, v); err != nil {
				return err
			}
			var p *T
			switch b := body.(type) {
			case T:
				p = &b
			case *T:
				if b == nil {
					return fmt.Errorf("%w: nil %s body", codec.ErrEncode, name)
				}
				p = b
			default:
				var zero T
				return fmt.Errorf("%w: %s body is %T, want %T", codec.ErrEncode, name, body, zero)
			}
			e := &encoder{w: w}
			walk(e, v, p)
			if e.e != nil {
				// w may hold part of the body; the caller drops it.
				return fmt.Errorf("msg: encode %s: %w", name, e.e)
			}
			return nil
		},
	}
}

// checkVersion: the bodies here are written for protocol 22.05. Older and
// newer layouts branch inside the walks once they are implemented.
func checkVersion(name string, v codec.Version) error {
	if v != codec.Version2205 {
		return fmt.Errorf("%w: %s body at protocol %v", codec.ErrVersion, name, v)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Small messages (reference §5.1).

// Empty is the body of messages that carry none: REQUEST_PING,
// REQUEST_RECONFIGURE, REQUEST_FED_INFO, REQUEST_TAKEOVER,
// REQUEST_CONTROL_STATUS, REQUEST_TOPO_INFO, REQUEST_BURST_BUFFER_INFO.
type Empty struct{}

func walkEmpty(fieldWalker, codec.Version, *Empty) {}

// ShutdownRequest is REQUEST_SHUTDOWN: u16 options (0 all daemons, 1 slurmctld
// abort with core, 2 slurmctld only).
type ShutdownRequest struct {
	Options uint16
}

func walkShutdown(w fieldWalker, _ codec.Version, b *ShutdownRequest) { w.u16(&b.Options) }

// LastUpdateRequest is REQUEST_BUILD_INFO and REQUEST_RESERVATION_INFO: the
// last_update of the client's cached copy (0 for none).
type LastUpdateRequest struct {
	LastUpdate int64
}

func walkLastUpdate(w fieldWalker, _ codec.Version, b *LastUpdateRequest) { w.time(&b.LastUpdate) }

// Show flags of the *_INFO requests.
const (
	ShowAll        uint16 = 0x01
	ShowDetail     uint16 = 0x02
	ShowMixed      uint16 = 0x08
	ShowLocal      uint16 = 0x10
	ShowSibling    uint16 = 0x20
	ShowFederation uint16 = 0x40
	ShowFuture     uint16 = 0x80
)

// InfoRequest is REQUEST_NODE_INFO, REQUEST_PARTITION_INFO and
// REQUEST_LICENSE_INFO: time last_update, u16 show_flags.
type InfoRequest struct {
	LastUpdate int64
	ShowFlags  uint16
}

func walkInfoRequest(w fieldWalker, _ codec.Version, b *InfoRequest) {
	w.time(&b.LastUpdate)
	w.u16(&b.ShowFlags)
}

// NodeInfoSingleRequest is REQUEST_NODE_INFO_SINGLE.
type NodeInfoSingleRequest struct {
	NodeName  NullString
	ShowFlags uint16
}

func walkNodeInfoSingle(w fieldWalker, _ codec.Version, b *NodeInfoSingleRequest) {
	w.str(&b.NodeName)
	w.u16(&b.ShowFlags)
}

// JobInfoRequest is REQUEST_JOB_INFO: time last_update, u16 show_flags, and an
// optional list of job ids (nil: NO_VAL, every job).
type JobInfoRequest struct {
	LastUpdate int64
	ShowFlags  uint16
	JobIDs     []uint32 `slurm:"nullable"`
}

func walkJobInfoRequest(w fieldWalker, _ codec.Version, b *JobInfoRequest) {
	w.time(&b.LastUpdate)
	w.u16(&b.ShowFlags)
	walkList(w, &b.JobIDs, 4, func(w fieldWalker, p *uint32) { w.u32(p) })
}

// Flags of JobStepKillRequest.
const (
	KillJobBatch   uint16 = 0x01
	KillJobArray   uint16 = 0x02
	KillStepsOnly  uint16 = 0x04
	KillFullJob    uint16 = 0x08
	KillFedRequeue uint16 = 0x10
	KillHurry      uint16 = 0x20
	KillOOM        uint16 = 0x40
	KillNoSibs     uint16 = 0x80
)

// JobStepKillRequest is job_step_kill_msg_t: REQUEST_KILL_JOB,
// REQUEST_CANCEL_JOB_STEP and SRUN_STEP_SIGNAL. scancel ID sends the step id
// {NO_VAL, NO_VAL, NO_VAL} with SJobID "ID".
type JobStepKillRequest struct {
	StepID  StepID
	SJobID  NullString
	Sibling NullString
	Signal  uint16
	Flags   uint16
}

func walkJobStepKill(w fieldWalker, _ codec.Version, b *JobStepKillRequest) {
	walkStepID(w, &b.StepID)
	w.str(&b.SJobID)
	w.str(&b.Sibling)
	w.u16(&b.Signal)
	w.u16(&b.Flags)
}

// DeletePartitionRequest is REQUEST_DELETE_PARTITION.
type DeletePartitionRequest struct {
	Name NullString
}

func walkDeletePartition(w fieldWalker, _ codec.Version, b *DeletePartitionRequest) { w.str(&b.Name) }

// RebootNodesRequest is REQUEST_REBOOT_NODES.
type RebootNodesRequest struct {
	Features  NullString
	Flags     uint16
	NextState uint32
	NodeList  NullString
	Reason    NullString
}

func walkRebootNodes(w fieldWalker, _ codec.Version, b *RebootNodesRequest) {
	w.str(&b.Features)
	w.u16(&b.Flags)
	w.u32(&b.NextState)
	w.str(&b.NodeList)
	w.str(&b.Reason)
}

// ConfigRequest is REQUEST_CONFIG: u32 flags (0 slurm.conf for a client,
// 1 the slurmd set).
type ConfigRequest struct {
	Flags uint32
}

func walkConfigRequest(w fieldWalker, _ codec.Version, b *ConfigRequest) { w.u32(&b.Flags) }

// FedInfoResponse is RESPONSE_FED_INFO. Only the non-federated form (a single
// 0 byte) is supported; a federation record fails to decode.
type FedInfoResponse struct{}

func walkFedInfo(w fieldWalker, _ codec.Version, _ *FedInfoResponse) {
	var present uint8
	w.u8(&present)
	if w.decoding() && present != 0 {
		w.fail(fmt.Errorf("%w: federation records are not supported", ErrPlugin))
	}
}

func init() { registrars = append(registrars, registerSmall) }

func registerSmall(g *codec.Registry) {
	empty := bodyCodec("empty body", walkEmpty)
	for _, t := range []msgtype.Type{
		msgtype.REQUEST_PING, msgtype.REQUEST_RECONFIGURE, msgtype.REQUEST_FED_INFO,
		msgtype.REQUEST_TAKEOVER, msgtype.REQUEST_CONTROL_STATUS, msgtype.REQUEST_TOPO_INFO,
		msgtype.REQUEST_BURST_BUFFER_INFO,
	} {
		g.Register(t, empty)
	}
	g.Register(msgtype.REQUEST_SHUTDOWN, bodyCodec("REQUEST_SHUTDOWN", walkShutdown))
	lu := bodyCodec("last_update request", walkLastUpdate)
	g.Register(msgtype.REQUEST_BUILD_INFO, lu)
	g.Register(msgtype.REQUEST_RESERVATION_INFO, lu)
	info := bodyCodec("info request", walkInfoRequest)
	g.Register(msgtype.REQUEST_NODE_INFO, info)
	g.Register(msgtype.REQUEST_PARTITION_INFO, info)
	g.Register(msgtype.REQUEST_LICENSE_INFO, info)
	g.Register(msgtype.REQUEST_NODE_INFO_SINGLE, bodyCodec("REQUEST_NODE_INFO_SINGLE", walkNodeInfoSingle))
	g.Register(msgtype.REQUEST_JOB_INFO, bodyCodec("REQUEST_JOB_INFO", walkJobInfoRequest))
	kill := bodyCodec("job_step_kill", walkJobStepKill)
	g.Register(msgtype.REQUEST_KILL_JOB, kill)
	g.Register(msgtype.REQUEST_CANCEL_JOB_STEP, kill)
	g.Register(msgtype.SRUN_STEP_SIGNAL, kill)
	g.Register(msgtype.REQUEST_DELETE_PARTITION, bodyCodec("REQUEST_DELETE_PARTITION", walkDeletePartition))
	g.Register(msgtype.REQUEST_REBOOT_NODES, bodyCodec("REQUEST_REBOOT_NODES", walkRebootNodes))
	g.Register(msgtype.REQUEST_CONFIG, bodyCodec("REQUEST_CONFIG", walkConfigRequest))
	g.Register(msgtype.RESPONSE_FED_INFO, bodyCodec("RESPONSE_FED_INFO", walkFedInfo))
}

// ---------------------------------------------------------------------------
// Job-side small messages of reference §5.1 (the job records themselves are
// in the job files).

// JobIDShowRequest is REQUEST_JOB_INFO_SINGLE, REQUEST_JOB_READY and
// REQUEST_BATCH_SCRIPT: u32 job_id, u16 show_flags.
type JobIDShowRequest struct {
	JobID     uint32
	ShowFlags uint16
}

func walkJobIDShow(w fieldWalker, _ codec.Version, b *JobIDShowRequest) {
	w.u32(&b.JobID)
	w.u16(&b.ShowFlags)
}

// JobUserInfoRequest is REQUEST_JOB_USER_INFO.
type JobUserInfoRequest struct {
	UserID    uint32
	ShowFlags uint16
}

func walkJobUserInfo(w fieldWalker, _ codec.Version, b *JobUserInfoRequest) {
	w.u32(&b.UserID)
	w.u16(&b.ShowFlags)
}

// JobStepInfoRequest is REQUEST_JOB_STEP_INFO; squeue -s asks for
// {NO_VAL, NO_VAL, NO_VAL}.
type JobStepInfoRequest struct {
	LastUpdate int64
	StepID     StepID
	ShowFlags  uint16
}

func walkJobStepInfoRequest(w fieldWalker, _ codec.Version, b *JobStepInfoRequest) {
	w.time(&b.LastUpdate)
	walkStepID(w, &b.StepID)
	w.u16(&b.ShowFlags)
}

// CompleteJobAllocationRequest is REQUEST_COMPLETE_JOB_ALLOCATION.
type CompleteJobAllocationRequest struct {
	JobID uint32
	JobRC uint32
}

func walkCompleteJobAllocation(w fieldWalker, _ codec.Version, b *CompleteJobAllocationRequest) {
	w.u32(&b.JobID)
	w.u32(&b.JobRC)
}

// JobAllocInfoRequest is REQUEST_JOB_ALLOCATION_INFO,
// REQUEST_HET_JOB_ALLOC_INFO and REQUEST_JOB_END_TIME.
type JobAllocInfoRequest struct {
	JobID      uint32
	ReqCluster NullString
}

func walkJobAllocInfo(w fieldWalker, _ codec.Version, b *JobAllocInfoRequest) {
	w.u32(&b.JobID)
	w.str(&b.ReqCluster)
}

// JobArrayError is one entry of RESPONSE_JOB_ARRAY_ERRORS.
type JobArrayError struct {
	ErrorCode  uint32
	JobArrayID NullString
}

// JobArrayErrorsResponse is RESPONSE_JOB_ARRAY_ERRORS.
type JobArrayErrorsResponse struct {
	Errors []JobArrayError
}

func walkJobArrayErrors(w fieldWalker, _ codec.Version, b *JobArrayErrorsResponse) {
	walkArray(w, &b.Errors, 8, func(w fieldWalker, e *JobArrayError) {
		w.u32(&e.ErrorCode)
		w.str(&e.JobArrayID)
	})
}

// SuspendRequest is REQUEST_SUSPEND and SRUN_REQUEST_SUSPEND; TopJobRequest
// (REQUEST_TOP_JOB) has the same fields in the same order.
type SuspendRequest struct {
	Op       uint16
	JobID    uint32
	JobIDStr NullString
}

func walkSuspend(w fieldWalker, _ codec.Version, b *SuspendRequest) {
	w.u16(&b.Op)
	w.u32(&b.JobID)
	w.str(&b.JobIDStr)
}

// JobRequeueRequest is REQUEST_JOB_REQUEUE.
type JobRequeueRequest struct {
	JobID    uint32
	JobIDStr NullString
	Flags    uint32
}

func walkJobRequeue(w fieldWalker, _ codec.Version, b *JobRequeueRequest) {
	w.u32(&b.JobID)
	w.str(&b.JobIDStr)
	w.u32(&b.Flags)
}

// JobNotifyRequest is REQUEST_JOB_NOTIFY.
type JobNotifyRequest struct {
	StepID  StepID
	Message NullString
}

func walkJobNotify(w fieldWalker, _ codec.Version, b *JobNotifyRequest) {
	walkStepID(w, &b.StepID)
	w.str(&b.Message)
}

// UpdateJobStepRequest is REQUEST_UPDATE_JOB_STEP.
type UpdateJobStepRequest struct {
	JobID     uint32
	StepID    uint32
	TimeLimit uint32
}

func walkUpdateJobStep(w fieldWalker, _ codec.Version, b *UpdateJobStepRequest) {
	w.u32(&b.JobID)
	w.u32(&b.StepID)
	w.u32(&b.TimeLimit)
}

// SrunTimeoutMsg is SRUN_TIMEOUT.
type SrunTimeoutMsg struct {
	StepID  StepID
	Timeout int64
}

func walkSrunTimeout(w fieldWalker, _ codec.Version, b *SrunTimeoutMsg) {
	walkStepID(w, &b.StepID)
	w.time(&b.Timeout)
}

// SrunNodeFailMsg is SRUN_NODE_FAIL and SRUN_STEP_MISSING.
type SrunNodeFailMsg struct {
	StepID   StepID
	NodeList NullString
}

func walkSrunNodeFail(w fieldWalker, _ codec.Version, b *SrunNodeFailMsg) {
	walkStepID(w, &b.StepID)
	w.str(&b.NodeList)
}

// SrunUserMsg is SRUN_USER_MSG.
type SrunUserMsg struct {
	JobID uint32
	Msg   NullString
}

func walkSrunUserMsg(w fieldWalker, _ codec.Version, b *SrunUserMsg) {
	w.u32(&b.JobID)
	w.str(&b.Msg)
}

// SrunJobCompleteMsg is SRUN_JOB_COMPLETE: a bare step id ({job, NO_VAL,
// NO_VAL} for the whole allocation).
type SrunJobCompleteMsg struct {
	StepID StepID
}

func walkSrunJobComplete(w fieldWalker, _ codec.Version, b *SrunJobCompleteMsg) {
	walkStepID(w, &b.StepID)
}

// WillRunResponse is RESPONSE_JOB_WILL_RUN.
type WillRunResponse struct {
	JobID            uint32
	JobSubmitUserMsg NullString
	NodeList         NullString
	PartName         NullString
	PreempteeJobIDs  []uint32 `slurm:"nullable"`
	ProcCnt          uint32
	StartTime        int64
	SysUsagePer      PackedDouble
}

func walkWillRun(w fieldWalker, _ codec.Version, b *WillRunResponse) {
	w.u32(&b.JobID)
	w.str(&b.JobSubmitUserMsg)
	w.str(&b.NodeList)
	w.str(&b.PartName)
	walkList(w, &b.PreempteeJobIDs, 4, func(w fieldWalker, p *uint32) { w.u32(p) })
	w.u32(&b.ProcCnt)
	w.time(&b.StartTime)
	w.dbl(&b.SysUsagePer)
}

func init() { registrars = append(registrars, registerJobSmall) }

func registerJobSmall(g *codec.Registry) {
	idShow := bodyCodec("job_id+show_flags request", walkJobIDShow)
	g.Register(msgtype.REQUEST_JOB_INFO_SINGLE, idShow)
	g.Register(msgtype.REQUEST_JOB_READY, idShow)
	g.Register(msgtype.REQUEST_BATCH_SCRIPT, idShow)
	if rc, ok := codec.DefaultRegistry().Lookup(msgtype.RESPONSE_SLURM_RC); ok {
		g.Register(msgtype.RESPONSE_JOB_READY, rc)
		g.Register(msgtype.RESPONSE_PROLOG_EXECUTING, rc)
	}
	g.Register(msgtype.REQUEST_JOB_USER_INFO, bodyCodec("REQUEST_JOB_USER_INFO", walkJobUserInfo))
	g.Register(msgtype.REQUEST_JOB_STEP_INFO, bodyCodec("REQUEST_JOB_STEP_INFO", walkJobStepInfoRequest))
	g.Register(msgtype.REQUEST_COMPLETE_JOB_ALLOCATION, bodyCodec("REQUEST_COMPLETE_JOB_ALLOCATION", walkCompleteJobAllocation))
	alloc := bodyCodec("job_alloc_info request", walkJobAllocInfo)
	g.Register(msgtype.REQUEST_JOB_ALLOCATION_INFO, alloc)
	g.Register(msgtype.REQUEST_HET_JOB_ALLOC_INFO, alloc)
	g.Register(msgtype.REQUEST_JOB_END_TIME, alloc)
	g.Register(msgtype.RESPONSE_JOB_ARRAY_ERRORS, bodyCodec("RESPONSE_JOB_ARRAY_ERRORS", walkJobArrayErrors))
	susp := bodyCodec("suspend request", walkSuspend)
	g.Register(msgtype.REQUEST_SUSPEND, susp)
	g.Register(msgtype.SRUN_REQUEST_SUSPEND, susp)
	g.Register(msgtype.REQUEST_TOP_JOB, susp)
	g.Register(msgtype.REQUEST_JOB_REQUEUE, bodyCodec("REQUEST_JOB_REQUEUE", walkJobRequeue))
	g.Register(msgtype.REQUEST_JOB_NOTIFY, bodyCodec("REQUEST_JOB_NOTIFY", walkJobNotify))
	g.Register(msgtype.REQUEST_UPDATE_JOB_STEP, bodyCodec("REQUEST_UPDATE_JOB_STEP", walkUpdateJobStep))
	g.Register(msgtype.SRUN_TIMEOUT, bodyCodec("SRUN_TIMEOUT", walkSrunTimeout))
	nf := bodyCodec("srun node fail", walkSrunNodeFail)
	g.Register(msgtype.SRUN_NODE_FAIL, nf)
	g.Register(msgtype.SRUN_STEP_MISSING, nf)
	g.Register(msgtype.SRUN_USER_MSG, bodyCodec("SRUN_USER_MSG", walkSrunUserMsg))
	g.Register(msgtype.SRUN_JOB_COMPLETE, bodyCodec("SRUN_JOB_COMPLETE", walkSrunJobComplete))
	g.Register(msgtype.SRUN_PING, bodyCodec("SRUN_PING", walkEmpty))
	g.Register(msgtype.RESPONSE_JOB_WILL_RUN, bodyCodec("RESPONSE_JOB_WILL_RUN", walkWillRun))
}
