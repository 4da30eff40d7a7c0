package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
)

// reservationReport is -T/--reservation: one line per reservation in
// sinfo's fixed layout (-o, -O, -l and the filters do not apply).
func (s *sinfo) reservationReport(cache *queryCache) error {
	var last int64
	if cache.resv != nil {
		last = cache.resv.LastUpdate
	}
	m, err := s.conn.LoadReservations(s.ctx, last)
	if errors.Is(err, sc.ErrNoChange) && cache.resv != nil {
		m, err = cache.resv, nil
	}
	if err != nil {
		s.out.Flush()
		fmt.Fprintf(s.stderr, "slurm_load_reservations: %s\n", sc.Strerror(err))
		return err
	}
	cache.resv = m
	if len(m.Reservations) == 0 {
		s.out.WriteString("No reservations in the system\n")
		return nil
	}
	s.out.WriteString(formatReservations(m.Reservations, s.noHeader, s.tf, s.now))
	return nil
}

// formatReservations lays out the report. The name column is as wide as
// the longest name only when the header is printed; with -h it stays 9
// wide and longer names push the line, as in Slurm.
func formatReservations(rs []msg.Reservation, noHeader bool, tf *sc.TimeFormatter, nowT time.Time) string {
	width := 9
	var b strings.Builder
	if !noHeader {
		for _, r := range rs {
			width = max(width, len(r.Name.Value))
		}
		fmt.Fprintf(&b, "%-*s  %8s  %19s  %19s  %11s  %s\n", width,
			"RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST")
	}
	now := nowT.Unix()
	for _, r := range rs {
		state := "INACTIVE"
		if r.StartTime <= now && r.EndTime >= now {
			state = "ACTIVE"
		}
		fmt.Fprintf(&b, "%-*s  %8s  %19s  %19s  %11s  %s\n", width, cStr(r.Name), state,
			tf.Format(r.StartTime, nowT), tf.Format(r.EndTime, nowT),
			secs2TimeStr(uint32(r.EndTime-r.StartTime)), cStr(r.NodeList))
	}
	return b.String()
}

// cStr is how printf's %s shows a string that may be NULL.
func cStr(s msg.NullString) string {
	if !s.Valid {
		return "(null)"
	}
	return s.Value
}

// secs2TimeStr is Slurm's secs2time_str for the unsigned duration sinfo
// passes it: [days-]hh:mm:ss, UNLIMITED for INFINITE.
func secs2TimeStr(d uint32) string {
	if d == sc.Infinite {
		return "UNLIMITED"
	}
	days, hours, mins, secs := d/86400, d/3600%24, d/60%60, d%60
	if days != 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, hours, mins, secs)
	}
	return fmt.Sprintf("%02d:%02d:%02d", hours, mins, secs)
}
