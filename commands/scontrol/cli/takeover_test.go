package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTakeoverArgs: the index checks and the one-controller case, as
// real scontrol 22.05 prints them (nothing listens on the port).
func TestTakeoverArgs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, ctls string) string {
		p := filepath.Join(dir, name)
		text := "ClusterName=x\n" + ctls + "SlurmctldPort=1\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n"
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := write("one.conf", "SlurmctldHost=a(127.0.0.1)\n")
	two := write("two.conf", "SlurmctldHost=a(127.0.0.1)\nSlurmctldHost=b(127.0.0.1)\n")
	connect := "slurm_takeover error: Unable to contact slurm controller (connect failure)\n"
	for _, tc := range []struct {
		conf string
		args []string
		err  string
	}{
		{one, nil, "scontrol: error: slurm_get_port: Address family '0' not supported\n" +
			"scontrol: error: Error connecting, bad data: family = 0, port = 0\n" + connect},
		{one, []string{"1"}, "takeover: invalid backup controller index (1)\n"},
		{two, []string{"0"}, "takeover: invalid backup controller index (0)\n"},
		{two, []string{"2"}, "takeover: invalid backup controller index (2)\n"},
		{two, []string{"x"}, "takeover: invalid backup controller index (0)\n"},
		{two, []string{"1", "2"}, "takeover: too many arguments\n"},
		{two, []string{"1x"}, connect},
		{two, nil, connect},
	} {
		env := map[string]string{"SLURM_CONF": tc.conf}
		out, errs, code := run(t, env, "", append([]string{"takeover"}, tc.args...)...)
		if out != "" || errs != tc.err || code != 1 {
			t.Errorf("%s takeover %q: got (%q, %q, %d), want (\"\", %q, 1)", filepath.Base(tc.conf), tc.args, out, errs, code, tc.err)
		}
	}
}
