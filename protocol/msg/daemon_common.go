package msg

// Pieces shared by the slurmd <-> slurmctld and srun <-> slurmd bodies
// (reference protocol-daemon.md §2 and §4): the embedded job credential, the
// jobacct block, TRES records, the job GRES allocation of the kill and prolog
// messages, and u16-counted port lists.
//
// An embedded credential is never re-packed: the decoder keeps its exact
// bytes (jobcred.Unpack) and the encoder writes them back
// (Credential.AppendTo). pack.Reader cannot hand out the bytes that remain,
// so the decoder copies them out, lets jobcred take the credential from the
// front of the copy and reads the rest of the body from the copy. The bodies
// that carry a credential therefore check themselves that the body is used up
// exactly (daemonCodec); they never appear in a header's ret_list.

import (
	"errors"
	"fmt"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// ErrDaemonBody reports a daemon message body that is well-formed packing but
// breaks a rule of the message: a count that disagrees with its array, a bad
// magic number, a flag byte other than 0 or 1, a tag that is not the one
// Slurm writes.
var ErrDaemonBody = errors.New("msg: malformed daemon message")

func daemonFail(w fieldWalker, format string, args ...any) {
	if w.err() != nil {
		return
	}
	err := fmt.Errorf("%w: "+format, append([]any{ErrDaemonBody}, args...)...)
	if !w.decoding() {
		err = fmt.Errorf("%w: %w", codec.ErrEncode, err)
	}
	w.fail(err)
}

// daemonCodec is bodyCodec for bodies that may carry a credential: decoding
// follows the walk onto the copy the credential walker made and rejects bytes
// left over on it.
func daemonCodec[T any](name string, walk func(fieldWalker, codec.Version, *T)) codec.BodyCodec {
	bc := bodyCodec(name, walk)
	bc.Decode = func(r *pack.Reader, v codec.Version) (any, error) {
		if err := checkVersion(name, v); err != nil {
			return nil, err
		}
		var b T
		d := &decoder{r: r}
		walk(d, v, &b)
		if d.r != r {
			if err := d.r.Err(); err != nil {
				r.Fail(err)
			} else if n := d.r.Remaining(); n != 0 {
				r.Fail(fmt.Errorf("pack: %d trailing bytes after message body", n))
			}
		}
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("msg: decode %s: %w", name, err)
		}
		return b, nil
	}
	return bc
}

// walkCred walks an embedded slurm_cred_t packed at credential version cv
// (the body fields, then packmem(signature)). A nil credential cannot be
// encoded; callers with an optional credential test for nil first.
func walkCred(w fieldWalker, c **jobcred.Credential, cv uint16) {
	if w.err() != nil {
		return
	}
	switch x := w.(type) {
	case *encoder:
		if *c == nil {
			daemonFail(w, "nil credential")
			return
		}
		(*c).AppendTo(x.w)
	case *decoder:
		rest := x.r.Rest()
		cred, n, err := jobcred.Unpack(rest, cv)
		if err != nil {
			nr := pack.NewReader(nil)
			nr.Fail(fmt.Errorf("msg: credential: %w", err))
			x.r = nr
			return
		}
		*c = cred
		x.r = pack.NewReader(rest[n:])
	default:
		w.fail(fmt.Errorf("msg: credential walker %T", w))
	}
}

// walkCredVersioned walks the u16 cred_version and the credential packed at
// it, as batch launch and launch tasks carry them. Encoding writes the
// credential's own Version, or v when that is 0.
func walkCredVersioned(w fieldWalker, v codec.Version, c **jobcred.Credential) {
	var cv uint16
	if !w.decoding() {
		if *c == nil {
			daemonFail(w, "nil credential")
			return
		}
		cv = (*c).Version
		if cv == 0 {
			cv = uint16(v)
		}
	}
	w.u16(&cv)
	walkCred(w, c, cv)
}

// walkMem walks a packmem block (u32 length, raw bytes); nil and empty both
// encode as length 0, and length 0 decodes as nil.
func walkMem(w fieldWalker, p *[]byte) {
	if w.err() != nil {
		return
	}
	switch x := w.(type) {
	case *encoder:
		if uint64(len(*p)) > pack.MaxMemLen {
			daemonFail(w, "memory block of %d bytes", len(*p))
			return
		}
		x.w.Mem(*p)
	case *decoder:
		b := x.r.Mem()
		if len(b) == 0 {
			b = nil
		}
		*p = b
	}
}

