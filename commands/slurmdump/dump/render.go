package dump

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// The text rendering of decoded bodies is Go-struct-ish, one field per line:
//
//	codec.ReturnCodeMsg{RC: 0, Msg: "", MsgNull: true}
//	msg.NodeInfoMsg{
//	  LastUpdate: 1700000000
//	  Nodes: [2]{
//	    [0] Node{
//	      Name: "n1"
//	      ...
//
// A struct, slice or map goes on one line when its rendering is short and
// holds no nested block. Structs with more than denseFields fields leave out
// their zero-valued fields (and say how many); --json has every field.
const (
	inlineWidth = 100 // longest one-line rendering of a composite value
	denseFields = 8   // structs with up to this many fields show all of them
	maxDepth    = 24  // deeper values (cycles) print as "..."
	maxBytesHex = 64  // []byte values show at most this many bytes in hex
	indentUnit  = "  "
)

var (
	stringerType = reflect.TypeFor[fmt.Stringer]()
	timeType     = reflect.TypeFor[time.Time]()
	addrType     = reflect.TypeFor[codec.Addr]()
)

// render returns v as text; lines after the first start with indent.
func render(v any, indent string) string {
	if v == nil {
		return "nil"
	}
	rv := reflect.ValueOf(v)
	return renderValue(rv, indent, 0, true)
}

func renderValue(v reflect.Value, indent string, depth int, top bool) string {
	if depth > maxDepth {
		return "..."
	}
	if !v.IsValid() {
		return "nil"
	}
	t := v.Type()
	if s, ok := stringerText(v); ok {
		return s
	}
	if inner, valid, ok := nullable(v); ok {
		if !valid {
			return "NULL"
		}
		return renderValue(inner, indent, depth+1, false)
	}
	switch t.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if s, ok := sentinelName(t.Kind(), v.Uint()); ok {
			return s
		}
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Complex64, reflect.Complex128:
		return fmt.Sprint(v.Complex())
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		return "&" + renderValue(v.Elem(), indent, depth+1, top)
	case reflect.Interface:
		if v.IsNil() {
			return "nil"
		}
		return renderValue(v.Elem(), indent, depth+1, top)
	case reflect.Slice:
		if v.IsNil() {
			return "nil"
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return renderBytes(v.Bytes())
		}
		return renderList(v, indent, depth)
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			b := make([]byte, v.Len())
			reflect.Copy(reflect.ValueOf(b), v)
			return renderBytes(b)
		}
		return renderList(v, indent, depth)
	case reflect.Map:
		if v.IsNil() {
			return "nil"
		}
		return renderMap(v, indent, depth)
	case reflect.Struct:
		return renderStruct(v, indent, depth, top)
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if v.IsNil() {
			return "nil"
		}
		return "<" + t.Kind().String() + ">"
	}
	return fmt.Sprint(v)
}

// stringerText uses String() for named scalar types (message types, error
// codes, states) and for structs that are values rather than records (time,
// addresses).
func stringerText(v reflect.Value) (string, bool) {
	t := v.Type()
	switch {
	case t == timeType:
		tm := v.Interface().(time.Time)
		if tm.IsZero() {
			return "0", true
		}
		return tm.UTC().Format(time.RFC3339Nano), true
	case t == addrType:
		return v.Interface().(codec.Addr).String(), true
	}
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return "", false
	}
	if !t.Implements(stringerType) || !v.CanInterface() {
		return "", false
	}
	if t.Kind() == reflect.Struct && hasExportedFields(t) {
		return "", false
	}
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if v.IsNil() {
			return "nil", true
		}
	}
	s, ok := safeString(v.Interface().(fmt.Stringer))
	if !ok {
		return "", false
	}
	// Keep the number beside a name, so both can be grepped.
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n := strconv.FormatInt(v.Int(), 10); n != s {
			s += "(" + n + ")"
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n := strconv.FormatUint(v.Uint(), 10); n != s {
			s += "(" + n + ")"
		}
	}
	return s, true
}

// nullable recognizes the sql.NullString pattern, a struct of two exported
// fields one of which is "Valid bool", and returns the other field, so that
// {Value: "debug", Valid: true} prints as "debug" and an invalid one as NULL.
func nullable(v reflect.Value) (reflect.Value, bool, bool) {
	t := v.Type()
	if t.Kind() != reflect.Struct || t.NumField() != 2 {
		return reflect.Value{}, false, false
	}
	vi := -1
	for i := range 2 {
		f := t.Field(i)
		if !f.IsExported() {
			return reflect.Value{}, false, false
		}
		if f.Name == "Valid" && f.Type.Kind() == reflect.Bool {
			vi = i
		}
	}
	if vi < 0 {
		return reflect.Value{}, false, false
	}
	return v.Field(1 - vi), v.Field(vi).Bool(), true
}

func safeString(s fmt.Stringer) (out string, ok bool) {
	defer func() {
		if recover() != nil {
			out, ok = "", false
		}
	}()
	return s.String(), true
}

func hasExportedFields(t reflect.Type) bool {
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			return true
		}
	}
	return false
}

func renderBytes(b []byte) string {
	if len(b) == 0 {
		return "[]byte{}"
	}
	if len(b) <= maxBytesHex {
		return "0x" + hex.EncodeToString(b)
	}
	return fmt.Sprintf("0x%s... (%d bytes)", hex.EncodeToString(b[:maxBytesHex]), len(b))
}

