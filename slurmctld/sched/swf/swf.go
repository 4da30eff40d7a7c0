// Package swf reads workload traces in the Standard Workload Format of the
// Parallel Workloads Archive (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html):
// a header of "; Key: value" comment lines followed by one job per line with 18
// whitespace-separated fields, where -1 means unknown.
//
// The reader streams: it never holds more than one line, and it decompresses
// gzip input on the fly when the stream starts with the gzip magic, so the
// 42 MB RICC log is read without being loaded. It does no file I/O of its own;
// callers pass an io.Reader.
package swf

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Unknown is the SWF marker for a missing value.
const Unknown = -1

// NumFields is the number of fields of an SWF job record.
const NumFields = 18

// maxLine bounds a single line so a corrupt or hostile stream cannot make the
// reader buffer without limit. Real SWF lines are under 200 bytes.
const maxLine = 64 * 1024

// Named is a numbered queue or partition from the header ("; Queue: 2 production").
type Named struct {
	Number int64
	Name   string
}

// Header holds the header fields a simulator needs, typed, plus every header
// line in order for anything else. Numeric fields are Unknown (-1) when absent.
type Header struct {
	Version        string
	Computer       string
	Installation   string
	Acknowledge    []string
	Conversion     string
	TimeZoneString string
	StartTime      string
	EndTime        string
	Notes          []string

	MaxJobs       int64
	MaxRecords    int64
	UnixStartTime int64
	TimeZone      int64
	MaxNodes      int64
	MaxProcs      int64
	MaxRuntime    int64
	MaxMemory     int64
	Preemption    string

	Queues     []Named
	Partitions []Named

	// Lines are the raw header comment lines without their leading ';',
	// including the ones that are not "Key: value" (continuations, filters).
	Lines []string
}

// Record is one job line. Fields keep SWF's units: seconds for times, KB per
// processor for memory, processors for counts. Unknown values are -1.
type Record struct {
	Job          int64   // 1: job number
	Submit       int64   // 2: submit time, seconds from UnixStartTime
	Wait         int64   // 3: seconds between submit and start
	Run          int64   // 4: wall-clock seconds from start to end
	AllocProcs   int64   // 5: processors allocated
	AvgCPU       float64 // 6: average CPU seconds per processor
	UsedMem      float64 // 7: KB per processor
	ReqProcs     int64   // 8: processors requested
	ReqTime      int64   // 9: requested wall-clock time (the user's estimate / limit)
	ReqMem       float64 // 10: KB per processor requested
	Status       int64   // 11: 1 completed, 0 failed, 5 cancelled, 2-4 partial, -1 unknown
	User         int64   // 12
	Group        int64   // 13
	App          int64   // 14: executable number
	Queue        int64   // 15
	Partition    int64   // 16
	PrecedingJob int64   // 17
	ThinkTime    int64   // 18
}

// LineError is a malformed line. It is not fatal: Next can be called again
// and continues with the following line, so a caller can skip and count
// unusable records.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("swf: line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ErrLineTooLong is fatal: the stream is not SWF.
var ErrLineTooLong = errors.New("swf: line longer than 64 KiB")

// Reader reads an SWF stream. The header is parsed by NewReader; records are
// returned by Next.
type Reader struct {
	sc      *bufio.Scanner
	gz      *gzip.Reader
	line    int
	header  Header
	pending []byte // the first record line, read while looking for the end of the header
	fatal   error
}

// NewReader reads the header from r (plain or gzip-compressed SWF). The header
// ends at the first line that is neither a comment nor blank.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	var src io.Reader = br
	rd := &Reader{header: newHeader()}
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("swf: gzip: %w", err)
		}
		gz.Multistream(true)
		rd.gz = gz
		src = gz
	}
	rd.sc = bufio.NewScanner(src)
	rd.sc.Buffer(make([]byte, 0, 4096), maxLine)
	for rd.sc.Scan() {
		rd.line++
		text := bytes.TrimSpace(rd.sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if text[0] != ';' {
			rd.pending = append([]byte(nil), text...)
			return rd, nil
		}
		rd.header.addLine(string(text[1:]))
	}
	if err := rd.scanErr(); err != nil {
		return nil, err
	}
	return rd, nil
}

func newHeader() Header {
	return Header{
		MaxJobs: Unknown, MaxRecords: Unknown, UnixStartTime: Unknown, TimeZone: Unknown,
		MaxNodes: Unknown, MaxProcs: Unknown, MaxRuntime: Unknown, MaxMemory: Unknown,
	}
}

// Header returns the parsed header.
func (r *Reader) Header() Header { return r.header }

// Line is the number of the line last read (1-based).
func (r *Reader) Line() int { return r.line }

// Next returns the next job record. It returns io.EOF at the end, a
// *LineError for a malformed line (non-fatal), or another error (fatal:
// decompression or an over-long line). Comment lines after the header are
// skipped.
func (r *Reader) Next() (Record, error) {
	if r.fatal != nil {
		return Record{}, r.fatal
	}
	if r.pending != nil {
		text := r.pending
		r.pending = nil
		return r.parse(text)
	}
	for r.sc.Scan() {
		r.line++
		text := bytes.TrimSpace(r.sc.Bytes())
		if len(text) == 0 || text[0] == ';' {
			continue
		}
		return r.parse(text)
	}
	if err := r.scanErr(); err != nil {
		r.fatal = err
		return Record{}, err
	}
	r.fatal = io.EOF
	return Record{}, io.EOF
}

