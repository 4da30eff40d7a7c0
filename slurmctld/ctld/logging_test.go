package ctld

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/slurmd/slurmlog"
)

func TestCtldDebugLevel(t *testing.T) {
	for _, tc := range []struct {
		conf    string
		verbose int
		want    uint16
	}{
		{"", 0, 3}, {"info", 0, 3}, {"error", 0, 2}, {"debug3", 0, 7},
		{"", 1, 4}, {"", 2, 5}, {"", 3, 6},
		// -v replaces slurm.conf's level, lower or higher.
		{"debug3", 1, 4}, {"quiet", 2, 5}, {"debug5", 3, 6},
		{"", 6, 9}, {"", 9, 9},
	} {
		if got := ctldDebugLevel(tc.conf, tc.verbose); got != tc.want {
			t.Errorf("ctldDebugLevel(%q, %d) = %d, want %d", tc.conf, tc.verbose, got, tc.want)
		}
	}
}

// TestReconfigureLogLevel: the log level and scontrol show config's
// SlurmctldDebug after setdebug and after a reconfigure, for slurm.conf
// without SlurmctldDebug, with it, with it changed before the
// reconfigure, and 0 to 3 -v (22.05's update_logging: the reconfigure
// drops setdebug's level; -v decides over slurm.conf).
func TestReconfigureLogLevel(t *testing.T) {
	for _, tc := range []struct {
		before, after string // SlurmctldDebug= at start and at the reconfigure ("" unset)
		setdebug      bool   // scontrol setdebug debug4 before the reconfigure
		want          [4]uint16
	}{
		{"", "", true, [4]uint16{3, 4, 5, 6}},
		{"", "", false, [4]uint16{3, 4, 5, 6}},
		{"error", "error", true, [4]uint16{2, 4, 5, 6}},
		{"debug3", "debug3", false, [4]uint16{7, 4, 5, 6}},
		{"", "debug", true, [4]uint16{5, 4, 5, 6}},
		{"debug", "", true, [4]uint16{3, 4, 5, 6}},
		{"debug2", "error", false, [4]uint16{2, 4, 5, 6}},
	} {
		for v := range 4 {
			t.Run(fmt.Sprintf("%s-%s-%v-v%d", tc.before, tc.after, tc.setdebug, v), func(t *testing.T) {
				c, lv, path := logController(t, tc.before, v)
				if tc.setdebug {
					adminServe(c, 0, msgtype.REQUEST_SET_DEBUG_LEVEL, &msg.SetDebugLevelRequest{Level: 8})
					if got := c.buildInfo().SlurmctldDebug; got != 8 || lv.Level() != slurmlog.LevelDebug4 {
						t.Errorf("after setdebug debug4: SlurmctldDebug %d, level %v", got, lv.Level())
					}
				}
				writeDebugConf(t, path, tc.after)
				if err := c.Reconfigure(); err != nil {
					t.Fatal(err)
				}
				want := tc.want[v]
				wantLevel, _ := slurmlog.ParseLevel(fmt.Sprint(want))
				if got := c.buildInfo().SlurmctldDebug; got != want || lv.Level() != wantLevel {
					t.Errorf("after reconfigure: SlurmctldDebug %d, level %v; want %d, %v", got, lv.Level(), want, wantLevel)
				}
			})
		}
	}
}

func writeDebugConf(t *testing.T, path, level string) {
	t.Helper()
	text := testConf
	if level != "" {
		text += "SlurmctldDebug=" + level + "\n"
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// logController is a controller started with verbose -v as slurmctld's
// run.go starts it (its log at SlurmctldDebug or -v's level), whose
// slurm.conf has SlurmctldDebug=level ("" unset), at the returned path.
func logController(t *testing.T, level string, verbose int) (*Controller, *slog.LevelVar, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "slurm.conf")
	writeDebugConf(t, path, level)
	load := func() (*Config, error) {
		c, err := conf.Load(conf.OSFS{}, path)
		if err != nil {
			return nil, err
		}
		return NewConfig(c, path)
	}
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	lv, fs := new(slog.LevelVar), slurmlog.NewFlagSet(nil)
	l, err := slurmlog.ParseLevel(fmt.Sprint(ctldDebugLevel(cfg.Conf.SlurmctldDebug, verbose)))
	if err != nil {
		t.Fatal(err)
	}
	lv.Set(l)
	h := slurmlog.New(&bytes.Buffer{}, slurmlog.Options{Level: lv, Flags: fs, Program: "slurmctld"})
	ctl, err := New(Options{Config: cfg, Reload: load, Verbose: verbose, Log: slog.New(slurmlog.Controlled{Handler: h, Level: lv, Flags: fs})})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ctl.buildInfo().SlurmctldDebug, ctldDebugLevel(level, verbose); got != want {
		t.Errorf("at start: SlurmctldDebug %d, want %d", got, want)
	}
	return ctl, lv, path
}
