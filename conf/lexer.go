package conf

import (
	"path"
	"strings"
)

// Op is the assignment operator of a Key=Value pair. Slurm's grammar accepts
// "+=", "-=", "*=" and "/=" for every key; in 22.05's slurm.conf, cgroup.conf
// and gres.conf readers the operator is recorded but has no effect (the value
// is assigned as with "="). It matters to scontrol update specifications.
type Op byte

// Operators.
const (
	OpSet Op = iota
	OpAdd
	OpSub
	OpMul
	OpDiv
)

func (o Op) String() string {
	switch o {
	case OpAdd:
		return "+="
	case OpSub:
		return "-="
	case OpMul:
		return "*="
	case OpDiv:
		return "/="
	}
	return "="
}

// Pair is one Key=Value token of a logical line.
type Pair struct {
	Key    string // as written (keys compare case-insensitively)
	Op     Op
	Value  string // quotes removed
	Quoted bool
	start  int // offset of the pair (including leading blanks) in Line.Text
	end    int // offset just past the value (and its closing quote)
}

// Line is one logical line: comments stripped, continuations joined,
// escapes removed, split into pairs.
type Line struct {
	Pos   Pos
	Text  string
	Pairs []Pair
	// Rest is what follows the last pair that matched the Key=Value grammar;
	// non-blank Rest is a syntax error ("Parse error in file ...").
	Rest string
}

// after returns the text of the line after pair i (what Slurm calls the
// leftover when only pair i was consumed).
func (l *Line) after(i int) string {
	return strings.TrimRight(l.Text[l.Pairs[i].end:], "\r\n")
}

// isSpace matches C isspace() in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

func onlySpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			return false
		}
	}
	return true
}

// matchPair recognises one pair at the start of s, following Slurm's regular
// expression: blanks, key of [A-Za-z0-9_.]+, blanks, optional operator, '=',
// blanks, then either a double-quoted string (no inner quotes) followed by a
// blank or the end, or a run of non-blank characters.
func matchPair(s string, base int) (Pair, int, bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	ks := i
	for i < len(s) && isKeyChar(s[i]) {
		i++
	}
	if i == ks {
		return Pair{}, 0, false
	}
	p := Pair{Key: s[ks:i], start: base}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) {
		switch s[i] {
		case '+':
			p.Op, i = OpAdd, i+1
		case '-':
			p.Op, i = OpSub, i+1
		case '*':
			p.Op, i = OpMul, i+1
		case '/':
			p.Op, i = OpDiv, i+1
		}
	}
	if i >= len(s) || s[i] != '=' {
		return Pair{}, 0, false
	}
	i++
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i >= len(s) {
		return Pair{}, 0, false
	}
	if s[i] == '"' {
		if j := strings.IndexByte(s[i+1:], '"'); j >= 0 {
			close := i + 1 + j
			if close+1 == len(s) || isSpace(s[close+1]) {
				p.Value, p.Quoted = s[i+1:close], true
				p.end = base + close + 1
				return p, close + 1, true
			}
		}
	}
	vs := i
	for i < len(s) && !isSpace(s[i]) {
		i++
	}
	p.Value = s[vs:i]
	p.end = base + i
	return p, i, true
}

// splitPairs tokenises a whole logical line.
func splitPairs(text string) ([]Pair, string) {
	var pairs []Pair
	off := 0
	for {
		p, n, ok := matchPair(text[off:], off)
		if !ok {
			break
		}
		pairs = append(pairs, p)
		off += n
	}
	return pairs, text[off:]
}

// stripComment cuts the physical line at the first '#' preceded by an even
// number of backslashes.
func stripComment(s string) string {
	bs := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '#':
			if bs%2 == 0 {
				return s[:i]
			}
			bs = 0
		case '\\':
			bs++
		default:
			bs = 0
		}
	}
	return s
}

// continuation reports whether s ends (ignoring trailing blanks after the
// backslashes) in an odd number of backslashes and, if so, returns s cut
// just before the last of them.
func continuation(s string) (string, bool) {
	i := len(s) - 1
	for i >= 0 && isSpace(s[i]) {
		i--
	}
	bs := 0
	for i >= 0 && s[i] == '\\' {
		bs++
		i--
	}
	if bs%2 == 1 {
		return s[:i+bs], true
	}
	return s, false
}

