package jobcred

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/pack"
)

// Version2205 is protocol 22.05 (SLURM_22_05_PROTOCOL_VERSION), the only
// credential layout implemented so far.
const Version2205 uint16 = 0x2600

// Special step ids (slurm.h).
const (
	StepBatch       uint32 = 0xfffffffb // SLURM_BATCH_SCRIPT
	StepExtern      uint32 = 0xfffffffc // SLURM_EXTERN_CONT
	StepInteractive uint32 = 0xfffffffa // SLURM_INTERACTIVE_STEP
)

// NullString is a packstr value that keeps Slurm's NULL apart from "". The
// zero value is NULL, which is what slurmctld sends for every unset string.
//
// protocol/msg has its own NullString with the same meaning. An alias would
// cause no import cycle (msg imports jobcred, never the reverse; both import
// protocol/pack, where one shared type would belong), but the two spell the
// field differently (S here, Value there) and each spelling is used by
// packages outside credential/ and protocol/ (slurmd/stepd reads .S,
// commands read .Value), so merging them means renaming S to Value here
// and in those callers in one change. Until then, convert by field.
type NullString struct {
	S     string
	Valid bool
}

// Str returns a non-NULL string.
func Str(s string) NullString { return NullString{S: s, Valid: true} }

func (n NullString) pack(w *pack.Writer) { w.OptStr(n.S, n.Valid) }

func unpackNullString(r *pack.Reader) NullString {
	s, ok := r.OptStr()
	return NullString{S: s, Valid: ok}
}

// StepID is slurm_step_id_t: u32 job_id, u32 step_id, u32 step_het_comp
// (NO_VAL outside heterogeneous steps).
type StepID struct {
	JobID       uint32
	StepID      uint32
	StepHetComp uint32
}

func (s StepID) String() string {
	step := fmt.Sprint(s.StepID)
	switch s.StepID {
	case StepBatch:
		step = "batch"
	case StepExtern:
		step = "extern"
	case StepInteractive:
		step = "interactive"
	case pack.NoVal:
		step = "none"
	}
	if s.StepHetComp != pack.NoVal {
		return fmt.Sprintf("StepId=%d.%s+%d", s.JobID, step, s.StepHetComp)
	}
	return fmt.Sprintf("StepId=%d.%s", s.JobID, step)
}

// SocketGroup is one run-length group of the core layout: RepCount
// consecutive job nodes (in job host list order) with SocketsPerNode sockets
// of CoresPerSocket cores each.
type SocketGroup struct {
	CoresPerSocket uint16
	SocketsPerNode uint16
	RepCount       uint32
}

// CPUGroup is one run-length group of per-node CPU counts.
type CPUGroup struct {
	CPUs uint16
	Reps uint32
}

// MemGroup is one run-length group of per-node memory limits in MB (the
// MEM_PER_CPU bit is never set here: slurmctld sends per-node values).
type MemGroup struct {
	MB   uint64
	Reps uint32
}

// Body is the signed part of a 22.05 credential, every field in wire order
// (slurm_cred.c:_pack_cred, protocol >= 22.05).
type Body struct {
	StepID StepID // 1
	UID    uint32 // 2
	GID    uint32 // 3
	// 4-7: the user's passwd entry (NULL with LaunchParameters=disable_send_gids).
	PwName  NullString
	PwGecos NullString
	PwDir   NullString
	PwShell NullString
	GIDs    []uint32 // 8: empty = slurmd looks the groups up itself
	// GrNames (9) is empty or exactly as long as GIDs.
	GrNames []string

	JobGres  []JobGres  // 10
	StepGres []StepGres // 11

	JobCoreSpec    uint16     // 12: NO_VAL16 when unset
	JobAccount     NullString // 13
	JobAliasList   NullString // 14
	JobComment     NullString // 15
	JobConstraints NullString // 16
	JobPartition   NullString // 17
	JobReservation NullString // 18
	JobRestartCnt  uint16     // 19
	JobStdErr      NullString // 20
	JobStdIn       NullString // 21
	JobStdOut      NullString // 22
	StepHostlist   NullString // 23: the node must be in it
	X11            uint16     // 24: X11_FORWARD_* bits
	// CTime (25) is the creation time in Unix seconds: the base of expiry,
	// the replay key and the revocation comparison.
	CTime int64

	// 26, tot_core_cnt, is not a field: it is JobCoreBitmap.Len() (0 if
	// nil), and the unpacker rejects a credential where it is not.
	JobCoreBitmap  *Bitmap       // 27: cores of all job nodes, node by node in JobHostlist order
	StepCoreBitmap *Bitmap       // 28: same indexing, the step's cores
	SocketGroups   []SocketGroup // 29-30 (at most 65535)
	CPUGroups      []CPUGroup    // 31
	JobNHosts      uint32        // 32
	JobNTasks      uint32        // 33
	JobHostlist    NullString    // 34
	JobMem         []MemGroup    // 35: over JobHostlist
	StepMem        []MemGroup    // 36: over StepHostlist
	SELinuxContext NullString    // 37
}

