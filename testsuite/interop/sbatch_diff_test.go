package interop

// The sbatch part of the user-commands issue's differential test, against a
// real Slurm 22.05 cluster (testsuite/realslurm):
//
//  1. wire: real sbatch and ours submit the same command lines and scripts
//     through a recording proxy; the decoded REQUEST_SUBMIT_BATCH_JOB (or
//     REQUEST_JOB_WILL_RUN) bodies must be equal field by field, except the
//     fields listed in sbMaskDesc;
//  2. rejections: the same stderr and exit status;
//  3. a job our sbatch submits runs and writes its output file.
//
// The default partition is set DOWN while the corpus runs, so the
// submitted jobs stay pending and cost nothing.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/testsuite/oracle"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

type sbResult struct {
	stdout, stderr string
	code           int
	descs          []*msg.JobDesc
	types          []msgtype.Type
	bodies         [][]byte
}

// lastBody returns the body of the last request of type mt, with the job
// id (its first u32) zeroed, since the two runs' jobs differ.
func (r sbResult) lastBody(mt msgtype.Type) []byte {
	for i := len(r.types) - 1; i >= 0; i-- {
		if r.types[i] == mt {
			b := append([]byte(nil), r.bodies[i]...)
			if len(b) >= 4 {
				copy(b, []byte{0, 0, 0, 0})
			}
			return b
		}
	}
	return nil
}

type sbEnv struct {
	t       *testing.T
	real    string // real sbatch
	ours    string
	conf    string // slurm.conf pointing at the proxy
	proxy   *sbProxy
	baseEnv []string
}

func sbBuild(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sbatch")
	cmd := exec.Command("go", "build", "-o", out, "github.com/goslurm/goslurm/commands/sbatch")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build sbatch: %v\n%s", err, b)
	}
	return out
}

// sbProxyConf writes a copy of the cluster's slurm.conf whose SlurmctldPort
// is the proxy's.
func sbProxyConf(t *testing.T, c *realslurm.Cluster, port int) string {
	t.Helper()
	data, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "SlurmctldPort=") {
			l = fmt.Sprintf("SlurmctldPort=%d", port)
		}
		out = append(out, l)
	}
	p := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(p, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// run executes bin as "sbatch" in a fresh directory holding the case's
// files and returns what it printed and the requests it sent.
func (e *sbEnv) run(bin string, c sbCase, dir string) sbResult {
	e.t.Helper()
	files := map[string]string{"job.sh": sbScript, "envfile": "FROMFILE=1\nOTHER=2\n",
		"hosts.txt": "n1\nn2\n", "input": "in\n"}
	for k, v := range c.files {
		files[k] = v
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		e.t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		e.t.Fatal(err)
	}
	var args []string
	for _, a := range c.argList() {
		args = append(args, strings.ReplaceAll(a, "@ABS@", dir))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Args[0] = "sbatch"
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), e.baseEnv...), "PWD="+dir)
	for _, kv := range c.env {
		cmd.Env = append(cmd.Env, strings.ReplaceAll(kv, "@ABS@", dir))
	}
	cmd.Stdin = strings.NewReader(c.stdin)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := sbResult{stdout: so.String(), stderr: se.String()}
	var xe *exec.ExitError
	switch {
	case errors.As(err, &xe):
		r.code = xe.ExitCode()
	case err != nil:
		e.t.Fatalf("%s: %v", bin, err)
	}
	for _, raw := range e.proxy.take() {
		f, err := codec.DecodeFrame(raw)
		if err != nil {
			e.t.Fatalf("decode frame: %v", err)
		}
		r.types = append(r.types, f.Header.MsgType)
		r.bodies = append(r.bodies, f.Body)
		switch f.Header.MsgType {
		case msgtype.REQUEST_SUBMIT_BATCH_JOB, msgtype.REQUEST_JOB_WILL_RUN, msgtype.REQUEST_SUBMIT_BATCH_HET_JOB:
		default:
			continue
		}
		bc, _ := msg.Registry().Lookup(f.Header.MsgType)
		rd := pack.NewReader(f.Body)
		v, err := bc.Decode(rd, f.Header.Version)
		if err == nil {
			err = rd.Done()
		}
		if err != nil {
			e.t.Fatalf("decode %v: %v", f.Header.MsgType, err)
		}
		switch d := v.(type) {
		case msg.JobDesc:
			r.descs = append(r.descs, &d)
		case msg.JobDescList:
			for i := range d.Jobs {
				r.descs = append(r.descs, &d.Jobs[i])
			}
		}
	}
	return r
}

var sbJobIDs = regexp.MustCompile(`\b\d{1,9}\b`)