// stripEscapes removes every backslash and keeps the character after it.
func stripEscapes(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			if i >= len(s) {
				break
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// logicalLines splits a file's content into logical lines with the line
// number of their first physical line.
func logicalLines(file string, data []byte, emit func(Line)) {
	s := string(data)
	lineNo := 1
	for len(s) > 0 {
		start := lineNo
		var b strings.Builder
		for len(s) > 0 {
			var phys string
			if nl := strings.IndexByte(s, '\n'); nl >= 0 {
				phys, s = s[:nl], s[nl+1:]
			} else {
				phys, s = s, ""
			}
			lineNo++
			phys = stripComment(phys)
			cut, cont := continuation(phys)
			b.WriteString(cut)
			if !cont {
				break
			}
		}
		text := stripEscapes(b.String())
		if text == "" {
			continue
		}
		l := Line{Pos: Pos{File: file, Line: start}, Text: text}
		l.Pairs, l.Rest = splitPairs(text)
		emit(l)
	}
}

// lexer reads a configuration file and the files it includes.
type lexer struct {
	fsys    FileSystem
	d       *diags
	cluster func() (string, bool) // ClusterName seen so far, for %c
	stack   []string              // files being read (cycle detection)
	files   []string              // every file read, in order
	emit    func(Line)
}

// run reads name (already resolved) and emits its lines, following Include.
func (lx *lexer) run(name string, from Pos) bool {
	for _, f := range lx.stack {
		if f == name {
			lx.d.errorf(from, "\"Include\" failed in file %s line %d: include cycle: %s", from.File, from.Line,
				strings.Join(append(append([]string{}, lx.stack...), name), " -> "))
			return false
		}
	}
	if len(lx.stack) >= 64 {
		lx.d.errorf(from, "\"Include\" failed in file %s line %d: includes nested too deeply", from.File, from.Line)
		return false
	}
	data, err := lx.fsys.ReadFile(name)
	if err != nil {
		if from.File == "" {
			lx.d.errorf(Pos{File: name}, "s_p_parse_file: unable to read \"%s\": %s", name, errText(err))
		} else {
			lx.d.errorf(from, "\"Include\" failed in file %s line %d: cannot stat file %s: %s",
				from.File, from.Line, name, errText(err))
		}
		return false
	}
	lx.files = append(lx.files, name)
	lx.stack = append(lx.stack, name)
	defer func() { lx.stack = lx.stack[:len(lx.stack)-1] }()
	logicalLines(name, data, func(l Line) {
		if lx.include(l) {
			return
		}
		lx.emit(l)
	})
	return true
}

// include handles an Include directive; it returns false when l is not one.
func (lx *lexer) include(l Line) bool {
	t := l.Text
	if len(t) < 8 || !strings.EqualFold(t[:7], "include") || !isSpace(t[7]) {
		return false
	}
	rest := strings.TrimLeft(t[7:], " \t\n\v\f\r")
	n := 0
	for n < len(rest) && !isSpace(rest[n]) {
		n++
	}
	file, tail := rest[:n], rest[n:]
	if file == "" {
		lx.d.errorf(l.Pos, "\"Include\" failed in file %s line %d: no file name", l.Pos.File, l.Pos.Line)
		return true
	}
	if strings.Contains(file, "%c") {
		cn, ok := "", false
		if lx.cluster != nil {
			cn, ok = lx.cluster()
		}
		if !ok {
			lx.d.errorf(l.Pos, "_parse_for_format: Did not get ClusterName for include path")
			return true
		}
		file = strings.ReplaceAll(file, "%c", strings.ToLower(cn))
	}
	if !path.IsAbs(file) {
		file = path.Join(path.Dir(l.Pos.File), file)
	}
	file = path.Clean(file)
	if hasGlobMeta(file) {
		// Extension: 22.05 reads the name literally; we expand globs.
		m, err := lx.fsys.Glob(file)
		if err != nil || len(m) == 0 {
			lx.d.errorf(l.Pos, "\"Include\" failed in file %s line %d: no file matches %s",
				l.Pos.File, l.Pos.Line, file)
		}
		for _, f := range m {
			lx.run(f, l.Pos)
		}
	} else {
		lx.run(file, l.Pos)
	}
	if !onlySpace(tail) {
		lx.d.errorf(l.Pos, "Parse error in file %s line %d: \"%s\"", l.Pos.File, l.Pos.Line,
			strings.TrimRight(tail, "\r\n"))
	}
	return true
}

// ReadLines lexes name and everything it includes, without interpreting
// keys. ClusterName lines are tracked so "%c" in Include paths works.
func ReadLines(fsys FileSystem, name string) ([]Line, []string, error) {
	var d diags
	var lines []Line
	cluster, have := "", false
	lx := &lexer{fsys: fsys, d: &d, emit: func(l Line) {
		if len(l.Pairs) > 0 && strings.EqualFold(l.Pairs[0].Key, "ClusterName") {
			cluster, have = l.Pairs[0].Value, true
		}
		lines = append(lines, l)
	}}
	lx.cluster = func() (string, bool) { return cluster, have }
	lx.run(path.Clean(name), Pos{})
	if e := d.errs(); len(e) > 0 {
		return nil, nil, e
	}
	return lines, lx.files, nil
}
