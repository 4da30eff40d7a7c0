package jobopt

import (
	"fmt"
	"strings"
)

// Env is an ordered NAME=value list that behaves like a C environment
// array: Set replaces a variable in place or appends it, so the order
// matches what Slurm's env_array_* and setenv produce.
type Env struct {
	vars []string
}

// NewEnv copies a "NAME=value" list.
func NewEnv(list []string) *Env {
	return &Env{vars: append([]string(nil), list...)}
}

func (e *Env) index(name string) int {
	for i, kv := range e.vars {
		if len(kv) > len(name) && kv[len(name)] == '=' && kv[:len(name)] == name {
			return i
		}
	}
	return -1
}

// Get returns a variable's value.
func (e *Env) Get(name string) (string, bool) {
	if i := e.index(name); i >= 0 {
		return e.vars[i][len(name)+1:], true
	}
	return "", false
}

// Set sets a variable; with overwrite false an existing one is kept.
func (e *Env) Set(name, value string, overwrite bool) {
	kv := name + "=" + value
	if i := e.index(name); i >= 0 {
		if overwrite {
			e.vars[i] = kv
		}
		return
	}
	e.vars = append(e.vars, kv)
}

// SetHet is env_array_overwrite_het_fmt: for a het-job component
// (het >= 0) it sets NAME_PACK_GROUP_<het> and NAME_HET_GROUP_<het>,
// otherwise NAME.
func (e *Env) SetHet(name string, het int, value string) {
	if het < 0 {
		e.Set(name, value, true)
		return
	}
	e.Set(fmt.Sprintf("%s_PACK_GROUP_%d", name, het), value, true)
	e.Set(fmt.Sprintf("%s_HET_GROUP_%d", name, het), value, true)
}

// Merge sets every "NAME=value" entry of list (env_array_merge).
func (e *Env) Merge(list []string) {
	for _, kv := range list {
		name, value, ok := strings.Cut(kv, "=")
		if ok {
			e.Set(name, value, true)
		}
	}
}

// List returns the variables in order.
func (e *Env) List() []string { return append([]string(nil), e.vars...) }

// Lookup adapts Get to the Opts.Getenv signature.
func (e *Env) Lookup(name string) (string, bool) { return e.Get(name) }
