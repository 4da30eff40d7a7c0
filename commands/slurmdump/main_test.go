package main

// Golden files: testdata/<capture>.txt is slurmdump's text output for each
// capture in testsuite/captures/testdata, and testdata/srun-hostname.jsonl
// pins the --json form. Nothing is masked (pcap times are fixed).
//
// They change whenever a body codec is added to protocol/msg (a hex dump
// becomes a decoded body). Review the diff and regenerate with
//
//	go test ./commands/slurmdump -update

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/commands/slurmdump/dump"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const capturesDir = "../../testsuite/captures/testdata"

func captures(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(capturesDir, "*.pcap"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in %s (%v)", capturesDir, err)
	}
	return files
}

// run runs slurmdump in-process and returns its exit code, stdout, stderr.
func run(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := dump.Main(append([]string{"slurmdump"}, args...), dump.IO{Stdin: bytes.NewReader(stdin), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./commands/slurmdump -update)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d (regenerate with: go test ./commands/slurmdump -update)\n got: %s\nwant: %s", path, i+1, g, w)
			}
		}
	}
}

// Every frame of every capture decodes: no error line, and the output
// matches the golden file.
func TestCapturesGolden(t *testing.T) {
	for _, f := range captures(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".pcap")
		t.Run(name, func(t *testing.T) {
			code, out, stderr := run(t, nil, f)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if n := strings.Count(out, " ERROR "); n > 0 {
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, " ERROR ") {
						t.Errorf("%s", l)
					}
				}
				t.Fatalf("%d error lines", n)
			}
			if !strings.Contains(out, " 22.05 ") {
				t.Fatalf("no 22.05 message in output:\n%s", out)
			}
			golden(t, name+".txt", out)
		})
	}
}

// decodeJSONL parses JSON Lines output into records.
func decodeJSONL(t *testing.T, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			t.Fatalf("line %d is empty", i+1)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", i+1, err, line)
		}
		recs = append(recs, m)
	}
	return recs
}

func TestJSONOutput(t *testing.T) {
	total := 0
	for _, f := range captures(t) {
		code, out, stderr := run(t, nil, "--json", f)
		if code != 0 || stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", f, code, stderr)
		}
		recs := decodeJSONL(t, out)
		_, text, _ := run(t, nil, "--brief", f)
		if lines := strings.Count(text, "\n"); lines != len(recs) {
			t.Errorf("%s: %d JSON records, %d brief text lines", f, len(recs), lines)
		}
		for i, r := range recs {
			for _, k := range []string{"time", "conn", "src", "dst", "dir", "kind", "length"} {
				if _, ok := r[k]; !ok {
					t.Errorf("%s record %d: no %q: %v", f, i, k, r)
				}
			}
			if e, ok := r["error"]; ok {
				t.Errorf("%s record %d: error %v", f, i, e)
			}
			switch r["kind"] {
			case "rpc":
				h := r["header"].(map[string]any)
				if h["version"] != "22.05" || h["msg_type"] == "" {
					t.Errorf("%s record %d: header %v", f, i, h)
				}
				if a := r["auth"].(map[string]any); a["plugin"] != "auth/munge" {
					t.Errorf("%s record %d: auth %v", f, i, a)
				}
				_, hasBody := r["body"]
				_, hasHex := r["body_hex"]
				if hasBody == hasHex {
					t.Errorf("%s record %d: want exactly one of body, body_hex: %v", f, i, r)
				}
			case "io_init", "io":
			default:
				t.Errorf("%s record %d: kind %v", f, i, r["kind"])
			}
		}
		total += len(recs)
	}
	if total < 100 {
		t.Fatalf("only %d records in all captures", total)
	}
	_, out, _ := run(t, nil, "--json", filepath.Join(capturesDir, "srun-hostname.pcap"))
	golden(t, "srun-hostname.jsonl", out)
}

