package dataout

import (
	"strconv"
	"unicode/utf8"
)

// YAML returns v as serializer/yaml prints it: one document with a
// "%YAML 1.1" directive, every node tagged (!!map, !!str, ...), block
// collections, empty ones in flow style, and an explicit "..." end.
//
// The writer follows libyaml 0.2.5's emitter for exactly the events the
// serializer produces, keeping the same column, indentation and
// whitespace state so that scalar style selection and line folding at 80
// columns come out the same.
func YAML(v *Value) []byte {
	e := &yamlEmitter{indent: -1, whitespace: true, indention: true}
	// %YAML 1.1, then "---" on the next line.
	e.writeIndicator("%YAML", true, false, false)
	e.writeIndicator("1.1", true, false, false)
	e.writeIndent()
	e.writeIndent()
	e.writeIndicator("---", true, false, false)
	e.node(v, nodeCtx{})
	e.writeIndent()
	e.writeIndicator("...", true, false, false)
	e.writeIndent()
	return e.buf
}

const (
	yamlBestIndent = 2
	yamlBestWidth  = 80
)

// yamlEmitter is the part of yaml_emitter_t that shapes the output.
type yamlEmitter struct {
	buf        []byte
	column     int
	indent     int
	indents    []int
	whitespace bool
	indention  bool
}

// nodeCtx is yaml_emitter_emit_node's context flags.
type nodeCtx struct {
	mapping, simpleKey bool
}

func (e *yamlEmitter) put(c byte) {
	e.buf = append(e.buf, c)
	e.column++
}

func (e *yamlEmitter) putBreak() {
	e.buf = append(e.buf, '\n')
	e.column = 0
}

// write copies one character (one column, however many bytes).
func (e *yamlEmitter) write(s string) {
	e.buf = append(e.buf, s...)
	e.column++
}

func (e *yamlEmitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	if e.indent < 0 {
		if flow {
			e.indent = yamlBestIndent
		} else {
			e.indent = 0
		}
	} else if !indentless {
		e.indent += yamlBestIndent
	}
}

func (e *yamlEmitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *yamlEmitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.putBreak()
	}
	for e.column < indent {
		e.put(' ')
	}
	e.whitespace = true
	e.indention = true
}