// bound fails a decode when n records of at least minSize bytes cannot fit in
// what remains; it returns false then. Encoding always passes.
func bound(w fieldWalker, n uint64, minSize int, what string) bool {
	if w.err() != nil {
		return false
	}
	d, ok := w.(*decoder)
	if !ok {
		return true
	}
	if n > pack.MaxMemLen || n*uint64(minSize) > uint64(d.r.Remaining()) {
		w.fail(fmt.Errorf("%w: %d %s of at least %d bytes, %d bytes remain", pack.ErrTooLong, n, what, minSize, d.r.Remaining()))
		return false
	}
	return true
}

// walkCountedStrArray walks a u32 count followed by a packstr_array that
// repeats it (batch launch's argc/argv and envc/environment).
func walkCountedStrArray(w fieldWalker, s *[]NullString, what string) {
	n := uint32(len(*s))
	w.u32(&n)
	walkStrArray(w, s)
	if w.decoding() && w.err() == nil && uint32(len(*s)) != n {
		daemonFail(w, "%s count %d, array of %d", what, n, len(*s))
	}
}

// walkPorts walks a u16 count and that many u16 ports (resp_port, io_port);
// Slurm rejects a count of NO_VAL16 or more.
func walkPorts(w fieldWalker, s *[]uint16, what string) {
	n := uint16(len(*s))
	if !w.decoding() && len(*s) >= int(pack.NoVal16) {
		daemonFail(w, "%d %s", len(*s), what)
		return
	}
	w.u16(&n)
	if w.decoding() {
		if w.err() != nil {
			return
		}
		if n >= pack.NoVal16 {
			daemonFail(w, "%s count %#x", what, n)
			return
		}
		if !bound(w, uint64(n), 2, what) {
			return
		}
		*s = nil
		if n > 0 {
			*s = make([]uint16, n)
		}
	}
	for i := range *s {
		w.u16(&(*s)[i])
	}
}

// walkFlag8 walks a u8 that Slurm writes as 0 or 1; decoding rejects other
// values, which would not re-encode to the same byte.
func walkFlag8(w fieldWalker, b *bool, what string) {
	var v uint8
	if *b {
		v = 1
	}
	w.u8(&v)
	if w.decoding() {
		if v > 1 {
			daemonFail(w, "%s flag byte %d", what, v)
		}
		*b = v == 1
	}
}

// TresRec is a slurmdb_tres_rec_t as slurmdb_pack_tres_rec packs it.
type TresRec struct {
	AllocSecs uint64
	Count     uint64
	ID        uint32
	Name      NullString
	Type      NullString
}

func walkTresRec(w fieldWalker, t *TresRec) {
	w.u64(&t.AllocSecs)
	w.u64(&t.Count)
	w.u32(&t.ID)
	w.str(&t.Name)
	w.str(&t.Type)
}

// walkTresList walks a slurm_pack_list of TRES records (nil is NO_VAL).
func walkTresList(w fieldWalker, l *[]TresRec) { walkList(w, l, 28, walkTresRec) }

// JobAcct is a jobacctinfo_t as jobacctinfo_pack packs it for protocol
// 21.08 and later. A nil *JobAcct is the single byte 0 slurmstepd sends when
// JobAcctGatherType=none. Each usage array carries its own count (Slurm
// writes tres_count for all of them); they are kept as sent.
type JobAcct struct {
	UserCPUSec     uint64
	UserCPUUsec    uint32
	SysCPUSec      uint64
	SysCPUUsec     uint32
	ActCPUFreq     uint32
	ConsumedEnergy uint64
	TresIDs        []uint32
	TresList       []TresRec `slurm:"nullable"`

	UsageInMax, UsageInMaxNodeID, UsageInMaxTaskID    []uint64
	UsageInMin, UsageInMinNodeID, UsageInMinTaskID    []uint64
	UsageInTot                                        []uint64
	UsageOutMax, UsageOutMaxNodeID, UsageOutMaxTaskID []uint64
	UsageOutMin, UsageOutMinNodeID, UsageOutMinTaskID []uint64
	UsageOutTot                                       []uint64
}

func walkJobAcct(w fieldWalker, p **JobAcct) {
	present := *p != nil
	walkFlag8(w, &present, "jobacct")
	if w.err() != nil || !present {
		if w.decoding() {
			*p = nil
		}
		return
	}
	if w.decoding() {
		*p = &JobAcct{}
	}
	j := *p
	w.u64(&j.UserCPUSec)
	w.u32(&j.UserCPUUsec)
	w.u64(&j.SysCPUSec)
	w.u32(&j.SysCPUUsec)
	w.u32(&j.ActCPUFreq)
	w.u64(&j.ConsumedEnergy)
	walkU32s(w, &j.TresIDs)
	walkTresList(w, &j.TresList)
	for _, a := range []*[]uint64{
		&j.UsageInMax, &j.UsageInMaxNodeID, &j.UsageInMaxTaskID,
		&j.UsageInMin, &j.UsageInMinNodeID, &j.UsageInMinTaskID, &j.UsageInTot,
		&j.UsageOutMax, &j.UsageOutMaxNodeID, &j.UsageOutMaxTaskID,
		&j.UsageOutMin, &j.UsageOutMinNodeID, &j.UsageOutMinTaskID, &j.UsageOutTot,
	} {
		walkU64s(w, a)
	}
	if w.decoding() && w.err() != nil {
		*p = nil
	}
}

