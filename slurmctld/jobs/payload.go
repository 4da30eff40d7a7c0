package jobs

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/goslurm/goslurm/slurmctld/state"
)

// A batch job's script and environment are most of what a pending job
// weighs (a login shell's environment is a few KB) and are only needed
// to launch it and for REQUEST_BATCH_SCRIPT. With a journal that keeps
// blobs (StoreJournal, MemJournal) they live on disk only: the submit call
// journals them as a RecJobPayload record right after the job's submit
// record, in the same group commit, and the job keeps the record's seq
// (PayloadSeq). The state store keeps such records readable by seq; a
// snapshot copies the ones the table still references (WriteSnapshot
// declares them). Without such a journal (nil, tests) the payload stays in
// memory (Job.Payload), as it also does for jobs recovered from state
// written before payload records existed.

// RecJobPayload is a payload record: the job id (u32 little-endian, the
// array job id for an array) then the JSON of its Payload. It is a blob
// of the state store (Manager.BlobType).
const RecJobPayload uint16 = 0x0104

// payloadStore is a Journal that keeps payload records readable by seq.
type payloadStore interface {
	Journal
	// nextSeq is the seq the next record submitted will get. Callers run
	// under the controller's lock, the only place records are submitted
	// from, so it is exact.
	nextSeq() uint64
	blob(seq uint64) ([]byte, error)
	// blobRefs declares the payloads the table references as of the last
	// record submitted.
	blobRefs(refs []uint64)
}

func (j storeJournal) nextSeq() uint64                 { return j.s.LastSeq() + 1 }
func (j storeJournal) blob(seq uint64) ([]byte, error) { return j.s.Blob(seq) }
func (j storeJournal) blobRefs(refs []uint64)          { j.s.BlobRefs(j.s.LastSeq(), refs) }

func (j *MemJournal) nextSeq() uint64 { return uint64(len(j.Records)) + 1 }

func (j *MemJournal) blob(seq uint64) ([]byte, error) {
	if seq == 0 || seq > uint64(len(j.Records)) || j.Records[seq-1].Type != RecJobPayload {
		return nil, fmt.Errorf("%w: seq %d", state.ErrNoBlob, seq)
	}
	return j.Records[seq-1].Data, nil
}

func (j *MemJournal) blobRefs([]uint64) {}

// BlobType tells the state store which records are blobs (state.BlobLoader).
func (m *Manager) BlobType(typ uint16) bool { return typ == RecJobPayload }

func encodePayload(id uint32, p *Payload) ([]byte, error) {
	b := binary.LittleEndian.AppendUint32(nil, id)
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("jobs: encode payload: %w", err)
	}
	return append(b, data...), nil
}

func decodePayload(data []byte) (uint32, *Payload, error) {
	if len(data) < 4 {
		return 0, nil, errors.New("jobs: payload record too short")
	}
	p := new(Payload)
	if err := json.Unmarshal(data[4:], p); err != nil {
		return 0, nil, fmt.Errorf("jobs: payload record: %w", err)
	}
	return binary.LittleEndian.Uint32(data), p, nil
}

// applyPayload replays a payload record: the job it belongs to (submitted
// by the record before it) reads its payload from seq from now on.
func (m *Manager) applyPayload(seq uint64, rec state.Record) error {
	if len(rec.Data) < 4 {
		return errors.New("jobs: payload record too short")
	}
	if j := m.jobs[binary.LittleEndian.Uint32(rec.Data)]; j != nil {
		j.PayloadSeq, j.Payload = seq, nil
	}
	return nil
}

// payload returns a job's payload, from memory or from disk; nil for a job
// without one (interactive allocations).
func (m *Manager) payload(j *Job) (*Payload, error) {
	if j.Payload != nil || j.PayloadSeq == 0 {
		return j.Payload, nil
	}
	ps, ok := m.journal.(payloadStore)
	if !ok {
		return nil, fmt.Errorf("jobs: payload of job %d at seq %d: no state store", j.ID, j.PayloadSeq)
	}
	data, err := ps.blob(j.PayloadSeq)
	if err != nil {
		return nil, fmt.Errorf("jobs: payload of job %d: %w", j.ID, err)
	}
	id, p, err := decodePayload(data)
	if err != nil {
		return nil, err
	}
	// Array tasks share the meta record's payload.
	if id != j.ID && (j.ArrayJobID == 0 || id != j.ArrayJobID) {
		return nil, fmt.Errorf("jobs: payload at seq %d is job %d's, not job %d's", j.PayloadSeq, id, j.ID)
	}
	return p, nil
}

// declarePayloads tells the store which payloads the table references, so
// the snapshot being written keeps exactly those.
func (m *Manager) declarePayloads() {
	ps, ok := m.journal.(payloadStore)
	if !ok {
		return
	}
	refs := make([]uint64, 0, len(m.jobs))
	for _, j := range m.jobs {
		if j.PayloadSeq != 0 {
			refs = append(refs, j.PayloadSeq)
		}
	}
	ps.blobRefs(refs)
}