// With the captures' munge key, every credential opens (expired, as the
// captures are old), names root, and carries the K12 hash of its body.
func TestMungeCredentials(t *testing.T) {
	d := mungetest.Start(t, mungetest.Options{KeyFile: filepath.Join(capturesDir, "munge.key")})
	rpcs := 0
	for _, f := range captures(t) {
		code, out, stderr := run(t, nil, "--json", "--munge-socket", d.Socket, f)
		if code != 0 || stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", f, code, stderr)
		}
		for i, r := range decodeJSONL(t, out) {
			if r["kind"] != "rpc" {
				continue
			}
			rpcs++
			a := r["auth"].(map[string]any)
			if a["uid"] != 0.0 || a["gid"] != 0.0 || a["hash"] != "ok" || a["cred"] != "expired" {
				t.Errorf("%s record %d: auth %v", f, i, a)
			}
		}
		// The text form says the same on every RPC line.
		_, text, _ := run(t, nil, "-q", "--munge-socket", d.Socket, f)
		for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
			if strings.Contains(l, " auth/munge") && !strings.Contains(l, " auth/munge uid=0 gid=0 cred=expired hash=ok") {
				t.Errorf("%s: %s", f, l)
			}
		}
	}
	if rpcs < 100 {
		t.Fatalf("only %d RPCs checked", rpcs)
	}
	t.Logf("%d credentials opened: uid 0, hash ok", rpcs)

	// A credential made with another key is reported, not fatal.
	other := mungetest.Start(t, mungetest.Options{})
	code, out, _ := run(t, nil, "-q", "--munge-socket", other.Socket, filepath.Join(capturesDir, "sbatch.pcap"))
	if code != 0 || !strings.Contains(out, "cred=invalid") || strings.Contains(out, "hash=") {
		t.Errorf("wrong key: exit %d\n%s", code, out)
	}
}

