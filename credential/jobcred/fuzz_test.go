package jobcred_test

import (
	"bytes"
	"testing"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/jobcred/internal/capturecreds"
)

// FuzzUnpack: no input panics or over-allocates, and anything that unpacks
// packs again to the same bytes.
func FuzzUnpack(f *testing.F) {
	for _, name := range captureFiles {
		found, _, err := capturecreds.Read(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, fd := range found {
			f.Add(fd.Bytes)
		}
	}
	b := fullBody()
	raw, _ := jobcred.EncodeBody(&b, jobcred.Version2205)
	f.Add(append(raw, 0, 0, 0, 1, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, n, err := jobcred.Unpack(data, jobcred.Version2205)
		if err != nil {
			return
		}
		if got := c.Bytes(); !bytes.Equal(got, data[:n]) {
			t.Fatalf("credential bytes differ")
		}
		again, err := jobcred.EncodeBody(&c.Body, jobcred.Version2205)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(again, c.Signed()) {
			t.Fatalf("re-encoded body differs")
		}
	})
}

func FuzzParseIOInit(f *testing.F) {
	f.Add(appendInit(&jobcred.IOInit{Version: 0x2600, NodeID: 1, IOKey: []byte("MUNGE:x:\x00")}))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := jobcred.ParseIOInit(data)
		if err != nil {
			return
		}
		if !bytes.Equal(appendInit(m), data) {
			t.Fatal("re-encode differs")
		}
	})
}
