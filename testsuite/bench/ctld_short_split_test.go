package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// shortSplit reads our controller's perf trace (slurmctld/ctld/perf.go)
// and the slurmd logs and tells where the time of the short jobs went:
// per job medians and 90th percentiles of each leg, the scheduling passes,
// and how much of the cluster's CPU slots stood idle between jobs.
func shortSplit(trace, logDir string, t0 time.Time, wall time.Duration, slots int) (string, error) {
	type jobT struct{ send, rc, cin, cout, epi, kill, slurmd, done time.Time }
	jobs := map[uint32]*jobT{}
	get := func(id uint32) *jobT {
		if jobs[id] == nil {
			jobs[id] = &jobT{}
		}
		return jobs[id]
	}
	f, err := os.Open(trace)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var passes, passStarts int
	var passDur []time.Duration
	var passBegin time.Time
	var firstPass time.Time
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 3 {
			continue
		}
		ns, _ := strconv.ParseInt(fl[0], 10, 64)
		at := time.Unix(0, ns)
		if at.Before(t0) {
			continue
		}
		id64, _ := strconv.ParseUint(fl[2], 10, 32)
		id := uint32(id64)
		switch fl[1] {
		case "pass-begin":
			passBegin = at
			if firstPass.IsZero() {
				firstPass = at
			}
		case "pass-end":
			passes++
			n, _ := strconv.Atoi(fl[3])
			passStarts += n
			if !passBegin.IsZero() {
				passDur = append(passDur, at.Sub(passBegin))
			}
		case "launch-send":
			get(id).send = at
		case "launch-rc":
			get(id).rc = at
		case "complete-in":
			get(id).cin = at
		case "complete-out":
			get(id).cout = at
		case "node-send":
			if len(fl) > 3 && fl[3] == "REQUEST_TERMINATE_JOB" {
				get(id).kill = at
			}
		case "epilog-done":
			get(id).epi = at
		}
	}
	// slurmd: "[date] Launching batch job N for UID" and "[date] [N.batch]
	// done with job" (millisecond stamps, local time).
	logs, _ := filepath.Glob(filepath.Join(logDir, "slurmd-*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if len(line) < 25 || line[0] != '[' {
				continue
			}
			at, err := time.ParseInLocation("2006-01-02T15:04:05.000", line[1:24], time.Local)
			if err != nil {
				continue
			}
			rest := line[26:]
			var id uint64
			switch {
			case strings.HasPrefix(rest, "Launching batch job "):
				id, _ = strconv.ParseUint(strings.Fields(rest)[3], 10, 32)
				get(uint32(id)).slurmd = at
			case strings.HasSuffix(rest, ".batch] done with job"):
				id, _ = strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(rest, "["), ".batch] done with job"), 10, 32)
				get(uint32(id)).done = at
			}
		}
	}
	legs := []struct {
		name string
		d    func(j *jobT) (time.Duration, bool)
	}{
		{"launch RPC (send -> slurmd rc)", func(j *jobT) (time.Duration, bool) { return span(j.send, j.rc) }},
		{"  of it send -> slurmd log", func(j *jobT) (time.Duration, bool) { return span(j.send, j.slurmd) }},
		{"slurmd run (rc -> complete in)", func(j *jobT) (time.Duration, bool) { return span(j.rc, j.cin) }},
		{"completion RPC (in -> reply)", func(j *jobT) (time.Duration, bool) { return span(j.cin, j.cout) }},
		{"stepd exit (reply -> done log)", func(j *jobT) (time.Duration, bool) { return span(j.cout, j.done) }},
		{"kill send after reply", func(j *jobT) (time.Duration, bool) { return span(j.cout, j.kill) }},
		{"terminate+epilog (reply -> CPUs free)", func(j *jobT) (time.Duration, bool) { return span(j.cout, j.epi) }},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %-34s %8s %8s %5s\n", "leg", "p50", "p90", "n")
	for _, l := range legs {
		var ds []time.Duration
		for _, j := range jobs {
			if d, ok := l.d(j); ok {
				ds = append(ds, d)
			}
		}
		slices.Sort(ds)
		if len(ds) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %-34s %8s %8s %5d\n", l.name, msf(ds[len(ds)/2]), msf(ds[len(ds)*9/10]), len(ds))
	}
	// Slot occupancy: a job holds its CPU from the start decision (about
	// launch-send) until its node is done with it (epilog complete, or
	// the node's "already complete" answer to the terminate request).
	var busy time.Duration
	var lastOut time.Time
	for _, j := range jobs {
		if d, ok := span(j.send, j.epi); ok {
			busy += d
		}
		if j.epi.After(lastOut) {
			lastOut = j.epi
		}
	}
	slices.Sort(passDur)
	fmt.Fprintf(&b, "  release -> first pass %s; %d passes, %d launches, pass p50 %s max %s\n",
		msf(firstPass.Sub(t0)), passes, passStarts, msf(pick(passDur, 0.5)), msf(pick(passDur, 1)))
	if !lastOut.IsZero() {
		fmt.Fprintf(&b, "  last job done at %s, squeue saw empty at %s\n", msf(lastOut.Sub(t0)), msf(wall))
		used := lastOut.Sub(t0)
		fmt.Fprintf(&b, "  CPU slots held by jobs %.0f%% of %d x %s (the rest: ramp, tail, scheduling gaps)\n",
			100*busy.Seconds()/(float64(slots)*used.Seconds()), slots, msf(used))
	}
	return b.String(), nil
}

func span(a, b time.Time) (time.Duration, bool) {
	if a.IsZero() || b.IsZero() {
		return 0, false
	}
	return b.Sub(a), true
}

func pick(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

func msf(d time.Duration) string { return fmt.Sprintf("%.1fms", d.Seconds()*1000) }