// AppendBody packs b at protocol version v (fields 1-37, no signature).
func AppendBody(w *pack.Writer, b *Body, v uint16) error {
	if v != Version2205 {
		return fmt.Errorf("%w: %#04x", ErrVersion, v)
	}
	if len(b.GrNames) != 0 && len(b.GrNames) != len(b.GIDs) {
		return fmt.Errorf("jobcred: %d group names for %d gids", len(b.GrNames), len(b.GIDs))
	}
	if len(b.SocketGroups) > 0xffff {
		return fmt.Errorf("jobcred: %d socket groups, at most 65535", len(b.SocketGroups))
	}
	for _, bm := range []*Bitmap{b.JobCoreBitmap, b.StepCoreBitmap} {
		if bm != nil && bm.n >= pack.NoVal {
			return fmt.Errorf("jobcred: bitmap of %d bits", bm.n)
		}
	}
	w.U32(b.StepID.JobID)
	w.U32(b.StepID.StepID)
	w.U32(b.StepID.StepHetComp)
	w.U32(b.UID)
	w.U32(b.GID)
	b.PwName.pack(w)
	b.PwGecos.pack(w)
	b.PwDir.pack(w)
	b.PwShell.pack(w)
	w.U32Array(b.GIDs)
	w.StrArray(b.GrNames)
	if err := packJobGres(w, b.JobGres); err != nil {
		return err
	}
	if err := packStepGres(w, b.StepGres); err != nil {
		return err
	}
	w.U16(b.JobCoreSpec)
	b.JobAccount.pack(w)
	b.JobAliasList.pack(w)
	b.JobComment.pack(w)
	b.JobConstraints.pack(w)
	b.JobPartition.pack(w)
	b.JobReservation.pack(w)
	w.U16(b.JobRestartCnt)
	b.JobStdErr.pack(w)
	b.JobStdIn.pack(w)
	b.JobStdOut.pack(w)
	b.StepHostlist.pack(w)
	w.U16(b.X11)
	w.Time(b.CTime)
	var tot uint32
	if b.JobCoreBitmap != nil {
		tot = b.JobCoreBitmap.n
	}
	w.U32(tot)
	packBitmap(w, b.JobCoreBitmap)
	packBitmap(w, b.StepCoreBitmap)
	w.U16(uint16(len(b.SocketGroups)))
	if n := len(b.SocketGroups); n > 0 {
		w.U32(uint32(n))
		for _, g := range b.SocketGroups {
			w.U16(g.CoresPerSocket)
		}
		w.U32(uint32(n))
		for _, g := range b.SocketGroups {
			w.U16(g.SocketsPerNode)
		}
		w.U32(uint32(n))
		for _, g := range b.SocketGroups {
			w.U32(g.RepCount)
		}
	}
	w.U32(uint32(len(b.CPUGroups)))
	if n := len(b.CPUGroups); n > 0 {
		w.U32(uint32(n))
		for _, g := range b.CPUGroups {
			w.U16(g.CPUs)
		}
		w.U32(uint32(n))
		for _, g := range b.CPUGroups {
			w.U32(g.Reps)
		}
	}
	w.U32(b.JobNHosts)
	w.U32(b.JobNTasks)
	b.JobHostlist.pack(w)
	packMem(w, b.JobMem)
	packMem(w, b.StepMem)
	b.SELinuxContext.pack(w)
	return nil
}

func packMem(w *pack.Writer, m []MemGroup) {
	w.U32(uint32(len(m)))
	if len(m) == 0 {
		return
	}
	w.U32(uint32(len(m)))
	for _, g := range m {
		w.U64(g.MB)
	}
	w.U32(uint32(len(m)))
	for _, g := range m {
		w.U32(g.Reps)
	}
}

