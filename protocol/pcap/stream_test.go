package pcap

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

const capturesDir = "../../testsuite/captures/testdata"

func unitKey(u Unit) string {
	dir := "to_server"
	if u.Half == u.Conn.ToClient {
		dir = "to_client"
	}
	return fmt.Sprintf("%v %v %s off=%d %v t=%s %s", u.Conn.Client, u.Conn.Server, dir, u.Offset, u.Kind,
		u.Time.Format(time.RFC3339Nano), hex.EncodeToString(u.Raw))
}

// Fed one segment at a time, the Streamer finds exactly the units the file
// reader finds, in every capture.
func TestStreamerMatchesFile(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(capturesDir, "*.pcap"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	cd := &codec.Codec{Bodies: msg.Registry()}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, c := range readAll(t, b) {
				for _, u := range SlurmUnits(c, cd) {
					want = append(want, unitKey(u))
				}
			}
			pr, err := NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			st := NewStreamer(cd, StreamLimits{})
			var got []string
			for {
				p, err := pr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if s, ok := DecodeTCP(p); ok {
					for _, u := range st.Add(s) {
						got = append(got, unitKey(u))
					}
				}
			}
			for _, u := range st.Close() {
				got = append(got, unitKey(u))
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("streamed units differ:\n got %d: %s\nwant %d: %s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
			}
			if st.Open() != 0 {
				t.Errorf("%d connections still open after Close", st.Open())
			}
		})
	}
}

func seg(src, dst netip.AddrPort, seq uint32, flags uint8, payload []byte, t time.Time) Segment {
	return Segment{Time: t, Src: src, Dst: dst, Seq: seq, Flags: flags, Payload: payload}
}

// A frame is returned only once its last byte is there, whatever the order
// the segments came in; a finished connection is forgotten.
func TestStreamerIncremental(t *testing.T) {
	cd := &codec.Codec{Bodies: msg.Registry()}
	st := NewStreamer(cd, StreamLimits{})
	t0 := time.Unix(1700000000, 0)
	req := rpcFrame(t, msgtype.REQUEST_JOB_INFO, bytes.Repeat([]byte{7}, 14))
	rep := rpcFrame(t, msgtype.RESPONSE_SLURM_RC, []byte{0, 0, 0, 0})
	const isn, risn = 1000, 5000
	steps := []struct {
		s     Segment
		units []UnitKind
	}{
		{seg(cli, srv, isn, TCPSyn, nil, t0), nil},
		{seg(srv, cli, risn, TCPSyn|TCPAck, nil, t0), nil},
		{seg(cli, srv, isn+1+10, TCPAck, req[10:], t0.Add(2)), nil}, // after a hole
		{seg(cli, srv, isn+1, TCPAck, req[:4], t0.Add(1)), nil},
		{seg(cli, srv, isn+1, TCPAck, req[:4], t0.Add(3)), nil},                     // retransmission
		{seg(cli, srv, isn+1+4, TCPAck, req[4:10], t0.Add(4)), []UnitKind{UnitRPC}}, // fills the hole
		{seg(srv, cli, risn+1, TCPAck, rep, t0.Add(5)), []UnitKind{UnitRPC}},
		{seg(cli, srv, isn+1+uint32(len(req)), TCPFin|TCPAck, nil, t0.Add(6)), nil},
		{seg(srv, cli, risn+1+uint32(len(rep)), TCPFin|TCPAck, nil, t0.Add(7)), nil},
	}
	for i, s := range steps {
		us := st.Add(s.s)
		var kinds []UnitKind
		for _, u := range us {
			kinds = append(kinds, u.Kind)
		}
		if !slices.Equal(kinds, s.units) {
			t.Fatalf("step %d: units %v, want %v", i, kinds, s.units)
		}
		if len(us) == 1 && i == 5 {
			if !bytes.Equal(us[0].Raw, req) || us[0].Frame.Header.MsgType != msgtype.REQUEST_JOB_INFO || !us[0].Time.Equal(t0.Add(1)) {
				t.Errorf("request unit: %+v", us[0])
			}
		}
	}
	if st.Open() != 0 {
		t.Errorf("%d connections open after both FINs", st.Open())
	}
}

