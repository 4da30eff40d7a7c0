package slurmlog

import (
	"context"
	"errors"
	"log/slog"
)

// Fanout sends each record to several handlers: a daemon's log file and,
// in the foreground, standard error. A record goes to every handler that
// is enabled for its level.
type Fanout []slog.Handler

func (f Fanout) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range f {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (f Fanout) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, h := range f {
		if h.Enabled(ctx, r.Level) {
			errs = append(errs, h.Handle(ctx, r.Clone()))
		}
	}
	return errors.Join(errs...)
}

func (f Fanout) WithAttrs(a []slog.Attr) slog.Handler {
	out := make(Fanout, len(f))
	for i, h := range f {
		out[i] = h.WithAttrs(a)
	}
	return out
}

func (f Fanout) WithGroup(name string) slog.Handler {
	out := make(Fanout, len(f))
	for i, h := range f {
		out[i] = h.WithGroup(name)
	}
	return out
}

// Controlled is a handler whose threshold and DebugFlags can change while
// it runs: a daemon builds its handlers on Level and Flags, and the debug
// RPCs (scontrol setdebug, setdebugflags) find these setters on the
// logger's handler.
type Controlled struct {
	slog.Handler
	Level *slog.LevelVar
	Flags *FlagSet
}

// SetLevel changes the threshold.
func (c Controlled) SetLevel(l slog.Level) { c.Level.Set(l) }

// SetDebugFlags replaces the enabled DebugFlags.
func (c Controlled) SetDebugFlags(names []string) { c.Flags.Set(names) }
