package main

import (
	"testing"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
)

func TestVerifyMultiProg(t *testing.T) {
	for _, c := range []struct {
		name      string
		file      string
		ntasks    int // 0: -n not given
		wantTasks int
		err       string
	}{
		{name: "all covered", file: "# c\n0,2 echo a\n1 echo b\n", ntasks: 3, wantTasks: 3},
		{name: "star", file: "0 echo a\n* echo b\n", ntasks: 4, wantTasks: 4},
		{name: "task missing", file: "0 echo a\n", ntasks: 2, err: "Configuration file f invalid, no record for task id 1"},
		{name: "raises the task count", file: "0-2 echo a\n", wantTasks: 3},
		{name: "beyond -n", file: "0-2 echo a\n", ntasks: 2, err: "Invalid task id, 2 >= ntasks\nLine 1 of configuration file f invalid"},
		{name: "duplicate", file: "0 echo a\n0 echo b\n", ntasks: 1, err: "Duplicate record for task 0\nLine 2 of configuration file f invalid"},
		{name: "no program", file: "0\n", ntasks: 1, err: "Line 1 of configuration file f invalid"},
		{name: "continued line", file: "0 echo \\\n1 x\n", ntasks: 1, wantTasks: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := jobopt.NewOpts(jobopt.Srun, &jobopt.Log{Prog: "srun"})
			if c.ntasks > 0 {
				o.Ntasks, o.NtasksSet = c.ntasks, true
			}
			err := verifyMultiProg("f", []byte(c.file), o)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.err || (err == nil && o.Ntasks != c.wantTasks) {
				t.Errorf("got %q, %d tasks; want %q, %d", got, o.Ntasks, c.err, c.wantTasks)
			}
		})
	}
}