// sbMaskDesc blanks the fields that must differ between two submissions
// of the same command line: the begin/deadline of relative times (taken
// from the clock a few milliseconds apart, kept if within 3 s) and the
// directory-dependent paths, which each run gets its own of.
func sbMaskDesc(real, ours *msg.JobDesc, realDir, ourDir string) {
	near := func(a, b *int64) {
		if d := *a - *b; d >= -3 && d <= 3 {
			*b = *a
		}
	}
	near(&real.BeginTime, &ours.BeginTime)
	near(&real.Deadline, &ours.Deadline)
	fix := func(s *msg.NullString) {
		if s.Valid {
			s.Value = strings.ReplaceAll(s.Value, ourDir, realDir)
		}
	}
	for _, s := range []*msg.NullString{&ours.WorkDir, &ours.StdOut, &ours.StdErr, &ours.StdIn, &ours.SubmitLine} {
		fix(s)
	}
	for i := range ours.Argv {
		fix(&ours.Argv[i])
	}
	for i := range ours.Environment {
		fix(&ours.Environment[i])
	}
}

func TestSbatchAgainstRealSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	realBin := oracle.Binary(t, "sbatch")
	ours := sbBuild(t)
	c := realslurm.Start(t, realslurm.Options{Nodes: 2, CPUs: 2, RealMemory: 1000})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	scontrol := func(args ...string) {
		t.Helper()
		if out, err := c.Command(ctx, "scontrol", args...).CombinedOutput(); err != nil {
			t.Fatalf("scontrol %v: %v\n%s", args, err, out)
		}
	}
	proxy := sbStartProxy(t, c.CtldAddr())
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	e := &sbEnv{t: t, real: realBin, ours: ours, conf: sbProxyConf(t, c, proxy.port()), proxy: proxy}
	e.baseEnv = []string{"PATH=/usr/bin:/bin", "LANG=C", "USER=" + u.Username, "HOME=" + u.HomeDir,
		"SLURM_CONF=" + e.conf, "FOO=foo", "BAR=bar"}
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}

	// Jobs submitted while the partition is down are cancelled before it
	// comes back up.
	park := func() func() {
		scontrol("update", "PartitionName=debug", "State=DOWN")
		return func() {
			if out, err := c.Command(ctx, "scancel", "-u", u.Username).CombinedOutput(); err != nil {
				t.Errorf("scancel: %v\n%s", err, out)
			}
			scontrol("update", "PartitionName=debug", "State=UP")
		}
	}

	t.Run("wire", func(t *testing.T) {
		defer park()()
		e.t = t
		corpus := sbCorpus()
		same, descs := 0, 0
		for i, cs := range corpus {
			rd := filepath.Join(root, fmt.Sprintf("w%03d", i), "d")
			od := filepath.Join(root, fmt.Sprintf("w%03d", i), "o")
			// Same path length for both so nothing but the directory
			// name differs.
			for _, d := range []string{rd, od} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			rr := e.run(realBin, cs, rd)
			or := e.run(ours, cs, od)
			if len(rr.descs) == 0 && rr.code == 0 {
				t.Errorf("%s: real sbatch sent no job descriptor", cs.name)
			}
			descs += len(rr.descs)
			if pin := sbPins[cs.name]; pin != nil && len(rr.descs) > 0 {
				if err := pin(rr.descs[0]); err != "" {
					t.Errorf("%s: real sbatch's request: %s", cs.name, err)
				}
			}
			if sbCompare(t, cs, rr, or, rd, od) {
				same++
			}
		}
		t.Logf("wire corpus: %d cases (%d job descriptors compared), %d identical after masking", len(corpus), descs, same)
	})

	t.Run("rejected", func(t *testing.T) {
		defer park()()
		e.t = t
		same := 0
		for i, cs := range sbRejected {
			rd := filepath.Join(root, fmt.Sprintf("r%03d", i), "d")
			od := filepath.Join(root, fmt.Sprintf("r%03d", i), "o")
			for _, d := range []string{rd, od} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			rr := e.run(realBin, cs, rd)
			or := e.run(ours, cs, od)
			if sbCompare(t, cs, rr, or, rd, od) {
				same++
			}
		}
		t.Logf("rejection corpus: %d cases, %d identical", len(sbRejected), same)
	})

	t.Run("runs", func(t *testing.T) {
		e.t = t
		dir := filepath.Join(root, "run")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		r := e.run(ours, sbCase{argv: []string{"--wait", "-o", "out-%j.txt", "--wrap", "echo hello from $SLURM_JOB_ID"}}, dir)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "Submitted batch job ") {
			t.Fatalf("sbatch --wait: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		id := strings.TrimSpace(strings.TrimPrefix(r.stdout, "Submitted batch job "))
		out, err := os.ReadFile(filepath.Join(dir, "out-"+id+".txt"))
		if err != nil || string(out) != "hello from "+id+"\n" {
			t.Fatalf("output file: %q, %v", out, err)
		}
		r = e.run(ours, sbCase{argv: []string{"--wait", "--parsable", "-o", "/dev/null", "--wrap", "exit 3"}}, dir)
		if r.code != 3 {
			t.Fatalf("sbatch --wait of a job exiting 3: exit %d, stderr %q", r.code, r.stderr)
		}
		t.Logf("job %s ran and wrote its output; --wait returned the job's exit status", id)

		// --wait polls as real sbatch does: the same request types in
		// the same first-seen order (the number of polls depends on
		// timing) and the same poll body.
		waitCase := sbCase{argv: []string{"--wait", "-o", "/dev/null", "--wrap", "exit 2"}}
		var seqs [2][]msgtype.Type
		var polls [2][]byte
		for i, bin := range []string{realBin, ours} {
			sub := filepath.Join(dir, fmt.Sprintf("wait%d", i))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			e.proxy.take()
			r := e.run(bin, waitCase, sub)
			if r.code != 2 {
				t.Errorf("%s --wait: exit %d, want 2 (stderr %q)", bin, r.code, r.stderr)
			}
			for _, ty := range r.types {
				if !slices.Contains(seqs[i], ty) {
					seqs[i] = append(seqs[i], ty)
				}
			}
			polls[i] = r.lastBody(msgtype.REQUEST_JOB_INFO_SINGLE)
		}
		if !cmp.Equal(seqs[0], seqs[1]) {
			t.Errorf("--wait requests: ours %v, real %v", seqs[1], seqs[0])
		}
		if !bytes.Equal(polls[0], polls[1]) || polls[0] == nil {
			t.Errorf("--wait poll body: ours %x, real %x (job ids may differ: %v)", polls[1], polls[0], seqs)
		}
	})
}

