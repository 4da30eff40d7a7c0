package jobcred

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/goslurm/goslurm/hostlist"
)

// DefaultExpirationWindow is how long a credential is good for after its
// CTime (Slurm's DEFAULT_EXPIRATION_WINDOW; AuthInfo=cred_expire=N changes
// it, values below MinExpirationWindow are refused).
const (
	DefaultExpirationWindow = 120 * time.Second
	MinExpirationWindow     = 5 * time.Second
)

// DefaultMaxCredStates bounds the replay cache. An entry lives for one
// expiration window, so this is the number of step launches a node can take
// per window before it refuses (fails closed) new ones.
const DefaultMaxCredStates = 1 << 16

// Config configures a Verifier.
type Config struct {
	// Signatures checks signatures (mungesign.Verifier, HMACVerifier).
	Signatures SignatureVerifier
	// Clock returns the current time. Required: the verifier never reads
	// the wall clock itself.
	Clock func() time.Time
	// ExpirationWindow: 0 means DefaultExpirationWindow.
	ExpirationWindow time.Duration
	// MaxCredStates: 0 means DefaultMaxCredStates.
	MaxCredStates int
}

// LaunchRequest is what the launch message claims; the credential must agree.
type LaunchRequest struct {
	StepID StepID
	// UID and GID of REQUEST_LAUNCH_TASKS (22.05 carries them); the sender's
	// authenticated uid is checked against UID by the RPC layer.
	UID, GID uint32
	// NodeName is this node's NodeName.
	NodeName string
}

// Verified is a credential that passed VerifyLaunch.
type Verified struct {
	Body *Body
	Sig  SigInfo
	// HostIndex is this node's position in the job host list (the index into
	// the job core bitmap and the memory groups); -1 when JobNHosts is 0.
	HostIndex int
}

type credKey struct {
	step  StepID
	ctime int64
}

type jobState struct {
	revoked    int64 // 0: not revoked
	expiration int64 // maxTime until BeginExpiration
}

const maxTime = int64(0x7fffffff) // Slurm's MAX_TIME

// Verifier is slurmd's credential state (Slurm's verifier context): the
// replay cache and the per-job revocation records. It is safe for
// concurrent use.
type Verifier struct {
	sigs   SignatureVerifier
	clock  func() time.Time
	window int64
	max    int

	mu        sync.Mutex
	seen      map[credKey]int64 // -> expiration (ctime + window)
	jobs      map[uint32]*jobState
	lastPurge int64
}

// NewVerifier checks cfg and returns an empty verifier.
func NewVerifier(cfg Config) (*Verifier, error) {
	if cfg.Signatures == nil {
		return nil, errors.New("jobcred: Config.Signatures is required")
	}
	if cfg.Clock == nil {
		return nil, errors.New("jobcred: Config.Clock is required")
	}
	w := cfg.ExpirationWindow
	if w == 0 {
		w = DefaultExpirationWindow
	}
	if w < MinExpirationWindow {
		return nil, fmt.Errorf("jobcred: expiration window %v below %v", w, MinExpirationWindow)
	}
	m := cfg.MaxCredStates
	if m == 0 {
		m = DefaultMaxCredStates
	}
	if m < 0 {
		return nil, fmt.Errorf("jobcred: MaxCredStates %d", m)
	}
	return &Verifier{
		sigs:   cfg.Signatures,
		clock:  cfg.Clock,
		window: int64(w / time.Second),
		max:    m,
		seen:   map[credKey]int64{},
		jobs:   map[uint32]*jobState{},
	}, nil
}