func TestMungeSocketMissing(t *testing.T) {
	code, _, stderr := run(t, nil, "--munge-socket", filepath.Join(t.TempDir(), "nope"), filepath.Join(capturesDir, "sbatch.pcap"))
	if code != dump.ExitRead || !strings.Contains(stderr, "munge socket") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestFilters(t *testing.T) {
	f := filepath.Join(capturesDir, "srun-hostname.pcap")
	lines := func(out string) []string { return strings.Split(strings.TrimSpace(out), "\n") }

	_, out, _ := run(t, nil, "-q", "-t", "RESPONSE_SLURM_RC", "--type", "request_job_ready", "-t", "5016", f)
	ls := lines(out)
	if len(ls) != 7 {
		t.Fatalf("got %d lines:\n%s", len(ls), out)
	}
	for _, l := range ls {
		if !strings.Contains(l, "RESPONSE_SLURM_RC(8001)") && !strings.Contains(l, "REQUEST_JOB_READY(4019)") && !strings.Contains(l, "REQUEST_STEP_COMPLETE(5016)") {
			t.Errorf("filtered in: %s", l)
		}
	}

	_, out, _ = run(t, nil, "-q", "-t", "IO", f)
	if ls := lines(out); len(ls) != 4 || !strings.Contains(ls[0], "IO_INIT") || !strings.Contains(ls[1], `IO stdout gtask=0 ltask=0 len=3 "vm\n"`) {
		t.Fatalf("IO filter:\n%s", out)
	}

	_, out, _ = run(t, nil, "-q", "--port", "6818", f)
	ls = lines(out)
	if len(ls) != 4 {
		t.Fatalf("port filter: %d lines:\n%s", len(ls), out)
	}
	for _, l := range ls {
		if !strings.Contains(l, ":6818 ") {
			t.Errorf("port filter let in: %s", l)
		}
	}

	// Stdin.
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	code, out2, _ := run(t, data, "-q", "--port", "6818", "-")
	if code != 0 || out2 != out {
		t.Fatalf("stdin: exit %d\n%s", code, out2)
	}

	// -x: no decoded bodies, hex only.
	_, out, _ = run(t, nil, "-x", "-t", "RESPONSE_SLURM_RC", f)
	if strings.Contains(out, "ReturnCode") || !strings.Contains(out, "    0000  00 00 00 00  ") {
		t.Fatalf("-x:\n%s", out)
	}
}

func TestUsage(t *testing.T) {
	f := filepath.Join(capturesDir, "sbatch.pcap")
	for _, args := range [][]string{
		{},
		{"--no-such-flag", f},
		{"-t", "REQUEST_NOTHING", f},
		{"--port", "x", f},
		{"--port", "0", f},
		{"--port", "70000", f},
		{f, "extra"},
		{"-i", "lo", f},
		{"-c", "3", f},
		{"-w", "out.pcap", f},
		{"-i", "lo", "-c", "-1"},
		{"-i", "lo", "--max-conns", "0"},
	} {
		code, out, stderr := run(t, nil, args...)
		if code != dump.ExitUsage || stderr == "" || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
	code, out, _ := run(t, nil, "--help")
	if code != 0 || !strings.Contains(out, "-i, --interface=IFACE") || !strings.Contains(out, "--munge-socket") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

func TestUnreadable(t *testing.T) {
	dir := t.TempDir()
	pcapFile, err := os.ReadFile(filepath.Join(capturesDir, "srun-hostname.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Cannot be read at all: exit 1, message on stderr.
	for name, p := range map[string]string{
		"missing": filepath.Join(dir, "missing.pcap"),
		"empty":   write("empty.pcap", nil),
		"garbage": write("garbage.pcap", bytes.Repeat([]byte("not a pcap file "), 100)),
		"pcapng":  write("ng.pcap", append([]byte{0x0a, 0x0d, 0x0d, 0x0a}, make([]byte, 60)...)),
		"short":   write("short.pcap", pcapFile[:10]),
	} {
		code, _, stderr := run(t, nil, p)
		if code != dump.ExitRead || stderr == "" {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
		}
	}

	// Garbage after the last record: everything is printed, then an error
	// line, exit 1.
	code, out, stderr := run(t, nil, write("tail.pcap", append(append([]byte(nil), pcapFile...), bytes.Repeat([]byte{0xee}, 40)...)))
	if code != dump.ExitRead || !strings.Contains(out, "IO stdout") || !strings.Contains(out, "ERROR reading capture") || stderr == "" {
		t.Fatalf("garbage tail: exit %d, stderr %q\n%s", code, stderr, out)
	}

	// Truncated inside a record: what was read is printed, then an error
	// line, exit 1. Cut at every offset of the first part of the file and
	// at a spread over the rest.
	for cut := 24; cut < len(pcapFile); cut += 1 + cut/50 {
		code, out, stderr := run(t, nil, write("cut.pcap", pcapFile[:cut]))
		switch code {
		case 0:
			// cut fell on a record boundary
		case dump.ExitRead:
			if !strings.Contains(out, "ERROR reading capture: pcap file truncated") || !strings.Contains(stderr, "cannot read capture") {
				t.Fatalf("cut at %d: stderr %q, output tail %q", cut, stderr, out[max(0, len(out)-200):])
			}
		default:
			t.Fatalf("cut at %d: exit %d", cut, code)
		}
	}

	// Damaged TCP payloads (the record headers left intact): error lines,
	// the dump goes on, exit 0.
	bad := append([]byte(nil), pcapFile...)
	damaged := 0
	for off := 24; off+16 <= len(bad); {
		incl := int(binary.LittleEndian.Uint32(bad[off+8:]))
		data := bad[off+16 : off+16+incl]
		// Ethernet, IPv4, TCP: flip the top bit of the first payload byte,
		// which makes a frame's length prefix insane or an I/O record's
		// type unknown.
		if len(data) > 34 {
			ihl := int(data[14]&0x0f) * 4
			if p := 14 + ihl; len(data) > p+20 {
				if p += int(data[p+12]>>4) * 4; len(data) > p {
					data[p] ^= 0x80
					damaged++
				}
			}
		}
		off += 16 + incl
	}
	if damaged < 10 {
		t.Fatalf("only %d records damaged", damaged)
	}
	code, out, _ = run(t, nil, write("bad.pcap", bad))
	if code != 0 || !strings.Contains(out, " ERROR ") {
		t.Fatalf("damaged payloads: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, nil, "--json", write("bad.pcap", bad))
	if code != 0 {
		t.Fatalf("damaged payloads --json: exit %d", code)
	}
	errs := 0
	for _, r := range decodeJSONL(t, out) {
		if _, ok := r["error"]; ok {
			errs++
		}
	}
	if errs == 0 {
		t.Fatalf("damaged payloads --json: no error records\n%s", out)
	}
}