func (e *yamlEmitter) writeIndicator(ind string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	for i := 0; i < len(ind); i++ {
		e.put(ind[i])
	}
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

// writeTag writes "!!suffix" (the "!!" handle of tag:yaml.org,2002:).
func (e *yamlEmitter) writeTag(suffix string) {
	if !e.whitespace {
		e.put(' ')
	}
	e.put('!')
	e.put('!')
	for i := 0; i < len(suffix); i++ {
		e.put(suffix[i])
	}
	e.whitespace = false
	e.indention = false
}

func (e *yamlEmitter) node(v *Value, ctx nodeCtx) {
	switch v.kind {
	case KindNull:
		e.scalar("null", "null", ctx)
	case KindBool:
		if v.b {
			e.scalar("bool", "true", ctx)
		} else {
			e.scalar("bool", "false", ctx)
		}
	case KindInt:
		e.scalar("int", strconv.FormatInt(v.i, 10), ctx)
	case KindFloat:
		// serializer/yaml prints floats with "%lf".
		e.scalar("float", strconv.FormatFloat(v.f, 'f', 6, 64), ctx)
	case KindString:
		if v.sNull {
			e.scalar("null", "null", ctx)
		} else {
			e.scalar("str", v.s, ctx)
		}
	case KindList:
		e.sequence(v, ctx)
	case KindDict:
		e.mapping(v, ctx)
	}
}

func (e *yamlEmitter) sequence(v *Value, ctx nodeCtx) {
	e.writeTag("seq")
	if len(v.items) == 0 {
		e.writeIndicator("[", true, true, false)
		e.increaseIndent(true, false)
		e.popIndent()
		e.writeIndicator("]", false, false, false)
		return
	}
	e.increaseIndent(false, ctx.mapping && !e.indention)
	for _, it := range v.items {
		e.writeIndent()
		e.writeIndicator("-", true, false, true)
		e.node(it, nodeCtx{})
	}
	e.popIndent()
}

func (e *yamlEmitter) mapping(v *Value, ctx nodeCtx) {
	e.writeTag("map")
	if len(v.keys) == 0 {
		e.writeIndicator("{", true, true, false)
		e.increaseIndent(true, false)
		e.popIndent()
		e.writeIndicator("}", false, false, false)
		return
	}
	e.increaseIndent(false, false)
	for i, k := range v.keys {
		e.writeIndent()
		a := analyzeScalar(k)
		// A key longer than 128 columns or spanning lines would need the
		// "? " form; the documents written here have none.
		e.scalarAnalyzed("str", k, a, nodeCtx{mapping: true, simpleKey: true})
		e.writeIndicator(":", false, false, false)
		e.node(v.items[i], nodeCtx{mapping: true})
	}
	e.popIndent()
}

type scalarStyle uint8

const (
	stylePlain scalarStyle = iota
	styleSingle
	styleDouble
)

// scalarAnalysis is yaml_emitter_analyze_scalar's verdict.
type scalarAnalysis struct {
	multiline                bool
	blockPlain, singleQuoted bool
}

func (e *yamlEmitter) scalar(tag, value string, ctx nodeCtx) {
	e.scalarAnalyzed(tag, value, analyzeScalar(value), ctx)
}

func (e *yamlEmitter) scalarAnalyzed(tag, value string, a scalarAnalysis, ctx nodeCtx) {
	style := stylePlain
	if ctx.simpleKey && a.multiline {
		style = styleDouble
	}
	if style == stylePlain {
		// Scalars are only ever written in block context here (the
		// only flow collections are empty ones).
		if !a.blockPlain {
			style = styleSingle
		}
		if value == "" && ctx.simpleKey {
			style = styleSingle
		}
	}
	if style == styleSingle && !a.singleQuoted {
		style = styleDouble
	}
	e.writeTag(tag)
	e.increaseIndent(true, false)
	allowBreaks := !ctx.simpleKey
	switch style {
	case stylePlain:
		e.writePlain(value, allowBreaks)
	case styleSingle:
		e.writeSingle(value, allowBreaks)
	default:
		e.writeDouble(value, allowBreaks)
	}
	e.popIndent()
}

// at returns s[i], or 0 past the end (libyaml's strings are
// NUL-terminated).
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isBlankz(s string, i int) bool {
	c := at(s, i)
	return c == ' ' || c == '\t' || c == 0 || isBreak(s, i)
}

func isBreak(s string, i int) bool {
	c := at(s, i)
	switch {
	case c == '\r' || c == '\n':
		return true
	case c == 0xC2:
		return at(s, i+1) == 0x85
	case c == 0xE2:
		return at(s, i+1) == 0x80 && (at(s, i+2) == 0xA8 || at(s, i+2) == 0xA9)
	}
	return false
}

// isPrintable is libyaml's IS_PRINTABLE on the UTF-8 sequence at s[i].
func isPrintable(s string, i int) bool {
	c, n := at(s, i), at(s, i+1)
	switch {
	case c == 0x0A, c >= 0x20 && c <= 0x7E:
		return true
	case c == 0xC2:
		return n >= 0xA0
	case c > 0xC2 && c < 0xED:
		return true
	case c == 0xED:
		return n < 0xA0
	case c == 0xEE:
		return true
	case c == 0xEF:
		return !(n == 0xBB && at(s, i+2) == 0xBF) && !(n == 0xBF && (at(s, i+2) == 0xBE || at(s, i+2) == 0xBF))
	}
	return false
}

func charWidth(c byte) int {
	switch {
	case c&0x80 == 0:
		return 1
	case c&0xE0 == 0xC0:
		return 2
	case c&0xF0 == 0xE0:
		return 3
	case c&0xF8 == 0xF0:
		return 4
	}
	return 1
}

func analyzeScalar(s string) scalarAnalysis {
	if s == "" {
		return scalarAnalysis{blockPlain: true, singleQuoted: true}
	}
	var blockInd, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	var previousSpace, previousBreak bool
	if (at(s, 0) == '-' && at(s, 1) == '-' && at(s, 2) == '-') ||
		(at(s, 0) == '.' && at(s, 1) == '.' && at(s, 2) == '.') {
		blockInd = true
	}
	precededByWS := true
	followedByWS := isBlankz(s, charWidth(s[0]))
	for i := 0; i < len(s); {
		c := s[i]
		w := charWidth(c)
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				blockInd = true
			case '?', ':':
				if followedByWS {
					blockInd = true
				}
			case '-':
				if followedByWS {
					blockInd = true
				}
			}
		} else {
			switch c {
			case ':':
				if followedByWS {
					blockInd = true
				}
			case '#':
				if precededByWS {
					blockInd = true
				}
			}
		}
		if !isPrintable(s, i) || c >= 0x80 {
			special = true
		}
		brk := isBreak(s, i)
		if brk {
			lineBreaks = true
		}
		switch {
		case c == ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i+w == len(s) {
				trailingSpace = true
			}
			if previousBreak {
				breakSpace = true
			}
			previousSpace, previousBreak = true, false
		case brk:
			if i == 0 {
				leadingBreak = true
			}
			if i+w == len(s) {
				trailingBreak = true
			}
			if previousSpace {
				spaceBreak = true
			}
			previousSpace, previousBreak = false, true
		default:
			previousSpace, previousBreak = false, false
		}
		precededByWS = isBlankz(s, i)
		i += w
		if i < len(s) {
			followedByWS = isBlankz(s, i+charWidth(s[i]))
		}
	}
	// The flow-context and block-scalar verdicts are left out: nothing
	// here is written in those styles.
	a := scalarAnalysis{multiline: lineBreaks, blockPlain: true, singleQuoted: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.blockPlain = false
	}
	if breakSpace {
		a.blockPlain, a.singleQuoted = false, false
	}
	if spaceBreak || special {
		a.blockPlain, a.singleQuoted = false, false
	}
	if lineBreaks {
		a.blockPlain = false
	}
	if blockInd {
		a.blockPlain = false
	}
	return a
}

