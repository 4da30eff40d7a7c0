package interop

// scontrol's job resize scripts: after a successful NumNodes= or
// ReqNodeList= update, scontrol run with SLURM_JOBID in its environment
// writes slurm_job_<id>_resize.sh and .csh in its working directory and
// says how to use them. Each case runs inside a real two-node batch job
// on a cluster of Debian's slurmd nodes, so the environment is the one
// real sbatch gives; once with the real scontrol and once, in a fresh job
// on the same nodes, with ours. What they print, their exit code and the
// files they leave (name, mode, content) must be equal, job ids masked.
// The cases run under Debian's slurmctld, then under ours.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// resizeCase is a shell snippet run in the job's private directory with
// $SC the scontrol under test; $OTHER is the id of a second running job
// when other is set.
type resizeCase struct {
	name  string
	other bool
	sh    string
	// expand: the job (one node) was submitted to expand $OTHER and
	// the snippet runs outside it (updating it to zero nodes kills it),
	// with $JOB its id and SLURM_JOBID and the node variables set.
	expand bool
	// ctld is an open difference of our slurmctld that the case shows:
	// the comparison between the controllers is skipped, saying so,
	// while the difference is there.
	ctld string
}

func resizeCases() []resizeCase {
	return []resizeCase{
		{name: "NumNodes=1", sh: `$SC update JobId=$SLURM_JOBID NumNodes=1`},
		{name: "ReqNodeList=batch host", sh: `$SC update JobId=$SLURM_JOBID ReqNodeList=$SLURMD_NODENAME`},
		{name: "NumNodes=2 unchanged", sh: `$SC update JobId=$SLURM_JOBID NumNodes=2`},
		{name: "with another field", sh: `$SC update JobId=$SLURM_JOBID NumNodes=1 Comment=small`},
		{name: "quiet", sh: `$SC -Q update JobId=$SLURM_JOBID NumNodes=1`},
		// Only SLURM_JOBID counts: without it nothing is written, with it
		// and nothing else the scripts are empty.
		{name: "no SLURM_JOBID", sh: `env -u SLURM_JOBID $SC update JobId=$SLURM_JOB_ID NumNodes=1`},
		{name: "SLURM_JOBID alone", sh: `env -i SLURM_CONF=$SLURM_CONF SLURM_JOBID=$SLURM_JOB_ID $SC update JobId=$SLURM_JOB_ID NumNodes=1`},
		{name: "SLURM_JOBID empty", sh: `env -u SLURM_NODELIST -u SLURM_TASKS_PER_NODE SLURM_JOBID= $SC update JobId=$SLURM_JOB_ID NumNodes=1`},
		// SLURM_JOBID need not name the job updated.
		{name: "another job", other: true, sh: `$SC update JobId=$OTHER NumNodes=1`},
		{name: "another job ReqNodeList", other: true, sh: `$SC update JobId=$OTHER ReqNodeList=n3`},
		// Refused updates write nothing.
		{name: "grow refused", sh: `$SC update JobId=$SLURM_JOBID NumNodes=3`,
			ctld: "our slurmctld ignores permit_job_expansion: a running job's growth is refused as not supported (ESLURM_NOT_SUPPORTED) where real 22.05 goes on and refuses it as not pending (ESLURM_JOB_NOT_PENDING)"},
		{name: "ReqNodeList not held", sh: `$SC update JobId=$SLURM_JOBID ReqNodeList=n4`},
		{name: "no size change", sh: `$SC update JobId=$SLURM_JOBID Comment=x`},
		// Files already there are replaced, not written through.
		{name: "old files replaced", sh: `echo old >slurm_job_${SLURM_JOBID}_resize.sh; chmod 644 slurm_job_${SLURM_JOBID}_resize.sh
echo old >victim; ln -s victim slurm_job_${SLURM_JOBID}_resize.csh
$SC update JobId=$SLURM_JOBID NumNodes=1`},
		{name: "csh name is a directory", sh: `mkdir slurm_job_${SLURM_JOBID}_resize.csh
$SC update JobId=$SLURM_JOBID NumNodes=1`},
		{name: "sh name is a directory", sh: `mkdir slurm_job_${SLURM_JOBID}_resize.sh
$SC update JobId=$SLURM_JOBID NumNodes=1`},
		// A job giving its nodes to the job it expands is complete at
		// once: the allocation lookup says so (ESLURM_ALREADY_DONE) and
		// the scripts carry an empty allocation.
		{name: "merged into the job expanded", other: true, expand: true, sh: `$SC update JobId=$JOB NumNodes=0`},
	}
}

