package dataout

import (
	"math"
	"strconv"
	"strings"
)

// JSON returns v as serializer/json prints it with DATA_SER_FLAGS_PRETTY:
// json-c's spaced pretty form (two-space indent, "key": value, empty
// containers as "{\n<indent>}"), "/" escaped, no final newline.
func JSON(v *Value) []byte {
	var b []byte
	return appendJSON(b, v, 0)
}

func jsonIndent(b []byte, level int) []byte {
	for i := 0; i < level; i++ {
		b = append(b, ' ', ' ')
	}
	return b
}

func appendJSON(b []byte, v *Value, level int) []byte {
	switch v.kind {
	case KindNull:
		return append(b, "null"...)
	case KindBool:
		if v.b {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case KindInt:
		return strconv.AppendInt(b, v.i, 10)
	case KindFloat:
		return append(b, jsonDouble(v.f)...)
	case KindString:
		// A NULL string is serialized as json_object_new_string("").
		return appendJSONString(b, v.s)
	case KindList:
		b = append(b, "[\n"...)
		for i, it := range v.items {
			if i > 0 {
				b = append(b, ",\n"...)
			}
			b = jsonIndent(b, level+1)
			b = appendJSON(b, it, level+1)
		}
		if len(v.items) > 0 {
			b = append(b, '\n')
		}
		b = jsonIndent(b, level)
		return append(b, ']')
	case KindDict:
		b = append(b, "{\n"...)
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ",\n"...)
			}
			b = jsonIndent(b, level+1)
			b = appendJSONString(b, k)
			b = append(b, ": "...)
			b = appendJSON(b, v.items[i], level+1)
		}
		if len(v.keys) > 0 {
			b = append(b, '\n')
		}
		b = jsonIndent(b, level)
		return append(b, '}')
	}
	return b
}

// jsonDouble is json-c's default double format: "%.17g", with ".0"
// appended when that reads as an integer.
func jsonDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'g', 17, 64) // matches C's "%.17g"
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

const hexDigits = "0123456789abcdef"

// appendJSONString is json-c's json_escape_str without
// JSON_C_TO_STRING_NOSLASHESCAPE.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\b':
			b = append(b, `\b`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\f':
			b = append(b, `\f`...)
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '/':
			b = append(b, `\/`...)
		default:
			if c < ' ' {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}
