package bench

// Controller capacity without process start-up: a load generator written
// with goslurm's protocol package (protocol/client, auth/munge against the
// cluster's munged) keeps capWorkers RPCs in flight, each on its own
// connection as Slurm's one-RPC-per-connection protocol has it, and sends
// one request type as fast as the controller answers for a fixed time.
// Pointed at Debian's real slurmctld 22.05 and at goslurm's, in one run, on
// the same slurm.conf and the same four real slurmd (testsuite/ctldharness).
// Both controllers decode and sign with the same munged, so munged's
// capacity bounds both: four munge operations per RPC (client sign,
// controller verify, controller sign, client verify).
//
//	go test -run '^$' -bench CtldCapacity -benchtime 1x ./testsuite/bench
//
// Each controller is started once per round; even rounds run goslurm
// first, so the rounds show how much the order and the host's load move
// the figures. GOSLURM_CAPBENCH_PHASE sets each phase's duration (default
// 5s), GOSLURM_CAPBENCH_ROUNDS the rounds (default 2: 10 s of each request
// type per controller), GOSLURM_CTLD_BIN a built goslurm slurmctld.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

const (
	capWorkers = 64   // RPCs in flight
	capPreload = 1000 // held jobs in the queue while the queries run
	capJobHeld = 2042 // ESLURM_JOB_HELD
)

// capPhases are the request types in the order they run: the queries
// first, on the same preloaded queue for both controllers, then the
// submissions, which grow the queue by as much as each controller takes.
var capPhases = []string{
	"REQUEST_JOB_INFO_SINGLE",
	"REQUEST_JOB_INFO last_update",
	"REQUEST_NODE_INFO",
	"REQUEST_JOB_INFO full (1000 jobs)",
	"REQUEST_SUBMIT_BATCH_JOB held",
}

// capStat is one phase's figures.
type capStat struct {
	n, errs   int
	noChange  int // REQUEST_JOB_INFO last_update answered SLURM_NO_CHANGE_IN_DATA
	rate      float64
	p50, p99  time.Duration
	cpu       time.Duration // the controller's CPU time during the phase
	mungeCPU  time.Duration // munged's
	genCPU    time.Duration // this process's (the load generator)
	firstErr  string
	preloadIn time.Duration
}

