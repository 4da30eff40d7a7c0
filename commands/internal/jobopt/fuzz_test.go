package jobopt

import (
	"strings"
	"testing"
	"time"
)

func FuzzDirectives(f *testing.F) {
	f.Add("#!/bin/sh\n#SBATCH -J \"a b\" -t 5 # c\n#SBATCH --x='y'\\\ntrue\n")
	f.Add("#!/bin/sh\n#SBATCH hetjob\n#SLURM : x\n")
	f.Fuzz(func(t *testing.T, body string) {
		words, _, _, err := Directives("f", []byte(body), "#SBATCH")
		if err == nil {
			o, errb := newTestOpts(nil)
			_ = o.ApplyDirectives(words, errb)
		}
	})
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"now+1hour", "16:00", "2030-01-01T10:00:00", "12/24/30", "uts2000000000", "11:30pm", "now-", "9"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		// The error position copies parse_time's arithmetic, quirks
		// included, so only termination is checked.
		ParseTime(s, now)
	})
}

func FuzzValues(f *testing.F) {
	f.Add("plane=3,pack")
	f.Add("B:USR1@30")
	f.Fuzz(func(t *testing.T, s string) {
		ParseMBytes(s)
		ParseDistribution(s, func(string) (string, bool) { return "", false })
		ParseSignal(s, true)
		ParseMailType(s)
		ParseMemBind(s)
		memBindList(s)
		parseSocketCoreThread(s)
		splitQuoted(s)
		o, _ := newTestOpts(nil)
		o.cpuFreq(s)
		o.parseNodeCount(strings.TrimSpace(s))
	})
}
