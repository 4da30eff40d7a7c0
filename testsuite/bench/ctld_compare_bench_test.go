package bench

// Controller comparison: Debian's real slurmctld 22.05 and goslurm's,
// one after the other in the same run, on the same slurm.conf (written
// once by testsuite/ctldharness: same ports, same state directory on the
// same disk, same MessageTimeout, SchedulerParameters, DefMemPerCPU), with
// the same four real slurmd nodes (slurmd -N) and the same real commands.
// Every figure is a whole real command process, so it includes process
// start, munge and configuration parsing on the client side: the same for
// both controllers. Prints a table side by side and writes it to
// testsuite/bench/results/ (gitignored). Nothing asserts on speed.
//
//	go test -run '^$' -bench CtldCompare -benchtime 1x ./testsuite/bench
//
// GOSLURM_CTLD_BIN names a goslurm slurmctld already built (else it is
// built); GOSLURM_CTLDBENCH_JOBS sets the big queue size (default 10000);
// GOSLURM_CTLDBENCH_GOSLURM_FIRST=1 measures goslurm first (run once each
// way on a loaded host to see how much the order moves the figures).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// Sizes of the phases; small enough that both controllers finish in a few
// minutes on a 2-core host.
const (
	ctldSubmitJobs    = 1000 // held sbatch submissions, timed; the small queue
	ctldSubmitClients = 8    // concurrent sbatch processes
	ctldFillClients   = 16   // concurrent sbatch processes filling the big queue
	ctldShortJobs     = 500  // trivial jobs released at once
	ctldSeqJobs       = 200  // of those, submitted first by one client
	ctldQueryRuns     = 20   // squeue / sinfo runs per queue size
	ctldShowRuns      = 20   // scontrol show job runs per queue size
	ctldSrunRuns      = 10   // srun -N1 true and srun -N2 true runs
	ctldStarts        = 3    // controller start-ups
)

func BenchmarkCtldCompare(b *testing.B) {
	big := 10000
	small := ctldSubmitJobs
	if v, err := strconv.Atoi(os.Getenv("GOSLURM_CTLDBENCH_JOBS")); err == nil && v > 0 {
		// A smaller big queue (for a quick try) shrinks the timed
		// submission to a fifth of it.
		big, small = v, min(ctldSubmitJobs, v/5)
	}
	real := ctldharness.RealSbin(b, "slurmctld")
	c := ctldharness.New(b, ctldharness.Options{
		// GOSLURM_CTLDBENCH_LOCALMUNGE=1: our controller uses the
		// in-process MUNGE codec (GOSLURM_MUNGE_KEY); real's asks munged.
		LocalMunge: os.Getenv("GOSLURM_CTLDBENCH_LOCALMUNGE") == "1",
		Nodes:      4, CPUs: 4, RealMemory: 4000,
		ExtraConf: []string{
			"MaxJobCount=" + strconv.Itoa(big+ctldShortJobs+1000),
			"DefMemPerCPU=100",
			"MessageTimeout=10",
			"SchedulerParameters=default_queue_depth=100,bf_interval=30",
			"MinJobAge=300",
		},
	})
	ours := ctldBuild(b)

	r := &ctldRun{c: c, big: big, small: small}
	results := map[string]*ctldResult{}
	ctls := []struct{ name, bin string }{{"real", real}, {"goslurm", ours}}
	if os.Getenv("GOSLURM_CTLDBENCH_GOSLURM_FIRST") == "1" {
		ctls[0], ctls[1] = ctls[1], ctls[0]
	}
	for _, ctl := range ctls {
		b.Logf("ctldcompare: %s slurmctld (%s)", ctl.name, ctl.bin)
		results[ctl.name] = r.measure(b, ctl.bin)
		c.Stop()
		if log, err := os.ReadFile(filepath.Join(c.Dir, "log", "slurmctld.log")); err == nil {
			ctldSave(b, ctl.name+"-slurmctld.log", string(log))
		}
	}
	table := ctldTable(results["real"], results["goslurm"], small, big) + "\nmeasured " + ctls[0].name + " first"
	fmt.Println(table)
	ctldSave(b, "table.txt", table+"\n")
}

// ctldRun drives one controller through every phase.
type ctldRun struct {
	c          *ctldharness.Cluster
	big, small int // queue sizes at which queries are timed
	res        *ctldResult
	mu         sync.Mutex
}

// ctldResult holds one controller's figures; a failed phase leaves its
// note in errs and its figures zero.
type ctldResult struct {
	startup, registered      ctldStat
	slow                     map[string][]time.Duration // commands over a second, by phase
	rssIdle, rssBig, rssPeak int64                      // kB
	cpu                      time.Duration
	seqRate, submitRate      float64 // jobs/s
	seqP50                   time.Duration
	submitP50, submitP99     time.Duration
	fillRate                 float64
	squeue, sinfo, show      [2]ctldStat // at small and at big
	srun1, srun              ctldStat    // srun -N1, -N2
	shortStart, shortDone    time.Duration
	errs                     []string
}

