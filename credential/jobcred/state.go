package jobcred

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/goslurm/goslurm/protocol/pack"
)

// The saved Verifier state (slurmd keeps it in SlurmdSpoolDir/cred_state so
// that a restart forgets neither a used credential nor a revocation).
//
// Format version 1. Every integer is big-endian, times are signed 64-bit
// Unix seconds (Slurm's pack primitives, protocol/pack):
//
//	magic       8 bytes  "GSLMCRED"
//	version     u16      1
//	window      u32      the writer's expiration window, seconds
//	                     (informational: entries carry absolute times)
//	njobs       u32      at most MaxStateJobs
//	njobs times:
//	  job id      u32
//	  revoked     time   0: not revoked
//	  expiration  time   0x7fffffff (Slurm's MAX_TIME): purge timer not
//	                     started; otherwise the record goes after it
//	ncreds      u32      at most the importer's MaxCredStates
//	ncreds times:         the replay cache: launch credentials accepted
//	  job id, step id, het component   u32 each
//	  ctime       time   the credential's creation time
//	  expiration  time   ctime + window: the entry goes after it
//
// Records are sorted (jobs by id, credentials by step id then ctime), so one
// state always gives the same bytes. Nothing may follow the last record.
//
// This is not Slurm's own cred_state layout (which has no header, a job
// ctime, and the lists the other way round); the magic keeps a file of one
// from being read as the other.
const (
	stateMagic   = "GSLMCRED"
	StateVersion = 1
)

// MaxStateJobs bounds the job records ImportState accepts: far more than
// the jobs a node sees within one expiration window, small enough that a
// hostile file cannot make the importer allocate much.
const MaxStateJobs = 1 << 20

const (
	stateJobSize  = 4 + 8 + 8
	stateCredSize = 3*4 + 8 + 8
)

// ErrState reports a saved state that ImportState refuses.
var ErrState = errors.New("jobcred: bad credential state")

// ExportState returns the verifier's replay cache and job records in the
// format above, after dropping what has expired by the verifier's clock.
func (v *Verifier) ExportState() []byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.purge(v.clock().Unix())

	ids := make([]uint32, 0, len(v.jobs))
	for id := range v.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	keys := make([]credKey, 0, len(v.seen))
	for k := range v.seen {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareCredKey)

	w := pack.NewWriter(make([]byte, 0, 8+2+4+4+len(ids)*stateJobSize+4+len(keys)*stateCredSize))
	w.Raw([]byte(stateMagic))
	w.U16(StateVersion)
	w.U32(uint32(v.window))
	w.U32(uint32(len(ids)))
	for _, id := range ids {
		j := v.jobs[id]
		w.U32(id)
		w.Time(j.revoked)
		w.Time(j.expiration)
	}
	w.U32(uint32(len(keys)))
	for _, k := range keys {
		w.U32(k.step.JobID)
		w.U32(k.step.StepID)
		w.U32(k.step.StepHetComp)
		w.Time(k.ctime)
		w.Time(v.seen[k])
	}
	return w.Bytes()
}

func compareCredKey(a, b credKey) int {
	return cmp.Or(
		cmp.Compare(a.step.JobID, b.step.JobID),
		cmp.Compare(a.step.StepID, b.step.StepID),
		cmp.Compare(a.step.StepHetComp, b.step.StepHetComp),
		cmp.Compare(a.ctime, b.ctime))
}

// ImportState replaces the verifier's replay cache and job records with a
// state ExportState wrote, leaving out what has expired by the verifier's
// clock. It is meant for a fresh verifier at start-up: whatever the
// verifier held before is forgotten.
//
// The input is untrusted: counts are checked against MaxStateJobs, the
// verifier's MaxCredStates and the bytes present before anything is
// allocated, duplicates and impossible times are refused, and on any error
// the verifier is left unchanged.
func (v *Verifier) ImportState(data []byte) error {
	seen, jobs, err := v.decodeState(data)
	if err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.clock().Unix()
	for k, exp := range seen {
		if now > exp {
			delete(seen, k)
		}
	}
	for id, j := range jobs {
		if j.revoked != 0 && now > j.expiration {
			delete(jobs, id)
		}
	}
	v.seen, v.jobs, v.lastPurge = seen, jobs, now
	return nil
}

func (v *Verifier) decodeState(data []byte) (map[credKey]int64, map[uint32]*jobState, error) {
	if len(data) < len(stateMagic)+2 || string(data[:len(stateMagic)]) != stateMagic {
		return nil, nil, fmt.Errorf("%w: not a goslurm credential state", ErrState)
	}
	r := pack.NewReader(data[len(stateMagic):])
	if ver := r.U16(); ver != StateVersion {
		return nil, nil, fmt.Errorf("%w: version %d, want %d", ErrState, ver, StateVersion)
	}
	r.U32() // the writer's window

	n := r.Count(stateJobSize)
	if r.Err() == nil && n > MaxStateJobs {
		return nil, nil, fmt.Errorf("%w: %d job records, over %d", ErrState, n, MaxStateJobs)
	}
	jobs := make(map[uint32]*jobState, n)
	for range n {
		id := r.U32()
		j := &jobState{revoked: r.Time(), expiration: r.Time()}
		if r.Err() != nil {
			break
		}
		if _, dup := jobs[id]; dup {
			return nil, nil, fmt.Errorf("%w: job %d twice", ErrState, id)
		}
		if j.revoked < 0 || j.expiration <= 0 || j.expiration > maxTime {
			return nil, nil, fmt.Errorf("%w: job %d: revoked %d, expiration %d", ErrState, id, j.revoked, j.expiration)
		}
		jobs[id] = j
	}

	n = r.Count(stateCredSize)
	if r.Err() == nil && n > v.max {
		return nil, nil, fmt.Errorf("%w: %d replay entries, over %d", ErrState, n, v.max)
	}
	seen := make(map[credKey]int64, n)
	for range n {
		k := credKey{step: StepID{JobID: r.U32(), StepID: r.U32(), StepHetComp: r.U32()}, ctime: r.Time()}
		exp := r.Time()
		if r.Err() != nil {
			break
		}
		if _, dup := seen[k]; dup {
			return nil, nil, fmt.Errorf("%w: %v created %d twice", ErrState, k.step, k.ctime)
		}
		if exp < k.ctime {
			return nil, nil, fmt.Errorf("%w: %v created %d expires %d", ErrState, k.step, k.ctime, exp)
		}
		seen[k] = exp
	}
	if err := r.Done(); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	return seen, jobs, nil
}
