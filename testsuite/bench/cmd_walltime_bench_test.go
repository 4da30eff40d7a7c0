package bench

// Command wall time: goslurm's squeue, sinfo, scontrol show job and
// sbatch --hold against Debian's real ones, both pointed at the same real
// slurmctld 22.05 (testsuite/realslurm, two real slurmd), at two queue
// sizes of pending held jobs. Each figure is a whole process, from exec to
// exit, so it includes process start, configuration parsing, munge and the
// RPC; the two implementations alternate run by run so that a change in
// the host's load falls on both. Prints a table (b.Log and stdout) and
// writes it to testsuite/bench/results/ (gitignored). Nothing asserts on
// speed.
//
//	go test -run '^$' -bench CommandWallTime -benchtime 1x ./testsuite/bench
//
// GOSLURM_CMD_DIR names a directory of goslurm commands already built (else
// they are built).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/testsuite/oracle"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

const (
	wallRuns        = 20 // runs per command per implementation per queue size
	wallFillWorkers = 16 // submissions in flight while filling the queue
)

// wallSizes are the queue sizes (pending held jobs) the commands run at.
var wallSizes = []int{1000, 10000}

// wallCmd is one timed invocation; scontrol's last argument is filled
// with a pending job id. check tells a run that did its work from one that
// only exited 0 (pending is the queue size at least).
type wallCmd struct {
	name, label string
	args        []string
	check       func(out string, pending int, show string) error
}

var wallCmds = []wallCmd{
	{"squeue", "squeue", nil, func(out string, pending int, _ string) error {
		if n := strings.Count(out, "\n") - 1; n < pending {
			return fmt.Errorf("%d jobs listed, want at least %d", n, pending)
		}
		return nil
	}},
	{"sinfo", "sinfo", nil, func(out string, _ int, _ string) error {
		if !strings.Contains(out, "debug*") {
			return fmt.Errorf("no debug partition listed")
		}
		return nil
	}},
	{"scontrol", "scontrol show job ID", []string{"show", "job", ""}, func(out string, _ int, show string) error {
		if !strings.HasPrefix(out, "JobId="+show+" ") {
			return fmt.Errorf("not job %s", show)
		}
		return nil
	}},
	{"sbatch", "sbatch --hold --wrap true", []string{"--hold", "-o", "/dev/null", "--wrap", "true"}, func(out string, _ int, _ string) error {
		if !strings.HasPrefix(out, "Submitted batch job ") {
			return fmt.Errorf("no job submitted")
		}
		return nil
	}},
}

// wallStat is one command's figures for one implementation at one size.
type wallStat struct {
	p50, p90 time.Duration
	n        int
	err      string // the first failure, if any
}

func BenchmarkCommandWallTime(b *testing.B) {
	c := realslurm.Start(b, realslurm.Options{
		Nodes: 2,
		ExtraConf: []string{
			// Room for the big queue plus the timed submissions.
			"MaxJobCount=" + strconv.Itoa(wallSizes[len(wallSizes)-1]+5000),
			"MessageTimeout=30",
			"MinJobAge=300",
		},
	})
	ours := wallBuild(b)
	real := map[string]string{}
	for _, cmd := range wallCmds {
		real[cmd.name] = oracle.Binary(b, cmd.name)
	}
	work := b.TempDir()
	env := c.Env()

	// run executes one command and returns its wall time and output.
	run := func(bin string, args []string) (time.Duration, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env, cmd.Dir = env, work
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(t0)
		if err != nil {
			return d, string(out), fmt.Errorf("%s %s: %w: %.300s", filepath.Base(bin), strings.Join(args, " "), err, out)
		}
		return d, string(out), nil
	}

	fill := &wallFiller{c: c}
	// res[size index][command][0 real, 1 goslurm]
	res := make([]map[string][2]wallStat, len(wallSizes))
	fills := make([]time.Duration, len(wallSizes))
	for si, size := range wallSizes {
		t0 := time.Now()
		if err := fill.to(size); err != nil {
			b.Fatalf("filling the queue to %d: %v", size, err)
		}
		fills[si] = time.Since(t0)
		b.Logf("cmdwalltime: %d pending jobs (filled in %v)", fill.count(), fills[si].Round(time.Millisecond))
		show := strconv.FormatUint(uint64(fill.middle()), 10)
		res[si] = map[string][2]wallStat{}
		for _, wc := range wallCmds {
			args := slices.Clone(wc.args)
			if wc.name == "scontrol" {
				args[len(args)-1] = show
			}
			var ds [2][]time.Duration
			var errs [2]string
			bins := [2]string{real[wc.name], filepath.Join(ours, wc.name)}
			for i := range 2 * wallRuns {
				// Alternate, starting with the other one every other run.
				k := i % 2
				if (i/2)%2 == 1 {
					k = 1 - k
				}
				if errs[k] != "" {
					continue
				}
				d, out, err := run(bins[k], args)
				if err == nil {
					if err = wc.check(out, size, show); err != nil {
						err = fmt.Errorf("%s %s: %w: %.300s", bins[k], strings.Join(args, " "), err, out)
					}
				}
				if err != nil {
					errs[k] = err.Error()
					continue
				}
				ds[k] = append(ds[k], d)
			}
			var pair [2]wallStat
			for k := range 2 {
				pair[k] = wallQuantiles(ds[k])
				pair[k].err = errs[k]
			}
			res[si][wc.name] = pair
		}
	}

	table := wallTable(res, fills)
	b.Log("\n" + table)
	fmt.Println(table)
	ctldSave(b, "cmd-walltime.txt", table+"\n")
}