// GresJobAlloc is one gres_epilog_info_t record of gres_job_alloc_pack (the
// job's GRES on each of its nodes, for the epilog and prolog environment).
// CntNodeAlloc and BitAlloc, when present, have NodeCnt entries.
type GresJobAlloc struct {
	PluginID        uint32
	NodeCnt         uint32
	HasCntNodeAlloc bool
	CntNodeAlloc    []uint64
	HasBitAlloc     bool
	BitAlloc        []HexBitmap
}

// walkGresJobAlloc walks gres_job_alloc_pack: u16 record count, then records
// starting with GRES_MAGIC.
func walkGresJobAlloc(w fieldWalker, l *[]GresJobAlloc) {
	n := uint16(len(*l))
	if !w.decoding() && len(*l) > 0xffff {
		daemonFail(w, "%d GRES records", len(*l))
		return
	}
	w.u16(&n)
	if w.decoding() {
		*l = nil
		if n == 0 || !bound(w, uint64(n), 14, "GRES records") {
			return
		}
		*l = make([]GresJobAlloc, n)
	}
	for i := range *l {
		g := &(*l)[i]
		magic := jobcred.GresMagic
		w.u32(&magic)
		if magic != jobcred.GresMagic {
			daemonFail(w, "GRES magic %#x", magic)
		}
		w.u32(&g.PluginID)
		w.u32(&g.NodeCnt)
		if w.decoding() && g.NodeCnt > pack.NoVal {
			daemonFail(w, "GRES node count %#x", g.NodeCnt)
		}
		walkFlag8(w, &g.HasCntNodeAlloc, "GRES count")
		if g.HasCntNodeAlloc {
			if !w.decoding() && uint64(len(g.CntNodeAlloc)) != uint64(g.NodeCnt) {
				daemonFail(w, "GRES counts for %d nodes, node count %d", len(g.CntNodeAlloc), g.NodeCnt)
			}
			walkU64s(w, &g.CntNodeAlloc)
			if w.decoding() && w.err() == nil && uint64(len(g.CntNodeAlloc)) != uint64(g.NodeCnt) {
				daemonFail(w, "GRES counts for %d nodes, node count %d", len(g.CntNodeAlloc), g.NodeCnt)
			}
		} else if !w.decoding() && g.CntNodeAlloc != nil {
			daemonFail(w, "GRES counts without HasCntNodeAlloc")
		}
		walkFlag8(w, &g.HasBitAlloc, "GRES bitmap")
		if g.HasBitAlloc {
			if w.decoding() {
				if !bound(w, uint64(g.NodeCnt), 4, "GRES bitmaps") {
					break
				}
				g.BitAlloc = nil
				if g.NodeCnt > 0 {
					g.BitAlloc = make([]HexBitmap, g.NodeCnt)
				}
			} else if uint64(len(g.BitAlloc)) != uint64(g.NodeCnt) {
				daemonFail(w, "GRES bitmaps for %d nodes, node count %d", len(g.BitAlloc), g.NodeCnt)
			}
			for j := range g.BitAlloc {
				w.bitmap(&g.BitAlloc[j])
			}
		} else if !w.decoding() && g.BitAlloc != nil {
			daemonFail(w, "GRES bitmaps without HasBitAlloc")
		}
		if w.err() != nil {
			break
		}
	}
	if w.decoding() && w.err() != nil {
		*l = nil
	}
}

// Plugin ids of switch_g_pack_jobinfo. switch/none (100) has no job data; the
// others (Cray) are not supported and fail with ErrPlugin.
const SwitchNone uint32 = 100

func walkSwitchJobinfo(w fieldWalker, p *uint32) {
	w.u32(p)
	if *p != SwitchNone {
		if w.err() == nil {
			jobFail(w, fmt.Errorf("%w: switch plugin %d", ErrPlugin, *p))
		}
	}
}

// JobOption is one job_option_info record (SPANK plugin options srun passes
// to slurmd).
type JobOption struct {
	Type   uint32
	Option NullString
	OptArg NullString
}

