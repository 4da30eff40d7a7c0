package jobopt

import (
	"fmt"
	"strings"
)

// DirectiveError is a fatal problem in a script's directive text (Slurm's
// "Unexpected `:`" and "Unmatched" fatals).
type DirectiveError struct {
	File string
	Line int
	Text string
	Msg  string
}

func (e *DirectiveError) Error() string {
	return fmt.Sprintf("%s: line %d: %s in [%s]", e.File, e.Line, e.Msg, e.Text)
}

// Directives extracts the option words of a batch script's directives
// (_opt_batch_script): lines starting at column 0 with magic (#SBATCH;
// #SLURM is accepted with a warning by the caller through legacy), read
// until the first line that is neither blank nor a comment. Words are
// split like get_argument does: blanks separate, quotes group, backslash
// escapes, an unquoted # ends the line. Only het component 0 is read; the
// hetjob separator stops the scan (more reports whether one was seen).
func Directives(file string, body []byte, magic string) (words []string, legacy, more bool, err error) {
	return DirectivesFor(file, body, magic, 0)
}

// DirectivesFor is Directives for het-job component comp: the lines after
// the comp-th "hetjob" (or "packjob") separator, up to the next one.
func DirectivesFor(file string, body []byte, magic string, comp int) (words []string, legacy, more bool, err error) {
	scan := 0
	lines := strings.Split(string(body), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for n, line := range lines {
		var rest string
		switch {
		case strings.HasPrefix(line, magic):
			rest = line[len(magic):]
		case strings.HasPrefix(line, "#SLURM"):
			rest = line[len("#SLURM"):]
			legacy = true
		default:
			t := strings.TrimLeft(line, " \t\n\v\f\r")
			if t != "" && t[0] != '#' {
				return words, legacy, false, nil
			}
			continue
		}
		t := strings.TrimLeft(rest, " \t\n\v\f\r")
		sepLine := isHetSeparator(t)
		if sepLine {
			scan++
		}
		if scan < comp {
			continue
		}
		if scan > comp {
			return words, legacy, true, nil
		}
		if sepLine {
			// Slurm blanks the separator and then finds no word on
			// the line: anything after it is ignored.
			continue
		}
		w, perr := splitDirective(file, n+1, rest)
		if perr != nil {
			return nil, legacy, false, perr
		}
		words = append(words, w...)
	}
	return words, legacy, false, nil
}

func isHetSeparator(t string) bool {
	for _, w := range []string{"hetjob", "packjob"} {
		if len(t) >= len(w) && strings.EqualFold(t[:len(w)], w) &&
			(len(t) == len(w) || isBlank(t[len(w)])) {
			return true
		}
	}
	return false
}

func isBlank(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// splitDirective is get_argument applied until the line is used up.
func splitDirective(file string, lineno int, line string) ([]string, error) {
	var words []string
	p := 0
	// Slurm skips the blanks after the magic word before its first
	// get_argument call; each later call starts right after the previous
	// word. Its error messages quote the text from that start.
	for p < len(line) && isBlank(line[p]) {
		p++
	}
	for {
		start := p
		for p < len(line) && isBlank(line[p]) {
			p++
		}
		if p < len(line) && line[p] == ':' {
			return nil, &DirectiveError{File: file, Line: lineno, Text: line[start:], Msg: "Unexpected `:`"}
		}
		if p >= len(line) {
			return words, nil
		}
		var b strings.Builder
		var quote byte
		escape, got := false, false
		for p < len(line) && (quote != 0 || !isBlank(line[p])) && line[p] != '\n' {
			c := line[p]
			switch {
			case escape:
				escape = false
			case c == '\\':
				escape = true
				p++
				continue
			case quote != 0:
				if c == quote {
					quote = 0
					p++
					continue
				}
			case c == '"' || c == '\'':
				quote = c
				p++
				continue
			case c == '#':
				if got {
					words = append(words, b.String())
				}
				return words, nil
			}
			b.WriteByte(c)
			got = true
			p++
		}
		if quote != 0 {
			return nil, &DirectiveError{File: file, Line: lineno, Text: line[start:],
				Msg: fmt.Sprintf("Unmatched `%c`", quote)}
		}
		if !got {
			return words, nil
		}
		words = append(words, b.String())
	}
}