// ctldStat is a median and a tail: p99, or the maximum when there are
// fewer than 100 samples.
type ctldStat struct{ p50, p99 time.Duration }

func (r *ctldRun) measure(b *testing.B, bin string) *ctldResult {
	c := r.c
	res := &ctldResult{slow: map[string][]time.Duration{}}
	r.res = res
	// Start-up, several times from an empty state directory (one slow
	// start is not a figure); the last start is the one measured further.
	var reg, idle []time.Duration
	for i := range ctldStarts {
		if i > 0 {
			c.Stop()
		}
		// Start empties the state directory before it launches the
		// controller; after 10k jobs that takes seconds, which is not
		// the controller's start-up, so it is done here, untimed.
		if err := ctldEmptyState(c); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		c.Start(bin, "-c")
		reg = append(reg, time.Since(t0))
		if err := c.Poll(60*time.Second, func() bool { return r.idle() == len(c.Nodes) }); err != nil {
			b.Fatalf("nodes not idle: %v\n%s", err, c.Logs())
		}
		idle = append(idle, time.Since(t0))
	}
	res.registered, res.startup = stat(reg), stat(idle)
	pid := c.Ctld().Pid
	res.rssIdle, _ = procRSS(pid)

	// srun -N1 true and -N2 true on idle nodes; waiting for idle is not
	// timed.
	res.srun1 = r.srun(res, "-N1")
	res.srun = r.srun(res, "-N2")

	r.shortJobs(b, res)

	// Held submissions, from one client then from concurrent ones: the
	// queue only grows.
	seq := min(ctldSeqJobs, r.small/2)
	lat, wall, fails := r.submit(seq, 1)
	if fails != "" {
		res.errs = append(res.errs, "sbatch: "+fails)
	}
	if wall > 0 {
		res.seqRate = float64(len(lat)) / wall.Seconds()
	}
	res.seqP50 = stat(lat).p50
	lat, wall, fails = r.submit(r.small-seq, ctldSubmitClients)
	if fails != "" {
		res.errs = append(res.errs, "sbatch: "+fails)
	}
	if wall > 0 {
		res.submitRate = float64(len(lat)) / wall.Seconds()
	}
	s := stat(lat)
	res.submitP50, res.submitP99 = s.p50, s.p99
	r.queries(res, 0)

	lat, wall, fails = r.submit(r.big-r.small, ctldFillClients)
	if fails != "" {
		res.errs = append(res.errs, "sbatch fill: "+fails)
	}
	if wall > 0 {
		res.fillRate = float64(len(lat)) / wall.Seconds()
	}
	r.queries(res, 1)

	res.rssBig, res.rssPeak = procRSS(pid)
	res.cpu = procCPU(pid)
	return res
}

// srun times ctldSrunRuns runs of `srun nodes true`, each on idle nodes.
func (r *ctldRun) srun(res *ctldResult, nodes string) ctldStat {
	var ds []time.Duration
	for range ctldSrunRuns {
		if err := r.c.Poll(60*time.Second, func() bool { return r.idle() == len(r.c.Nodes) }); err != nil {
			res.errs = append(res.errs, "srun: nodes not idle: "+err.Error())
			break
		}
		d, out, err := r.timed("srun", nodes, "true")
		if err != nil {
			res.errs = append(res.errs, fmt.Sprintf("srun %s true: %v %s", nodes, err, out))
			break
		}
		ds = append(ds, d)
	}
	return stat(ds)
}