func BenchmarkCtldCapacity(b *testing.B) {
	phase := 5 * time.Second
	if d, err := time.ParseDuration(os.Getenv("GOSLURM_CAPBENCH_PHASE")); err == nil && d > 0 {
		phase = d
	}
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("GOSLURM_CAPBENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	real := ctldharness.RealSbin(b, "slurmctld")
	// GOSLURM_CAPBENCH_LOCALMUNGE=1: our controller and the load generator
	// (for both controllers) encode and decode MUNGE credentials in
	// process; real slurmctld still asks munged.
	local := os.Getenv("GOSLURM_CAPBENCH_LOCALMUNGE") == "1"
	c := ctldharness.New(b, ctldharness.Options{
		LocalMunge: local,
		Nodes:      4, CPUs: 4, RealMemory: 4000,
		ExtraConf: []string{
			// Room for whatever the submission phase reaches.
			"MaxJobCount=300000",
			"DefMemPerCPU=100",
			"MessageTimeout=10",
			"SchedulerParameters=default_queue_depth=100,bf_interval=30",
			"MinJobAge=300",
		},
	})
	ours := ctldBuild(b)

	type run struct {
		real, ours map[string]capStat
	}
	var runs []run
	for round := range rounds {
		ctls := []struct{ name, bin string }{{"real", real}, {"goslurm", ours}}
		if round%2 == 1 {
			ctls[0], ctls[1] = ctls[1], ctls[0]
		}
		var r run
		for _, ctl := range ctls {
			b.Logf("ctldcapacity round %d: %s slurmctld (%s)", round+1, ctl.name, ctl.bin)
			res := capMeasure(b, c, ctl.bin, phase, local)
			c.Stop()
			if ctl.name == "real" {
				r.real = res
			} else {
				r.ours = res
			}
		}
		runs = append(runs, r)
	}

	var out strings.Builder
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&out, "slurmctld capacity, %s, %d CPUs, load %s\n", time.Now().UTC().Format(time.RFC3339),
		runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "))
	how := "auth/munge through munged"
	if local {
		how = "auth/munge in process (GOSLURM_MUNGE_KEY; goslurm's controller too, real's asks munged)"
	}
	fmt.Fprintf(&out, "load generator: goslurm protocol/client + %s, %d RPCs in flight, %v per phase, %d held jobs preloaded\n\n",
		how, capWorkers, phase, capPreload)
	// Requests/s of every round at a glance, then each round in full.
	w := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "requests/s by round	real 22.05	goslurm	goslurm/real (means)	\n")
	for _, name := range capPhases {
		var rs, gs []string
		var rsum, osum float64
		for _, r := range runs {
			rs = append(rs, fmt.Sprintf("%.0f", r.real[name].rate))
			gs = append(gs, fmt.Sprintf("%.0f", r.ours[name].rate))
			rsum += r.real[name].rate
			osum += r.ours[name].rate
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t\n", name, strings.Join(rs, " "), strings.Join(gs, " "), ratio(osum, rsum))
	}
	w.Flush()
	out.WriteString("\n")
	for i, r := range runs {
		first := "real first"
		if i%2 == 1 {
			first = "goslurm first"
		}
		fmt.Fprintf(&out, "round %d (%s)\n", i+1, first)
		out.WriteString(capTable(r.real, r.ours))
		out.WriteString("\n")
	}
	table := strings.TrimRight(out.String(), "\n")
	fmt.Println(table)
	ctldSave(b, "capacity-table.txt", table+"\n")
}

// capMeasure starts the controller on an empty state directory, preloads
// the queue and runs every phase.
func capMeasure(b *testing.B, c *ctldharness.Cluster, bin string, phase time.Duration, local bool) map[string]capStat {
	c.Start(bin, "-c")
	pids := capPids{ctld: c.Ctld().Pid, munged: capMungedPid(c)}
	g := msg.Registry()
	authn := &auth.Munge{Client: c.Munge.Client()}
	if local {
		key, err := munge.LoadKey(c.Munge.KeyFile)
		if err != nil {
			b.Fatal(err)
		}
		if authn.Codec, err = munge.NewLocal(key, munge.LocalConfig{}); err != nil {
			b.Fatal(err)
		}
	}
	cl := &client.Client{
		Controllers: []string{"127.0.0.1:" + strconv.Itoa(c.CtldPort)},
		Auth:        authn,
		// A slow answer is a figure, a lost one an error: no second sweep.
		MessageTimeout: 30 * time.Second,
		Sweeps:         1,
	}
	res := map[string]capStat{}

	submit := capEncode(b, g, msgtype.REQUEST_SUBMIT_BATCH_JOB, *capJobDesc(c))
	submitOne := func(ctx context.Context) (uint32, error) {
		r, err := cl.Call(ctx, msgtype.REQUEST_SUBMIT_BATCH_JOB, submit)
		if err != nil {
			return 0, err
		}
		if r.Frame.Header.MsgType != msgtype.RESPONSE_SUBMIT_BATCH_JOB {
			return 0, capUnexpected(&r.Frame)
		}
		rd := pack.NewReader(r.Frame.Body)
		id, _, rc := rd.U32(), rd.U32(), rd.U32()
		if err := rd.Err(); err != nil {
			return 0, err
		}
		// A held job is accepted with ESLURM_JOB_HELD in error_code.
		if (rc != 0 && rc != capJobHeld) || id == 0 || id == pack.NoVal {
			return 0, fmt.Errorf("submit: job id %d error code %d", id, rc)
		}
		return id, nil
	}

	// Preload, untimed: the queries run on the same queue for both.
	t0 := time.Now()
	var (
		mu  sync.Mutex
		ids []uint32
	)
	st := capRun(16, 0, capPreload, pids, func(ctx context.Context, _ int) (bool, error) {
		id, err := submitOne(ctx)
		if err == nil {
			mu.Lock()
			ids = append(ids, id)
			mu.Unlock()
		}
		return false, err
	})
	if len(ids) == 0 {
		b.Fatalf("preload: no job submitted: %s", st.firstErr)
	}
	preload := time.Since(t0)

	single := make([][]byte, len(ids))
	for i, id := range ids {
		single[i] = capEncode(b, g, msgtype.REQUEST_JOB_INFO_SINGLE, msg.JobIDShowRequest{JobID: id, ShowFlags: msg.ShowLocal})
	}
	full := capEncode(b, g, msgtype.REQUEST_JOB_INFO, msg.JobInfoRequest{ShowFlags: msg.ShowLocal})
	nodes := capEncode(b, g, msgtype.REQUEST_NODE_INFO, msg.InfoRequest{ShowFlags: msg.ShowLocal})

	// squeue's repeat query: last_update from an earlier answer, so an
	// unchanged table is answered SLURM_NO_CHANGE_IN_DATA. Slurm compares
	// in whole seconds and answers in full while last_update - 1 is before
	// the table's last change, so ask again a second later, a few times,
	// until the answer is "no change" (if it never is, the phase measures
	// full answers and the table says so).
	last := capLastUpdate(b, cl, full)
	for range 5 {
		time.Sleep(1100 * time.Millisecond)
		req := capEncode(b, g, msgtype.REQUEST_JOB_INFO, msg.JobInfoRequest{LastUpdate: last, ShowFlags: msg.ShowLocal})
		if l := capLastUpdate(b, cl, req); l == 0 {
			break
		} else {
			last = l
		}
	}
	since := capEncode(b, g, msgtype.REQUEST_JOB_INFO, msg.JobInfoRequest{LastUpdate: last, ShowFlags: msg.ShowLocal})

	// records checks a RESPONSE_*_INFO frame and its record count.
	records := func(r *client.Reply, want msgtype.Type, atLeast uint32) error {
		if r.Frame.Header.MsgType != want {
			return capUnexpected(&r.Frame)
		}
		if n := pack.NewReader(r.Frame.Body).U32(); n < atLeast {
			return fmt.Errorf("%v: %d records, want at least %d", want, n, atLeast)
		}
		return nil
	}
	calls := map[string]func(ctx context.Context, i int) (bool, error){
		"REQUEST_JOB_INFO_SINGLE": func(ctx context.Context, i int) (bool, error) {
			r, err := cl.Call(ctx, msgtype.REQUEST_JOB_INFO_SINGLE, single[i%len(single)])
			if err != nil {
				return false, err
			}
			return false, records(r, msgtype.RESPONSE_JOB_INFO, 1)
		},
		"REQUEST_JOB_INFO last_update": func(ctx context.Context, _ int) (bool, error) {
			r, err := cl.Call(ctx, msgtype.REQUEST_JOB_INFO, since)
			if err != nil {
				return false, err
			}
			if r.Frame.Header.MsgType == msgtype.RESPONSE_SLURM_RC {
				err := client.ReturnCode(&r.Frame)
				if errors.Is(err, slurmerr.Error{Code: slurmerr.SLURM_NO_CHANGE_IN_DATA}) {
					return true, nil
				}
				return false, fmt.Errorf("REQUEST_JOB_INFO: %w", err)
			}
			return false, records(r, msgtype.RESPONSE_JOB_INFO, uint32(len(ids)))
		},
		"REQUEST_NODE_INFO": func(ctx context.Context, _ int) (bool, error) {
			r, err := cl.Call(ctx, msgtype.REQUEST_NODE_INFO, nodes)
			if err != nil {
				return false, err
			}
			return false, records(r, msgtype.RESPONSE_NODE_INFO, uint32(len(c.Nodes)))
		},
		"REQUEST_JOB_INFO full (1000 jobs)": func(ctx context.Context, _ int) (bool, error) {
			r, err := cl.Call(ctx, msgtype.REQUEST_JOB_INFO, full)
			if err != nil {
				return false, err
			}
			return false, records(r, msgtype.RESPONSE_JOB_INFO, uint32(len(ids)))
		},
		"REQUEST_SUBMIT_BATCH_JOB held": func(ctx context.Context, _ int) (bool, error) {
			_, err := submitOne(ctx)
			return false, err
		},
	}
	for _, name := range capPhases {
		s := capRun(capWorkers, phase, 0, pids, calls[name])
		s.preloadIn = preload
		res[name] = s
	}
	return res
}

// capLastUpdate sends req (a REQUEST_JOB_INFO) and returns the answer's
// last_update, or 0 for SLURM_NO_CHANGE_IN_DATA.
func capLastUpdate(b *testing.B, cl *client.Client, req []byte) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := cl.Call(ctx, msgtype.REQUEST_JOB_INFO, req)
	if err != nil {
		b.Fatalf("REQUEST_JOB_INFO: %v", err)
	}
	if r.Frame.Header.MsgType == msgtype.RESPONSE_SLURM_RC {
		err := client.ReturnCode(&r.Frame)
		if errors.Is(err, slurmerr.Error{Code: slurmerr.SLURM_NO_CHANGE_IN_DATA}) {
			return 0
		}
		b.Fatalf("REQUEST_JOB_INFO: %v", err)
	}
	rd := pack.NewReader(r.Frame.Body)
	_, last := rd.U32(), rd.Time()
	if err := rd.Err(); err != nil {
		b.Fatalf("RESPONSE_JOB_INFO: %v", err)
	}
	return last
}

