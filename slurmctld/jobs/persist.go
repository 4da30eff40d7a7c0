package jobs

import (
	"bufio"
	"context"
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
	for _, r := range list {
		var body recBody
		body.NextID = m.nextID
		typ := RecJobUpdate
		switch r.kind {
		case recSubmit:
			typ = RecJobSubmit
			body.Job = r.job
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
	}
	return out, nil
}

// ApplyRecord replays one journal record (state.Loader).
func (m *Manager) ApplyRecord(_ uint64, rec state.Record) error {
	if rec.Version != RecVersion {
		return fmt.Errorf("jobs: record type %#x version %d not supported", rec.Type, rec.Version)
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
		m.remove(body.Job.ID)
		m.insert(body.Job)
	case RecJobUpdate:
		if body.Job == nil || body.Job.ID == 0 {
			return errors.New("jobs: update record without a job")
		}
		if old := m.jobs[body.Job.ID]; old != nil {
			body.Job.Payload = old.Payload
		}
		m.remove(body.Job.ID)
		m.insert(body.Job)
	case RecJobPurge:
		m.remove(body.Purge)
	default:
		return fmt.Errorf("jobs: unknown record type %#x", rec.Type)
	}
	return nil
}

// snapHeader starts a snapshot; Count job records follow, one JSON value
// each.
type snapHeader struct {
	Format     string
	Version    uint16
	NextID     uint32
	LastUpdate int64
	Count      int
}

const snapFormat = "goslurm-jobs"

// WriteSnapshot writes the whole table (payloads included).
func (m *Manager) WriteSnapshot(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(snapHeader{Format: snapFormat, Version: RecVersion, NextID: m.nextID,
		LastUpdate: m.lastUpdate, Count: len(m.jobs)}); err != nil {
		return err
	}
	for _, j := range m.Jobs() {
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// LoadSnapshot replaces the table with a snapshot's (state.Loader).
func (m *Manager) LoadSnapshot(_ uint64, r io.Reader) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	var h snapHeader
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("jobs: snapshot header: %w", err)
	}
	if h.Format != snapFormat || h.Version != RecVersion {
		return fmt.Errorf("jobs: snapshot format %q version %d not supported", h.Format, h.Version)
	}
	m.jobs = map[uint32]*Job{}
	m.order, m.sorted = nil, false
	for i := 0; i < h.Count; i++ {
		j := new(Job)
		if err := dec.Decode(j); err != nil {
			return fmt.Errorf("jobs: snapshot job %d: %w", i, err)
		}
		m.insert(j)
	}
	m.nextID, m.lastUpdate = h.NextID, h.LastUpdate
	return nil
}

// Recovered finishes a restore (after state.Open replayed everything):
// priorities continue below the recovered ones.
func (m *Manager) Recovered(now int64) {
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
	m.lastUpdate = now
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