// writeBreak is WRITE_BREAK for the line breaks analyzeScalar lets
// through to the plain and single-quoted writers (only '\n': every other
// break is not printable ASCII and forces double quotes).
func (e *yamlEmitter) writeBreak(s string, i int) int {
	if s[i] == '\n' {
		e.putBreak()
		return 1
	}
	w := charWidth(s[i])
	e.buf = append(e.buf, s[i:min(i+w, len(s))]...)
	e.column = 0
	return w
}

func (e *yamlEmitter) writePlain(s string, allowBreaks bool) {
	if !e.whitespace && len(s) > 0 {
		e.put(' ')
	}
	spaces, breaks := false, false
	for i := 0; i < len(s); {
		switch {
		case s[i] == ' ':
			if allowBreaks && !spaces && e.column > yamlBestWidth && at(s, i+1) != ' ' {
				e.writeIndent()
			} else {
				e.write(s[i : i+1])
			}
			i++
			spaces = true
		case isBreak(s, i):
			if !breaks && s[i] == '\n' {
				e.putBreak()
			}
			i += e.writeBreak(s, i)
			e.indention = true
			breaks = true
		default:
			if breaks {
				e.writeIndent()
			}
			w := charWidth(s[i])
			e.write(s[i:min(i+w, len(s))])
			i += w
			e.indention = false
			spaces, breaks = false, false
		}
	}
	e.whitespace = false
	e.indention = false
}

func (e *yamlEmitter) writeSingle(s string, allowBreaks bool) {
	e.writeIndicator("'", true, false, false)
	spaces, breaks := false, false
	for i := 0; i < len(s); {
		switch {
		case s[i] == ' ':
			if allowBreaks && !spaces && e.column > yamlBestWidth && i != 0 && i != len(s)-1 && at(s, i+1) != ' ' {
				e.writeIndent()
			} else {
				e.write(s[i : i+1])
			}
			i++
			spaces = true
		case isBreak(s, i):
			if !breaks && s[i] == '\n' {
				e.putBreak()
			}
			i += e.writeBreak(s, i)
			e.indention = true
			breaks = true
		default:
			if breaks {
				e.writeIndent()
			}
			if s[i] == '\'' {
				e.put('\'')
			}
			w := charWidth(s[i])
			e.write(s[i:min(i+w, len(s))])
			i += w
			e.indention = false
			spaces, breaks = false, false
		}
	}
	if breaks {
		e.writeIndent()
	}
	e.writeIndicator("'", false, false, false)
	e.whitespace = false
	e.indention = false
}

const upperHex = "0123456789ABCDEF"

func (e *yamlEmitter) writeDouble(s string, allowBreaks bool) {
	e.writeIndicator("\"", true, false, false)
	spaces := false
	for i := 0; i < len(s); {
		c := s[i]
		if !isPrintable(s, i) || c >= 0x80 || isBreak(s, i) || c == '"' || c == '\\' {
			r, w := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && w <= 1 {
				r, w = rune(c), 1
			}
			i += w
			e.put('\\')
			switch r {
			case 0x00:
				e.put('0')
			case 0x07:
				e.put('a')
			case 0x08:
				e.put('b')
			case 0x09:
				e.put('t')
			case 0x0A:
				e.put('n')
			case 0x0B:
				e.put('v')
			case 0x0C:
				e.put('f')
			case 0x0D:
				e.put('r')
			case 0x1B:
				e.put('e')
			case 0x22:
				e.put('"')
			case 0x5C:
				e.put('\\')
			case 0x85:
				e.put('N')
			case 0xA0:
				e.put('_')
			case 0x2028:
				e.put('L')
			case 0x2029:
				e.put('P')
			default:
				digits := 8
				switch {
				case r <= 0xFF:
					e.put('x')
					digits = 2
				case r <= 0xFFFF:
					e.put('u')
					digits = 4
				default:
					e.put('U')
				}
				for k := (digits - 1) * 4; k >= 0; k -= 4 {
					e.put(upperHex[(r>>k)&0xF])
				}
			}
			spaces = false
			continue
		}
		if c == ' ' {
			if allowBreaks && !spaces && e.column > yamlBestWidth && i != 0 && i != len(s)-1 {
				e.writeIndent()
				if at(s, i+1) == ' ' {
					e.put('\\')
				}
			} else {
				e.write(s[i : i+1])
			}
			i++
			spaces = true
			continue
		}
		e.write(s[i : i+1])
		i++
		spaces = false
	}
	e.writeIndicator("\"", false, false, false)
	e.whitespace = false
	e.indention = false
}
