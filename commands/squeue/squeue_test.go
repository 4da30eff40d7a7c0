package main

import (
	"bytes"
	"strings"
	"testing"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
)

func TestParseBitList(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"1-3,7", "1-3,7"},
		{"0", "0"},
		// Slurm's step parser leaves the end out.
		{"0-20:4", "0,4,8,12,16"},
		// A list cut with "..." keeps its last complete number.
		{"1,3,5,4...", "1,3-5"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := sc.BitFmt(parseBitList(tc.in, 100), 0); got != tc.want {
			t.Errorf("parseBitList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestJobIDString(t *testing.T) {
	q := &squeue{}
	tests := []struct {
		r    jobRec
		want string
	}{
		{jobRec{j: &msg.JobInfo{JobID: 7}, taskID: sc.NoVal, taskStr: sc.NullStr}, "7"},
		{jobRec{j: &msg.JobInfo{JobID: 9, ArrayJobID: 8}, taskID: 3, taskStr: sc.NullStr}, "8_3"},
		{jobRec{j: &msg.JobInfo{JobID: 8, ArrayJobID: 8}, taskID: sc.NoVal, taskStr: sc.S("1-5%2")}, "8_[1-5%2]"},
		{jobRec{j: &msg.JobInfo{JobID: 12, HetJobID: 11, HetJobOffset: 1}, taskID: sc.NoVal, taskStr: sc.NullStr}, "11+1"},
		// The id buffer is 32 bytes.
		{jobRec{j: &msg.JobInfo{ArrayJobID: 17}, taskID: sc.NoVal, taskStr: sc.S(strings.Repeat("1,", 30))},
			"17_[" + strings.Repeat("1,", 13) + "1"},
	}
	for _, tc := range tests {
		if got, _ := jobIDString(&tc.r, q); got != tc.want {
			t.Errorf("jobIDString = %q, want %q", got, tc.want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	var stderr bytes.Buffer
	q := &squeue{prog: "squeue", stderr: &stderr}
	q.parseFormat("pre %.5i|%j%%%P %! tail")
	var got []string
	for _, f := range q.fields {
		switch {
		case f.prefix:
			got = append(got, "prefix:"+f.suffix)
		case f.print == nil:
			got = append(got, "invalid:"+f.suffix)
		default:
			got = append(got, f.header+":"+f.suffix)
		}
	}
	want := "prefix:pre |JOBID:||NAME:|PARTITION: |invalid:%! tail"
	if s := strings.Join(got, "|"); s != want {
		t.Errorf("fields = %q, want %q", s, want)
	}
	if stderr.String() != "squeue: error: Invalid job format specification: !\n" {
		t.Errorf("stderr = %q", stderr.String())
	}
	q.parseLongFormat("jobid:.5|,name,bogus:3")
	if len(q.fields) != 3 || q.fields[0].width != 5 || !q.fields[0].right || q.fields[0].suffix != "|" ||
		q.fields[1].width != 20 || q.fields[2].print != nil {
		t.Errorf("long fields = %+v", q.fields)
	}
}
