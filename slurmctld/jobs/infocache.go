package jobs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"sync"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

// The job list cache. squeue asks for every job record; packing 10,000 of
// them costs tens of milliseconds, most of it for records that did not
// change since the last squeue. The cache keeps each job's packed record
// and reuses it while the job's content fingerprint (jobHasher) and the
// cluster key (infoClusterKey) stay the same, so a list is mostly a
// concatenation of cached bytes.
//
// Three fields of a record change without the job changing in a way that
// matters: last_sched_eval (every scheduler pass), and a pending job's
// start and end (the backfill estimate, and the clock). The fingerprint
// skips LastEval and EstStart; the record is packed with sentinel values in
// those three fields, their offsets are found, and the current values are
// written over them when the list is sent. A record in which a sentinel is
// not found exactly once is not cached.

// Sentinels: arbitrary 8-byte patterns that no real time takes.
const (
	sentStart int64 = 0x7b3c9d1e5f2a4861
	sentEnd   int64 = 0x6c1d8e2f4a3b5970
	sentEval  int64 = 0x5d2e7f3a1b4c6081
)

// jobHasher fingerprints a job's content, less the fields the record does
// not depend on (Payload, Steps: large, and not shown; lic: Licenses
// parsed, filled in by a pass) and those patched at send time (LastEval,
// EstStart). A job type it cannot plan (a map field, say) leaves it nil,
// and then nothing is cached.
var jobHasher = sync.OnceValue(func() *contentHasher {
	h, _ := newJobHasher()
	return h
})

func newJobHasher() (*contentHasher, error) {
	return newContentHasher(reflect.TypeFor[Job](), "LastEval", "EstStart", "Payload", "Steps", "lic", "revokedAt")
}

// Nodes and partitions enter records (node names in bitmaps, memory in
// tres_req_str, MaxTime as the time limit); their State does not.
var (
	nodeHasher = sync.OnceValue(func() *contentHasher {
		h, _ := newContentHasher(reflect.TypeFor[sched.Node](), "State")
		return h
	})
	partHasher = sync.OnceValue(func() *contentHasher {
		h, _ := newContentHasher(reflect.TypeFor[sched.Partition](), "State")
		return h
	})
)

var jobInfoCodec = sync.OnceValues(func() (codec.BodyCodec, error) {
	bc, ok := msg.Registry().Lookup(msgtype.RESPONSE_JOB_INFO)
	if !ok {
		return codec.BodyCodec{}, fmt.Errorf("jobs: no RESPONSE_JOB_INFO codec")
	}
	return bc, nil
})

// PackedJobInfo is a RESPONSE_JOB_INFO body ready to send: built under the
// controller's lock from cached records, copied out (AppendTo) after the
// lock is released. The records it refers to are never written again: the
// cache replaces a changed record by a new slice.
type PackedJobInfo struct {
	version codec.Version
	head    []byte
	recs    []packedRec
	size    int
}

type packedRec struct {
	b                []byte
	start, end, eval int64
	// offsets of the patched fields in b; -1: not patched.
	offStart, offEnd, offEval int32
}

// Version is the protocol version the body was packed at.
func (p *PackedJobInfo) Version() codec.Version { return p.version }

// Len is the body's size in bytes.
func (p *PackedJobInfo) Len() int { return p.size }

// Count is the number of job records.
func (p *PackedJobInfo) Count() int { return len(p.recs) }

// Decode unpacks the body (for tests and tools: the controller only sends it).
func (p *PackedJobInfo) Decode() (msg.JobInfoMsg, error) {
	bc, err := jobInfoCodec()
	if err != nil {
		return msg.JobInfoMsg{}, err
	}
	r := pack.NewReader(p.AppendTo(nil))
	v, err := bc.Decode(r, p.version)
	if err != nil {
		return msg.JobInfoMsg{}, err
	}
	if r.Err() != nil || r.Remaining() != 0 {
		return msg.JobInfoMsg{}, fmt.Errorf("jobs: packed job list: %d bytes left, %v", r.Remaining(), r.Err())
	}
	return v.(msg.JobInfoMsg), nil
}

