// Package slurmlog is a log/slog handler that writes Slurm's daemon log
// format and honours its levels and DebugFlags:
//
//   - a log file line is "[<time>] <prefix><message>", the time in
//     LogTimeFormat's default (ISO 8601 with milliseconds);
//   - a standard-error line is "<program>: <prefix><message>";
//   - the prefix names the level as Slurm 22.05's log.c does: "fatal: ",
//     "error: ", nothing for info and verbose, "debug:  " (two spaces),
//     "debug2: " .. "debug5: "; slog's Warn level prints "warning: " at
//     info level, like Slurm's warning().
//
// The threshold is a SlurmdDebug/SlurmctldDebug name (quiet, fatal, error,
// info, verbose, debug, debug2 .. debug5). A record carrying the attribute
// FlagKey (see Flag) is printed only when that DebugFlags flag is enabled,
// at verbose level (so the threshold must be verbose or more), prefixed
// "<FLAG>: " as Slurm's log_flag does.
//
// Attributes other than FlagKey are appended as " key=value" so that
// structured callers lose nothing; Slurm's own messages carry everything in
// the text.
package slurmlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Slurm's levels as slog levels. Info and Debug coincide with slog's own, so
// plain slog calls land where a Slurm reader expects them.
const (
	LevelFatal   = slog.Level(12)
	LevelError   = slog.LevelError
	LevelInfo    = slog.LevelInfo
	LevelVerbose = slog.Level(-2)
	LevelDebug   = slog.LevelDebug
	LevelDebug2  = slog.Level(-5)
	LevelDebug3  = slog.Level(-6)
	LevelDebug4  = slog.Level(-7)
	LevelDebug5  = slog.Level(-8)
	// levelQuiet is above every level: nothing is printed.
	levelQuiet = slog.Level(100)
)

// FlagKey is the attribute naming the DebugFlags flag that gates a record.
const FlagKey = "debug_flag"

// Flag returns a logger whose records print only when flag is in
// DebugFlags (matched case-insensitively, as slurm.conf does).
func Flag(l *slog.Logger, flag string) *slog.Logger {
	return l.With(FlagKey, flag)
}

// ParseLevel reads a SlurmdDebug / SlurmctldDebug value: a name, or the
// numbers 0..9 Slurm also accepts (0 quiet .. 9 debug5).
func ParseLevel(s string) (slog.Level, error) {
	names := []string{"quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5"}
	levels := []slog.Level{levelQuiet, LevelFatal, LevelError, LevelInfo, LevelVerbose, LevelDebug, LevelDebug2, LevelDebug3, LevelDebug4, LevelDebug5}
	v := strings.ToLower(strings.TrimSpace(s))
	for i, n := range names {
		if v == n || v == fmt.Sprint(i) {
			return levels[i], nil
		}
	}
	return 0, fmt.Errorf("invalid debug level %q", s)
}

// Raise returns the level n steps more verbose than l (each -v of a
// daemon's command line), stopping at debug5.
func Raise(l slog.Level, n int) slog.Level {
	order := []slog.Level{levelQuiet, LevelFatal, LevelError, LevelInfo, LevelVerbose, LevelDebug, LevelDebug2, LevelDebug3, LevelDebug4, LevelDebug5}
	i := 0
	for i < len(order)-1 && order[i] > l {
		i++
	}
	i += n
	if i >= len(order) {
		i = len(order) - 1
	}
	return order[i]
}

// Options configure a Handler.
type Options struct {
	// Level is the threshold (LevelInfo when zero, which is also info).
	Level slog.Leveler
	// DebugFlags are the enabled DebugFlags names.
	DebugFlags []string
	// Flags, when set, replaces DebugFlags with a set that may change
	// while the handler runs (scontrol setdebugflags).
	Flags *FlagSet
	// Program, when set, selects the standard-error form "<Program>: ...";
	// otherwise lines get the file form with a time stamp.
	Program string
	// Clock returns the time stamps; nil means time.Now.
	Clock func() time.Time
}

// Handler writes records in Slurm's format to one writer. It is safe for
// concurrent use; each record is written with a single Write call.
type Handler struct {
	w     io.Writer
	mu    *sync.Mutex
	opts  Options
	flags *FlagSet
	attrs []slog.Attr
	group string
	flag  string
}

