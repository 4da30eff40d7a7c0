package authhash_test

// Proof against real Slurm 22.05.8 traffic: every RPC in the captures carries
// a MUNGE credential whose payload is the K12 hash of that message's body.
// The credentials are opened with a private munged holding the captures' key
// (they are long expired; munged still returns their payload with
// EMUNGE_CRED_EXPIRED), and our hash of each body must equal it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/authhash"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pcap"
)

// capturesDir holds the repository's copy of the real 22.05.8 captures and
// the munge key that made their credentials.
const capturesDir = "../../testsuite/captures/testdata"

// rpc is one Slurm message taken from a capture.
type rpc struct {
	file    string
	msgType uint16
	body    []byte
	cred    string
}

func TestCapturedCredentialsCarryK12OfBody(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(capturesDir, "*.pcap"))
	keyFile := filepath.Join(capturesDir, "munge.key")
	if len(files) == 0 {
		t.Fatalf("no captures in %s", capturesDir)
	}
	if _, err := os.Stat(keyFile); err != nil {
		t.Fatalf("capture key: %v", err)
	}
	var rpcs []rpc
	for _, f := range files {
		got, err := capturedRPCs(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rpcs = append(rpcs, got...)
	}
	if len(rpcs) < 100 {
		t.Fatalf("only %d RPCs found in %d captures; the reader is broken", len(rpcs), len(files))
	}

	d := mungetest.Start(t, mungetest.Options{KeyFile: keyFile})
	c := d.Client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var checked, big int
	types := map[uint16]bool{}
	for i, r := range rpcs {
		cred, err := c.Decode(ctx, r.cred)
		switch {
		case err == nil:
		case munge.Decoded(err) && errors.Is(err, munge.ErrCredExpired):
			// Expected: captured long ago with TTL 300 s.
		case errors.Is(err, munge.ErrCredUnauthorized):
			t.Skipf("the captured credentials are restricted to SlurmUser (root); running as uid %d: %v", os.Getuid(), err)
		default:
			t.Fatalf("%s rpc %d (type %d): decode: %v", r.file, i, r.msgType, err)
		}
		if cred.UID != 0 || cred.TTL != 300*time.Second {
			t.Errorf("%s rpc %d: uid %d ttl %v, want root and 300 s", r.file, i, cred.UID, cred.TTL)
		}
		want, _ := authhash.Compute(authhash.K12, r.msgType, r.body)
		if !bytes.Equal(cred.Payload, want) {
			t.Errorf("%s rpc %d (type %d, body %d B): munge payload %x, our K12 %x", r.file, i, r.msgType, len(r.body), cred.Payload, want)
			continue
		}
		if typ, err := authhash.Verify(cred.Payload, r.msgType, r.body, authhash.Policy{BlockNullHash: true, BlockZeroHash: true}); err != nil || typ != authhash.K12 {
			t.Errorf("%s rpc %d: Verify = %v, %v", r.file, i, typ, err)
		}
		// Security checklist 1: the same credential with another message
		// type, or another body, or trailing bytes after the body, fails.
		if _, err := authhash.Verify(cred.Payload, r.msgType^1, r.body, authhash.Policy{}); !errors.Is(err, authhash.ErrMismatch) {
			t.Errorf("%s rpc %d: replay as msg type %d not rejected: %v", r.file, i, r.msgType^1, err)
		}
		if _, err := authhash.Verify(cred.Payload, r.msgType, append(append([]byte(nil), r.body...), 0), authhash.Policy{}); !errors.Is(err, authhash.ErrMismatch) {
			t.Errorf("%s rpc %d: trailing byte not rejected: %v", r.file, i, err)
		}
		if len(r.body) > 0 {
			b := append([]byte(nil), r.body...)
			b[len(b)/2] ^= 0x80
			if _, err := authhash.Verify(cred.Payload, r.msgType, b, authhash.Policy{}); !errors.Is(err, authhash.ErrMismatch) {
				t.Errorf("%s rpc %d: modified body not rejected: %v", r.file, i, err)
			}
		}
		checked++
		types[r.msgType] = true
		if len(r.body)+3 > 8192 {
			big++ // K12 tree mode (more than one 8 KiB chunk)
		}
	}
	t.Logf("%d captured RPCs checked (%d message types, %d with bodies over one K12 chunk)", checked, len(types), big)
}

// capturedRPCs returns every RPC frame of a capture, split by the protocol
// codec (srun I/O streams are left out by pcap.SlurmUnits).
func capturedRPCs(path string) ([]rpc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	conns, err := pcap.ReadConns(f)
	if err != nil {
		return nil, err
	}
	var out []rpc
	for _, c := range conns {
		for _, u := range pcap.SlurmUnits(c, codec.Default) {
			switch u.Kind {
			case pcap.UnitRPC:
				if u.Frame.Auth.PluginID != codec.AuthMunge {
					return nil, fmt.Errorf("connection %d: auth plugin %d, want auth/munge", c.ID, u.Frame.Auth.PluginID)
				}
				out = append(out, rpc{
					file:    filepath.Base(path),
					msgType: uint16(u.Frame.Header.MsgType),
					body:    u.Frame.Body,
					cred:    u.Frame.Auth.MungeCred,
				})
			case pcap.UnitBad, pcap.UnitTruncated:
				return nil, fmt.Errorf("connection %d at offset %d: %v %v", c.ID, u.Offset, u.Kind, u.Err)
			}
		}
	}
	return out, nil
}