// AppendTo appends the body to dst.
func (p *PackedJobInfo) AppendTo(dst []byte) []byte {
	dst = slices.Grow(dst, p.size)
	dst = append(dst, p.head...)
	for i := range p.recs {
		r := &p.recs[i]
		at := len(dst)
		dst = append(dst, r.b...)
		r.patch(dst[at:])
	}
	return dst
}

// WriteTo packs the body into w. The list is the largest reply the
// controller sends (megabytes at 10,000 jobs), so it goes straight into
// w's buffer, grown once to the final size, rather than through a copy
// and repeated doublings: each of those would be garbage the heap has
// to grow for.
func (p *PackedJobInfo) WriteTo(w *pack.Writer) {
	if b := w.Bytes(); cap(b)-len(b) < p.size {
		nb := make([]byte, len(b), len(b)+p.size)
		copy(nb, b)
		*w = *pack.NewWriter(nb)
	}
	w.Raw(p.head)
	for i := range p.recs {
		r := &p.recs[i]
		at := w.Len()
		w.Raw(r.b)
		r.patch(w.Bytes()[at:])
	}
}

// patch writes the current times over the sentinels of b, a copy of r.b
// (pack_time: a big-endian 64-bit integer, as pack.Writer.Time).
func (r *packedRec) patch(b []byte) {
	if r.offStart >= 0 {
		binary.BigEndian.PutUint64(b[r.offStart:], uint64(r.start))
	}
	if r.offEnd >= 0 {
		binary.BigEndian.PutUint64(b[r.offEnd:], uint64(r.end))
	}
	if r.offEval >= 0 {
		binary.BigEndian.PutUint64(b[r.offEval:], uint64(r.eval))
	}
}

// infoCache holds one Manager's packed records.
type infoCache struct {
	key     uint64 // infoClusterKey the records were packed under
	entries map[uint32]*infoEntry
	headLen int            // size of an empty list's header at key's version
	one     msg.JobInfoMsg // scratch list of one record
	buf     []byte         // scratch pack buffer
	hbuf    []byte         // scratch fingerprint buffer
	// maxima are the biggest nodes of the partitions under key, for
	// pending jobs' node counts (hotpath_nodecount.go); maxCl is the
	// cluster view of the list being packed (nil between lists), the
	// only one they answer for.
	maxima *nodeMaxima
	maxCl  *Cluster
}

// infoEntry is one job: its fingerprint when packed, and records for the
// last two show flags asked for (squeue and scontrol ask with different
// ones; the flags are in the record).
type infoEntry struct {
	sum     uint64
	pending bool
	limit   uint32 // time limit in the record (a pending job's end time)
	recs    [2]cachedRec
}

type cachedRec struct {
	ok                        bool
	flags                     uint16
	b                         []byte
	offStart, offEnd, offEval int32
}

// PackJobInfo builds RESPONSE_JOB_INFO as JobInfoMsg does, packed at
// protocol version v: every job (uid ^0) or the user's, and when ids is not
// nil only the jobs it names (an array's id names its tasks too).
func (m *Manager) PackJobInfo(v codec.Version, cl *Cluster, nodeCount int, showFlags uint16, uid uint32, ids []uint32, now int64) (*PackedJobInfo, error) {
	bc, err := jobInfoCodec()
	if err != nil {
		return nil, err
	}
	c := m.infoCache()
	if err := c.reset(m, bc, v, cl, nodeCount); err != nil {
		return nil, err
	}
	if cl != nil && (c.maxima == nil || nodeHasher() == nil || partHasher() == nil) {
		// Taken once per change of the key, which covers every node
		// and partition field but State (without a plan it does not,
		// and they are taken per list).
		c.maxima = newNodeMaxima(cl)
	}
	c.maxCl = cl
	defer func() { c.maxCl = nil }()
	p := &PackedJobInfo{version: v}
	w := pack.NewWriter(nil)
	if err := bc.Encode(w, v, &msg.JobInfoMsg{LastUpdate: now}); err != nil {
		return nil, err
	}
	p.head = w.Bytes()
	p.size = len(p.head)

	var want map[uint32]bool
	if ids != nil {
		want = make(map[uint32]bool, len(ids))
		for _, id := range ids {
			want[id] = true
		}
	}
	hasher := jobHasher()
	if nodeHasher() == nil || partHasher() == nil {
		hasher = nil
	}
	m.sortOrder()
	p.recs = make([]packedRec, 0, len(m.order))
	for _, id := range m.order {
		j := m.jobs[id]
		if uid != ^uint32(0) && j.UserID != uid {
			continue
		}
		if want != nil && !want[j.ID] && (j.ArrayJobID == 0 || !want[j.ArrayJobID]) {
			continue
		}
		r, err := c.record(m, bc, v, hasher, j, cl, nodeCount, showFlags, now)
		if err != nil {
			return nil, err
		}
		p.recs = append(p.recs, r)
		p.size += len(r.b)
	}
	// The count leads the header (u32 record count, then the times).
	binary.BigEndian.PutUint32(p.head, uint32(len(p.recs)))
	if len(c.entries) > len(m.jobs) {
		for id := range c.entries {
			if m.jobs[id] == nil {
				delete(c.entries, id)
			}
		}
	}
	return p, nil
}