func (r *Reader) scanErr() error {
	err := r.sc.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("%w (line %d)", ErrLineTooLong, r.line+1)
	default:
		return fmt.Errorf("swf: read: %w", err)
	}
}

func (r *Reader) parse(text []byte) (Record, error) {
	rec, err := ParseRecord(string(text))
	if err != nil {
		return Record{}, &LineError{Line: r.line, Err: err}
	}
	return rec, nil
}

// ParseRecord parses one job line.
func ParseRecord(line string) (Record, error) {
	f := strings.Fields(line)
	if len(f) != NumFields {
		return Record{}, fmt.Errorf("%d fields, want %d", len(f), NumFields)
	}
	var rec Record
	ints := []struct {
		dst *int64
		col int
	}{
		{&rec.Job, 1}, {&rec.Submit, 2}, {&rec.Wait, 3}, {&rec.Run, 4}, {&rec.AllocProcs, 5},
		{&rec.ReqProcs, 8}, {&rec.ReqTime, 9}, {&rec.Status, 11}, {&rec.User, 12},
		{&rec.Group, 13}, {&rec.App, 14}, {&rec.Queue, 15}, {&rec.Partition, 16},
		{&rec.PrecedingJob, 17}, {&rec.ThinkTime, 18},
	}
	for _, c := range ints {
		v, err := parseInt(f[c.col-1])
		if err != nil {
			return Record{}, fmt.Errorf("field %d: %w", c.col, err)
		}
		*c.dst = v
	}
	floats := []struct {
		dst *float64
		col int
	}{{&rec.AvgCPU, 6}, {&rec.UsedMem, 7}, {&rec.ReqMem, 10}}
	for _, c := range floats {
		v, err := strconv.ParseFloat(f[c.col-1], 64)
		if err != nil {
			return Record{}, fmt.Errorf("field %d: %w", c.col, errors.Unwrap(err))
		}
		*c.dst = v
	}
	return rec, nil
}

// parseInt accepts an integer, or a number with a zero fraction ("12.00"),
// which some converted logs write in integer columns.
func parseInt(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		return v, nil
	}
	fv, ferr := strconv.ParseFloat(s, 64)
	if ferr != nil || fv != float64(int64(fv)) || fv > 1<<62 || fv < -(1<<62) {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return int64(fv), nil
}

// addLine records one header comment line (without its ';').
func (h *Header) addLine(body string) {
	h.Lines = append(h.Lines, body)
	key, value, ok := strings.Cut(body, ":")
	if !ok {
		return
	}
	key = strings.TrimSpace(key)
	value = strings.TrimSpace(value)
	if key == "" || strings.ContainsAny(key, " \t") {
		return // a continuation line such as ";   http://..." or a filter
	}
	num := func(dst *int64) {
		if v, err := parseInt(value); err == nil {
			*dst = v
		}
	}
	switch strings.ToLower(key) {
	case "version":
		h.Version = value
	case "computer":
		h.Computer = value
	case "installation":
		h.Installation = value
	case "acknowledge":
		h.Acknowledge = append(h.Acknowledge, value)
	case "conversion":
		h.Conversion = value
	case "timezonestring":
		h.TimeZoneString = value
	case "starttime":
		h.StartTime = value
	case "endtime":
		h.EndTime = value
	case "note":
		h.Notes = append(h.Notes, value)
	case "preemption":
		h.Preemption = value
	case "maxjobs":
		num(&h.MaxJobs)
	case "maxrecords":
		num(&h.MaxRecords)
	case "unixstarttime":
		num(&h.UnixStartTime)
	case "timezone":
		num(&h.TimeZone)
	case "maxnodes":
		num(&h.MaxNodes)
	case "maxprocs":
		num(&h.MaxProcs)
	case "maxruntime":
		num(&h.MaxRuntime)
	case "maxmemory":
		num(&h.MaxMemory)
	case "queue":
		if n, ok := parseNamed(value); ok {
			h.Queues = append(h.Queues, n)
		}
	case "partition":
		if n, ok := parseNamed(value); ok {
			h.Partitions = append(h.Partitions, n)
		}
	}
}

// parseNamed parses "2 production" (the name may be empty or several words).
func parseNamed(value string) (Named, bool) {
	numStr, name := value, ""
	if i := strings.IndexAny(value, " \t"); i >= 0 {
		numStr, name = value[:i], value[i+1:]
	}
	n, err := parseInt(numStr)
	if err != nil {
		return Named{}, false
	}
	return Named{Number: n, Name: strings.TrimSpace(name)}, true
}

// Close releases the gzip decompressor, if any. It does not close the
// underlying reader, which the caller owns.
func (r *Reader) Close() error {
	if r.gz != nil {
		return r.gz.Close()
	}
	return nil
}
