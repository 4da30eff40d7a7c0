package bench

import (
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// ctldTable formats both controllers' figures side by side, with the
// ratio goslurm / real (below 1 is better for times and memory, above 1
// for rates).
func ctldTable(real, ours *ctldResult, small, big int) string {
	var b strings.Builder
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "slurmctld comparison, %s, %d CPUs, load %s", time.Now().UTC().Format(time.RFC3339),
		runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintf(&b, "\n4 real slurmd 22.05 (slurmd -N, 4 CPUs each), real 22.05 commands, same slurm.conf")
	if os.Getenv("GOSLURM_CTLDBENCH_LOCALMUNGE") == "1" {
		b.WriteString("; goslurm's controller with the in-process MUNGE codec")
	}
	b.WriteString("\n\n")
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "metric\treal 22.05\tgoslurm\tgoslurm/real\t\n")
	dur := func(name string, r, o time.Duration) {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t\n", name, ms(r), ms(o), ratio(float64(o), float64(r)))
	}
	num := func(name, unit string, r, o float64) {
		fmt.Fprintf(w, "%s\t%.1f %s\t%.1f %s\t%s\t\n", name, r, unit, o, unit, ratio(o, r))
	}
	q := func(i int) string {
		if i == 0 {
			return fmt.Sprint(small)
		}
		return fmt.Sprint(big)
	}
	dur(fmt.Sprintf("start-up until 4 nodes registered p50 (%d starts)", ctldStarts), real.registered.p50, ours.registered.p50)
	dur(fmt.Sprintf("start-up until 4 nodes idle p50 (%d starts)", ctldStarts), real.startup.p50, ours.startup.p50)
	dur("start-up until 4 nodes idle max", real.startup.p99, ours.startup.p99)
	dur(fmt.Sprintf("srun -N1 true p50 (%d runs)", ctldSrunRuns), real.srun1.p50, ours.srun1.p50)
	dur("srun -N1 true max", real.srun1.p99, ours.srun1.p99)
	dur(fmt.Sprintf("srun -N2 true p50 (%d runs)", ctldSrunRuns), real.srun.p50, ours.srun.p50)
	dur("srun -N2 true max", real.srun.p99, ours.srun.p99)
	dur(fmt.Sprintf("%d trivial jobs: release to all started", ctldShortJobs), real.shortStart, ours.shortStart)
	dur(fmt.Sprintf("%d trivial jobs: release to all done", ctldShortJobs), real.shortDone, ours.shortDone)
	num(fmt.Sprintf("sbatch -H throughput (%d jobs, 1 client)", min(ctldSeqJobs, small/2)), "jobs/s",
		real.seqRate, ours.seqRate)
	dur("sbatch latency p50, 1 client", real.seqP50, ours.seqP50)
	num(fmt.Sprintf("sbatch -H throughput (%d jobs, %d clients)", small-min(ctldSeqJobs, small/2), ctldSubmitClients), "jobs/s",
		real.submitRate, ours.submitRate)
	dur(fmt.Sprintf("sbatch latency p50, %d clients", ctldSubmitClients), real.submitP50, ours.submitP50)
	dur(fmt.Sprintf("sbatch latency p99, %d clients", ctldSubmitClients), real.submitP99, ours.submitP99)
	num(fmt.Sprintf("sbatch -H throughput (fill to %d, %d clients)", big, ctldFillClients), "jobs/s",
		real.fillRate, ours.fillRate)
	for i := range 2 {
		dur("squeue p50, "+q(i)+" pending", real.squeue[i].p50, ours.squeue[i].p50)
		dur(fmt.Sprintf("squeue max (%d runs), %s pending", ctldQueryRuns, q(i)), real.squeue[i].p99, ours.squeue[i].p99)
		dur("sinfo p50, "+q(i)+" pending", real.sinfo[i].p50, ours.sinfo[i].p50)
		dur(fmt.Sprintf("sinfo max (%d runs), %s pending", ctldQueryRuns, q(i)), real.sinfo[i].p99, ours.sinfo[i].p99)
		dur("scontrol show job p50, "+q(i)+" pending", real.show[i].p50, ours.show[i].p50)
		dur(fmt.Sprintf("scontrol show job max (%d runs), %s pending", ctldShowRuns, q(i)), real.show[i].p99, ours.show[i].p99)
	}
	num("controller RSS idle", "MB", float64(real.rssIdle)/1024, float64(ours.rssIdle)/1024)
	num(fmt.Sprintf("controller RSS at %d pending", big), "MB", float64(real.rssBig)/1024, float64(ours.rssBig)/1024)
	num("controller peak RSS (VmHWM)", "MB", float64(real.rssPeak)/1024, float64(ours.rssPeak)/1024)
	num("controller CPU time at the end (user+sys)", "s", real.cpu.Seconds(), ours.cpu.Seconds())
	w.Flush()
	for _, x := range []struct {
		name string
		r    *ctldResult
	}{{"real", real}, {"goslurm", ours}} {
		for _, e := range x.r.errs {
			fmt.Fprintf(&b, "%s: %s\n", x.name, e)
		}
		for _, cmd := range slices.Sorted(maps.Keys(x.r.slow)) {
			ds := x.r.slow[cmd]
			fmt.Fprintf(&b, "%s: %d %s commands took over 1 s (longest %v)\n", x.name, len(ds), cmd,
				slices.Max(ds).Round(time.Millisecond))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

func ratio(o, r float64) string {
	if o == 0 || r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", o/r)
}
