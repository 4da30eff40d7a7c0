// Package dataout builds the documents that Slurm 22.05's squeue --json,
// squeue --yaml, sinfo --json and sinfo --yaml print (the openapi/v0.0.38
// jobs and nodes handlers' replies) and writes them byte for byte as the
// serializer plugins do: JSON as json-c 0.16 prints with
// JSON_C_TO_STRING_PRETTY|JSON_C_TO_STRING_SPACED, YAML as libyaml 0.2.5's
// emitter prints the events serializer/yaml sends (explicit tags, block
// style, a %YAML 1.1 directive and an explicit document end).
//
// The tree mirrors Slurm's data_t: an ordered dictionary whose keys keep
// the position of their first insertion, lists, and scalars. A string may
// be NULL (data_set_string of a NULL pointer): JSON shows it as "", YAML
// as null, which is why it is not the same as a Null value.
package dataout

import "strconv"

// Kind is a Value's type (data_type_t).
type Kind uint8

// The kinds of Value.
const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindFloat
	KindString
	KindList
	KindDict
)

// Value is one node of the tree.
type Value struct {
	kind  Kind
	b     bool
	i     int64
	f     float64
	s     string
	sNull bool // a string holding a NULL pointer

	items []*Value // list items, or dict values
	keys  []string // dict keys, parallel to items
}

// Null is data_set_null.
func Null() *Value { return &Value{kind: KindNull} }

// Bool is data_set_bool.
func Bool(b bool) *Value { return &Value{kind: KindBool, b: b} }

// Int is data_set_int.
func Int(i int64) *Value { return &Value{kind: KindInt, i: i} }

// Float is data_set_float.
func Float(f float64) *Value { return &Value{kind: KindFloat, f: f} }

// Str is data_set_string of a non-NULL string.
func Str(s string) *Value { return &Value{kind: KindString, s: s} }

// NullStr is data_set_string(NULL): a string without a value.
func NullStr() *Value { return &Value{kind: KindString, sNull: true} }

// StrOrNullStr is data_set_string of a C string that may be NULL.
func StrOrNullStr(s string, valid bool) *Value {
	if !valid {
		return NullStr()
	}
	return Str(s)
}

// StrOrNull is data_set_string_own: a NULL string becomes a Null value.
func StrOrNull(s string, valid bool) *Value {
	if !valid {
		return Null()
	}
	return Str(s)
}

// NewList is data_set_list.
func NewList() *Value { return &Value{kind: KindList} }

// NewDict is data_set_dict.
func NewDict() *Value { return &Value{kind: KindDict} }

// Kind returns the value's type.
func (v *Value) Kind() Kind { return v.kind }

// Append adds v to the end of list l and returns v (data_list_append).
func (l *Value) Append(v *Value) *Value {
	l.items = append(l.items, v)
	return v
}

// Set stores v under key in dict d and returns v. As data_key_set, a key
// already present keeps its position and only its value changes.
func (d *Value) Set(key string, v *Value) *Value {
	for i, k := range d.keys {
		if k == key {
			d.items[i] = v
			return v
		}
	}
	d.keys = append(d.keys, key)
	d.items = append(d.items, v)
	return v
}

// SetInt stores v under the decimal form of key (data_key_set_int).
func (d *Value) SetInt(key int64, v *Value) *Value {
	return d.Set(strconv.FormatInt(key, 10), v)
}

// Get returns the value under key, or nil.
func (d *Value) Get(key string) *Value {
	for i, k := range d.keys {
		if k == key {
			return d.items[i]
		}
	}
	return nil
}

// Len is the number of list items or dict entries.
func (v *Value) Len() int { return len(v.items) }

// Release and plugin identity printed in every reply's "meta".
const (
	PluginType  = "openapi/v0.0.38"
	PluginName  = "Slurm OpenAPI v0.0.38"
	Release     = "22.05.8"
	majorNumber = 22
	minorNumber = 5
	microNumber = 8
)

// NewResponse is populate_response_format: a reply holding "meta" and an
// empty "errors" list, which it returns with the reply.
func NewResponse() (resp, errs *Value) {
	resp = NewDict()
	meta := resp.Set("meta", NewDict())
	plugin := meta.Set("plugin", NewDict())
	slurm := meta.Set("Slurm", NewDict())
	version := slurm.Set("version", NewDict())
	slurm.Set("release", Str(Release))
	// The version keys are inserted in this order, not numerically.
	version.Set("major", Int(majorNumber))
	version.Set("micro", Int(microNumber))
	version.Set("minor", Int(minorNumber))
	plugin.Set("type", Str(PluginType))
	plugin.Set("name", Str(PluginName))
	errs = resp.Set("errors", NewList())
	return resp, errs
}