// TestScontrolResize compares the real scontrol and ours on every case,
// first on a cluster under the real slurmctld, then under ours (real
// slurmd on both); the real scontrol's records on the two controllers are
// compared too.
func TestScontrolResize(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real Slurm clusters")
	}
	for _, name := range []string{"scontrol", "scancel", "sbatch", "salloc", "squeue"} {
		if _, err := oracle.Find(name); err != nil {
			oracle.Unavailable(t, name+": "+err.Error())
		}
	}
	dir := t.TempDir()
	ours := filepath.Join(dir, "scontrol")
	if b, err := exec.Command("go", "build", "-o", ours, "github.com/goslurm/goslurm/commands/scontrol").CombinedOutput(); err != nil {
		t.Fatalf("build scontrol: %v\n%s", err, b)
	}
	real, err := oracle.Find("scontrol")
	if err != nil {
		t.Fatal(err)
	}
	// Four-digit ids keep id masking from touching other numbers.
	conf := []string{"FirstJobId=1000", "SchedulerParameters=batch_sched_delay=0,permit_job_expansion"}
	cases := resizeCases()
	records := map[string][]string{}
	play := func(t *testing.T, label string, rc *resizeCluster) {
		if err := os.MkdirAll(rc.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		recs := make([]string, len(cases))
		for k, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if tc.expand && label == "ours" {
					t.Skip("our slurmctld has no job expansion (--dependency=expand)")
				}
				r := rc.side(t, fmt.Sprintf("%s%02dr", label, k), real, tc)
				o := rc.side(t, fmt.Sprintf("%s%02do", label, k), ours, tc)
				if r != o {
					t.Errorf("real scontrol:\n%s\nour scontrol:\n%s", r, o)
				}
				recs[k] = r
			})
		}
		records[label] = recs
	}
	t.Run("real_slurmctld", func(t *testing.T) {
		c := realslurm.Start(t, realslurm.Options{Nodes: 4, CPUs: 2, ExtraConf: conf})
		play(t, "real", &resizeCluster{env: c.Env(), dir: filepath.Join(dir, "real")})
	})
	t.Run("our_slurmctld", func(t *testing.T) {
		c := ctldharness.New(t, ctldharness.Options{Nodes: 4, CPUs: 2, ExtraConf: conf})
		c.Start(ctldBuildOurs(t), "-c")
		t.Cleanup(c.Stop)
		play(t, "ours", &resizeCluster{env: c.Env(), dir: filepath.Join(dir, "ours")})
	})
	t.Run("controllers", func(t *testing.T) {
		real, ours := records["real"], records["ours"]
		if len(real) != len(cases) || len(ours) != len(cases) {
			t.Skip("a cluster did not run the cases (see above)")
		}
		for k, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if real[k] == "" || ours[k] == "" {
					t.Skip("not run on both controllers")
				}
				switch {
				case real[k] != ours[k] && tc.ctld != "":
					t.Skipf("open difference of our slurmctld: %s", tc.ctld)
				case real[k] != ours[k]:
					t.Errorf("real scontrol under the real slurmctld:\n%s\nunder ours:\n%s", real[k], ours[k])
				case tc.ctld != "":
					t.Errorf("our slurmctld now agrees with the real one here: drop ctld from this case")
				}
			})
		}
	})
}

// resizeCluster runs the real commands with a cluster's environment; each
// side of a case works in a directory of its own under dir.
type resizeCluster struct {
	env []string
	dir string
}

