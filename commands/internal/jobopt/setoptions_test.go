package jobopt

import (
	"io"
	"slices"
	"testing"
)

func TestSetOptionLines(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"srun", "-v", "true"}, []string{"verbose             : 1"}},
		{[]string{"srun", "-n2", "-N1-2", "-t", "90", "-J", "x", "true"},
			[]string{"job-name            : x", "nodes               : 1-2", "ntasks              : 2", "time                : 01:30:00"}},
		{[]string{"srun", "-c", "2", "-t", "1-0", "true"}, []string{"cpus-per-task       : 2", "time                : 1-00:00:00"}},
	} {
		o := NewOpts(Srun, &Log{Prog: "srun", W: io.Discard})
		o.Now = nil
		o.Reset(true)
		if _, err := o.ParseArgs(c.args, FromCLI, false, io.Discard); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		got := o.SetOptionLines()
		body := slices.Clone(got[2 : len(got)-2])
		slices.Sort(body)
		if !slices.Equal(body, c.want) || got[0] != "defined options" || got[len(got)-1] != "end of defined options" {
			t.Errorf("%q:\ngot  %q\nwant %q", c.args, got, c.want)
		}
	}
}