// capRun runs call from k workers until d has passed (d > 0) or n calls
// were made (n > 0), and returns the figures. A call in flight when the
// time is up still counts; the rate is over the time until the last one
// returned.
func capRun(k int, d time.Duration, n int, pids capPids, call func(ctx context.Context, i int) (bool, error)) capStat {
	var (
		mu       sync.Mutex
		lat      []time.Duration
		s        capStat
		wg       sync.WaitGroup
		next     int
		cpu0     = pids.cpu()
		t0       = time.Now()
		deadline = t0.Add(d)
	)
	for range k {
		wg.Go(func() {
			var mine []time.Duration
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if (n > 0 && i >= n) || (d > 0 && time.Now().After(deadline)) {
					break
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				t := time.Now()
				noChange, err := call(ctx, i)
				el := time.Since(t)
				cancel()
				mu.Lock()
				switch {
				case err != nil:
					s.errs++
					if s.firstErr == "" {
						s.firstErr = err.Error()
					}
				case noChange:
					s.noChange++
				}
				mu.Unlock()
				if err == nil {
					mine = append(mine, el)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	cpu1 := pids.cpu()
	s.cpu, s.mungeCPU, s.genCPU = cpu1[0]-cpu0[0], cpu1[1]-cpu0[1], cpu1[2]-cpu0[2]
	s.n = len(lat)
	s.rate = float64(s.n) / wall.Seconds()
	q := stat(lat)
	s.p50, s.p99 = q.p50, q.p99
	return s
}

// capPids are the processes whose CPU time each phase reports.
type capPids struct{ ctld, munged int }

// cpu returns the CPU time used so far by the controller, munged and this
// process.
func (p capPids) cpu() [3]time.Duration {
	var self time.Duration
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return [3]time.Duration{procCPU(p.ctld), procCPU(p.munged), self}
}

// capMungedPid reads the private munged's pid file (mungetest writes it
// beside the socket); 0 when it cannot.
func capMungedPid(c *ctldharness.Cluster) int {
	b, err := os.ReadFile(filepath.Join(c.Munge.Dir, "munged.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func capUnexpected(f *codec.Frame) error {
	if f.Header.MsgType == msgtype.RESPONSE_SLURM_RC {
		return fmt.Errorf("answered %w", client.ReturnCode(f))
	}
	return fmt.Errorf("unexpected reply %v", f.Header.MsgType)
}

func capEncode(b *testing.B, g *codec.Registry, mt msgtype.Type, body any) []byte {
	b.Helper()
	bc, ok := g.Lookup(mt)
	if !ok {
		b.Fatalf("%v: no codec", mt)
	}
	var w pack.Writer
	if err := bc.Encode(&w, codec.Version2205, body); err != nil {
		b.Fatalf("%v: encode: %v", mt, err)
	}
	return w.Bytes()
}

// capJobDesc is what `sbatch -H -o /dev/null --wrap true` sends: a held
// job (priority 0) of one CPU.
func capJobDesc(c *ctldharness.Cluster) *msg.JobDesc {
	host, _ := os.Hostname()
	j := msg.NewJobDesc()
	j.Name = msg.Str("cap")
	j.Script = msg.Str("#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n")
	j.UserID, j.GroupID = uint32(os.Getuid()), uint32(os.Getgid())
	j.AllocNode = msg.Str(host)
	j.AllocSID = uint32(os.Getpid())
	j.WorkDir = msg.Str("/tmp")
	j.StdIn = msg.Str("/dev/null")
	j.StdOut = msg.Str("/dev/null")
	j.MinNodes = 1
	j.MinCPUs = 1
	j.Priority = 0
	j.TaskDist = 0x2000 // SLURM_DIST_UNKNOWN
	j.SubmitLine = msg.Str("sbatch -H -o /dev/null --wrap true")
	for _, e := range []string{
		"PATH=/usr/bin:/bin", "HOME=/tmp", "SLURM_CONF=" + c.Conf,
		"SLURM_SUBMIT_DIR=/tmp", "SLURM_JOB_NAME=cap", "SLURM_UMASK=0022",
	} {
		j.Environment = append(j.Environment, msg.Str(e))
	}
	return j
}

// capTable prints one round side by side.
func capTable(real, ours map[string]capStat) string {
	perK := func(n int, cpu time.Duration) float64 {
		if n == 0 {
			return 0
		}
		return cpu.Seconds() * 1000 / float64(n) * 1000
	}
	cpus := func(s capStat) string {
		return fmt.Sprintf("%.1f / %.1f / %.1f", s.cpu.Seconds(), s.mungeCPU.Seconds(), s.genCPU.Seconds())
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "request\tmetric\treal 22.05\tgoslurm\tgoslurm/real\t\n")
	for _, name := range capPhases {
		r, o := real[name], ours[name]
		fmt.Fprintf(w, "%s\trequests/s\t%.0f\t%.0f\t%s\t\n", name, r.rate, o.rate, ratio(o.rate, r.rate))
		fmt.Fprintf(w, "\tp50\t%s\t%s\t%s\t\n", ms(r.p50), ms(o.p50), ratio(float64(o.p50), float64(r.p50)))
		fmt.Fprintf(w, "\tp99\t%s\t%s\t%s\t\n", ms(r.p99), ms(o.p99), ratio(float64(o.p99), float64(r.p99)))
		fmt.Fprintf(w, "\tctld CPU ms per 1k requests\t%.0f\t%.0f\t%s\t\n", perK(r.n, r.cpu), perK(o.n, o.cpu), ratio(perK(o.n, o.cpu), perK(r.n, r.cpu)))
		fmt.Fprintf(w, "\tCPU s: ctld / munged / load generator\t%s\t%s\t\t\n", cpus(r), cpus(o))
		fmt.Fprintf(w, "\trequests (errors)\t%d (%d)\t%d (%d)\t\t\n", r.n, r.errs, o.n, o.errs)
		if name == "REQUEST_JOB_INFO last_update" {
			fmt.Fprintf(w, "\tanswered no change\t%d\t%d\t\t\n", r.noChange, o.noChange)
		}
	}
	fmt.Fprintf(w, "preload %d held jobs (16 in flight)\t\t%s\t%s\t\t\n", capPreload,
		ms(real[capPhases[0]].preloadIn), ms(ours[capPhases[0]].preloadIn))
	w.Flush()
	for _, x := range []struct {
		name string
		r    map[string]capStat
	}{{"real", real}, {"goslurm", ours}} {
		for _, name := range capPhases {
			if s := x.r[name]; s.firstErr != "" {
				fmt.Fprintf(&b, "%s %s: first error: %.300s\n", x.name, name, s.firstErr)
			}
		}
	}
	return b.String()
}
