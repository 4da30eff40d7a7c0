package conf

import (
	"errors"
	"fmt"
	"strings"
)

// Pos is a position in a configuration file (1-based line). The zero Pos
// means "no particular place" (for example a missing required key).
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string {
	if p.File == "" {
		return "-"
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Severity of a Diagnostic.
type Severity int

const (
	// SevError makes the configuration unusable (Slurm: error + fatal).
	SevError Severity = iota
	// SevWarning is logged by Slurm but the daemon keeps going.
	SevWarning
)

// Diagnostic is one message about a configuration, in Slurm's wording where
// Slurm has one.
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	Msg      string
}

func (d Diagnostic) String() string {
	kind := "error"
	if d.Severity == SevWarning {
		kind = "warning"
	}
	return fmt.Sprintf("%s: %s: %s", d.Pos, kind, d.Msg)
}

// ErrInvalid is matched (errors.Is) by every *ErrorList.
var ErrInvalid = errors.New("invalid configuration")

// ErrorList carries every error found in a configuration, in the order Slurm
// would meet them (parse order, then validation).
type ErrorList []Diagnostic

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, d := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.Pos.String())
		b.WriteString(": ")
		b.WriteString(d.Msg)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (l ErrorList) Is(target error) bool { return target == ErrInvalid }

// diags collects diagnostics while parsing.
type diags struct {
	list []Diagnostic
}

func (d *diags) errorf(p Pos, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: p, Severity: SevError, Msg: fmt.Sprintf(format, args...)})
}

func (d *diags) warnf(p Pos, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: p, Severity: SevWarning, Msg: fmt.Sprintf(format, args...)})
}

func (d *diags) errs() ErrorList {
	var out ErrorList
	for _, x := range d.list {
		if x.Severity == SevError {
			out = append(out, x)
		}
	}
	return out
}

func (d *diags) warnings() []Diagnostic {
	var out []Diagnostic
	for _, x := range d.list {
		if x.Severity == SevWarning {
			out = append(out, x)
		}
	}
	return out
}