// EncodeBody returns b packed at version v.
func EncodeBody(b *Body, v uint16) ([]byte, error) {
	var w pack.Writer
	if err := AppendBody(&w, b, v); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

// arrayCount reads the u32 count of an array that must have exactly want
// entries (Slurm rejects a mismatch).
func arrayCount(r *pack.Reader, want uint32, what string) {
	if n := r.U32(); r.Err() == nil && n != want {
		r.Fail(fmt.Errorf("%w: %s has %d entries, want %d", ErrMalformed, what, n, want))
	}
}

// boundCount fails r if n records of at least size bytes cannot fit.
func boundCount(r *pack.Reader, n uint32, size int, what string) bool {
	if r.Err() != nil {
		return false
	}
	if uint64(n) > uint64(r.Remaining()/size) {
		r.Fail(fmt.Errorf("%w: %d %s, %d bytes remain", ErrMalformed, n, what, r.Remaining()))
		return false
	}
	return true
}

func unpackBody(r *pack.Reader, b *Body) {
	b.StepID = StepID{JobID: r.U32(), StepID: r.U32(), StepHetComp: r.U32()}
	b.UID = r.U32()
	b.GID = r.U32()
	b.PwName = unpackNullString(r)
	b.PwGecos = unpackNullString(r)
	b.PwDir = unpackNullString(r)
	b.PwShell = unpackNullString(r)
	b.GIDs = r.U32Array()
	b.GrNames = r.StrArray()
	if r.Err() == nil && len(b.GrNames) != 0 && len(b.GrNames) != len(b.GIDs) {
		r.Fail(fmt.Errorf("%w: %d group names for %d gids", ErrMalformed, len(b.GrNames), len(b.GIDs)))
	}
	b.JobGres = unpackJobGres(r)
	b.StepGres = unpackStepGres(r)
	b.JobCoreSpec = r.U16()
	b.JobAccount = unpackNullString(r)
	b.JobAliasList = unpackNullString(r)
	b.JobComment = unpackNullString(r)
	b.JobConstraints = unpackNullString(r)
	b.JobPartition = unpackNullString(r)
	b.JobReservation = unpackNullString(r)
	b.JobRestartCnt = r.U16()
	b.JobStdErr = unpackNullString(r)
	b.JobStdIn = unpackNullString(r)
	b.JobStdOut = unpackNullString(r)
	b.StepHostlist = unpackNullString(r)
	b.X11 = r.U16()
	b.CTime = r.Time()
	tot := r.U32()
	b.JobCoreBitmap = unpackBitmap(r)
	b.StepCoreBitmap = unpackBitmap(r)
	if r.Err() == nil {
		var want uint32
		if b.JobCoreBitmap != nil {
			want = b.JobCoreBitmap.n
		}
		if tot != want {
			r.Fail(fmt.Errorf("%w: tot_core_cnt %d, job core bitmap has %d bits", ErrMalformed, tot, want))
		}
	}
	if n := uint32(r.U16()); n > 0 && boundCount(r, n, 2+2+4, "socket groups") {
		b.SocketGroups = make([]SocketGroup, n)
		arrayCount(r, n, "cores_per_socket")
		for i := range b.SocketGroups {
			b.SocketGroups[i].CoresPerSocket = r.U16()
		}
		arrayCount(r, n, "sockets_per_node")
		for i := range b.SocketGroups {
			b.SocketGroups[i].SocketsPerNode = r.U16()
		}
		arrayCount(r, n, "sock_core_rep_count")
		for i := range b.SocketGroups {
			b.SocketGroups[i].RepCount = r.U32()
		}
	}
	if n := r.U32(); n > 0 && boundCount(r, n, 2+4, "cpu groups") {
		b.CPUGroups = make([]CPUGroup, n)
		arrayCount(r, n, "cpu_array")
		for i := range b.CPUGroups {
			b.CPUGroups[i].CPUs = r.U16()
		}
		arrayCount(r, n, "cpu_array_reps")
		for i := range b.CPUGroups {
			b.CPUGroups[i].Reps = r.U32()
		}
	}
	b.JobNHosts = r.U32()
	b.JobNTasks = r.U32()
	b.JobHostlist = unpackNullString(r)
	b.JobMem = unpackMem(r, "job")
	b.StepMem = unpackMem(r, "step")
	b.SELinuxContext = unpackNullString(r)
}

func unpackMem(r *pack.Reader, what string) []MemGroup {
	n := r.U32()
	if n == 0 || !boundCount(r, n, 8+4, what+" memory groups") {
		return nil
	}
	m := make([]MemGroup, n)
	arrayCount(r, n, what+"_mem_alloc")
	for i := range m {
		m[i].MB = r.U64()
	}
	arrayCount(r, n, what+"_mem_alloc_rep_count")
	for i := range m {
		m[i].Reps = r.U32()
	}
	if r.Err() != nil {
		return nil
	}
	return m
}