// reset drops every record when something records depend on besides the
// job changed.
func (c *infoCache) reset(m *Manager, bc codec.BodyCodec, v codec.Version, cl *Cluster, nodeCount int) error {
	key := infoClusterKey(m, v, cl, nodeCount)
	if c.entries != nil && key == c.key {
		return nil
	}
	w := pack.NewWriter(nil)
	if err := bc.Encode(w, v, &msg.JobInfoMsg{}); err != nil {
		return err
	}
	c.key, c.headLen = key, w.Len()
	c.entries = make(map[uint32]*infoEntry, len(m.jobs))
	c.maxima = nil
	return nil
}

// record returns j's packed record for this list, from the cache when j
// did not change.
func (c *infoCache) record(m *Manager, bc codec.BodyCodec, v codec.Version, hasher *contentHasher, j *Job, cl *Cluster, nodeCount int, showFlags uint16, now int64) (packedRec, error) {
	if hasher == nil {
		b, err := c.pack(bc, v, m.Info(j, cl, nodeCount, showFlags, now))
		return packedRec{b: bytes.Clone(b), offStart: -1, offEnd: -1, offEval: -1}, err
	}
	var sum uint64
	sum, c.hbuf = sumOf(hasher, j, c.hbuf)
	sum = infoDeps(m, j, sum)
	e := c.entries[j.ID]
	if e == nil || e.sum != sum {
		e = &infoEntry{sum: sum, pending: j.Pending(), limit: m.timeLimit(j, cl)}
		c.entries[j.ID] = e
	}
	cr := e.lookup(showFlags)
	if cr == nil {
		ji := m.Info(j, cl, nodeCount, showFlags, now)
		fresh := ji
		ji.LastSchedEval = sentEval
		if e.pending {
			ji.StartTime, ji.EndTime = sentStart, sentEnd
		}
		b, err := c.pack(bc, v, ji)
		if err != nil {
			return packedRec{}, err
		}
		rec := cachedRec{ok: true, flags: showFlags, b: bytes.Clone(b), offStart: -1, offEnd: -1}
		rec.offEval = sentinelAt(rec.b, sentEval)
		if e.pending {
			rec.offStart, rec.offEnd = sentinelAt(rec.b, sentStart), sentinelAt(rec.b, sentEnd)
			rec.ok = rec.offStart >= 0 && rec.offEnd >= 0
		}
		if !rec.ok || rec.offEval < 0 {
			// A sentinel also occurs in a string of the job: send
			// this record as packed now, and pack it again next time.
			b, err := c.pack(bc, v, fresh)
			return packedRec{b: bytes.Clone(b), offStart: -1, offEnd: -1, offEval: -1}, err
		}
		cr = e.store(rec)
	}
	r := packedRec{b: cr.b, offStart: cr.offStart, offEnd: cr.offEnd, offEval: cr.offEval, eval: j.LastEval}
	if e.pending {
		r.start, r.end = pendingTimes(j, e.limit, now)
	}
	return r, nil
}