// New returns a handler writing to w.
func New(w io.Writer, opts Options) *Handler {
	if opts.Level == nil {
		opts.Level = LevelInfo
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	flags := opts.Flags
	if flags == nil {
		flags = NewFlagSet(opts.DebugFlags)
	}
	return &Handler{w: w, mu: &sync.Mutex{}, opts: opts, flags: flags}
}

// FlagSet is a set of DebugFlags names, safe to change while handlers
// read it.
type FlagSet struct {
	m atomic.Pointer[map[string]bool]
}

// NewFlagSet returns a set holding names.
func NewFlagSet(names []string) *FlagSet {
	s := &FlagSet{}
	s.Set(names)
	return s
}

// Set replaces the enabled flags.
func (s *FlagSet) Set(names []string) {
	m := make(map[string]bool, len(names))
	for _, f := range names {
		m[strings.ToLower(f)] = true
	}
	s.m.Store(&m)
}

// Has reports whether flag is enabled (case-insensitively).
func (s *FlagSet) Has(flag string) bool { return (*s.m.Load())[strings.ToLower(flag)] }

func (s *FlagSet) empty() bool { return len(*s.m.Load()) == 0 }

// Enabled reports whether level passes the threshold. Flag-gated records
// are filtered in Handle, where the flag is known.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	if h.flag != "" {
		return h.FlagEnabled(h.flag) && h.passes(LevelVerbose)
	}
	// A record may still carry FlagKey among its own attributes; those
	// print at verbose, so let them through to Handle.
	return h.passes(level) || h.passes(LevelVerbose) && !h.flags.empty()
}

func (h *Handler) passes(level slog.Level) bool {
	return level >= h.opts.Level.Level() && h.opts.Level.Level() < levelQuiet
}

// FlagEnabled reports whether a DebugFlags flag is on.
func (h *Handler) FlagEnabled(flag string) bool { return h.flags.Has(flag) }

// Handle formats and writes r.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	flag := h.flag
	var extra strings.Builder
	for _, a := range h.attrs {
		appendAttr(&extra, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == FlagKey {
			flag = a.Value.String()
			return true
		}
		appendAttr(&extra, h.group, a)
		return true
	})
	level := r.Level
	msg := r.Message
	if flag != "" {
		// log_flag prints at verbose, named after the flag in capitals.
		level = LevelVerbose
		if !h.FlagEnabled(flag) || !h.passes(level) {
			return nil
		}
		msg = strings.ToUpper(flag) + ": " + msg
	} else if !h.passes(level) {
		return nil
	}
	var b strings.Builder
	if h.opts.Program != "" {
		b.WriteString(h.opts.Program)
		b.WriteString(": ")
	} else {
		t := r.Time
		if t.IsZero() {
			t = h.opts.Clock()
		}
		b.WriteString("[")
		b.WriteString(t.Format("2006-01-02T15:04:05.000"))
		b.WriteString("] ")
	}
	b.WriteString(prefix(level))
	b.WriteString(msg)
	b.WriteString(extra.String())
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func prefix(l slog.Level) string {
	switch {
	case l >= LevelFatal:
		return "fatal: "
	case l >= LevelError:
		return "error: "
	case l >= slog.LevelWarn:
		return "warning: "
	case l >= LevelVerbose:
		return ""
	case l >= LevelDebug:
		return "debug:  "
	case l >= LevelDebug2:
		return "debug2: "
	case l >= LevelDebug3:
		return "debug3: "
	case l >= LevelDebug4:
		return "debug4: "
	default:
		return "debug5: "
	}
}

func appendAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	key := a.Key
	if group != "" {
		key = group + "." + key
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			appendAttr(b, key, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(key)
	b.WriteByte('=')
	s := a.Value.String()
	if strings.ContainsAny(s, " \t\n\"=") || s == "" {
		s = fmt.Sprintf("%q", s)
	}
	b.WriteString(s)
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range attrs {
		if a.Key == FlagKey {
			c.flag = a.Value.String()
			continue
		}
		if h.group != "" {
			a.Key = h.group + "." + a.Key
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

// WithGroup returns a handler that qualifies later attribute keys.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	if c.group != "" {
		c.group += "." + name
	} else {
		c.group = name
	}
	return &c
}

// Fatal logs msg at fatal level (the caller then exits, as Slurm's fatal()
// does).
func Fatal(l *slog.Logger, msg string, args ...any) {
	l.Log(context.Background(), LevelFatal, msg, args...)
}
