package swf

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readAll(t *testing.T, r io.Reader) (Header, []Record, []error) {
	t.Helper()
	rd, err := NewReader(r)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	defer rd.Close()
	var recs []Record
	var lineErrs []error
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		var le *LineError
		if errors.As(err, &le) {
			lineErrs = append(lineErrs, err)
			continue
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		recs = append(recs, rec)
	}
	return rd.Header(), recs, lineErrs
}

var tinyRecords = []Record{
	{Job: 1, Submit: 0, Wait: 5, Run: 100, AllocProcs: 2, AvgCPU: -1, UsedMem: -1, ReqProcs: 2, ReqTime: 300, ReqMem: -1, Status: 1, User: 1, Group: 1, App: -1, Queue: 1, Partition: 1, PrecedingJob: -1, ThinkTime: -1},
	{Job: 2, Submit: 10, Wait: -1, Run: 50, AllocProcs: 4, AvgCPU: 12.5, UsedMem: 1024, ReqProcs: -1, ReqTime: -1, ReqMem: 2048, Status: 0, User: 2, Group: 1, App: 3, Queue: 2, Partition: 1, PrecedingJob: 1, ThinkTime: 30},
	{Job: 3, Submit: 20, Wait: 0, Run: 0, AllocProcs: 8, AvgCPU: -1, UsedMem: -1, ReqProcs: 8, ReqTime: 600, ReqMem: -1, Status: 5, User: 1, Group: 1, App: -1, Queue: 1, Partition: 1, PrecedingJob: -1, ThinkTime: -1},
}

func TestReadTiny(t *testing.T) {
	raw, err := os.ReadFile("testdata/tiny.swf")
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(raw)
	w.Close()

	for _, tc := range []struct {
		name string
		in   []byte
	}{{"plain", raw}, {"gzip", gz.Bytes()}} {
		t.Run(tc.name, func(t *testing.T) {
			h, recs, lineErrs := readAll(t, bytes.NewReader(tc.in))
			if len(lineErrs) != 0 {
				t.Fatalf("line errors: %v", lineErrs)
			}
			if diff := cmp.Diff(tinyRecords, recs); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if h.MaxNodes != 4 || h.MaxProcs != 8 || h.UnixStartTime != 1000000000 {
				t.Errorf("MaxNodes/MaxProcs/UnixStartTime = %d/%d/%d", h.MaxNodes, h.MaxProcs, h.UnixStartTime)
			}
			if h.MaxJobs != Unknown || h.MaxRuntime != Unknown {
				t.Errorf("absent fields not Unknown: MaxJobs %d MaxRuntime %d", h.MaxJobs, h.MaxRuntime)
			}
			if h.Version != "2.2" || h.Computer != "Test Machine" || h.Installation != "goslurm tests" {
				t.Errorf("strings: %q %q %q", h.Version, h.Computer, h.Installation)
			}
			if diff := cmp.Diff([]string{"nobody in particular"}, h.Acknowledge); diff != "" {
				t.Errorf("Acknowledge: %s", diff)
			}
			wantQ := []Named{{1, "batch"}, {2, ""}}
			if diff := cmp.Diff(wantQ, h.Queues); diff != "" {
				t.Errorf("Queues (-want +got):\n%s", diff)
			}
			wantP := []Named{{1, "main part"}}
			if diff := cmp.Diff(wantP, h.Partitions); diff != "" {
				t.Errorf("Partitions (-want +got):\n%s", diff)
			}
			if len(h.Lines) != 16 {
				t.Errorf("%d header lines, want 16", len(h.Lines))
			}
			if len(h.Notes) != 1 {
				t.Errorf("Notes = %q", h.Notes)
			}
		})
	}
}

