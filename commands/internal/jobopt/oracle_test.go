package jobopt_test

// The shared option table against the real srun and salloc (and sbatch):
// option errors are found by getopt_long over the command's table, so the
// ambiguity lists (which name every candidate in table order) check that
// each command's table has exactly Slurm's options in Slurm's order.

import (
	"errors"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

func TestJobOptionTablesAgainstRealCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real commands about a hundred times")
	}
	probes := []string{"--t", "--c", "--n", "--no", "--ex", "--cpu", "--m", "--g", "--s", "--w", "--p",
		"--a", "--b", "--d", "--e", "--h", "--i", "--k", "--l", "--o", "--q", "--r", "--u", "--x",
		"--foo", "--foo=bar", "-Y", "--hold=1", "--time", "-t", "--ti=3", "--re", "--gres"}
	for _, cmd := range []jobopt.Command{jobopt.Sbatch, jobopt.Srun, jobopt.Salloc} {
		o := oracle.New(t, cmd.Name())
		for _, p := range probes {
			args := []string{p}
			res, err := o.Run(args, nil, nil)
			if err != nil {
				t.Fatalf("%s %s: %v", cmd.Name(), p, err)
			}
			var errb strings.Builder
			opts := jobopt.NewOpts(cmd, &jobopt.Log{Prog: cmd.Name(), W: &errb})
			_, perr := opts.ParseArgs(append([]string{cmd.Name()}, args...), jobopt.FromCLI, false, &errb)
			var ee *jobopt.ExitError
			if !errors.As(perr, &ee) || strings.Contains(errb.String(), "is not supported by goslurm") {
				// The real command accepted the probe too (or failed
				// later, in its own code); only getopt errors are
				// compared here.
				if strings.Contains(string(res.Stderr), "for more information") {
					t.Errorf("%s %s: real rejects it (%q), ours accepts it", cmd.Name(), p, res.Stderr)
				}
				continue
			}
			// The oracle runs the binary by path; getopt prints argv[0].
			realErr := strings.ReplaceAll(string(res.Stderr), o.Path+":", cmd.Name()+":")
			if realErr != errb.String() || res.ExitCode != ee.Code {
				t.Errorf("%s %s:\nours (exit %d): %q\nreal (exit %d): %q", cmd.Name(), p, ee.Code, errb.String(), res.ExitCode, realErr)
			}
		}
	}
}