const jobOptionsTag = "job_options"

// walkJobOptions walks job_options_pack: packstr "job_options", u32 count,
// records. Slurm refuses any other tag.
func walkJobOptions(w fieldWalker, l *[]JobOption) {
	tag := Str(jobOptionsTag)
	w.str(&tag)
	if w.decoding() && w.err() == nil && tag != Str(jobOptionsTag) {
		daemonFail(w, "job options tag %#v", tag)
		return
	}
	walkArray(w, l, 12, func(w fieldWalker, o *JobOption) {
		w.u32(&o.Type)
		w.str(&o.Option)
		w.str(&o.OptArg)
	})
}

func init() { registrars = append(registrars, registerDaemon) }

func registerDaemon(g *codec.Registry) {
	// Empty bodies that no other file registers.
	empty := bodyCodec("empty body", walkEmpty)
	for _, t := range []msgtype.Type{
		msgtype.REQUEST_NODE_REGISTRATION_STATUS, msgtype.REQUEST_HEALTH_CHECK,
		msgtype.REQUEST_ACCT_GATHER_UPDATE, msgtype.REQUEST_DAEMON_STATUS,
	} {
		g.Register(t, empty)
	}
	g.Register(msgtype.MESSAGE_NODE_REGISTRATION_STATUS, bodyCodec("MESSAGE_NODE_REGISTRATION_STATUS", walkNodeRegistration))
	g.Register(msgtype.RESPONSE_NODE_REGISTRATION, bodyCodec("RESPONSE_NODE_REGISTRATION", walkNodeRegResponse))
	g.Register(msgtype.RESPONSE_PING_SLURMD, bodyCodec("RESPONSE_PING_SLURMD", walkPingSlurmdResponse))
	g.Register(msgtype.RESPONSE_ACCT_GATHER_UPDATE, bodyCodec("RESPONSE_ACCT_GATHER_UPDATE", walkAcctGatherNodeResponse))
	g.Register(msgtype.REQUEST_ACCT_GATHER_ENERGY, bodyCodec("REQUEST_ACCT_GATHER_ENERGY", walkAcctGatherEnergyRequest))

	g.Register(msgtype.REQUEST_BATCH_JOB_LAUNCH, daemonCodec("REQUEST_BATCH_JOB_LAUNCH", walkBatchJobLaunch))
	g.Register(msgtype.REQUEST_LAUNCH_TASKS, daemonCodec("REQUEST_LAUNCH_TASKS", walkLaunchTasks))
	g.Register(msgtype.REQUEST_LAUNCH_PROLOG, daemonCodec("REQUEST_LAUNCH_PROLOG", walkPrologLaunch))
	g.Register(msgtype.REQUEST_REATTACH_TASKS, daemonCodec("REQUEST_REATTACH_TASKS", walkReattachTasks))

	kill := daemonCodec("kill_job", walkKillJob)
	for _, t := range []msgtype.Type{
		msgtype.REQUEST_TERMINATE_JOB, msgtype.REQUEST_KILL_TIMELIMIT,
		msgtype.REQUEST_KILL_PREEMPTED, msgtype.REQUEST_ABORT_JOB,
	} {
		g.Register(t, kill)
	}
	g.Register(msgtype.MESSAGE_EPILOG_COMPLETE, bodyCodec("MESSAGE_EPILOG_COMPLETE", walkEpilogComplete))
	sig := bodyCodec("signal_tasks", walkSignalTasks)
	g.Register(msgtype.REQUEST_SIGNAL_TASKS, sig)
	g.Register(msgtype.REQUEST_TERMINATE_TASKS, sig)

	g.Register(msgtype.REQUEST_COMPLETE_BATCH_SCRIPT, bodyCodec("REQUEST_COMPLETE_BATCH_SCRIPT", walkCompleteBatchScript))
	g.Register(msgtype.REQUEST_STEP_COMPLETE, bodyCodec("REQUEST_STEP_COMPLETE", walkStepComplete))
	g.Register(msgtype.REQUEST_COMPLETE_PROLOG, bodyCodec("REQUEST_COMPLETE_PROLOG", walkCompleteProlog))

	g.Register(msgtype.RESPONSE_LAUNCH_TASKS, bodyCodec("RESPONSE_LAUNCH_TASKS", walkLaunchTasksResponse))
	g.Register(msgtype.MESSAGE_TASK_EXIT, bodyCodec("MESSAGE_TASK_EXIT", walkTaskExit))
	g.Register(msgtype.RESPONSE_REATTACH_TASKS, bodyCodec("RESPONSE_REATTACH_TASKS", walkReattachTasksResponse))
}
