package interop

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// ctldBuildOurs builds goslurm's slurmctld into a temporary directory
// (with the race detector when GOSLURM_CTLD_RACE=1).
//
// GOSLURM_CTLD_BIN names a slurmctld already built, to use instead.
func ctldBuildOurs(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("GOSLURM_CTLD_BIN"); bin != "" {
		return bin
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	bin := filepath.Join(t.TempDir(), "slurmctld")
	args := []string{"build", "-o", bin}
	if os.Getenv("GOSLURM_CTLD_RACE") == "1" {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./slurmctld")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./slurmctld: %v\n%s", err, out)
	}
	return bin
}

// ctldMask blanks what legitimately differs between two runs of the same
// cluster: clock times, load and free memory (sampled by slurmd at
// different moments), the date line of sinfo -l, and salloc's "has been
// revoked" line: the controller answers salloc's own release with
// SRUN_JOB_COMPLETE, and whether salloc prints it depends on whether the
// message arrives before salloc exits (real slurmctld's run printed it in
// one .ci/run and not in the next).
var ctldMask = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(BootTime|SlurmdStartTime|LastBusyTime|ResumeAfterTime)=\S+`), "$1=<time>"},
	{regexp.MustCompile(`CPULoad=\S+`), "CPULoad=<load>"},
	{regexp.MustCompile(`FreeMem=\S+`), "FreeMem=<mem>"},
	{regexp.MustCompile(`\[(\S+)@\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\]`), "[$1@<time>]"},
	{regexp.MustCompile(`(?m)^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$`), "<date>"},
	{regexp.MustCompile(`(?m)^(Configuration data as of|BOOT_TIME +=) \S+$`), "$1 <time>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`), "<time>"},
	{regexp.MustCompile(`(?m)^salloc: Job allocation \d+ has been revoked\.\n`), ""},
}

func ctldMasked(s string) string {
	for _, m := range ctldMask {
		s = m.re.ReplaceAllString(s, m.repl)
	}
	return s
}

// ctldRun runs a real command and returns what it printed (stdout, then
// stderr after a marker, and the exit status when it failed).
func ctldRun(c *ctldharness.Cluster, args ...string) string {
	out, errOut, err := c.Run(args[0], args[1:]...)
	var b strings.Builder
	b.WriteString(out)
	if errOut != "" {
		b.WriteString("--- stderr\n" + errOut)
	}
	if err != nil {
		b.WriteString("--- exit: " + err.Error() + "\n")
	}
	return b.String()
}

// ctldOnBoth runs collect on c under the real slurmctld (a clean start:
// -c -i), then under ours (-c), stopping each after, and returns what it
// gave under each: the shape of every differential test of the controller.
func ctldOnBoth[T any](t *testing.T, c *ctldharness.Cluster, real, ours string, collect func(*testing.T, *ctldharness.Cluster) T) (want, got T) {
	t.Helper()
	c.Start(real, "-c", "-i")
	want = collect(t, c)
	c.Stop()
	c.Start(ours, "-c")
	got = collect(t, c)
	c.Stop()
	return want, got
}

// ctldNodeStates is sinfo's node states on one line: "n1=idle n2=mixed".
func ctldNodeStates(c *ctldharness.Cluster) string {
	out, _, _ := c.Run("sinfo", "-h", "-N", "-o", "%N=%T")
	return strings.Join(strings.Fields(out), " ")
}

// ctldCompareShown is ctldCompare that first logs, with -v, what real
// slurmctld gave for each key.
func ctldCompareShown(t *testing.T, want, got map[string]string) {
	t.Helper()
	if testing.Verbose() {
		for _, k := range slices.Sorted(maps.Keys(want)) {
			t.Logf("%s (real):\n%s", k, want[k])
		}
	}
	ctldCompare(t, want, got)
}