// sbPins state a few facts about real sbatch's requests outright, so an
// empty comparison cannot pass unnoticed.
var sbPins = map[string]func(*msg.JobDesc) string{
	"opt -t 10": func(d *msg.JobDesc) string {
		if d.TimeLimit != 10 {
			return fmt.Sprintf("time_limit %d, want 10", d.TimeLimit)
		}
		return ""
	},
	"opt -N 1-2": func(d *msg.JobDesc) string {
		if d.MinNodes != 1 || d.MaxNodes != 2 {
			return fmt.Sprintf("nodes %d-%d, want 1-2", d.MinNodes, d.MaxNodes)
		}
		return ""
	},
	"opt --hold": func(d *msg.JobDesc) string {
		if d.Priority != 0 {
			return fmt.Sprintf("priority %d, want 0", d.Priority)
		}
		return ""
	},
	"opt --mem-per-cpu=1g": func(d *msg.JobDesc) string {
		if d.PnMinMemory != 1024|1<<63 {
			return fmt.Sprintf("pn_min_memory %#x, want MEM_PER_CPU|1024", d.PnMinMemory)
		}
		return ""
	},
	"opt --export=NONE": func(d *msg.JobDesc) string {
		for _, e := range d.Environment {
			if strings.HasPrefix(e.Value, "FOO=") {
				return "FOO exported with --export=NONE"
			}
		}
		return ""
	},
}

// sbCompare reports differences between the real and our run of one case.
func sbCompare(t *testing.T, cs sbCase, rr, or sbResult, rd, od string) bool {
	t.Helper()
	ok := true
	mask := func(s, dir string) string {
		return sbJobIDs.ReplaceAllString(strings.ReplaceAll(s, dir, "@DIR@"), "N")
	}
	if rr.code != or.code {
		t.Errorf("%s (%q): exit %d, real %d\nours stderr: %s\nreal stderr: %s", cs.name, cs.argList(), or.code, rr.code, or.stderr, rr.stderr)
		ok = false
	}
	if !cs.verbose && mask(rr.stderr, rd) != mask(or.stderr, od) {
		t.Errorf("%s (%q): stderr differs\nours: %q\nreal: %q", cs.name, cs.argList(), or.stderr, rr.stderr)
		ok = false
	}
	if mask(rr.stdout, rd) != mask(or.stdout, od) {
		t.Errorf("%s (%q): stdout differs\nours: %q\nreal: %q", cs.name, cs.argList(), or.stdout, rr.stdout)
		ok = false
	}
	if !cmp.Equal(rr.types, or.types) {
		t.Errorf("%s (%q): requests %v, real %v", cs.name, cs.argList(), or.types, rr.types)
		return false
	}
	if len(rr.descs) != len(or.descs) {
		t.Errorf("%s (%q): %d job descriptors, real %d", cs.name, cs.argList(), len(or.descs), len(rr.descs))
		return false
	}
	for i := range rr.descs {
		sbMaskDesc(rr.descs[i], or.descs[i], rd, od)
		if d := cmp.Diff(rr.descs[i], or.descs[i]); d != "" {
			t.Errorf("%s (%q): job descriptor differs (-real +ours):\n%s", cs.name, cs.argList(), d)
			ok = false
		}
	}
	return ok
}