// The limits: idle connections, too many connections, too many bytes
// waiting are dropped, each with one UnitDropped saying why.
func TestStreamerLimits(t *testing.T) {
	cd := &codec.Codec{Bodies: msg.Registry()}
	t0 := time.Unix(1700000000, 0)
	req := rpcFrame(t, msgtype.REQUEST_JOB_INFO, bytes.Repeat([]byte{7}, 14))
	client := func(port uint16) netip.AddrPort { return netip.AddrPortFrom(cli.Addr(), port) }

	st := NewStreamer(cd, StreamLimits{Idle: time.Minute, MaxConns: 2, MaxBuffer: 100})
	// Half a frame on connection 1, then two more connections: the first,
	// least recently active, goes.
	if us := st.Add(seg(client(1), srv, 1, TCPAck, req[:10], t0)); len(us) != 0 {
		t.Fatalf("units %v", us)
	}
	st.Add(seg(client(2), srv, 1, TCPAck, nil, t0.Add(time.Second)))
	us := st.Add(seg(client(3), srv, 1, TCPAck, nil, t0.Add(2*time.Second)))
	if len(us) != 1 || us[0].Kind != UnitDropped || us[0].Conn.Client != client(1) ||
		us[0].Err.Error() != "stream dropped: more than 2 connections open (least recently active); 10 bytes not decoded" {
		t.Fatalf("cap: %+v", us)
	}
	// A frame that would need more than MaxBuffer bytes.
	big := rpcFrame(t, msgtype.REQUEST_JOB_INFO, bytes.Repeat([]byte{7}, 200))
	us = st.Add(seg(client(2), srv, 1, TCPAck, big[:150], t0.Add(3*time.Second)))
	if len(us) != 1 || us[0].Kind != UnitDropped || !strings.Contains(us[0].Err.Error(), "more than 100 bytes waiting in one direction; 150 bytes not decoded") {
		t.Fatalf("buffer: %+v", us)
	}
	// Connection 3 goes idle.
	if us := st.Expire(t0.Add(time.Minute)); len(us) != 0 {
		t.Fatalf("expired too early: %+v", us)
	}
	us = st.Expire(t0.Add(2*time.Second + time.Minute + 1))
	if len(us) != 1 || us[0].Kind != UnitDropped || us[0].Conn.Client != client(3) ||
		us[0].Err.Error() != "stream dropped: idle for more than 1m0s; 0 bytes not decoded" {
		t.Fatalf("idle: %+v", us)
	}
	if st.Open() != 0 {
		t.Errorf("%d open", st.Open())
	}
}

// A garbage length ends what is read of that direction; the rest is
// ignored, not buffered.
func TestStreamerBadFrame(t *testing.T) {
	cd := &codec.Codec{Bodies: msg.Registry()}
	st := NewStreamer(cd, StreamLimits{MaxBuffer: 1 << 10})
	t0 := time.Unix(1700000000, 0)
	us := st.Add(seg(cli, srv, 1, TCPAck, []byte{0xff, 0xff, 0xff, 0xff, 1, 2}, t0))
	if len(us) != 1 || us[0].Kind != UnitBad {
		t.Fatalf("%+v", us)
	}
	for i := range 10 {
		if us := st.Add(seg(cli, srv, uint32(7+i*512), TCPAck, make([]byte, 512), t0)); len(us) != 0 {
			t.Fatalf("after a bad frame: %+v", us)
		}
	}
}

