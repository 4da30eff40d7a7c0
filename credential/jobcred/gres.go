package jobcred

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/pack"
)

// GresMagic starts every GRES state record (GRES_MAGIC).
const GresMagic uint32 = 0x438a34d4

// GresPluginID is gres_build_id: the name's bytes summed, each shifted by
// 0, 8, 16, 24, 0, ... bits. Records of a GRES name carry it as their
// plugin_id, and slurmctld and slurmd match records by it.
func GresPluginID(name string) uint32 {
	var id uint32
	shift := 0
	for i := 0; i < len(name); i++ {
		id += uint32(name[i]) << shift
		shift = (shift + 8) % 32
	}
	return id
}

// JobGres is one record of the job's GRES state as the credential carries it
// (gres_job_state_pack with details=false: slurmctld never sends the step
// allocation parts, but they are kept here so that any well-formed record
// re-packs to the same bytes).
type JobGres struct {
	PluginID      uint32
	CPUsPerGres   uint16
	Flags         uint16
	GresPerJob    uint64
	GresPerNode   uint64
	GresPerSocket uint64
	GresPerTask   uint64
	MemPerGres    uint64
	NTasksPerGres uint16
	TotalGres     uint64
	TypeName      NullString
	NodeCnt       uint32

	// HasCntNodeAlloc says the u64 array of GRES counts per node follows.
	HasCntNodeAlloc bool
	CntNodeAlloc    []uint64
	// HasBitAlloc says NodeCnt bitmaps (entries may be nil) follow.
	HasBitAlloc bool
	BitAlloc    []*Bitmap
	// HasBitStepAlloc / HasCntStepAlloc: the "details" parts, NodeCnt
	// bitmaps and NodeCnt bare u64 values. Always false from slurmctld.
	HasBitStepAlloc bool
	BitStepAlloc    []*Bitmap
	HasCntStepAlloc bool
	CntStepAlloc    []uint64
}

// StepGres is one record of the step's GRES state (gres_step_state_pack).
type StepGres struct {
	PluginID      uint32
	CPUsPerGres   uint16
	Flags         uint16
	GresPerStep   uint64
	GresPerNode   uint64
	GresPerSocket uint64
	GresPerTask   uint64
	MemPerGres    uint64
	TotalGres     uint64
	NodeCnt       uint32
	NodeInUse     *Bitmap

	HasCntNodeAlloc bool
	CntNodeAlloc    []uint64
	HasBitAlloc     bool
	BitAlloc        []*Bitmap
}

func packFlag(w *pack.Writer, v bool) {
	if v {
		w.U8(1)
	} else {
		w.U8(0)
	}
}

func unpackFlag(r *pack.Reader) bool {
	v := r.U8()
	if v > 1 {
		r.Fail(fmt.Errorf("%w: presence flag %d", ErrMalformed, v))
	}
	return v == 1
}

// bitmaps reads n bitmaps, each at least 4 bytes on the wire, checking n
// against what remains before allocating.
func unpackBitmaps(r *pack.Reader, n uint32) []*Bitmap {
	if r.Err() != nil {
		return nil
	}
	if uint64(n) > uint64(r.Remaining()/4) {
		r.Fail(fmt.Errorf("%w: %d bitmaps, %d bytes remain", ErrMalformed, n, r.Remaining()))
		return nil
	}
	out := make([]*Bitmap, n)
	for i := range out {
		out[i] = unpackBitmap(r)
	}
	return out
}

func checkNodeArray(what string, n uint32, got int) error {
	if uint64(got) != uint64(n) {
		return fmt.Errorf("jobcred: GRES %s has %d entries, node_cnt is %d", what, got, n)
	}
	return nil
}

func packJobGres(w *pack.Writer, recs []JobGres) error {
	if len(recs) > 0xffff {
		return fmt.Errorf("jobcred: %d job GRES records, at most 65535", len(recs))
	}
	w.U16(uint16(len(recs)))
	for i := range recs {
		g := &recs[i]
		if g.HasBitAlloc {
			if err := checkNodeArray("bit_alloc", g.NodeCnt, len(g.BitAlloc)); err != nil {
				return err
			}
		}
		if g.HasBitStepAlloc {
			if err := checkNodeArray("bit_step_alloc", g.NodeCnt, len(g.BitStepAlloc)); err != nil {
				return err
			}
		}
		if g.HasCntStepAlloc {
			if err := checkNodeArray("cnt_step_alloc", g.NodeCnt, len(g.CntStepAlloc)); err != nil {
				return err
			}
		}
		w.U32(GresMagic)
		w.U32(g.PluginID)
		w.U16(g.CPUsPerGres)
		w.U16(g.Flags)
		w.U64(g.GresPerJob)
		w.U64(g.GresPerNode)
		w.U64(g.GresPerSocket)
		w.U64(g.GresPerTask)
		w.U64(g.MemPerGres)
		w.U16(g.NTasksPerGres)
		w.U64(g.TotalGres)
		g.TypeName.pack(w)
		w.U32(g.NodeCnt)
		packFlag(w, g.HasCntNodeAlloc)
		if g.HasCntNodeAlloc {
			w.U64Array(g.CntNodeAlloc)
		}
		packFlag(w, g.HasBitAlloc)
		if g.HasBitAlloc {
			for _, b := range g.BitAlloc {
				packBitmap(w, b)
			}
		}
		packFlag(w, g.HasBitStepAlloc)
		if g.HasBitStepAlloc {
			for _, b := range g.BitStepAlloc {
				packBitmap(w, b)
			}
		}
		packFlag(w, g.HasCntStepAlloc)
		if g.HasCntStepAlloc {
			for _, v := range g.CntStepAlloc {
				w.U64(v)
			}
		}
	}
	return nil
}

