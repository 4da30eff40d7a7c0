package jobs

import (
	"bufio"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/goslurm/goslurm/slurmctld/state"
)

// Journal receives the records of every acknowledged change, in order.
// StoreJournal adapts a *state.Store.
type Journal interface {
	Submit(recs ...state.Record) (Ticket, error)
}

// StoreJournal journals into a slurmctld/state store.
func StoreJournal(s *state.Store) Journal { return storeJournal{s} }

type storeJournal struct{ s *state.Store }

func (j storeJournal) Submit(recs ...state.Record) (Ticket, error) {
	t, err := j.s.Submit(recs...)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Journal record types (state.Record.Type) and the payload version.
const (
	RecJobSubmit uint16 = 0x0101 // a new job, with its script and environment
	RecJobUpdate uint16 = 0x0102 // a job's new state (payload unchanged)
	RecJobPurge  uint16 = 0x0103 // a job left the table
	RecVersion   uint16 = 1
)

type recKind uint8

const (
	recUpdate recKind = iota
	recSubmit
	recPurge
)

type record struct {
	kind recKind
	job  *Job
	id   uint32
}

// recBody is the JSON of a submit or update record. NextID travels with
// every record so replay ends with the id counter where it was.
type recBody struct {
	NextID uint32
	Job    *Job   `json:",omitempty"`
	Purge  uint32 `json:",omitempty"`
}

func (m *Manager) encodePending() ([]state.Record, error) {
	// One record per job per call: its last state. A submit stays a submit.
	seen := map[uint32]int{}
	var list []record
	for _, r := range m.pending {
		id := r.id
		if r.job != nil {
			id = r.job.ID
		}
		if i, ok := seen[id]; ok {
			if list[i].kind == recSubmit && r.kind == recUpdate {
				continue
			}
			if r.kind == recPurge && list[i].kind == recSubmit {
				// Never acknowledged as a separate job: still record both.
				list = append(list, r)
				continue
			}
			list[i] = r
			continue
		}
		seen[id] = len(list)
		list = append(list, r)
	}
	out := make([]state.Record, 0, len(list))
	ps, _ := m.journal.(payloadStore)
	var next uint64 // seq of out[0]
	if ps != nil {
		next = ps.nextSeq()
	}
	type offload struct {
		j   *Job
		seq uint64
	}
	var moved []offload
	for _, r := range list {
		var body recBody
		body.NextID = m.nextID
		typ := RecJobUpdate
		var extra *state.Record
		switch r.kind {
		case recSubmit:
			typ = RecJobSubmit
			body.Job = r.job
			if ps != nil && r.job.Payload != nil && r.job.PayloadSeq == 0 {
				// The payload goes to disk as the record after this one.
				data, err := encodePayload(r.job.ID, r.job.Payload)
				if err != nil {
					return nil, err
				}
				seq := next + uint64(len(out)) + 1
				c := *r.job
				c.Payload, c.PayloadSeq = nil, seq
				body.Job = &c
				extra = &state.Record{Type: RecJobPayload, Version: RecVersion, Data: data}
				moved = append(moved, offload{r.job, seq})
			}
		case recUpdate:
			c := *r.job
			c.Payload = nil
			body.Job = &c
		case recPurge:
			typ = RecJobPurge
			body.Purge = r.id
		}
		data, err := json.Marshal(&body)
		if err != nil {
			return nil, fmt.Errorf("jobs: encode record: %w", err)
		}
		out = append(out, state.Record{Type: typ, Version: RecVersion, Data: data})
		if extra != nil {
			out = append(out, *extra)
		}
	}
	for _, o := range moved {
		o.j.Payload, o.j.PayloadSeq = nil, o.seq
	}
	return out, nil
}

// ApplyRecord replays one journal record (state.Loader).
func (m *Manager) ApplyRecord(seq uint64, rec state.Record) error {
	if rec.Version != RecVersion {
		return fmt.Errorf("jobs: record type %#x version %d not supported", rec.Type, rec.Version)
	}
	if rec.Type == RecJobPayload {
		return m.applyPayload(seq, rec)
	}
	var body recBody
	if err := json.Unmarshal(rec.Data, &body); err != nil {
		return fmt.Errorf("jobs: record type %#x: %w", rec.Type, err)
	}
	m.nextID = body.NextID
	switch rec.Type {
	case RecJobSubmit:
		if body.Job == nil || body.Job.ID == 0 {
			return errors.New("jobs: submit record without a job")
		}
		internJob(body.Job)
		m.remove(body.Job.ID)
		m.insert(body.Job)
	case RecJobUpdate:
		if body.Job == nil || body.Job.ID == 0 {
			return errors.New("jobs: update record without a job")
		}
		if old := m.jobs[body.Job.ID]; old != nil {
			body.Job.Payload = old.Payload
			if body.Job.PayloadSeq == 0 {
				body.Job.PayloadSeq = old.PayloadSeq
			}
		}
		internJob(body.Job)
		m.remove(body.Job.ID)
		m.insert(body.Job)
	case RecJobPurge:
		m.remove(body.Purge)
	default:
		return fmt.Errorf("jobs: unknown record type %#x", rec.Type)
	}
	return nil
}

// snapHeader starts a snapshot, as a line of JSON; Count job records
// follow: one JSON value each in version 1, one gob stream in version 2.
// Gob is a third of the size (field names go once, zero fields not at all),
// which matters because the controller buffers a whole snapshot in memory.
type snapHeader struct {
	Format     string
	Version    uint16
	NextID     uint32
	LastUpdate int64
	Count      int
}

const (
	snapFormat  = "goslurm-jobs"
	snapJSON    = 1
	snapGob     = 2
	snapVersion = snapGob // what WriteSnapshot writes
)

// WriteSnapshot writes the whole table: payloads kept in memory inline,
// the others by their seq (the store copies those into its snapshot, see
// payload.go). Call it under the lock under which LastSeq was read.
func (m *Manager) WriteSnapshot(w io.Writer) error {
	m.declarePayloads()
	bw := bufio.NewWriter(w)
	if err := json.NewEncoder(bw).Encode(snapHeader{Format: snapFormat, Version: snapVersion, NextID: m.nextID,
		LastUpdate: m.lastUpdate, Count: len(m.jobs)}); err != nil {
		return err
	}
	enc := gob.NewEncoder(bw)
	for _, j := range m.Jobs() {
		// What JSON leaves out (json:"-") is not saved here either; zeroed
		// in place for the call, since a copy per job would double what a
		// snapshot allocates.
		le, es := j.LastEval, j.EstStart
		j.LastEval, j.EstStart = 0, 0
		err := enc.Encode(j)
		j.LastEval, j.EstStart = le, es
		if err != nil {
			return fmt.Errorf("jobs: snapshot job %d: %w", j.ID, err)
		}
	}
	return bw.Flush()
}

// LoadSnapshot replaces the table with a snapshot's (state.Loader).
func (m *Manager) LoadSnapshot(_ uint64, r io.Reader) error {
	br := bufio.NewReader(r)
	dec := json.NewDecoder(br)
	var h snapHeader
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("jobs: snapshot header: %w", err)
	}
	if h.Format != snapFormat || h.Version != snapJSON && h.Version != snapGob {
		return fmt.Errorf("jobs: snapshot format %q version %d not supported", h.Format, h.Version)
	}
	if h.Count < 0 {
		return fmt.Errorf("jobs: snapshot of %d jobs", h.Count)
	}
	decode := dec.Decode
	if h.Version == snapGob {
		// The JSON decoder may have read past the header, up to its
		// newline included; the gob stream starts after that newline.
		rest := bufio.NewReader(io.MultiReader(dec.Buffered(), br))
		if c, err := rest.ReadByte(); err != nil || c != '\n' {
			return fmt.Errorf("jobs: snapshot header not followed by a newline")
		}
		decode = gob.NewDecoder(rest).Decode
	}
	m.jobs, m.arrays = map[uint32]*Job{}, nil
	m.order, m.sorted = nil, false
	for i := 0; i < h.Count; i++ {
		j := new(Job)
		if err := decode(j); err != nil {
			return fmt.Errorf("jobs: snapshot job %d: %w", i, err)
		}
		internJob(j)
		m.insert(j)
	}
	m.nextID, m.lastUpdate = h.NextID, h.LastUpdate
	return nil
}

