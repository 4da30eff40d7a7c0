package slurmlog

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	clock := func() time.Time { return time.Date(2026, 11, 21, 5, 52, 45, 593_000_000, time.UTC) }
	tests := []struct {
		name  string
		level string
		flags []string
		prog  string
		log   func(l *slog.Logger)
		want  string
	}{
		{"info file", "info", nil, "", func(l *slog.Logger) { l.Info("slurmd started") },
			"[2026-11-21T05:52:45.593] slurmd started\n"},
		{"error", "info", nil, "", func(l *slog.Logger) { l.Error("Unable to register") },
			"[2026-11-21T05:52:45.593] error: Unable to register\n"},
		{"warning", "info", nil, "", func(l *slog.Logger) { l.Warn("odd") },
			"[2026-11-21T05:52:45.593] warning: odd\n"},
		{"debug hidden at info", "info", nil, "", func(l *slog.Logger) { l.Debug("x") }, ""},
		{"debug two spaces", "debug", nil, "", func(l *slog.Logger) { l.Debug("x") },
			"[2026-11-21T05:52:45.593] debug:  x\n"},
		{"debug3", "debug5", nil, "", func(l *slog.Logger) { l.Log(context.Background(), LevelDebug3, "deep") },
			"[2026-11-21T05:52:45.593] debug3: deep\n"},
		{"verbose no prefix", "verbose", nil, "", func(l *slog.Logger) { l.Log(context.Background(), LevelVerbose, "v") },
			"[2026-11-21T05:52:45.593] v\n"},
		{"quiet", "quiet", nil, "", func(l *slog.Logger) { l.Error("x") }, ""},
		{"stderr form", "info", nil, "slurmd", func(l *slog.Logger) { l.Error("bad", "node", "n2") },
			"slurmd: error: bad node=n2\n"},
		{"flag off", "debug5", nil, "", func(l *slog.Logger) { Flag(l, "Protocol").Info("hidden") }, ""},
		{"flag needs verbose", "info", []string{"protocol"}, "", func(l *slog.Logger) { Flag(l, "Protocol").Info("hidden") }, ""},
		{"flag on at verbose", "verbose", []string{"protocol"}, "", func(l *slog.Logger) { Flag(l, "Protocol").Debug("shown") },
			"[2026-11-21T05:52:45.593] PROTOCOL: shown\n"},
		{"attr flag", "debug", []string{"Steps"}, "", func(l *slog.Logger) { l.Info("s", FlagKey, "Steps") },
			"[2026-11-21T05:52:45.593] STEPS: s\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lvl, err := ParseLevel(tc.level)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			h := New(&buf, Options{Level: lvl, DebugFlags: tc.flags, Program: tc.prog, Clock: clock})
			l := slog.New(h)
			tc.log(l)
			got := buf.String()
			// slog stamps r.Time itself; normalise to the fake clock's form.
			if tc.prog == "" && len(got) > 25 {
				got = "[2026-11-21T05:52:45.593]" + got[25:]
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseLevelAndRaise(t *testing.T) {
	if _, err := ParseLevel("loud"); err == nil {
		t.Error("ParseLevel(loud) accepted")
	}
	if l, _ := ParseLevel("7"); l != LevelDebug3 {
		t.Errorf("ParseLevel(7) = %v", l)
	}
	if got := Raise(LevelInfo, 2); got != LevelDebug {
		t.Errorf("Raise(info,2) = %v, want debug", got)
	}
	if got := Raise(LevelInfo, 20); got != LevelDebug5 {
		t.Errorf("Raise(info,20) = %v, want debug5", got)
	}
}