// VerifyLaunch runs every check slurmd 22.05 makes on a launch credential
// before anything starts, and records the credential so it cannot be used
// again:
//
//  1. the signature authenticates exactly the received body (ErrInvalid);
//  2. now is within CTime + window, and within the signature's own validity
//     (ErrExpired);
//  3. it is for the requested job and step, uid and gid (ErrInvalid);
//  4. this node is in the step host list and, when the job has hosts, in the
//     job host list at an index below JobNHosts (ErrInvalid);
//  5. the job was not revoked at or after CTime (ErrRevoked);
//  6. the (step id, CTime) pair was not seen before (ErrReplayed).
//
// Only a credential that passes all of them changes the state (unlike
// slurmd, which records the credential before checks 3 and 4).
func (v *Verifier) VerifyLaunch(ctx context.Context, c *Credential, req LaunchRequest) (*Verified, error) {
	if !c.IsSigned() {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, ErrUnsigned)
	}
	info, err := v.sigs.VerifySignature(ctx, c.signed, c.Signature)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	now := v.clock().Unix()
	b := &c.Body
	if now > b.CTime+v.window {
		return nil, fmt.Errorf("%w: created %d, window %ds, now %d", ErrExpired, b.CTime, v.window, now)
	}
	if !info.Expires.IsZero() && now > info.Expires.Unix() {
		return nil, fmt.Errorf("%w: signature expired at %d, now %d", ErrExpired, info.Expires.Unix(), now)
	}
	if b.StepID.JobID != req.StepID.JobID || b.StepID.StepID != req.StepID.StepID {
		return nil, fmt.Errorf("%w: %w: credential %v, request %v", ErrInvalid, ErrStepMismatch, b.StepID, req.StepID)
	}
	if b.UID != req.UID || b.GID != req.GID {
		return nil, fmt.Errorf("%w: %w: credential %d:%d, request %d:%d", ErrInvalid, ErrUserMismatch, b.UID, b.GID, req.UID, req.GID)
	}
	idx, err := hostIndex(b, req.NodeName)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}

	v.mu.Lock()
	defer v.mu.Unlock()
	v.maybePurge(now)
	key := credKey{b.StepID, b.CTime}
	j := v.jobs[b.StepID.JobID]
	if j != nil && j.revoked != 0 && b.CTime > j.revoked {
		// A credential newer than the revocation: the job was requeued
		// and the credential reissued, so the old record goes.
		delete(v.jobs, b.StepID.JobID)
		j = nil
	}
	if j != nil && b.CTime <= j.revoked {
		return nil, fmt.Errorf("%w: job %d revoked at %d, credential created %d", ErrRevoked, b.StepID.JobID, j.revoked, b.CTime)
	}
	if _, dup := v.seen[key]; dup {
		return nil, fmt.Errorf("%w: %v created %d", ErrReplayed, b.StepID, b.CTime)
	}
	if len(v.seen) >= v.max {
		v.purge(now)
	}
	if len(v.seen) >= v.max {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, ErrStateFull)
	}
	v.seen[key] = b.CTime + v.window
	if j == nil {
		v.jobs[b.StepID.JobID] = &jobState{expiration: maxTime}
	}
	return &Verified{Body: b, Sig: info, HostIndex: idx}, nil
}

// hostIndex checks that node is in the step host list and returns its
// index in the job host list.
func hostIndex(b *Body, node string) (int, error) {
	if node == "" {
		return -1, fmt.Errorf("%w: no node name", ErrNodeNotInCredential)
	}
	if !b.StepHostlist.Valid {
		return -1, fmt.Errorf("%w: no step host list", ErrNodeNotInCredential)
	}
	sh, err := hostlist.Parse(b.StepHostlist.S)
	if err != nil {
		return -1, fmt.Errorf("%w: step host list %q: %v", ErrNodeNotInCredential, b.StepHostlist.S, err)
	}
	if sh.Find(node) < 0 {
		return -1, fmt.Errorf("%w: %s not in step host list %s", ErrNodeNotInCredential, node, b.StepHostlist.S)
	}
	if b.JobNHosts == 0 {
		return -1, nil
	}
	jh, err := hostlist.Parse(b.JobHostlist.S)
	if err != nil || !b.JobHostlist.Valid {
		return -1, fmt.Errorf("%w: job host list %q: %v", ErrNodeNotInCredential, b.JobHostlist.S, err)
	}
	i := jh.Find(node)
	if i < 0 || uint64(i) >= uint64(b.JobNHosts) {
		return -1, fmt.Errorf("%w: %s at index %d of job host list %s (%d hosts)", ErrNodeNotInCredential, node, i, b.JobHostlist.S, b.JobNHosts)
	}
	return i, nil
}

