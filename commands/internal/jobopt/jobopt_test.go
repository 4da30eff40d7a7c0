package jobopt

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/goslurm/goslurm/protocol/pack"
)

func TestParseMBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"100", 100, true}, {"1G", 1024, true}, {"1g", 1024, true}, {"1GB", 1024, true},
		{"512K", 1, true}, {"2048k", 2, true}, {"1025K", 2, true}, {"3M", 3, true}, {"1T", 1048576, true},
		{"0", 0, true}, {"", 0, false}, {"abc", 0, false}, {"10X", 0, false}, {"-1", 0, false},
		{"1GBB", 0, false}, {"1.5G", 0, false},
	} {
		got, ok := ParseMBytes(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseMBytes(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)
	at := func(y int, m time.Month, d, h, mi, s int) int64 {
		return time.Date(y, m, d, h, mi, s, 0, time.UTC).Unix()
	}
	for _, tc := range []struct {
		in   string
		want int64
		pos  int
		ok   bool
	}{
		{"now", now.Unix(), 0, true},
		{"now+60", now.Unix() + 60, 0, true},
		{"now+1hour", now.Unix() + 3600, 0, true},
		{"now+2days", now.Unix() + 2*86400, 0, true},
		{"now-1hour", now.Unix() - 3600, 0, true},
		{"16:00", at(2026, 11, 21, 16, 0, 0), 0, true},
		{"09:00", at(2026, 11, 22, 9, 0, 0), 0, true},
		{"11:30pm", at(2026, 11, 21, 23, 30, 0), 0, true},
		{"noon", at(2026, 11, 21, 12, 0, 0), 0, true},
		{"midnight", at(2026, 11, 22, 0, 0, 0), 0, true},
		{"teatime", at(2026, 11, 21, 16, 0, 0), 0, true},
		{"tomorrow", at(2026, 11, 22, 0, 0, 0), 0, true},
		{"2030-01-01T10:00:00", at(2030, 1, 1, 10, 0, 0), 0, true},
		{"2030-06-15", at(2030, 6, 15, 0, 0, 0), 0, true},
		{"12/24", at(2026, 12, 24, 0, 0, 0), 0, true},
		{"10/12", at(2027, 10, 12, 0, 0, 0), 0, true},
		{"1012", at(2027, 10, 12, 0, 0, 0), 0, true},
		{"12.24.30", at(2030, 12, 24, 0, 0, 0), 0, true},
		{"uts2000000000", 2000000000, 0, true},
		{"", 0, 0, true},
		{"garbage", 0, 0, false},
		{"25:00", 0, 0, false},
		{"now+", 0, 3, false},
	} {
		got, pos, ok := ParseTime(tc.in, now)
		if ok != tc.ok || ok && got != tc.want || !ok && pos != tc.pos {
			t.Errorf("ParseTime(%q) = %d (%v), pos %d, %v; want %d (%v), pos %d, %v", tc.in, got,
				time.Unix(got, 0).UTC(), pos, ok, tc.want, time.Unix(tc.want, 0).UTC(), tc.pos, tc.ok)
		}
	}
}

func TestDirectives(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		words      []string
		legacy     bool
		err        string
	}{
		{"basic", "#!/bin/sh\n#SBATCH -N 2\n#SBATCH -t 30\ntrue\n", []string{"-N", "2", "-t", "30"}, false, ""},
		{"quotes", "#!/bin/sh\n#SBATCH -J \"a b\" -o 'x %j'\n", []string{"-J", "a b", "-o", "x %j"}, false, ""},
		// As get_argument: a backslash escapes the next character, but an
		// escaped blank still ends the word (checked against real sbatch).
		{"escape", "#!/bin/sh\n#SBATCH -J a\\ b --comment=x\\\"y\n", []string{"-J", "a", "b", "--comment=x\"y"}, false, ""},
		{"comment", "#!/bin/sh\n#SBATCH -t 10 # ten minutes\n", []string{"-t", "10"}, false, ""},
		{"stop at command", "#!/bin/sh\n\n# c\n#SBATCH -n1\necho\n#SBATCH -n2\n", []string{"-n1"}, false, ""},
		{"indented is a comment", "#!/bin/sh\n  #SBATCH -n1\n#SBATCH -n3\n", []string{"-n3"}, false, ""},
		{"legacy", "#!/bin/sh\n#SLURM -J x\n", []string{"-J", "x"}, true, ""},
		{"hetjob stops", "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH -n2\n", []string{"-n1"}, false, ""},
		{"unmatched", "#!/bin/sh\n#SBATCH -J \"open\n", nil, false, "job.sh: line 2: Unmatched `\"` in [ \"open]"},
		{"colon", "#!/bin/sh\n#SBATCH : -n1\n", nil, false, "job.sh: line 2: Unexpected `:` in [: -n1]"},
	} {
		words, legacy, _, err := Directives("job.sh", []byte(tc.body), "#SBATCH")
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || legacy != tc.legacy || !cmp.Equal(words, tc.words) {
			t.Errorf("%s: %q legacy %v err %v; want %q legacy %v", tc.name, words, legacy, err, tc.words, tc.legacy)
		}
	}
}

