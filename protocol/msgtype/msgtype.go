// Package msgtype holds Slurm's message type numbers (slurm_msg_type_t) for
// protocol 22.05 and their names. The numbers of the RPCs goslurm speaks are
// the same in 22.05, 24.05 and 25.11.
//
// The constants keep Slurm's spelling (REQUEST_PING, RESPONSE_SLURM_RC) so
// that they can be grepped against Slurm's sources, logs and documents.
package msgtype

//go:generate go run ../internal/tablegen -kind msgtype -in msgtypes_22.txt -out tables_22.go

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
)

// Type is a message type as carried in the u16 msg_type header field.
type Type uint16

// String returns Slurm's name for t (REQUEST_PING), or the decimal number
// when t is not a 22.05 message type.
func (t Type) String() string {
	if i, ok := find(t); ok {
		return names[i].name
	}
	return strconv.Itoa(int(t))
}

// Known reports whether t is a message type of protocol 22.05.
func (t Type) Known() bool {
	_, ok := find(t)
	return ok
}

type nameEntry struct {
	t    Type
	name string
}

// find returns the index of t in names.
func find(t Type) (int, bool) {
	return slices.BinarySearchFunc(names[:], t, func(e nameEntry, t Type) int { return cmp.Compare(e.t, t) })
}

// LogName returns exactly what Slurm 22.05's rpc_num2string prints for t,
// for log lines that must match Slurm's: it is String except that
// RESPONSE_NODE_REGISTRATION and DBD_MESSAGES_END print as numbers and
// REQUEST_SET_FS_DAMPENING_FACTOR carries a stray trailing comma.
func (t Type) LogName() string {
	switch t {
	case RESPONSE_NODE_REGISTRATION, DBD_MESSAGES_END:
		return strconv.Itoa(int(t))
	case REQUEST_SET_FS_DAMPENING_FACTOR:
		return "REQUEST_SET_FS_DAMPENING_FACTOR,"
	}
	return t.String()
}

// Lookup returns the type with Slurm's name name.
func Lookup(name string) (Type, bool) {
	t, ok := byName()[name]
	return t, ok
}

// All returns every 22.05 message type, in numeric order.
func All() []Type {
	out := make([]Type, 0, len(names))
	for _, e := range names {
		out = append(out, e.t)
	}
	return out
}

// byName is built on the first Lookup: daemons never call it.
var byName = sync.OnceValue(func() map[string]Type {
	m := make(map[string]Type, len(names))
	for _, e := range names {
		m[e.name] = e.t
	}
	return m
})