func (e *infoEntry) lookup(flags uint16) *cachedRec {
	switch {
	case e.recs[0].ok && e.recs[0].flags == flags:
		return &e.recs[0]
	case e.recs[1].ok && e.recs[1].flags == flags:
		e.recs[0], e.recs[1] = e.recs[1], e.recs[0]
		return &e.recs[0]
	}
	return nil
}

// store keeps rec as the most recent, dropping the least recent.
func (e *infoEntry) store(rec cachedRec) *cachedRec {
	e.recs[1] = e.recs[0]
	e.recs[0] = rec
	return &e.recs[0]
}

// pack returns ji's packed record, in c's scratch buffer.
func (c *infoCache) pack(bc codec.BodyCodec, v codec.Version, ji msg.JobInfo) ([]byte, error) {
	if len(c.one.Jobs) != 1 {
		c.one.Jobs = make([]msg.JobInfo, 1)
	}
	c.one.Jobs[0] = ji
	w := pack.NewWriter(c.buf[:0])
	err := bc.Encode(w, v, &c.one)
	c.one.Jobs[0] = msg.JobInfo{} // let the strings go
	if err != nil {
		return nil, err
	}
	c.buf = w.Bytes()
	return c.buf[c.headLen:], nil
}

// sentinelAt is the offset of the packed time v in b, -1 unless it occurs
// exactly once.
func sentinelAt(b []byte, v int64) int32 {
	var pat [8]byte
	binary.BigEndian.PutUint64(pat[:], uint64(v))
	i := bytes.Index(b, pat[:])
	if i < 0 || bytes.Contains(b[i+1:], pat[:]) {
		return -1
	}
	return int32(i)
}

// infoDeps mixes into a job's fingerprint what its record shows from
// outside the job: a task split off an array shows its meta record's
// throttle (scontrol update ArrayTaskThrottle changes the meta record
// only), and a job recovered ended whether its allocated counts were
// rebuilt (allocRebuilt).
func infoDeps(m *Manager, j *Job, sum uint64) uint64 {
	var dep uint64
	if j.Array == nil && j.ArrayJobID != 0 && j.ArrayJobID != j.ID {
		dep = uint64(m.arrayThrottle(j)) + 1
	}
	if m.allocRebuilt(j) {
		dep |= 1 << 63
	}
	if dep == 0 {
		return sum
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], sum)
	binary.LittleEndian.PutUint64(b[8:], dep)
	return maphash.Bytes(keySeed, b[:])
}

// infoClusterKey fingerprints what records depend on besides the job:
// protocol version, cluster name, select plugin, node table size, nodes
// and partitions.
func infoClusterKey(m *Manager, v codec.Version, cl *Cluster, nodeCount int) uint64 {
	var h maphash.Hash
	h.SetSeed(keySeed)
	var b [16]byte
	binary.LittleEndian.PutUint16(b[0:], uint16(v))
	binary.LittleEndian.PutUint32(b[2:], uint32(m.cfg.Select))
	binary.LittleEndian.PutUint64(b[6:], uint64(nodeCount))
	h.Write(b[:14])
	h.WriteString(m.cfg.ClusterName)
	if cl == nil {
		return h.Sum64()
	}
	nh, ph := nodeHasher(), partHasher()
	if nh == nil || ph == nil {
		return h.Sum64() // nothing is cached then (PackJobInfo)
	}
	var buf []byte
	var sum uint64
	for i := range cl.Nodes {
		sum, buf = sumOf(nh, &cl.Nodes[i], buf)
		binary.LittleEndian.PutUint64(b[:], sum)
		h.Write(b[:8])
	}
	h.WriteByte(0xff)
	for i := range cl.Partitions {
		sum, buf = sumOf(ph, &cl.Partitions[i], buf)
		binary.LittleEndian.PutUint64(b[:], sum)
		h.Write(b[:8])
	}
	return h.Sum64()
}

var keySeed = maphash.MakeSeed()

// infoCache returns the manager's packed-record cache, made on first use.
// Called under the controller's lock, as every Manager method.
func (m *Manager) infoCache() *infoCache {
	if m.info == nil {
		m.info = &infoCache{}
	}
	return m.info
}
