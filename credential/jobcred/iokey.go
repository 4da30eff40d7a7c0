package jobcred

import (
	"bytes"
	"crypto/subtle"
	"encoding/binary"
	"fmt"

	"github.com/goslurm/goslurm/protocol/pack"
)

// The srun I/O stream (io_hdr.c). slurmstepd connects to srun and first sends
// an init message whose key is the step credential's signature: srun kept
// its copy of the credential from RESPONSE_JOB_STEP_CREATE, the step daemon
// got the same bytes through REQUEST_LAUNCH_TASKS, and nobody else has seen
// them (the launch credential's munge payload is restricted to SlurmdUser
// and travels only on the srun <-> slurmd path). srun compares the key byte
// for byte, length included, and closes the connection on a mismatch.

// Protocol versions in the I/O init message.
const (
	// ioLegacyVersion is the pre-21.08 fixed-size init (8-byte key); 22.05
	// refuses it.
	ioLegacyVersion uint16 = 0xb001
	// ioMinVersion is SLURM_MIN_PROTOCOL_VERSION of 22.05 (20.11).
	ioMinVersion uint16 = 0x2400
)

// MaxIOInitLen bounds the init message a reader accepts (its key is a
// signature, at most MaxSignatureLen).
const MaxIOInitLen = 18 + MaxSignatureLen

// IOKey returns the key that authenticates the step's I/O connections: a
// copy of the credential's signature bytes exactly as they travel (22.05
// cred/munge: the munge text with its NUL; CredTypeHMAC: its text with NUL).
// An unsigned credential has no key.
func IOKey(c *Credential) []byte { return bytes.Clone(c.Signature) }

// CheckIOKey reports whether got equals want, in constant time for equal
// lengths; an empty want never matches.
func CheckIOKey(want, got []byte) bool {
	return len(want) > 0 && len(want) == len(got) && subtle.ConstantTimeCompare(want, got) == 1
}

// IOInit is the message that opens an I/O connection (io_init_msg_t).
type IOInit struct {
	Version    uint16 // the step daemon's protocol version
	NodeID     uint32 // node index in the step
	StdoutObjs uint32 // stdout streams that will send EOF
	StderrObjs uint32 // stderr streams that will send EOF
	IOKey      []byte
}

// AppendIOInit writes m with its u32 length prefix.
func AppendIOInit(w *pack.Writer, m *IOInit) {
	w.U32(uint32(2 + 4 + 4 + 4 + 4 + len(m.IOKey)))
	w.U16(m.Version)
	w.U32(m.NodeID)
	w.U32(m.StdoutObjs)
	w.U32(m.StderrObjs)
	w.Mem(m.IOKey)
}

// ParseIOInit decodes an init message, length prefix included, that fills
// data exactly.
func ParseIOInit(data []byte) (*IOInit, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("%w: I/O init of %d bytes", ErrMalformed, len(data))
	}
	n := binary.BigEndian.Uint32(data)
	if n > MaxIOInitLen || uint64(n) != uint64(len(data)-4) {
		return nil, fmt.Errorf("%w: I/O init length %d, %d bytes follow", ErrMalformed, n, len(data)-4)
	}
	r := pack.NewReader(data[4:])
	m := &IOInit{Version: r.U16()}
	if r.Err() == nil && (m.Version == ioLegacyVersion || m.Version < ioMinVersion) {
		return nil, fmt.Errorf("%w: I/O init version %#04x", ErrMalformed, m.Version)
	}
	m.NodeID = r.U32()
	m.StdoutObjs = r.U32()
	m.StderrObjs = r.U32()
	m.IOKey = r.Mem()
	if err := r.Done(); err != nil {
		return nil, wrapMalformed(err)
	}
	return m, nil
}

// ErrIOKey: an I/O connection whose init message does not carry this step's
// key, or names a node outside the step.
var ErrIOKey = fmt.Errorf("jobcred: invalid I/O init")

// Validate is srun's check of an init message: a supported version, the key
// equal to the step credential's signature, and a node id below nnodes.
func (m *IOInit) Validate(key []byte, nnodes uint32) error {
	if m.Version == ioLegacyVersion || m.Version < ioMinVersion {
		return fmt.Errorf("%w: version %#04x", ErrIOKey, m.Version)
	}
	if !CheckIOKey(key, m.IOKey) {
		return fmt.Errorf("%w: key mismatch", ErrIOKey)
	}
	if m.NodeID >= nnodes {
		return fmt.Errorf("%w: node id %d, step has %d nodes", ErrIOKey, m.NodeID, nnodes)
	}
	return nil
}
