package jobopt

import (
	"fmt"
	"io"
)

// Log writes Slurm's command log lines to stderr: "<prog>: error: <msg>"
// for errors, "<prog>: <msg>" for info, and debug lines only at the
// verbosity that asks for them.
type Log struct {
	Prog    string
	W       io.Writer
	Verbose int // -v count minus -Q count
}

// Errorf logs an error line.
func (l *Log) Errorf(format string, a ...any) {
	fmt.Fprintf(l.W, "%s: error: %s\n", l.Prog, fmt.Sprintf(format, a...))
}

// Fatalf logs a fatal line (the caller exits).
func (l *Log) Fatalf(format string, a ...any) {
	fmt.Fprintf(l.W, "%s: fatal: %s\n", l.Prog, fmt.Sprintf(format, a...))
}

// Infof logs an info line unless -Q lowered the level.
func (l *Log) Infof(format string, a ...any) {
	if l.Verbose < 0 {
		return
	}
	fmt.Fprintf(l.W, "%s: %s\n", l.Prog, fmt.Sprintf(format, a...))
}

// Verbosef logs at verbose level (-v).
func (l *Log) Verbosef(format string, a ...any) {
	if l.Verbose < 1 {
		return
	}
	fmt.Fprintf(l.W, "%s: %s\n", l.Prog, fmt.Sprintf(format, a...))
}

// Debugf logs at debug level (-vv).
func (l *Log) Debugf(format string, a ...any) {
	if l.Verbose < 2 {
		return
	}
	fmt.Fprintf(l.W, "%s: debug:  %s\n", l.Prog, fmt.Sprintf(format, a...))
}

// Printf writes a line without any prefix (messages Slurm's libraries
// print with fprintf, such as parse_time's).
func (l *Log) Printf(format string, a ...any) {
	fmt.Fprintf(l.W, format, a...)
}

// ExitError ends the command with Code; its messages are already written.
type ExitError struct {
	Code int
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// Exit codes Slurm's option code uses: slurm_process_option_or_exit exits
// with -1 (255); parse_int exits with 1.
const (
	ExitOption  = 255
	ExitParsing = 1
)

func exitErr(code int) error { return &ExitError{Code: code} }
