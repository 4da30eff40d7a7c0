package main

import (
	"testing"

	"github.com/goslurm/goslurm/slurmd/daemon"
)

func TestSinceStart(t *testing.T) {
	// Host uptimes as successive reads return them; the first is read at start.
	for _, tc := range []struct {
		name string
		host []uint32
		want []uint32
	}{
		{"counts from start", []uint32{1000, 1000, 1005, 4600}, []uint32{0, 5, 3600}},
		{"clock going back never underflows", []uint32{1000, 999}, []uint32{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := 0
			host := func() daemon.Stats {
				s := daemon.Stats{UpTime: tc.host[i], CPULoad: 7}
				i++
				return s
			}
			stats := sinceStart(host)
			for _, want := range tc.want {
				s := stats()
				if s.UpTime != want || s.CPULoad != 7 {
					t.Errorf("read %d: %+v, want UpTime %d and the load kept", i, s, want)
				}
			}
		})
	}
}
