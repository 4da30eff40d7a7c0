package stepd

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/protocol/msg"
)

func TestNoticeLine(t *testing.T) {
	at := time.Date(2026, 11, 21, 14, 0, 5, 0, time.Local)
	tests := []struct {
		sig  int
		want string
	}{
		{SigTermKill, "*** STEP 5.0 ON n1 CANCELLED AT 2026-11-21T14:00:05 ***"},
		{int(unix.SIGTERM), "*** STEP 5.0 ON n1 CANCELLED AT 2026-11-21T14:00:05 ***"},
		{int(unix.SIGKILL), "*** STEP 5.0 ON n1 CANCELLED AT 2026-11-21T14:00:05 ***"},
		{SigTimeLimit, "*** STEP 5.0 ON n1 CANCELLED AT 2026-11-21T14:00:05 DUE TO TIME LIMIT ***"},
		{SigFailure, "*** STEP 5.0 ON n1 FAILED (non-zero exit code or other failure mode) ***"},
		{int(unix.SIGUSR1), ""},
		{int(unix.SIGCONT), ""},
	}
	for _, tc := range tests {
		if got := noticeLine(tc.sig, "STEP 5.0 ON n1", at); got != tc.want {
			t.Errorf("signal %d: got %q, want %q", tc.sig, got, tc.want)
		}
	}
}

// The notice goes once, from node 0 only, through local task 0's stderr
// while the step runs.
func TestTaskStepAnnounce(t *testing.T) {
	tests := []struct {
		name    string
		nodeID  uint32
		st      int32
		het     uint32
		sigs    []int
		details string
		want    string
	}{
		{"term kill", 0, StateRunning, NoVal, []int{SigTermKill}, "", "slurmstepd-n1: error: *** STEP 7.2 ON n1 CANCELLED AT T ***\n"},
		{"once", 0, StateRunning, NoVal, []int{int(unix.SIGTERM), int(unix.SIGKILL)}, "", "slurmstepd-n1: error: *** STEP 7.2 ON n1 CANCELLED AT T ***\n"},
		{"het component", 0, StateRunning, 1, []int{int(unix.SIGKILL)}, "", "slurmstepd-n1: error: *** STEP 7+1.2 ON n1 CANCELLED AT T ***\n"},
		{"reason", 0, StateRunning, NoVal, []int{SigTermKill}, "admin", "slurmstepd-n1: error: *** STEP 7.2 ON n1 CANCELLED AT T ***\nslurmstepd-n1: error: *** REASON: admin ***\n"},
		{"not node 0", 1, StateRunning, NoVal, []int{SigTermKill}, "", ""},
		{"ending", 0, StateEnding, NoVal, []int{SigTermKill}, "", ""},
		{"plain signal", 0, StateRunning, NoVal, []int{int(unix.SIGUSR1)}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ts := &taskStep{cfg: &Config{NodeName: "n1"}, nodeID: tc.nodeID, st: tc.st, msgErr: w,
				log: slog.New(slog.DiscardHandler),
				req: &msg.LaunchTasksRequest{StepID: msg.StepID{JobID: 7, StepID: 2, StepHetComp: tc.het}}}
			for _, s := range tc.sigs {
				ts.mu.Lock()
				ts.announce(s, tc.details)
				ts.mu.Unlock()
			}
			w.Close()
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			got := maskAt(string(b))
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// maskAt masks the time in a notice.
func maskAt(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if i := strings.Index(l, " AT "); i >= 0 {
			if j := strings.Index(l[i:], " ***"); j >= 0 {
				l = l[:i] + " AT T" + l[i+j:]
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}