// wallQuantiles returns the median and the 90th percentile (nearest rank).
func wallQuantiles(ds []time.Duration) wallStat {
	if len(ds) == 0 {
		return wallStat{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	pick := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return wallStat{p50: pick(0.5), p90: pick(0.9), n: len(s)}
}

func wallTable(res []map[string][2]wallStat, fills []time.Duration) string {
	var out strings.Builder
	load, _ := os.ReadFile("/proc/loadavg")
	host, _ := os.Hostname()
	fmt.Fprintf(&out, "command wall time (ms), real slurmctld 22.05, 2 real slurmd, %s on %s, load %s\n",
		time.Now().UTC().Format(time.RFC3339), host, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintf(&out, "%d runs per command and implementation, alternating; whole process from exec to exit, output to a pipe\n", wallRuns)
	out.WriteString("pending: held jobs submitted by the filler; the timed sbatch runs add up to 40 per size on top\n\n")
	w := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "pending\tcommand\treal p50\treal p90\tgoslurm p50\tgoslurm p90\tgoslurm/real p50\t\n")
	var notes []string
	for si, size := range wallSizes {
		for _, wc := range wallCmds {
			pair := res[si][wc.name]
			r, o := pair[0], pair[1]
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", size, wc.label,
				ms(r.p50), ms(r.p90), ms(o.p50), ms(o.p90), ratio(float64(o.p50), float64(r.p50)))
			for k, s := range pair {
				if s.err != "" {
					notes = append(notes, fmt.Sprintf("%d %s %s: %d runs, then %s", size,
						[2]string{"real", "goslurm"}[k], wc.name, s.n, s.err))
				}
			}
		}
	}
	w.Flush()
	for si, size := range wallSizes {
		fmt.Fprintf(&out, "queue filled to %d with protocol-client held submissions in %v\n", size, fills[si].Round(time.Millisecond))
	}
	for _, n := range notes {
		out.WriteString("error: " + n + "\n")
	}
	return strings.TrimRight(out.String(), "\n")
}

// wallBuild builds goslurm's commands into a temporary directory (or takes
// GOSLURM_CMD_DIR).
func wallBuild(b *testing.B) string {
	b.Helper()
	if d := os.Getenv("GOSLURM_CMD_DIR"); d != "" {
		return d
	}
	dir := b.TempDir()
	args := []string{"build", "-o", dir + "/"}
	for _, wc := range wallCmds {
		args = append(args, "github.com/goslurm/goslurm/commands/"+wc.name)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		b.Fatalf("go build commands: %v\n%s", err, out)
	}
	return dir
}

// wallFiller submits held jobs through goslurm's protocol client: a real
// sbatch per job would take minutes for 10k jobs, and the job each sends
// is the same as `sbatch --hold -o /dev/null --wrap true`'s.
type wallFiller struct {
	c   *realslurm.Cluster
	mu  sync.Mutex
	ids []uint32
}

func (f *wallFiller) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ids)
}

// middle returns a job id from the middle of those submitted.
func (f *wallFiller) middle() uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := slices.Clone(f.ids)
	slices.Sort(s)
	return s[len(s)/2]
}

// to submits held jobs until the filler has submitted n in all (the timed
// sbatch runs add a few more, which the table's sizes leave out).
func (f *wallFiller) to(n int) error {
	cl := &client.Client{
		Controllers:    []string{f.c.CtldAddr()},
		Auth:           &auth.Munge{Client: f.c.Munge.Client()},
		MessageTimeout: 30 * time.Second,
		Sweeps:         1,
	}
	body, err := wallEncode(wallJobDesc(f.c.Conf))
	if err != nil {
		return err
	}
	todo := n - f.count()
	next := make(chan struct{}, max(todo, 0))
	for range todo {
		next <- struct{}{}
	}
	close(next)
	var (
		wg       sync.WaitGroup
		firstErr error
		errOnce  sync.Once
	)
	for range wallFillWorkers {
		wg.Go(func() {
			for range next {
				id, err := wallSubmit(cl, body)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				f.mu.Lock()
				f.ids = append(f.ids, id)
				f.mu.Unlock()
			}
		})
	}
	wg.Wait()
	return firstErr
}

func wallSubmit(cl *client.Client, body []byte) (uint32, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := cl.Call(ctx, msgtype.REQUEST_SUBMIT_BATCH_JOB, body)
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

func wallEncode(j *msg.JobDesc) ([]byte, error) {
	bc, ok := msg.Registry().Lookup(msgtype.REQUEST_SUBMIT_BATCH_JOB)
	if !ok {
		return nil, fmt.Errorf("REQUEST_SUBMIT_BATCH_JOB: no codec")
	}
	var w pack.Writer
	if err := bc.Encode(&w, codec.Version2205, *j); err != nil {
		return nil, fmt.Errorf("REQUEST_SUBMIT_BATCH_JOB: encode: %w", err)
	}
	return w.Bytes(), nil
}

// wallJobDesc is what `sbatch --hold -o /dev/null --wrap true` sends: a
// held job (priority 0) of one CPU.
func wallJobDesc(conf string) *msg.JobDesc {
	host, _ := os.Hostname()
	j := msg.NewJobDesc()
	j.Name = msg.Str("wrap")
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
	j.SubmitLine = msg.Str("sbatch --hold -o /dev/null --wrap true")
	for _, e := range []string{
		"PATH=/usr/bin:/bin", "HOME=/tmp", "SLURM_CONF=" + conf,
		"SLURM_SUBMIT_DIR=/tmp", "SLURM_JOB_NAME=wrap", "SLURM_UMASK=0022",
	} {
		j.Environment = append(j.Environment, msg.Str(e))
	}
	return j
}
