package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/goslurm/goslurm/slurmctld/sched/sim"
)

// printTable writes one trace's results as Markdown: a description of the
// trace and the simulated cluster, then one column per policy.
func printTable(w io.Writer, name string, tr *sim.Trace, outs []outcome, readWall time.Duration) {
	h := tr.Header
	c := tr.Cluster
	fmt.Fprintf(w, "\n### %s\n\n", name)
	site := strings.TrimSpace(h.Computer + ", " + h.Installation)
	if len(h.Acknowledge) > 0 {
		site += " (contributed by " + strings.Join(h.Acknowledge, "; ") + ")"
	}
	fmt.Fprintf(w, "%s.\n", site)
	fmt.Fprintf(w, "Cluster: %d nodes x %d CPUs = %d CPUs, one partition, MaxTime %s.\n",
		c.Nodes, c.CPUsPerNode, c.TotalCPUs(), minutes(c.MaxTimeMin))
	sk := tr.Skipped
	fmt.Fprintf(w, "Jobs: %d simulated; %d records skipped (%d larger than the machine, %d without processors, %d without run time, %d without submit time, %d malformed); "+
		"%d without requested time (given MaxTime); %d cut at their time limit. Trace read in %s.\n",
		len(tr.Jobs), sk.Total(), sk.TooBig, sk.NoProcs, sk.NoRun, sk.NoSubmit, sk.Malformed,
		tr.NoLimit, tr.Killed, readWall.Round(time.Millisecond))
	if mean, n := recordedWait(tr.Jobs); n > 0 {
		fmt.Fprintf(w, "Recorded in the trace (the site's own scheduler), same jobs: mean wait %s (%d jobs with a wait time).\n", dur(mean), n)
	} else {
		fmt.Fprintf(w, "The trace records no wait times.\n")
	}
	fmt.Fprintln(w)

	row := func(label string, f func(o outcome) string) {
		fmt.Fprintf(w, "| %s |", label)
		for _, o := range outs {
			fmt.Fprintf(w, " %s |", f(o))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| metric |")
	for _, o := range outs {
		fmt.Fprintf(w, " %s |", policyName(o.res.Policy))
	}
	fmt.Fprint(w, "\n|---|")
	for range outs {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	row("jobs simulated", func(o outcome) string { return fmt.Sprint(o.res.Metrics.Jobs) })
	row("jobs never started", func(o outcome) string { return fmt.Sprint(o.res.Unstarted) })
	row("makespan", func(o outcome) string { return dur(float64(o.res.Metrics.Makespan)) })
	row("utilization", func(o outcome) string { return pct(o.res.Metrics.Utilization) })
	row("mean wait", func(o outcome) string { return dur(o.res.Metrics.MeanWait) })
	row("p95 wait", func(o outcome) string { return dur(o.res.Metrics.P95Wait) })
	row("mean bounded slowdown", func(o outcome) string { return fmt.Sprintf("%.2f", o.res.Metrics.MeanBSLD) })
	row("fragmentation", func(o outcome) string { return pct(o.res.Metrics.Fragmentation) })
	row("time with jobs waiting", func(o outcome) string {
		m := o.res.Metrics
		if m.Makespan == 0 {
			return "0"
		}
		return pct(float64(m.BlockedTime) / float64(m.Makespan))
	})
	row("jobs started by backfill", func(o outcome) string { return fmt.Sprint(o.res.Metrics.Backfilled) })
	row("main / backfill passes", func(o outcome) string {
		return fmt.Sprintf("%d / %d", o.res.MainPasses, o.res.BackfillPasses)
	})
	row("simulator wall time", func(o outcome) string { return o.wall.Round(10 * time.Millisecond).String() })
}

func policyName(p sim.Policy) string {
	if p == sim.Backfill {
		return "backfill"
	}
	return "FIFO"
}

func recordedWait(jobs []sim.Job) (float64, int) {
	var sum float64
	n := 0
	for _, j := range jobs {
		if j.RecordedWait >= 0 {
			sum += float64(j.RecordedWait)
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// dur prints seconds with a readable unit next to them.
func dur(sec float64) string {
	switch {
	case sec < 120:
		return fmt.Sprintf("%.0f s", sec)
	case sec < 2*3600:
		return fmt.Sprintf("%.0f s (%.1f min)", sec, sec/60)
	case sec < 2*86400:
		return fmt.Sprintf("%.0f s (%.1f h)", sec, sec/3600)
	default:
		return fmt.Sprintf("%.0f s (%.1f d)", sec, sec/86400)
	}
}

func minutes(m int64) string {
	if m%1440 == 0 {
		return fmt.Sprintf("%d min (%d d)", m, m/1440)
	}
	if m%60 == 0 {
		return fmt.Sprintf("%d min (%d h)", m, m/60)
	}
	return fmt.Sprintf("%d min", m)
}