func renderList(v reflect.Value, indent string, depth int) string {
	n := v.Len()
	if n == 0 {
		return "[]"
	}
	inner := indent + indentUnit
	items := make([]string, n)
	multi := false
	width := 0
	for i := range n {
		items[i] = renderValue(v.Index(i), inner, depth+1, false)
		width += len(items[i]) + 2
		multi = multi || strings.Contains(items[i], "\n")
	}
	if !multi && width <= inlineWidth {
		return "[" + strings.Join(items, ", ") + "]"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%d]{\n", n)
	for i, it := range items {
		fmt.Fprintf(&b, "%s[%d] %s\n", inner, i, it)
	}
	b.WriteString(indent + "}")
	return b.String()
}

func renderMap(v reflect.Value, indent string, depth int) string {
	if v.Len() == 0 {
		return "{}"
	}
	inner := indent + indentUnit
	type kv struct{ k, v string }
	var items []kv
	multi := false
	width := 0
	for it := v.MapRange(); it.Next(); {
		e := kv{renderValue(it.Key(), inner, depth+1, false), renderValue(it.Value(), inner, depth+1, false)}
		items = append(items, e)
		width += len(e.k) + len(e.v) + 4
		multi = multi || strings.Contains(e.v, "\n")
	}
	sort.Slice(items, func(i, j int) bool { return items[i].k < items[j].k })
	if !multi && width <= inlineWidth {
		parts := make([]string, len(items))
		for i, e := range items {
			parts[i] = e.k + ": " + e.v
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	var b strings.Builder
	b.WriteString("{\n")
	for _, e := range items {
		fmt.Fprintf(&b, "%s%s: %s\n", inner, e.k, e.v)
	}
	b.WriteString(indent + "}")
	return b.String()
}

func renderStruct(v reflect.Value, indent string, depth int, top bool) string {
	t := v.Type()
	name := t.Name()
	if top {
		name = t.String()
	}
	inner := indent + indentUnit
	var names, vals []string
	exported := 0
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			exported++
		}
	}
	skipped := 0
	multi := false
	width := len(name) + 2
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if exported > denseFields && fv.IsZero() {
			skipped++
			continue
		}
		s := renderValue(fv, inner, depth+1, false)
		if isRCField(f.Name) && fv.CanInt() {
			s = rcName(fv.Int())
		} else if isRCField(f.Name) && fv.CanUint() {
			s = rcName(int64(int32(uint32(fv.Uint()))))
		}
		names = append(names, f.Name)
		vals = append(vals, s)
		width += len(f.Name) + len(s) + 4
		multi = multi || strings.Contains(s, "\n")
	}
	if !multi && skipped == 0 && width <= inlineWidth {
		parts := make([]string, len(names))
		for i := range names {
			parts[i] = names[i] + ": " + vals[i]
		}
		return name + "{" + strings.Join(parts, ", ") + "}"
	}
	var b strings.Builder
	b.WriteString(name + "{\n")
	for i := range names {
		fmt.Fprintf(&b, "%s%s: %s\n", inner, names[i], vals[i])
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "%s(%d zero fields not shown)\n", inner, skipped)
	}
	b.WriteString(indent + "}")
	return b.String()
}

// sentinelName names Slurm's NO_VAL and INFINITE values of unsigned
// 16, 32 and 64-bit fields (0xfffe is NO_VAL16, 0xffffffff INFINITE, ...).
func sentinelName(k reflect.Kind, n uint64) (string, bool) {
	switch {
	case k == reflect.Uint16 && n == 0xfffe:
		return "NO_VAL16", true
	case k == reflect.Uint16 && n == 0xffff:
		return "INFINITE16", true
	case k == reflect.Uint32 && n == 0xfffffffe:
		return "NO_VAL", true
	case k == reflect.Uint32 && n == 0xffffffff:
		return "INFINITE", true
	case k == reflect.Uint64 && n == 0xfffffffffffffffe:
		return "NO_VAL64", true
	case k == reflect.Uint64 && n == 0xffffffffffffffff:
		return "INFINITE64", true
	}
	return "", false
}

// isRCField reports whether a field holds a Slurm return code, which then
// prints with its name: SLURM_SUCCESS(0), ESLURM_INVALID_JOB_ID(2017).
func isRCField(name string) bool {
	switch strings.ToLower(name) {
	case "rc", "returncode", "return_code", "errorcode", "error_code":
		return true
	}
	return false
}

func rcName(code int64) string {
	if code < math.MinInt32 || code > math.MaxInt32 {
		return strconv.FormatInt(code, 10)
	}
	name := slurmerr.Name(int(code))
	if code == 0 {
		name = "SLURM_SUCCESS"
	}
	if name == strconv.FormatInt(code, 10) {
		return name
	}
	return name + "(" + strconv.FormatInt(code, 10) + ")"
}

// jsonable reports whether v marshals as JSON (no NaN, no unsupported map
// keys, no channels, no cycles).
func jsonable(v any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_, err := json.Marshal(v)
	return err == nil
}

func hexString(b []byte) string { return hex.EncodeToString(b) }

func validUTF8(s string) bool { return utf8.ValidString(s) }
