// Package captures checks the protocol codec against pcaps of real Slurm
// 22.05.8 traffic: every RPC frame must split into header, auth section and
// body and re-encode to the same bytes, and the per-file tallies must match
// those of decode_pcap.py (testdata/decoded.txt).
package captures

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pcap"
)

type tally struct {
	conns    int
	versions int // RPC frames + I/O init messages, as decode_pcap.py counts them
	counts   map[string]int
}

var (
	fileRe   = regexp.MustCompile(`^== \./(\S+): (\d+) TCP connections, header versions \{'0x2600': (\d+)\}$`)
	countsRe = regexp.MustCompile(`^\s+counts: (.*)$`)
)

func readDecoded(t *testing.T) map[string]*tally {
	t.Helper()
	f, err := os.Open("testdata/decoded.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*tally{}
	var cur *tally
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := fileRe.FindStringSubmatch(line); m != nil {
			cur = &tally{counts: map[string]int{}}
			cur.conns, _ = strconv.Atoi(m[2])
			cur.versions, _ = strconv.Atoi(m[3])
			out[m[1]] = cur
			continue
		}
		if m := countsRe.FindStringSubmatch(line); m != nil && cur != nil {
			for _, item := range strings.Split(m[1], ", ") {
				i := strings.LastIndex(item, "x")
				n, err := strconv.Atoi(item[i+1:])
				if err != nil {
					t.Fatalf("decoded.txt: bad count %q", item)
				}
				cur.counts[item[:i]] = n
			}
		}
	}
	return out
}

var ioNames = map[uint16]string{0: "STDIN", 1: "STDOUT", 2: "STDERR", 3: "ALLSTDIN", 4: "CONNECTION_TEST"}

type fileResult struct {
	conns, rpc, ioInit, io int
	counts                 map[string]int
}

func analyse(t *testing.T, path string) fileResult {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	conns, err := pcap.ReadConns(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	res := fileResult{conns: len(conns), counts: map[string]int{}}
	for _, c := range conns {
		for _, u := range pcap.SlurmUnits(c, codec.Default) {
			where := fmt.Sprintf("%s c%d %v->%v +%d", filepath.Base(path), c.ID, u.Half.Src, u.Half.Dst, u.Offset)
			switch u.Kind {
			case pcap.UnitRPC:
				res.rpc++
				res.counts[u.Frame.Header.MsgType.String()]++
				checkRoundTrip(t, where, u)
				checkOrigAddr(t, where, c, u)
			case pcap.UnitIOInit:
				res.ioInit++
				res.counts["IO_INIT"]++
			case pcap.UnitIO:
				res.io++
				res.counts["IO_"+ioNames[u.IO.Type]]++
			default:
				t.Errorf("%s: %v unit (%d bytes): %v", where, u.Kind, len(u.Raw), u.Err)
			}
		}
		if c.ToServer.Gap() || c.ToClient.Gap() {
			t.Errorf("%s c%d: stream has a hole", path, c.ID)
		}
	}
	return res
}

// checkRoundTrip: the frame splits into header | auth | body exactly and
// re-encodes to the captured bytes.
func checkRoundTrip(t *testing.T, where string, u pcap.Unit) {
	t.Helper()
	f := u.Frame
	hdr, hlen, err := codec.Default.DecodeHeader(u.Raw[4:])
	if err != nil {
		t.Errorf("%s: header: %v", where, err)
		return
	}
	if hdr.MsgType != f.Header.MsgType {
		t.Errorf("%s: header-only decode disagrees", where)
	}
	if got, want := 4+hlen+len(f.Auth.Raw)+len(f.Body), len(u.Raw); got != want {
		t.Errorf("%s: header %d + auth %d + body %d != frame %d", where, hlen, len(f.Auth.Raw), len(f.Body), want-4)
	}
	if !bytes.Equal(u.Raw[4+hlen:4+hlen+len(f.Auth.Raw)], f.Auth.Raw) {
		t.Errorf("%s: auth section not where expected", where)
	}
	if f.Auth.PluginID != codec.AuthMunge || !strings.HasPrefix(f.Auth.MungeCred, "MUNGE:") || !strings.HasSuffix(f.Auth.MungeCred, ":") {
		t.Errorf("%s: auth %v %q, want an auth/munge credential", where, f.Auth.PluginID, f.Auth.MungeCred)
	}
	if f.Header.Version != codec.Version2205 {
		t.Errorf("%s: version %v", where, f.Header.Version)
	}
	out, err := codec.AppendFrame(nil, &f)
	if err != nil {
		t.Errorf("%s: encode: %v", where, err)
		return
	}
	if !bytes.Equal(out, u.Raw) {
		t.Errorf("%s: %v re-encodes differently\n got %x\nwant %x", where, f.Header.MsgType, out, u.Raw)
	}
	// Rebuilding the frame from its parsed fields (not the raw auth bytes)
	// must give the same bytes too.
	re := codec.Frame{Header: f.Header, Auth: codec.MungeAuth(f.Auth.MungeCred), Body: f.Body}
	if out2, err := codec.AppendFrame(nil, &re); err != nil || !bytes.Equal(out2, u.Raw) {
		t.Errorf("%s: frame rebuilt from parsed fields differs (err %v)", where, err)
	}
}

// checkOrigAddr: slurmd stamps its replies with the requester's address,
// packed byte-reversed; decoded, it must be the connection's client end.
func checkOrigAddr(t *testing.T, where string, c *pcap.Conn, u pcap.Unit) {
	t.Helper()
	a := u.Frame.Header.OrigAddr
	if a.IsZero() {
		return
	}
	if u.Half != c.ToClient || a.Family != codec.AFInet {
		t.Errorf("%s: unexpected orig_addr %v", where, a)
		return
	}
	if a.String() != c.Client.String() {
		t.Errorf("%s: orig_addr %v, connection client %v", where, a, c.Client)
	}
	origAddrSeen++
}

var origAddrSeen int

func pcaps(t *testing.T) []string {
	files, err := filepath.Glob("testdata/*.pcap")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	sort.Strings(files)
	return files
}

func TestCapturesRoundTrip(t *testing.T) {
	want := readDecoded(t)
	total := 0
	for _, path := range pcaps(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			got := analyse(t, path)
			total += got.rpc
			w, ok := want[name]
			if !ok {
				t.Fatalf("%s missing from decoded.txt", name)
			}
			if got.conns != w.conns {
				t.Errorf("connections: got %d, decoded.txt %d", got.conns, w.conns)
			}
			if got.rpc+got.ioInit != w.versions {
				t.Errorf("frames: got %d RPC + %d I/O init, decoded.txt %d", got.rpc, got.ioInit, w.versions)
			}
			if fmt.Sprint(got.counts) != fmt.Sprint(w.counts) {
				t.Errorf("counts:\n got %v\nwant %v", got.counts, w.counts)
			}
			t.Logf("%s: %d connections, %d RPC frames, %d I/O init, %d I/O records; all round-trip", name, got.conns, got.rpc, got.ioInit, got.io)
		})
	}
	t.Logf("%d RPC frames in %d files; %d slurmd replies carry orig_addr", total, len(pcaps(t)), origAddrSeen)
	if origAddrSeen == 0 {
		t.Error("no orig_addr checked")
	}
}
