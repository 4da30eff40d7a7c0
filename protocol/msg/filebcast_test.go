package msg

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// testdata/file_bcast_22.05.8.bin is the body of the REQUEST_FILE_BCAST
// Debian's sbcast 22.05.8 sent for `sbcast -f -p` of a 13-byte file
// (mode 0640, atime 1600000000, mtime 1600000100) as root to /tmp/zzdst,
// job 1 (its next step, 0) on n1, captured at the node's port.
func TestFileBcastCapture(t *testing.T) {
	raw, err := os.ReadFile("testdata/file_bcast_22.05.8.bin")
	if err != nil {
		t.Fatal(err)
	}
	x, err := decodeExact(msgtype.REQUEST_FILE_BCAST, raw)
	if err != nil {
		t.Fatal(err)
	}
	b := x.(FileBcast)
	sig := b.Cred.Signature
	b.Cred.Signature = nil
	want := FileBcast{BlockNo: 1, Flags: FileBcastForce | FileBcastLastBlock, Modes: 0o100640,
		UserName: Str("root"), Atime: 1_600_000_000, Mtime: 1_600_000_100, Fname: Str("/tmp/zzdst"),
		UncompLen: 13, FileSize: 13, Block: []byte("hello sbcast\n"),
		Cred: SbcastCred{Ctime: b.Cred.Ctime, Expiration: b.Cred.Expiration, JobID: 1, StepID: 0,
			UserName: Str("root"), GIDs: []uint32{0}, Nodes: Str("n1")}}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("decoded\n %#v\nwant\n %#v", b, want)
	}
	if !strings.HasPrefix(string(sig), "MUNGE:") || sig[len(sig)-1] != 0 {
		t.Errorf("signature %q", sig)
	}
	b.Cred.Signature = sig
	if got := encodeBody(t, msgtype.REQUEST_FILE_BCAST, b); !bytes.Equal(got, raw) {
		t.Errorf("re-encoded\n %x\nwant\n %x", got, raw)
	}
	// The signed part is the credential's bytes before the signature.
	signed, err := b.Cred.SignedBytes(0x2600)
	if err != nil {
		t.Fatal(err)
	}
	credAt := len(raw) - 4 - len(sig) - len(signed)
	if !bytes.Equal(raw[credAt:credAt+len(signed)], signed) {
		t.Error("SignedBytes is not the credential's wire form")
	}

	// Every truncation fails, and so does a trailing byte.
	for n := 0; n < len(raw); n++ {
		if _, err := decodeExact(msgtype.REQUEST_FILE_BCAST, raw[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: accepted", n)
		}
	}
	if _, err := decodeExact(msgtype.REQUEST_FILE_BCAST, append(bytes.Clone(raw), 0)); err == nil {
		t.Error("trailing byte accepted")
	}
	// block_len (at 0x4a, after fname) disagreeing with the block.
	bad := bytes.Clone(raw)
	off := bytes.Index(bad, []byte("/tmp/zzdst\x00")) + len("/tmp/zzdst\x00")
	binary.BigEndian.PutUint32(bad[off:], 12)
	if _, err := decodeExact(msgtype.REQUEST_FILE_BCAST, bad); err == nil {
		t.Error("block_len 12 with a 13-byte block accepted")
	}
}

func TestFileBcastRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(6014, 1))
	for i := 0; i < 200; i++ {
		var b FileBcast
		gen(r, reflect.ValueOf(&b).Elem(), false, 0)
		if len(b.Cred.Signature) == 0 {
			b.Cred.Signature = []byte("MUNGE:x\x00")
		}
		checkRoundTrip(t, msgtype.REQUEST_FILE_BCAST, b, 4)
	}
	// No signature: refused both ways.
	var w = FileBcast{Fname: Str("/x")}
	if err := lookup(t, msgtype.REQUEST_FILE_BCAST).Encode(&pack.Writer{}, 0x2600, w); err == nil {
		t.Error("encoded a credential without a signature")
	}
}

func FuzzFileBcastDecode(f *testing.F) {
	if raw, err := os.ReadFile("testdata/file_bcast_22.05.8.bin"); err == nil {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := decodeExact(msgtype.REQUEST_FILE_BCAST, data)
		if err != nil {
			return
		}
		b := x.(FileBcast)
		if len(b.Cred.Signature) == 0 {
			t.Fatal("accepted a credential without a signature")
		}
		if got := encodeBody(t, msgtype.REQUEST_FILE_BCAST, b); !bytes.Equal(got, data) {
			t.Fatalf("re-encoding differs")
		}
	})
}