func TestParseRecord(t *testing.T) {
	full := "1 0 5 100 2 -1 -1 2 300 -1 1 1 1 -1 1 1 -1 -1"
	tests := []struct {
		name    string
		line    string
		want    Record
		wantErr string
	}{
		{name: "ok", line: full, want: tinyRecords[0]},
		{name: "tabs and spaces", line: strings.ReplaceAll(full, " ", " \t "), want: tinyRecords[0]},
		{name: "integral float in int column", line: "1 0 5 100.00 2 -1 -1 2 300 -1 1 1 1 -1 1 1 -1 -1", want: tinyRecords[0]},
		{name: "too few fields", line: "1 0 5 100 2 -1 -1 2 300 -1 1 1 1 -1 1 1 -1", wantErr: "17 fields, want 18"},
		{name: "too many fields", line: full + " 7", wantErr: "19 fields, want 18"},
		{name: "fraction in int column", line: "1 0 5 100.5 2 -1 -1 2 300 -1 1 1 1 -1 1 1 -1 -1", wantErr: "field 4"},
		{name: "word", line: "1 0 x 100 2 -1 -1 2 300 -1 1 1 1 -1 1 1 -1 -1", wantErr: "field 3"},
		{name: "bad float", line: "1 0 5 100 2 abc -1 2 300 -1 1 1 1 -1 1 1 -1 -1", wantErr: "field 6"},
		{name: "empty", line: "", wantErr: "0 fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRecord(tc.line)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMalformedLineIsNotFatal(t *testing.T) {
	in := "; MaxProcs: 4\n1 0 0 1 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\nbroken line\n3 0 0 1 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
	_, recs, lineErrs := readAll(t, strings.NewReader(in))
	if len(recs) != 2 || len(lineErrs) != 1 {
		t.Fatalf("%d records, %d line errors; want 2 and 1", len(recs), len(lineErrs))
	}
	var le *LineError
	if !errors.As(lineErrs[0], &le) || le.Line != 3 {
		t.Errorf("line error = %v, want line 3", lineErrs[0])
	}
}

func TestEdgeStreams(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		records int
		fatal   error
	}{
		{name: "empty", in: ""},
		{name: "header only", in: "; MaxNodes: 3\n;\n"},
		{name: "no header", in: "1 0 0 1 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1", records: 1},
		{name: "CRLF", in: "; MaxNodes: 3\r\n1 0 0 1 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\r\n", records: 1},
		{name: "over-long line", in: "1 " + strings.Repeat("9", maxLine+1) + "\n", fatal: ErrLineTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rd, err := NewReader(strings.NewReader(tc.in))
			if err != nil {
				if tc.fatal != nil && errors.Is(err, tc.fatal) {
					return
				}
				t.Fatal(err)
			}
			n := 0
			for {
				_, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					if tc.fatal != nil && errors.Is(err, tc.fatal) {
						return
					}
					t.Fatal(err)
				}
				n++
			}
			if tc.fatal != nil {
				t.Fatalf("no error, want %v", tc.fatal)
			}
			if n != tc.records {
				t.Errorf("%d records, want %d", n, tc.records)
			}
		})
	}
}

func TestCorruptGzip(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(strings.Repeat("1 0 0 1 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n", 1000)))
	w.Close()
	b := gz.Bytes()
	b = b[:len(b)/2] // truncated stream
	rd, err := NewReader(bytes.NewReader(b))
	if err != nil {
		return // failing up front is fine too
	}
	for {
		_, err := rd.Next()
		if err == io.EOF {
			t.Fatal("truncated gzip read to a clean EOF")
		}
		if err != nil {
			var le *LineError
			if errors.As(err, &le) {
				continue // the cut may split a line
			}
			return
		}
	}
}

// FuzzReader checks that no input makes the reader panic, loop or return a
// record after a fatal error, and that every record it returns re-parses.
func FuzzReader(f *testing.F) {
	raw, err := os.ReadFile("testdata/tiny.swf")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte("; MaxProcs: 1\n1 0 0 1 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Add([]byte("; Queue: x\n; Partition:\n;:\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("more results than lines")
			}
			_, err := rd.Next()
			if err == nil {
				continue
			}
			var le *LineError
			if errors.As(err, &le) {
				continue
			}
			// Fatal or EOF: it must stay so.
			if _, err2 := rd.Next(); err2 == nil {
				t.Fatalf("record after %v", err)
			}
			return
		}
	})
}