// side runs one case with the scontrol at bin in a fresh job on n[1-2]
// (and $OTHER on n[3-4]) and returns what it did, masked.
func (rc *resizeCluster) side(t *testing.T, label, bin string, tc resizeCase) string {
	t.Helper()
	work := filepath.Join(rc.dir, label)
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	var ids []string
	defer func() {
		if len(ids) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := rc.command(ctx, t, "scancel", ids...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("scancel %v: %v\n%s", ids, err, out)
		}
	}()
	other := ""
	if tc.other {
		other = rc.submit(t, "-N2", "-w", "n[3-4]", "--wrap", "exec sleep 600")
		ids = append(ids, other)
		rc.waitRunning(t, other, "")
	}
	var id string
	if tc.expand {
		// An allocation without a shell has no step (a batch job's
		// step would make the merge fail).
		out := rc.run(t, "salloc", "--no-shell", "-t", "30", "-N1", "-w", "n1", "--dependency=expand:"+other)
		m := regexp.MustCompile(`Granted job allocation ([0-9]+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("salloc: %q", out)
		}
		id = m[1]
		ids = append(ids, id)
		rc.waitRunning(t, id, "")
		rc.outside(t, work, bin, id, other, tc.sh)
	} else {
		script := filepath.Join(rc.dir, label+".sh")
		body := fmt.Sprintf("#!/bin/sh\ncd %s || exit 1\nSC=%s\nOTHER=%s\n(\n%s\n) >.stdout 2>.stderr\necho $? >.rc\ntouch .done\nexec sleep 600\n",
			work, bin, other, tc.sh)
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		id = rc.submit(t, "-N2", "-w", "n[1-2]", script)
		ids = append(ids, id)
		rc.waitRunning(t, id, filepath.Join(work, ".done"))
	}
	mask := strings.NewReplacer(id, "<J0>", other+"", "<J1>")
	if other == "" {
		mask = strings.NewReplacer(id, "<J0>")
	}
	var b strings.Builder
	for _, f := range []string{".stdout", ".stderr", ".rc"} {
		data, err := os.ReadFile(filepath.Join(work, f))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: %q\n", f, mask.Replace(string(data)))
	}
	ents, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") {
			continue
		}
		p := filepath.Join(work, n)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%s %v", mask.Replace(n), fi.Mode())
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			dst, _ := os.Readlink(p)
			line += " -> " + dst
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			line += fmt.Sprintf(" %q", mask.Replace(string(data)))
		}
		files = append(files, line)
	}
	sort.Strings(files)
	fmt.Fprintf(&b, "files:\n%s", strings.Join(files, "\n"))
	return b.String()
}

// outside runs snippet from the test in work with the environment of a
// one-node job id (and $JOB, $OTHER, $SC), leaving .stdout, .stderr and
// .rc as a job's snippet does.
func (rc *resizeCluster) outside(t *testing.T, work, bin, id, other, snippet string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "("+snippet+") >.stdout 2>.stderr; echo $? >.rc")
	cmd.Dir = work
	cmd.Env = append(rc.env, "SC="+bin, "JOB="+id, "OTHER="+other,
		"SLURM_JOBID="+id, "SLURM_JOB_ID="+id, "SLURM_NODELIST=n1", "SLURM_JOB_NODELIST=n1",
		"SLURM_NNODES=1", "SLURM_JOB_NUM_NODES=1", "SLURM_JOB_CPUS_PER_NODE=1", "SLURM_TASKS_PER_NODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", snippet, err, out)
	}
}

// command is the real command name run with the cluster's environment.
func (rc *resizeCluster) command(ctx context.Context, t *testing.T, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, oracle.Binary(t, name), args...)
	cmd.Env = rc.env
	cmd.Dir = rc.dir
	return cmd
}

func (rc *resizeCluster) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := rc.command(ctx, t, name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func (rc *resizeCluster) submit(t *testing.T, args ...string) string {
	t.Helper()
	out := rc.run(t, "sbatch", append([]string{"--parsable", "-o", "/dev/null", "-t", "30"}, args...)...)
	id := strings.TrimSpace(strings.Split(out, ";")[0])
	if _, err := strconv.Atoi(id); err != nil {
		t.Fatalf("sbatch: %q", out)
	}
	return id
}

// waitRunning polls (up to 60 s) until job id runs and, when done is
// set, that file exists.
func (rc *resizeCluster) waitRunning(t *testing.T, id, done string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := strings.TrimSpace(rc.run(t, "squeue", "-h", "-t", "all", "-j", id, "-o", "%T"))
		_, err := os.Stat(done)
		if st == "RUNNING" && (done == "" || err == nil) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %q, done file: %v", id, st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