// shortJobs submits ctldShortJobs held trivial jobs, releases them with
// one scontrol command and times until none is pending (all started) and
// until the queue is empty (all done).
func (r *ctldRun) shortJobs(b *testing.B, res *ctldResult) {
	var ids []string
	for i := range ctldShortJobs {
		out, errOut, err := r.c.Run("sbatch", "-H", "--parsable", "-o", "/dev/null", "-D", "/tmp",
			"-J", "short"+strconv.Itoa(i), "--wrap", "true")
		if err != nil {
			res.errs = append(res.errs, fmt.Sprintf("short sbatch: %v %s", err, errOut))
			return
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	t0 := time.Now()
	if _, errOut, err := r.c.Run("scontrol", "release", strings.Join(ids, ",")); err != nil {
		res.errs = append(res.errs, fmt.Sprintf("scontrol release: %v %s", err, errOut))
		return
	}
	count := func(args ...string) int {
		out, _, err := r.c.Run("squeue", append([]string{"-h", "-o", "%i"}, args...)...)
		if err != nil {
			return -1
		}
		return len(strings.Fields(out))
	}
	if err := r.c.Poll(180*time.Second, func() bool { return count("-t", "PD") == 0 }); err != nil {
		res.errs = append(res.errs, "short jobs not all started: "+err.Error())
		return
	}
	res.shortStart = time.Since(t0)
	if err := r.c.Poll(180*time.Second, func() bool { return count() == 0 }); err != nil {
		res.errs = append(res.errs, "short jobs not all done: "+err.Error())
		return
	}
	res.shortDone = time.Since(t0)
	_ = b
}

// submit runs n held sbatch commands from k concurrent clients and returns
// each one's latency, the wall time and the first failure.
func (r *ctldRun) submit(n, k int) ([]time.Duration, time.Duration, string) {
	var (
		mu   sync.Mutex
		lat  []time.Duration
		fail string
		wg   sync.WaitGroup
	)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	t0 := time.Now()
	for range k {
		wg.Go(func() {
			for i := range next {
				d, out, err := r.timed("sbatch", "-H", "-o", "/dev/null", "-J", "held"+strconv.Itoa(i), "--wrap", "true")
				mu.Lock()
				if err != nil || !strings.Contains(out, "Submitted batch job") {
					if fail == "" {
						fail = fmt.Sprintf("%v: %s", err, out)
					}
				} else {
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return lat, time.Since(t0), fail
}

// queries times squeue, sinfo and scontrol show job with the queue as it is.
func (r *ctldRun) queries(res *ctldResult, at int) {
	run := func(times int, args ...string) ctldStat {
		var ds []time.Duration
		for range times {
			d, out, err := r.timed(args[0], args[1:]...)
			if err != nil {
				res.errs = append(res.errs, fmt.Sprintf("%s: %v %.200s", strings.Join(args, " "), err, out))
				break
			}
			ds = append(ds, d)
		}
		return stat(ds)
	}
	res.squeue[at] = run(ctldQueryRuns, "squeue")
	res.sinfo[at] = run(ctldQueryRuns, "sinfo")
	// A job in the middle of the table.
	out, _, _ := r.c.Run("squeue", "-h", "-t", "PD", "-o", "%i")
	ids := strings.Fields(out)
	if len(ids) == 0 {
		res.errs = append(res.errs, "no pending job to show")
		return
	}
	res.show[at] = run(ctldShowRuns, "scontrol", "show", "job", ids[len(ids)/2])
}

// timed runs a real command and returns how long it took and what it
// printed.
func (r *ctldRun) timed(name string, args ...string) (time.Duration, string, error) {
	t0 := time.Now()
	out, errOut, err := r.c.Run(name, args...)
	d := time.Since(t0)
	if d > time.Second {
		r.mu.Lock()
		r.res.slow[name] = append(r.res.slow[name], d)
		r.mu.Unlock()
	}
	return d, out + errOut, err
}

// idle counts nodes sinfo shows idle.
func (r *ctldRun) idle() int {
	out, _, err := r.c.Run("sinfo", "-h", "-N", "-o", "%T")
	if err != nil {
		return -1
	}
	return strings.Count(out, "idle\n")
}

func stat(ds []time.Duration) ctldStat {
	if len(ds) == 0 {
		return ctldStat{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	pick := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return ctldStat{p50: pick(0.50), p99: pick(0.99)}
}

// procRSS returns VmRSS and VmHWM of pid in kB.
func procRSS(pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v
		case "VmHWM:":
			hwm = v
		}
	}
	return rss, hwm
}

// procCPU returns the user plus system CPU time pid has used (threads
// included), from /proc/pid/stat in clock ticks of 1/100 s.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	// After the command name: state is field 3, utime 14, stime 15.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// ctldEmptyState removes what the previous controller left in the state
// directory.
func ctldEmptyState(c *ctldharness.Cluster) error {
	dir := filepath.Join(c.Dir, "state")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}

// ctldBuild builds goslurm's slurmctld (or takes GOSLURM_CTLD_BIN).
func ctldBuild(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("GOSLURM_CTLD_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "slurmctld")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/goslurm/goslurm/slurmctld")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build slurmctld: %v\n%s", err, out)
	}
	return bin
}

// ctldStamp names this run's files in testsuite/bench/results/.
var ctldStamp = time.Now().UTC().Format("20060102T150405Z")

// ctldSave writes one file of this run to testsuite/bench/results/.
func ctldSave(b *testing.B, name, text string) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "results")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Logf("results: %v", err)
		return
	}
	p := filepath.Join(dir, "ctld-compare-"+ctldStamp+"-"+name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		b.Logf("results: %v", err)
		return
	}
	b.Logf("wrote %s", p)
}
