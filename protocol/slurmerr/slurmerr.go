// Package slurmerr carries Slurm's numeric error codes (slurm_errno.h, 22.05)
// with their names and the descriptions slurm_strerror gives them.
//
// Error is the one typed error that travels a Slurm code through Go code:
// it is what a RESPONSE_SLURM_RC return code or a protocol failure becomes,
// its message is Slurm's wording, and errors.Is matches it by code:
//
//	if errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_ID}) { ... }
//
// The constants keep Slurm's spelling so they can be grepped against Slurm.
package slurmerr

//go:generate go run ../internal/tablegen -kind slurmerr -in errno_22.txt -messages messages_22.tsv -out tables_22.go

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"sync"
	"syscall"
)

type info struct {
	code   int
	name   string
	msg    string
	hasMsg bool
}

// Error is a Slurm error code. Codes below 1000 are system errno values, as
// in Slurm.
type Error struct {
	Code int
}

// Error returns slurm_strerror's text for the code.
func (e Error) Error() string { return Message(e.Code) }

// Is matches another Error (value or pointer) with the same code.
func (e Error) Is(target error) bool {
	switch t := target.(type) {
	case Error:
		return t.Code == e.Code
	case *Error:
		return t != nil && t.Code == e.Code
	}
	return false
}

// Name returns Slurm's symbolic name for code (ESLURM_INVALID_JOB_ID), or the
// number in decimal when code has no name.
func (e Error) Name() string { return Name(e.Code) }

// Name returns the symbolic name of code, or the number when it has none.
func Name(code int) string {
	if i, ok := find(code); ok {
		return i.name
	}
	return strconv.Itoa(code)
}

// Lookup returns the code with Slurm's symbolic name name.
func Lookup(name string) (int, bool) {
	c, ok := byName()[name]
	return c, ok
}

// Message returns what slurm_strerror returns for code: the table text;
// for other positive codes the C library's strerror text (glibc wording,
// "Unknown error N" when the C library does not know the code either);
// for other negative codes "Unknown negative error number".
func Message(code int) string {
	if i, ok := find(code); ok && i.hasMsg {
		return i.msg
	}
	if code > 0 {
		return strerror(code)
	}
	return "Unknown negative error number"
}

// FromRC turns a u32 return code from the wire into an error: nil for
// SLURM_SUCCESS, otherwise Error with the code read as a signed 32-bit
// number (so 0xffffffff is SLURM_ERROR, -1).
func FromRC(rc uint32) error {
	if rc == 0 {
		return nil
	}
	return Error{Code: int(int32(rc))}
}

// Code extracts the Slurm code from err: 0 for nil, the Error's code when err
// wraps one, SLURM_ERROR otherwise.
func Code(err error) int {
	if err == nil {
		return SLURM_SUCCESS
	}
	var e Error
	if errors.As(err, &e) {
		return e.Code
	}
	var pe *Error
	if errors.As(err, &pe) && pe != nil {
		return pe.Code
	}
	return SLURM_ERROR
}

// strerror approximates glibc's strerror for system errno values: Go's
// syscall table carries the same texts in lower case on Linux.
func strerror(code int) string {
	if code < 1000 {
		s := syscall.Errno(code).Error()
		if s != "" && !(len(s) > 6 && s[:6] == "errno ") {
			if c := s[0]; c >= 'a' && c <= 'z' {
				s = string(c-'a'+'A') + s[1:]
			}
			return s
		}
	}
	return "Unknown error " + strconv.Itoa(code)
}

// find returns the table entry of code.
func find(code int) (*info, bool) {
	k, ok := slices.BinarySearchFunc(table[:], code, func(i info, code int) int { return cmp.Compare(i.code, code) })
	if !ok {
		return nil, false
	}
	return &table[k], true
}

// byName is built on the first Lookup: daemons never call it.
var byName = sync.OnceValue(func() map[string]int {
	m := make(map[string]int, len(table))
	for _, i := range table {
		m[i.name] = i.code
	}
	return m
})