// jobGresMinLen is the smallest packed job GRES record.
const jobGresMinLen = 4 + 4 + 2 + 2 + 5*8 + 2 + 8 + 4 + 4 + 4

func unpackJobGres(r *pack.Reader) []JobGres {
	n := int(r.U16())
	if r.Err() != nil || n == 0 {
		return nil
	}
	if n > r.Remaining()/jobGresMinLen {
		r.Fail(fmt.Errorf("%w: %d job GRES records, %d bytes remain", ErrMalformed, n, r.Remaining()))
		return nil
	}
	out := make([]JobGres, n)
	for i := range out {
		g := &out[i]
		if m := r.U32(); r.Err() == nil && m != GresMagic {
			r.Fail(fmt.Errorf("%w: job GRES magic %#x", ErrMalformed, m))
		}
		g.PluginID = r.U32()
		g.CPUsPerGres = r.U16()
		g.Flags = r.U16()
		g.GresPerJob = r.U64()
		g.GresPerNode = r.U64()
		g.GresPerSocket = r.U64()
		g.GresPerTask = r.U64()
		g.MemPerGres = r.U64()
		g.NTasksPerGres = r.U16()
		g.TotalGres = r.U64()
		g.TypeName = unpackNullString(r)
		g.NodeCnt = r.U32()
		if g.HasCntNodeAlloc = unpackFlag(r); g.HasCntNodeAlloc {
			g.CntNodeAlloc = r.U64Array()
		}
		if g.HasBitAlloc = unpackFlag(r); g.HasBitAlloc {
			g.BitAlloc = unpackBitmaps(r, g.NodeCnt)
		}
		if g.HasBitStepAlloc = unpackFlag(r); g.HasBitStepAlloc {
			g.BitStepAlloc = unpackBitmaps(r, g.NodeCnt)
		}
		if g.HasCntStepAlloc = unpackFlag(r); g.HasCntStepAlloc {
			if uint64(g.NodeCnt) > uint64(r.Remaining()/8) {
				r.Fail(fmt.Errorf("%w: %d step GRES counts, %d bytes remain", ErrMalformed, g.NodeCnt, r.Remaining()))
			} else {
				g.CntStepAlloc = make([]uint64, g.NodeCnt)
				for j := range g.CntStepAlloc {
					g.CntStepAlloc[j] = r.U64()
				}
			}
		}
		if r.Err() != nil {
			return nil
		}
	}
	return out
}

func packStepGres(w *pack.Writer, recs []StepGres) error {
	if len(recs) > 0xffff {
		return fmt.Errorf("jobcred: %d step GRES records, at most 65535", len(recs))
	}
	w.U16(uint16(len(recs)))
	for i := range recs {
		g := &recs[i]
		if g.HasBitAlloc {
			if err := checkNodeArray("bit_alloc", g.NodeCnt, len(g.BitAlloc)); err != nil {
				return err
			}
		}
		w.U32(GresMagic)
		w.U32(g.PluginID)
		w.U16(g.CPUsPerGres)
		w.U16(g.Flags)
		w.U64(g.GresPerStep)
		w.U64(g.GresPerNode)
		w.U64(g.GresPerSocket)
		w.U64(g.GresPerTask)
		w.U64(g.MemPerGres)
		w.U64(g.TotalGres)
		w.U32(g.NodeCnt)
		packBitmap(w, g.NodeInUse)
		packFlag(w, g.HasCntNodeAlloc)
		if g.HasCntNodeAlloc {
			w.U64Array(g.CntNodeAlloc)
		}
		packFlag(w, g.HasBitAlloc)
		if g.HasBitAlloc {
			for _, b := range g.BitAlloc {
				packBitmap(w, b)
			}
		}
	}
	return nil
}

const stepGresMinLen = 4 + 4 + 2 + 2 + 6*8 + 4 + 4 + 1 + 1

func unpackStepGres(r *pack.Reader) []StepGres {
	n := int(r.U16())
	if r.Err() != nil || n == 0 {
		return nil
	}
	if n > r.Remaining()/stepGresMinLen {
		r.Fail(fmt.Errorf("%w: %d step GRES records, %d bytes remain", ErrMalformed, n, r.Remaining()))
		return nil
	}
	out := make([]StepGres, n)
	for i := range out {
		g := &out[i]
		if m := r.U32(); r.Err() == nil && m != GresMagic {
			r.Fail(fmt.Errorf("%w: step GRES magic %#x", ErrMalformed, m))
		}
		g.PluginID = r.U32()
		g.CPUsPerGres = r.U16()
		g.Flags = r.U16()
		g.GresPerStep = r.U64()
		g.GresPerNode = r.U64()
		g.GresPerSocket = r.U64()
		g.GresPerTask = r.U64()
		g.MemPerGres = r.U64()
		g.TotalGres = r.U64()
		g.NodeCnt = r.U32()
		g.NodeInUse = unpackBitmap(r)
		if g.HasCntNodeAlloc = unpackFlag(r); g.HasCntNodeAlloc {
			g.CntNodeAlloc = r.U64Array()
		}
		if g.HasBitAlloc = unpackFlag(r); g.HasBitAlloc {
			g.BitAlloc = unpackBitmaps(r, g.NodeCnt)
		}
		if r.Err() != nil {
			return nil
		}
	}
	return out
}
