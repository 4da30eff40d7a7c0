package captures

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/pcap"
)

// capturedBody is one decoded RPC body from a capture.
type capturedBody struct {
	file string
	conn int
	mt   msgtype.Type
	body any
	raw  []byte
}

// roundTripCaptured decodes every frame of the given types in the captures
// (files in name order) and requires that it re-encodes byte for byte, that
// a frame rebuilt around the re-encoded body is the captured frame, that it
// decodes again to the same value, and that it encodes the same from a
// pointer to the value. It is the one decode loop of this package's typed
// body tests.
func roundTripCaptured(t *testing.T, want []msgtype.Type) []capturedBody {
	t.Helper()
	g := msg.Registry()
	var out []capturedBody
	for _, path := range pcaps(t) {
		name := filepath.Base(path)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		conns, err := pcap.ReadConns(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, c := range conns {
			for _, u := range pcap.SlurmUnits(c, codec.Default) {
				if u.Kind != pcap.UnitRPC || !slices.Contains(want, u.Frame.Header.MsgType) {
					continue
				}
				mt, ver := u.Frame.Header.MsgType, u.Frame.Header.Version
				where := fmt.Sprintf("%s c%d %v", name, c.ID, mt)
				bc, ok := g.Lookup(mt)
				if !ok {
					t.Fatalf("%s: no codec registered", where)
				}
				r := pack.NewReader(u.Frame.Body)
				v, err := bc.Decode(r, ver)
				if err == nil {
					err = r.Done()
				}
				if err != nil {
					t.Errorf("%s: decode: %v", where, err)
					continue
				}
				var w pack.Writer
				if err := bc.Encode(&w, ver, v); err != nil {
					t.Errorf("%s: encode: %v", where, err)
					continue
				}
				if !bytes.Equal(w.Bytes(), u.Frame.Body) {
					t.Errorf("%s: re-encoded body differs\n got %x\nwant %x", where, w.Bytes(), u.Frame.Body)
					continue
				}
				fr := codec.Frame{Header: u.Frame.Header, Auth: u.Frame.Auth, Body: w.Bytes()}
				if raw, err := codec.AppendFrame(nil, &fr); err != nil || !bytes.Equal(raw, u.Raw) {
					t.Errorf("%s: rebuilt frame differs (%v)", where, err)
				}
				if v2, err := bc.Decode(pack.NewReader(w.Bytes()), ver); err != nil || !reflect.DeepEqual(v, v2) {
					t.Errorf("%s: second decode differs (%v)", where, err)
				}
				p := reflect.New(reflect.TypeOf(v))
				p.Elem().Set(reflect.ValueOf(v))
				var w2 pack.Writer
				if err := bc.Encode(&w2, ver, p.Interface()); err != nil || !bytes.Equal(w2.Bytes(), u.Frame.Body) {
					t.Errorf("%s: pointer body encodes differently (%v)", where, err)
				}
				out = append(out, capturedBody{file: name, conn: c.ID, mt: mt, body: v, raw: u.Frame.Body})
			}
		}
	}
	return out
}
