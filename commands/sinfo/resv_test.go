package main

import (
	"testing"
	"time"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
)

func TestSecs2TimeStr(t *testing.T) {
	for _, tc := range []struct {
		in   uint32
		want string
	}{
		{0, "00:00:00"},
		{59, "00:00:59"},
		{3600, "01:00:00"},
		{86400, "1-00:00:00"},
		{365*86400 + 3661, "365-01:01:01"},
		{sc.Infinite, "UNLIMITED"},
	} {
		if got := secs2TimeStr(tc.in); got != tc.want {
			t.Errorf("secs2TimeStr(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatReservations(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.Local)
	at := func(d time.Duration) int64 { return now.Add(d).Unix() }
	rs := []msg.Reservation{
		{Name: msg.Str("maint"), StartTime: at(0), EndTime: at(time.Hour), NodeList: msg.Str("n1")},
		{Name: msg.Str("a_long_reservation"), StartTime: at(time.Hour), EndTime: at(25 * time.Hour), NodeList: msg.Str("n[2-3]")},
		{Name: msg.Str("lic"), StartTime: at(-time.Hour), EndTime: at(-time.Minute)},
	}
	tf := sc.NewTimeFormatter("", false, nil)
	for _, tc := range []struct {
		noHeader bool
		want     string
	}{
		{false, "" +
			"RESV_NAME              STATE           START_TIME             END_TIME     DURATION  NODELIST\n" +
			"maint                 ACTIVE  2026-01-02T12:00:00  2026-01-02T13:00:00     01:00:00  n1\n" +
			"a_long_reservation  INACTIVE  2026-01-02T13:00:00  2026-01-03T13:00:00   1-00:00:00  n[2-3]\n" +
			"lic                 INACTIVE  2026-01-02T11:00:00  2026-01-02T11:59:00     00:59:00  (null)\n"},
		// Without the header the name column stays 9 wide.
		{true, "" +
			"maint        ACTIVE  2026-01-02T12:00:00  2026-01-02T13:00:00     01:00:00  n1\n" +
			"a_long_reservation  INACTIVE  2026-01-02T13:00:00  2026-01-03T13:00:00   1-00:00:00  n[2-3]\n" +
			"lic        INACTIVE  2026-01-02T11:00:00  2026-01-02T11:59:00     00:59:00  (null)\n"},
	} {
		if got := formatReservations(rs, tc.noHeader, tf, now); got != tc.want {
			t.Errorf("noHeader=%v:\n%s\nwant:\n%s", tc.noHeader, got, tc.want)
		}
	}
}
