package slurmerr

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestMessages(t *testing.T) {
	cases := []struct {
		code int
		name string
		msg  string
	}{
		{SLURM_SUCCESS, "SLURM_SUCCESS", "No error"},
		{SLURM_ERROR, "SLURM_ERROR", "Unspecified error"},
		{SLURM_PROTOCOL_VERSION_ERROR, "SLURM_PROTOCOL_VERSION_ERROR", "Incompatible versions of client and server code"},
		{ESLURM_INVALID_JOB_ID, "ESLURM_INVALID_JOB_ID", "Invalid job id specified"},
		{ESLURM_ALREADY_DONE, "ESLURM_ALREADY_DONE", "Job/step already completing or completed"},
		{ESLURM_PROTOCOL_INCOMPLETE_PACKET, "ESLURM_PROTOCOL_INCOMPLETE_PACKET", "Header lengths are longer than data received"},
		// In 22.05's slurm_errno.h but not in its message table: strerror's text.
		{ESLURMD_KILL_JOB_ALREADY_COMPLETE, "ESLURMD_KILL_JOB_ALREADY_COMPLETE", "Unknown error 4002"},
		{11, "11", "Resource temporarily unavailable"},
		{EINPROGRESS, "EINPROGRESS", "Operation now in progress"},
		{99999, "99999", "Unknown error 99999"},
		{-7, "-7", "Unknown negative error number"},
	}
	for _, c := range cases {
		e := Error{Code: c.code}
		if e.Error() != c.msg || e.Name() != c.name {
			t.Errorf("%d: %q %q, want %q %q", c.code, e.Name(), e.Error(), c.name, c.msg)
		}
	}
	if len(table) != 247+3 {
		t.Errorf("table has %d codes", len(table))
	}
	if c, ok := Lookup("ESLURM_ACCESS_DENIED"); !ok || c != 2002 {
		t.Errorf("Lookup: %d %v", c, ok)
	}
}

func TestIsAndCode(t *testing.T) {
	err := fmt.Errorf("submit: %w", Error{Code: ESLURM_INVALID_PARTITION_NAME})
	if !errors.Is(err, Error{Code: ESLURM_INVALID_PARTITION_NAME}) || !errors.Is(err, &Error{Code: ESLURM_INVALID_PARTITION_NAME}) {
		t.Error("errors.Is by code")
	}
	if errors.Is(err, Error{Code: ESLURM_ACCESS_DENIED}) {
		t.Error("matched a different code")
	}
	if Code(err) != ESLURM_INVALID_PARTITION_NAME || Code(nil) != 0 || Code(errors.New("x")) != SLURM_ERROR {
		t.Error("Code")
	}
	if Code(fmt.Errorf("w: %w", &Error{Code: 2017})) != 2017 {
		t.Error("Code of *Error")
	}
	if FromRC(0) != nil {
		t.Error("FromRC(0)")
	}
	if got := FromRC(0xffffffff); !errors.Is(got, Error{Code: SLURM_ERROR}) {
		t.Errorf("FromRC(-1) = %v", got)
	}
}

// The generated table must match errno_22.txt and messages_22.tsv (run go
// generate after editing them).
func TestTableMatchesSource(t *testing.T) {
	data, err := os.ReadFile("errno_22.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Fields(string(data)) {
		name, num, _ := strings.Cut(l, "=")
		n, _ := strconv.Atoi(num)
		if c, ok := Lookup(name); !ok || c != n {
			t.Errorf("%s=%d: table has %d %v", name, n, c, ok)
		}
	}
	msgs, err := os.ReadFile("messages_22.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(msgs)), "\n") {
		name, msg, _ := strings.Cut(l, "\t")
		c, ok := Lookup(name)
		if !ok || Message(c) != msg {
			t.Errorf("%s: %q, want %q", name, Message(c), msg)
		}
	}
}

// Name and Message search table by binary search: it must be sorted by
// code, with every code once.
func TestTableSorted(t *testing.T) {
	for i, e := range table {
		if i > 0 && table[i-1].code >= e.code {
			t.Errorf("table[%d] %s=%d is not after %s=%d", i, e.name, e.code, table[i-1].name, table[i-1].code)
		}
		if Name(e.code) != e.name {
			t.Errorf("Name(%d) = %q, want %q", e.code, Name(e.code), e.name)
		}
		if c, ok := Lookup(e.name); !ok || c != e.code {
			t.Errorf("Lookup(%q) = %d %v, want %d", e.name, c, ok, e.code)
		}
	}
}