// maybePurge purges at most once every two seconds of clock time, as slurmd
// does, to keep a launch O(1) on a busy node.
func (v *Verifier) maybePurge(now int64) {
	if now >= v.lastPurge && now-v.lastPurge < 2 {
		return
	}
	v.purge(now)
}

// purge drops replay entries and finished revocation records past their
// expiration. Dropping a replay entry is safe: a credential that old fails
// the expiry check.
func (v *Verifier) purge(now int64) {
	v.lastPurge = now
	for k, exp := range v.seen {
		if now > exp {
			delete(v.seen, k)
		}
	}
	for id, j := range v.jobs {
		if j.revoked != 0 && now > j.expiration {
			delete(v.jobs, id)
		}
	}
}

// Rewind forgets that c was used, so the same launch can be retried (slurmd
// does this when it cannot send its reply to srun). It reports whether an
// entry was removed.
func (v *Verifier) Rewind(c *Credential) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	key := credKey{c.Body.StepID, c.Body.CTime}
	_, ok := v.seen[key]
	delete(v.seen, key)
	return ok
}

// ErrAlreadyRevoked is returned by Revoke for a job revoked before (EEXIST
// in Slurm).
var ErrAlreadyRevoked = errors.New("jobcred: job already revoked")

// Revoke refuses, from now on, every credential of job created at or before
// at (TERMINATE_JOB, ABORT_JOB, KILL_*). startTime is the job's start time:
// a job revoked earlier than that was requeued, and may be revoked again.
// The record is kept until BeginExpiration plus one window.
func (v *Verifier) Revoke(job uint32, at, startTime time.Time) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.maybePurge(v.clock().Unix())
	j := v.jobs[job]
	if j == nil {
		j = &jobState{expiration: maxTime}
		v.jobs[job] = j
	}
	if j.revoked != 0 {
		if !startTime.IsZero() && j.revoked < startTime.Unix() {
			j.expiration = maxTime
		} else {
			return fmt.Errorf("%w: job %d", ErrAlreadyRevoked, job)
		}
	}
	j.revoked = at.Unix()
	return nil
}

// BeginExpiration starts the purge timer of a job's record (after its
// epilog): it goes one window from now.
func (v *Verifier) BeginExpiration(job uint32) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.clock().Unix()
	v.maybePurge(now)
	j := v.jobs[job]
	if j == nil {
		return fmt.Errorf("jobcred: no state for job %d", job)
	}
	if j.expiration < maxTime {
		return fmt.Errorf("jobcred: expiration of job %d already started", job)
	}
	j.expiration = now + v.window
	return nil
}

// Revoked reports whether c's job was revoked at or after c was created
// (slurmd re-checks this after the prolog).
func (v *Verifier) Revoked(c *Credential) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	j := v.jobs[c.Body.StepID.JobID]
	return j != nil && j.revoked != 0 && c.Body.CTime <= j.revoked
}

// JobSeen reports whether the node holds a record for job (a launch was
// accepted or a revocation received): slurmd uses it to decide whether the
// prolog still has to run.
func (v *Verifier) JobSeen(job uint32) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.maybePurge(v.clock().Unix())
	_, ok := v.jobs[job]
	return ok
}

// InsertJob records that job has started on this node (batch launch).
func (v *Verifier) InsertJob(job uint32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.maybePurge(v.clock().Unix())
	if v.jobs[job] == nil {
		v.jobs[job] = &jobState{expiration: maxTime}
	}
}