func TestDirectivesHetComponents(t *testing.T) {
	body := []byte("#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob -n9\n#SBATCH -n2\n#SBATCH packjob\n#SBATCH -n3\ntrue\n")
	for comp, want := range [][]string{{"-n1"}, {"-n2"}, {"-n3"}} {
		words, _, more, err := DirectivesFor("f", body, "#SBATCH", comp)
		if err != nil || !cmp.Equal(words, want) || more != (comp < 2) {
			t.Errorf("component %d: %q more %v err %v; want %q more %v", comp, words, more, err, want, comp < 2)
		}
	}
}

func TestValueParsers(t *testing.T) {
	noenv := func(string) (string, bool) { return "", false }
	for _, tc := range []struct {
		in    string
		dist  uint32
		plane uint32
		ok    bool
	}{
		{"cyclic", 0x1, 0, true}, {"block:block", 0x22, 0, true}, {"block:*:*", 0x112, 0, true},
		{"cyclic,pack", 0x1 | distPack, 0, true}, {"plane=4", distPlane, 4, true}, {"plane", 0, 0, false},
		{"diagonal", 0, 0, false}, {"arbitrary", distArbitrary, 0, true},
	} {
		d, p, ok := ParseDistribution(tc.in, noenv)
		if d != tc.dist || p != tc.plane || ok != tc.ok {
			t.Errorf("ParseDistribution(%q) = %#x, %d, %v; want %#x, %d, %v", tc.in, d, p, ok, tc.dist, tc.plane, tc.ok)
		}
	}
	for _, tc := range []struct {
		in               string
		sbatch           bool
		sig, secs, flags uint16
		ok               bool
	}{
		{"USR1", true, 10, 60, 0, true}, {"B:USR1@30", true, 10, 30, KillJobBatch, true},
		{"R:10@120", true, 10, 120, KillJobResv, true}, {"RB:USR2@5", true, 12, 5, KillJobBatch | KillJobResv, true},
		{"SIGTERM", true, 15, 60, 0, true}, {"NOPE", true, 0, 0, 0, false}, {"15@x", true, 0, 0, 0, false},
	} {
		sig, secs, flags, ok := ParseSignal(tc.in, tc.sbatch)
		if sig != tc.sig || secs != tc.secs || flags != tc.flags || ok != tc.ok {
			t.Errorf("ParseSignal(%q) = %d %d %#x %v", tc.in, sig, secs, flags, ok)
		}
	}
	if got := ParseMailType("BEGIN,END"); got != 3 {
		t.Errorf("mail type BEGIN,END = %d", got)
	}
	if got := ParseMailType("SOMETIMES"); got != Infinite16 {
		t.Errorf("bad mail type = %d", got)
	}
	if got := PrependTresType("gpu:2,gres:mps:1"); got != "gres:gpu:2,gres:mps:1" {
		t.Errorf("PrependTresType = %q", got)
	}
}

// newTestOpts returns sbatch options with a fixed environment.
func newTestOpts(env map[string]string) (*Opts, *strings.Builder) {
	var errb strings.Builder
	o := NewOpts(Sbatch, &Log{Prog: "sbatch", W: &errb})
	o.Getenv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	o.Cwd = "/work"
	o.Reset(true)
	return o, &errb
}

