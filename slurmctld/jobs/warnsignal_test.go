package jobs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// signalsSent sums up the REQUEST_SIGNAL_TASKS a Tick sent: "sig/flags@nodes".
func signalsSent(acts []Action) string {
	var out []string
	for _, a := range acts {
		nm, ok := a.(NodeMessage)
		if !ok || nm.MsgType != msgtype.REQUEST_SIGNAL_TASKS {
			continue
		}
		st := nm.Msg.(*msg.SignalTasks)
		out = append(out, fmt.Sprintf("%d/%#x@%s", st.Signal, st.Flags, strings.Join(nm.Nodes, ",")))
	}
	return strings.Join(out, " ")
}

func TestWarnSignal(t *testing.T) {
	for _, tc := range []struct {
		name       string
		flags      uint16
		limit      uint32
		warnTime   uint16
		quiet, due int64 // Tick times (after t0) before and when it is sent
		want       string
	}{
		// 120 s limit, warning 60 s before: sent once the end is 90 s away.
		{"steps", 0, 2, 60, 29, 30, "18/0x4@n1,n2 10/0x4@n1,n2"},
		{"batch", msg.KillJobBatch, 2, 60, 29, 30, "18/0x1@n1 10/0x1@n1"},
		// A warning time beyond the limit goes out at the first Tick.
		{"early", 0, 1, 300, -1, 0, "18/0x4@n1,n2 10/0x4@n1,n2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			d := batchDesc(alice)
			d.MinNodes = 2
			d.TimeLimit = tc.limit
			d.WarnSignal, d.WarnTime, d.WarnFlags = 10, tc.warnTime, tc.flags
			id := mustSubmit(t, m, cl, d, alice, t0)
			mustSchedule(t, m, cl, t0)
			if tc.quiet >= 0 {
				out, err := m.Tick(cl, t0+tc.quiet)
				if err != nil || signalsSent(out.Actions) != "" {
					t.Fatalf("Tick at +%d: %v %s", tc.quiet, err, signalsSent(out.Actions))
				}
			}
			out, err := m.Tick(cl, t0+tc.due)
			if got := signalsSent(out.Actions); err != nil || got != tc.want {
				t.Fatalf("Tick at +%d: %v %q, want %q", tc.due, err, got, tc.want)
			}
			if out, _ := m.Tick(cl, t0+tc.due+1); signalsSent(out.Actions) != "" {
				t.Fatalf("sent twice: %s", signalsSent(out.Actions))
			}
			// A requeued job is warned again in its next run.
			m.requeue(m.Job(id), 0, t0+tc.due+2)
			if m.Job(id).WarnFlags&warnSent != 0 {
				t.Error("requeue kept WARN_SENT")
			}
		})
	}
}

func TestWarnSignalNoLimit(t *testing.T) {
	cl := testCluster()
	m := newTestManager(nil)
	d := batchDesc(alice)
	d.WarnSignal, d.WarnTime = 10, 60
	mustSubmit(t, m, cl, d, alice, t0)
	mustSchedule(t, m, cl, t0)
	if out, _ := m.Tick(cl, t0+1); signalsSent(out.Actions) != "" {
		t.Fatalf("job without a time limit warned: %s", signalsSent(out.Actions))
	}
}
