package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/conf"
)

// runSbatch runs the command in process with a slurm.conf whose controller
// is never contacted (every case ends before submission).
func runSbatch(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	confPath := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(confPath, []byte("ClusterName=c\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1 Default=yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain.sh"), []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	pio := &procIO{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		environ: []string{"SLURM_CONF=" + confPath, "PATH=/bin"}, cwd: dir, hostname: "h", umask: 0o22,
		now: time.Now, sleep: func(time.Duration) {}}
	code := run(append([]string{"sbatch"}, args...), pio)
	return code, out.String(), errb.String()
}

func TestSbatchLocalOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // prefix
		stderr string
	}{
		{"version", "", []string{"--version"}, 0, version + "\n", ""},
		{"version first wins", "", []string{"-V", "--bogus"}, 0, version + "\n", ""},
		{"usage", "", []string{"--usage"}, 0, "Usage: sbatch", ""},
		{"help", "", []string{"--help"}, 0, "Usage: sbatch", ""},
		{"bogus before help", "", []string{"--bogus", "--help"}, 255, "",
			"sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n"},
		{"empty stdin", "", nil, 1, "", "sbatch: error: Batch script is empty!\n"},
		{"no shebang", "", []string{"plain.sh"}, 1, "",
			"sbatch: error: This does not look like a batch script.  The first\n" +
				"sbatch: error: line must start with #! followed by the path to an interpreter.\n" +
				"sbatch: error: For instance: #!/bin/sh\n"},
		{"wrap with script", "", []string{"--wrap=true", "x.sh"}, 1, "",
			"sbatch: error: Script arguments not permitted with --wrap option\n"},
		{"directive error", "#!/bin/sh\n#SBATCH --mem=x\n", nil, 255, "", "sbatch: error: Invalid --mem specification\n"},
		{"unmatched quote", "#!/bin/sh\n#SBATCH -J \"x\n", nil, 1, "",
			"sbatch: fatal: stdin: line 2: Unmatched `\"` in [ \"x]\n"},
		{"exit error env ignored for options", "", []string{"-t", "x"}, 255, "",
			"sbatch: error: Invalid --time specification\n"},
	} {
		code, out, errs := runSbatch(t, tc.stdin, tc.args...)
		if code != tc.code || !strings.HasPrefix(out, tc.stdout) || errs != tc.stderr {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q..., %q", tc.name, code, out, errs, tc.code, tc.stdout, tc.stderr)
		}
	}
	_, usage, _ := runSbatch(t, "", "--usage")
	if !strings.HasSuffix(strings.TrimSpace(usage), "executable [args...]") {
		t.Errorf("--usage must end with \"executable [args...]\" (Slurm's testsuite greps it): %q", usage)
	}
}

// TestNewClientAcceptsAuthSlurm: with AuthType=auth/slurm the controller's
// replies carry auth/slurm sections, which the client's codec must accept
// (the default codec refuses them, as a 22.05 receiver does).
func TestNewClientAcceptsAuthSlurm(t *testing.T) {
	for _, authType := range []string{"auth/munge", "auth/slurm"} {
		s := &sbatch{env: jobopt.NewEnv(nil)}
		c := &conf.Config{AuthType: authType}
		cl, err := s.newClient(c)
		if err != nil {
			t.Fatalf("%s: %v", authType, err)
		}
		if cl.Codec == nil || cl.Codec.AcceptAuthSlurm != (authType == "auth/slurm") {
			t.Errorf("%s: codec %+v", authType, cl.Codec)
		}
	}
}
