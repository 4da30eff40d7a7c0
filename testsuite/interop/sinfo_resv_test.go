package interop

import (
	"strings"
	"testing"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// sinfo -T and scontrol show reservation: the real 22.05 commands and
// ours, with the same arguments, against the same controller (real
// slurmctld, then ours), before any reservation exists and with an
// active maintenance reservation, a future one, a daily one and one with
// a long name and no end. Both commands read the same reply at nearly the
// same moment, so nothing is masked (the real one is rerun a few times
// when a -l date line crossed a second).

// sinfoResvCreate makes the reservations, with the real scontrol.
var sinfoResvCreate = [][]string{
	{"scontrol", "create", "reservation", "ReservationName=maint", "StartTime=now", "Duration=60",
		"Nodes=n1", "Users=root", "Flags=MAINT,IGNORE_JOBS"},
	{"scontrol", "create", "reservation", "ReservationName=future", "StartTime=now+1hour", "Duration=1-00:00:00",
		"Nodes=n2", "Users=root"},
	{"scontrol", "create", "reservation", "ReservationName=daily", "StartTime=now+2hours", "Duration=10",
		"Nodes=n3", "Users=root", "Flags=DAILY"},
	{"scontrol", "create", "reservation", "ReservationName=a_rather_long_reservation_name", "StartTime=now+3days",
		"Duration=UNLIMITED", "Nodes=n1", "Users=root"},
	{"scontrol", "create", "reservation", "ReservationName=weekly", "StartTime=now+5hours", "Duration=15",
		"NodeCnt=2", "Users=root", "Flags=WEEKLY"},
	{"scontrol", "create", "reservation", "ReservationName=acct", "StartTime=now", "Duration=30",
		"Nodes=n3", "Accounts=root", "Flags=IGNORE_JOBS"},
}

// sinfoResvQueries are the compared invocations (command, then args).
var sinfoResvQueries = []struct {
	env  []string
	args []string
}{
	{nil, []string{"sinfo", "-T"}},
	{nil, []string{"sinfo", "--reservation"}},
	{nil, []string{"sinfo", "-T", "-h"}},
	{nil, []string{"sinfo", "-T", "-l"}},
	{nil, []string{"sinfo", "-T", "-N"}},
	{nil, []string{"sinfo", "-T", "-o", "%P %N"}},
	{nil, []string{"sinfo", "-T", "-O", "partition"}},
	{nil, []string{"sinfo", "-T", "-p", "nosuch"}},
	{[]string{"SLURM_TIME_FORMAT=%s"}, []string{"sinfo", "-T"}},
	{[]string{"SLURM_TIME_FORMAT=%H:%M"}, []string{"sinfo", "-T", "-h"}},
	{nil, []string{"scontrol", "show", "reservation"}},
	{nil, []string{"scontrol", "show", "-o", "reservation"}},
	{nil, []string{"scontrol", "show", "reservation", "maint"}},
	{nil, []string{"scontrol", "show", "reservation", "daily"}},
	{nil, []string{"scontrol", "show", "reservation", "nosuch"}},
	{nil, []string{"scontrol", "show", "reservation", "weekly"}},
	{nil, []string{"scontrol", "show", "-d", "reservation", "acct"}},
	{nil, []string{"scontrol", "-o", "show", "reservation", "a_rather_long_reservation_name"}},
}

// TestSinfoReservationDiff runs the corpus against real slurmctld and
// against ours.
func TestSinfoReservationDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	for _, name := range []string{"sinfo", "scontrol"} {
		if _, err := oracle.Find(name); err != nil {
			oracle.Unavailable(t, name+": "+err.Error())
		}
	}
	ours := goslurmBuildCommands(t, false)
	for _, impl := range []struct {
		name string
		bin  func() string
		args []string
	}{
		{"real-slurmctld", func() string { return ctldharness.RealSbin(t, "slurmctld") }, []string{"-c", "-i"}},
		{"our-slurmctld", func() string { return ctldBuildOurs(t) }, []string{"-c"}},
	} {
		t.Run(impl.name, func(t *testing.T) {
			c := ctldharness.New(t, ctldharness.Options{Nodes: 3})
			c.Start(impl.bin(), impl.args...)
			defer c.Stop()
			d := &goslurmDiff{c: c, dir: t.TempDir(), ours: ours}
			diff := func(env, args []string) {
				t.Helper()
				if f := d.diff(t, args[0], args[1:], env, false); f != "" {
					t.Error(f)
				}
			}
			// No reservations yet.
			diff(nil, []string{"sinfo", "-T"})
			diff(nil, []string{"sinfo", "-T", "-h"})
			diff(nil, []string{"scontrol", "show", "reservation"})
			for _, a := range sinfoResvCreate {
				if o := ctldRun(c, a...); !strings.Contains(o, "Reservation created") {
					t.Fatalf("%q: %s", a, o)
				}
			}
			for _, q := range sinfoResvQueries {
				diff(q.env, q.args)
			}
			if t.Failed() || testing.Verbose() {
				o, _, _ := c.RunBin(ours+"/sinfo", "-T")
				t.Logf("our sinfo -T:\n%s", o)
			}
		})
	}
}