// Recovered finishes a restore (after state.Open replayed everything):
// priorities continue below the recovered ones.
func (m *Manager) Recovered(now int64) {
	m.recoverHooks(now)
	m.convertArrayExits(now)
	for _, j := range m.Jobs() {
		if j.Priority != 0 && !j.AdminPrio {
			m.prio.Recover(j.Priority)
		}
	}
	if boost := m.prio.SyncBoost(); boost != 0 {
		for _, j := range m.jobs {
			if j.Priority != 0 && !j.AdminPrio {
				j.Priority += boost
			}
		}
	}
	if m.nextID < m.cfg.FirstJobID || m.nextID >= m.cfg.MaxJobID {
		m.nextID = m.cfg.FirstJobID
	}
	m.noteRebuiltAllocs()
	m.lastUpdate = now
}

// noteRebuiltAllocs records the jobs whose allocated TRES counts real
// slurmctld rebuilds when it loads its state: every job not pending
// then has them (job_set_alloc_tres), and for a job that never had nodes
// they count 0 nodes, which its record shows as its task count when it
// asked for none (NumTasks=0, where it showed none before the restart).
// A job that ran keeps its counts from the saved string.
func (m *Manager) noteRebuiltAllocs() {
	m.rebuilt = nil
	for id, j := range m.jobs {
		if j.Pending() || !neverAllocated(j) || j.NumTasks != NoVal {
			continue
		}
		if m.rebuilt == nil {
			m.rebuilt = map[uint32]int64{}
		}
		m.rebuilt[id] = j.EndTime
	}
}

// allocRebuilt reports whether j is a job noteRebuiltAllocs recorded and
// has not changed state since (a requeue clears the counts again; it
// moves the end time when the job ends anew).
func (m *Manager) allocRebuilt(j *Job) bool {
	end, ok := m.rebuilt[j.ID]
	return ok && end == j.EndTime && !j.Pending() && neverAllocated(j)
}

// MemJournal is an in-memory Journal for tests and tools: every record
// submitted, in order; its tickets are durable at once.
type MemJournal struct{ Records []state.Record }

// Submit appends copies of recs.
func (j *MemJournal) Submit(recs ...state.Record) (Ticket, error) {
	for _, r := range recs {
		r.Data = append([]byte(nil), r.Data...)
		j.Records = append(j.Records, r)
	}
	return doneTicket{}, nil
}

type doneTicket struct{}

func (doneTicket) Wait(context.Context) error { return nil }