// In an I/O connection, the direction without an init message (srun's
// stdin) yields its records at once: a 10-byte stdin EOF is not taken for
// the start of an init message.
func TestStreamerIOStdinEOF(t *testing.T) {
	cd := &codec.Codec{Bodies: msg.Registry()}
	st := NewStreamer(cd, StreamLimits{})
	t0 := time.Unix(1700000000, 0)
	stepd := netip.MustParseAddrPort("127.0.0.1:50000")
	srun := netip.MustParseAddrPort("127.0.0.1:40001")
	key := bytes.Repeat([]byte{9}, 32)
	ini := binary.BigEndian.AppendUint32(nil, uint32(18+len(key)))
	ini = binary.BigEndian.AppendUint16(ini, uint16(codec.Version2205))
	ini = binary.BigEndian.AppendUint32(ini, 0)
	ini = binary.BigEndian.AppendUint32(ini, 1)
	ini = binary.BigEndian.AppendUint32(ini, 1)
	ini = binary.BigEndian.AppendUint32(ini, uint32(len(key)))
	ini = append(ini, key...)
	st.Add(seg(stepd, srun, 100, TCPSyn, nil, t0))
	st.Add(seg(srun, stepd, 900, TCPSyn|TCPAck, nil, t0))
	if us := st.Add(seg(stepd, srun, 101, TCPAck, ini, t0)); len(us) != 1 || us[0].Kind != UnitIOInit {
		t.Fatalf("init: %+v", us)
	}
	eof := make([]byte, 10) // stdin, task 0, length 0
	if us := st.Add(seg(srun, stepd, 901, TCPAck, eof, t0)); len(us) != 1 || us[0].Kind != UnitIO || us[0].IO.Type != IOStdin {
		t.Fatalf("stdin eof: %+v", us)
	}
}

// BenchmarkStreamer feeds every segment of every capture through a
// Streamer (decode TCP, reassemble, split and decode frames).
func BenchmarkStreamer(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(capturesDir, "*.pcap"))
	var pkts []Packet
	var bytesIn int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		pr, err := NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		for {
			p, err := pr.Next()
			if err != nil {
				break
			}
			pkts = append(pkts, p)
			bytesIn += int64(len(p.Data))
		}
	}
	cd := &codec.Codec{Bodies: msg.Registry()}
	b.SetBytes(bytesIn)
	b.ReportAllocs()
	for b.Loop() {
		st := NewStreamer(cd, StreamLimits{})
		n := 0
		for _, p := range pkts {
			if s, ok := DecodeTCP(p); ok {
				n += len(st.Add(s))
			}
		}
		n += len(st.Close())
		if n == 0 {
			b.Fatal("no units")
		}
	}
	b.ReportMetric(float64(len(pkts)), "packets/op")
}

// FuzzStreamer: any sequence of segments (the input cut into payloads with
// fuzzed sequence numbers, flags and directions) neither panics nor holds
// more than the limits.
func FuzzStreamer(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x10\x26\x00hello world 12345"))
	cd := &codec.Codec{Bodies: msg.Registry()}
	f.Fuzz(func(t *testing.T, data []byte) {
		st := NewStreamer(cd, StreamLimits{MaxConns: 3, MaxBuffer: 256})
		t0 := time.Unix(1700000000, 0)
		for len(data) >= 4 {
			n := min(int(data[0]%64), len(data)-4)
			port := netip.AddrPortFrom(cli.Addr(), 40000+uint16(data[1]%5))
			src, dst := port, srv
			if data[2]&1 != 0 {
				src, dst = srv, port
			}
			s := seg(src, dst, uint32(data[3])*7, data[2]>>1&(TCPFin|TCPSyn|TCPRst|TCPAck), data[4:4+n], t0)
			for _, u := range st.Add(s) {
				if u.Conn == nil || u.Half == nil {
					t.Fatalf("unit without connection: %+v", u)
				}
			}
			if st.Open() > 3 {
				t.Fatalf("%d connections open", st.Open())
			}
			data = data[4+n:]
		}
		st.Close()
	})
}
