package interop

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

var ctldDebugLine = regexp.MustCompile(`(?m)^SlurmctldDebug +=.*$`)

// TestSlurmctldDebugReconfigure compares real and our slurmctld on the
// log level scontrol show config reports at start, after setdebug and
// after a reconfigure, with SlurmctldDebug unset, set, or changed before
// the reconfigure, and started with none or two -v.
func TestSlurmctldDebugReconfigure(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 1, CPUs: 2})
	base, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	// conf is the harness' slurm.conf with SlurmctldDebug=level, or
	// without the line for "".
	conf := func(level string) {
		text := regexp.MustCompile(`(?m)^SlurmctldDebug=.*\n`).ReplaceAllString(string(base), "")
		if level != "" {
			text = "SlurmctldDebug=" + level + "\n" + text
		}
		if err := os.WriteFile(c.Conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	show := func(c *ctldharness.Cluster) string {
		out, _, err := c.Run("scontrol", "show", "config")
		if err != nil {
			return "show config: " + err.Error()
		}
		return ctldDebugLine.FindString(out)
	}
	t.Cleanup(func() { conf("info") })
	for _, tc := range []struct{ before, after string }{
		{"", ""}, {"error", "error"}, {"", "debug"},
	} {
		for _, v := range []int{0, 2} {
			args := []string{"-c"}
			for range v {
				args = append(args, "-v")
			}
			collect := func(t *testing.T, c *ctldharness.Cluster) string {
				var b strings.Builder
				fmt.Fprintf(&b, "start: %s\n", show(c))
				ctldRun(c, "scontrol", "setdebug", "debug4")
				fmt.Fprintf(&b, "setdebug debug4: %s\n", show(c))
				conf(tc.after)
				ctldRun(c, "scontrol", "reconfigure")
				fmt.Fprintf(&b, "reconfigure: %s\n", show(c))
				conf(tc.before)
				return b.String()
			}
			conf(tc.before)
			c.Start(real, append(args, "-i")...)
			want := collect(t, c)
			c.Stop()
			c.Start(ours, args...)
			got := collect(t, c)
			c.Stop()
			name := fmt.Sprintf("SlurmctldDebug %q then %q, %d -v", tc.before, tc.after, v)
			t.Logf("%s, real slurmctld:\n%s", name, want)
			if want != got {
				t.Errorf("%s:\n--- real slurmctld\n%s--- ours\n%s", name, want, got)
			}
		}
	}
}