func TestPrecedence(t *testing.T) {
	script := []string{"-t", "10", "-J", "script", "-p", "a"}
	for _, tc := range []struct {
		name      string
		env       map[string]string
		cli       []string
		time      uint32
		jobName   string
		partition string
	}{
		{"script only", nil, nil, 10, "script", "a"},
		{"env over script", map[string]string{"SBATCH_TIMELIMIT": "20", "SBATCH_PARTITION": "b"}, nil, 20, "script", "b"},
		{"cli over env", map[string]string{"SBATCH_TIMELIMIT": "20"}, []string{"-t", "30", "--job-name=cli"}, 30, "cli", "a"},
	} {
		o, errb := newTestOpts(tc.env)
		if err := o.ApplyDirectives(script, errb); err != nil {
			t.Fatal(err)
		}
		if err := o.ApplyEnv(SbatchEnv); err != nil {
			t.Fatal(err)
		}
		if _, err := o.ParseArgs(append([]string{"sbatch"}, tc.cli...), FromCLI, true, errb); err != nil {
			t.Fatal(err)
		}
		if o.TimeLimit != tc.time || *o.JobName != tc.jobName || o.Partition != tc.partition {
			t.Errorf("%s: time %d name %q partition %q", tc.name, o.TimeLimit, *o.JobName, o.Partition)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--mem=abc"}, 255, "sbatch: error: Invalid --mem specification\n"},
		{[]string{"-n", "abc"}, 1, "sbatch: error: Invalid numeric value \"abc\" for --ntasks.\n"},
		{[]string{"--begin=garbage"}, 255, "Invalid time specification (pos=0): garbage\nsbatch: error: Invalid --begin specification\n"},
		{[]string{"--bogus"}, 255, "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n"},
		{[]string{"-N", "3-2"}, 255, "sbatch: error: Maximum node count 2 is less than minimum node count 3\n"},
	} {
		o, errb := newTestOpts(nil)
		_, err := o.ParseArgs(append([]string{"sbatch"}, tc.args...), FromCLI, false, errb)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != tc.code || errb.String() != tc.stderr {
			t.Errorf("%q: err %v, stderr %q; want exit %d, %q", tc.args, err, errb.String(), tc.code, tc.stderr)
		}
	}
}

func TestJobDescDefaults(t *testing.T) {
	o, _ := newTestOpts(nil)
	in := &BatchInput{Env: NewEnv([]string{"PATH=/bin", "SLURM_X=1"}), ScriptArgv: []string{"/work/job.sh", "a"},
		Script: "#!/bin/sh\n", SubmitLine: "sbatch job.sh a", Hostname: "h", Umask: 0o22,
		Rlimits: []Rlimit{{"CPU", 1}}}
	if _, err := o.ParseArgs([]string{"sbatch", "-N2", "--export=NONE", "--hold"}, FromCLI, true, &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	be, err := o.Verify(in)
	if err != nil {
		t.Fatal(err)
	}
	j, err := o.BatchJobDesc(in, be)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, e := range j.Environment {
		env = append(env, e.Value)
	}
	// --export=NONE keeps SLURM_* only and, like Slurm, asks for the
	// user's login environment.
	wantEnv := []string{"SLURM_X=1", "SLURM_JOB_NAME=job.sh", "SLURM_EXPORT_ENV=NONE", "SLURM_RLIMIT_CPU=1",
		"SLURM_PRIO_PROCESS=0", "SLURM_SUBMIT_DIR=/work", "SLURM_SUBMIT_HOST=h", "SLURM_UMASK=0022",
		"SLURM_GET_USER_ENV=1"}
	if d := cmp.Diff(wantEnv, env); d != "" {
		t.Errorf("environment (-want +got):\n%s", d)
	}
	if j.MinNodes != 2 || j.MaxNodes != 2 || j.MinCPUs != 2 || j.NumTasks != pack.NoVal ||
		j.Priority != 0 || j.Name.Value != "job.sh" || j.WorkDir.Value != "/work" ||
		j.StdIn.Value != "/dev/null" || len(j.Argv) != 2 {
		t.Errorf("descriptor: %+v", j)
	}
}

func TestEnvTablesMapToOptions(t *testing.T) {
	for _, tc := range []struct {
		cmd   Command
		table []EnvVar
	}{{Sbatch, SbatchEnv}, {Salloc, SallocEnv}, {Srun, SrunEnv}} {
		o, _ := newTestOpts(nil)
		o.Cmd = tc.cmd
		for _, e := range tc.table {
			if _, ok := o.spec(e.Val); !ok {
				t.Errorf("%s: %s sets option %d, not in the %s table", tc.cmd.Name(), e.Name, e.Val, tc.cmd.Name())
			}
		}
	}
}

func TestTableCounts(t *testing.T) {
	// Slurm 22.05.8 accepts 106 long options in sbatch, 131 in srun and
	// 95 in salloc (reference cli-and-config.md A.0).
	for cmd, want := range map[Command]int{Sbatch: 106, Srun: 131, Salloc: 95} {
		long, _ := Table(cmd)
		if len(long) != want {
			t.Errorf("%s: %d long options, want %d", cmd.Name(), len(long), want)
		}
	}
}

// TestNextPass: a further het job component keeps the job-wide options of
// the one before (-J, -t, -A) and starts afresh for the per-component
// ones (-N, -n, -p), without sharing its option state.
func TestNextPass(t *testing.T) {
	o, _ := newTestOpts(nil)
	if _, err := o.ParseArgs([]string{"sbatch", "-J", "x", "-t", "5", "-A", "acct", "-N2", "-n4", "-p", "a"}, FromCLI, false, io.Discard); err != nil {
		t.Fatal(err)
	}
	n := o.NextPass()
	if n.JobName == nil || *n.JobName != "x" || n.TimeLimit != 5 || n.Account != "acct" || n.SetBy('J') != FromCLI {
		t.Errorf("job-wide options not kept: name %v time %d account %q set %v", n.JobName, n.TimeLimit, n.Account, n.SetBy('J'))
	}
	if n.NodesSet || n.MinNodes != 1 || n.NtasksSet || n.Partition != "" || n.IsSet('N') || n.IsSet('p') {
		t.Errorf("per-component options kept: nodes %v/%d ntasks %v partition %q", n.NodesSet, n.MinNodes, n.NtasksSet, n.Partition)
	}
	if _, err := n.ParseArgs([]string{":", "-w", "n1", "true"}, FromCLI, false, io.Discard); err != nil {
		t.Fatal(err)
	}
	if o.IsSet('w') || o.Nodelist != "" {
		t.Errorf("the next component's options reached the first's")
	}
}
