package main

import (
	"bytes"
	"testing"
)

func TestClassifyIO(t *testing.T) {
	for _, c := range []struct {
		spec string
		kind ioKind
		task int
	}{
		{"", ioStream, -1}, {"all", ioStream, -1}, {"-", ioStream, -1},
		{"none", ioRemote, -1}, {"/dev/null", ioRemote, -1},
		{"1", ioRemote, 1}, {"4", ioLocal, -1}, // rank beyond the step: a file named "4"
		{"out-%t.txt", ioRemote, -1}, {"out.txt", ioLocal, -1},
	} {
		kind, task := classifyIO(c.spec, 4)
		if kind != c.kind || task != c.task {
			t.Errorf("classifyIO(%q) = %v, %d; want %v, %d", c.spec, kind, task, c.kind, c.task)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"srun", "--bogus", "true"}, 255, "srun: unrecognized option '--bogus'\nTry \"srun --help\" for more information\n"},
		{[]string{"srun", "--mpi=pmi2", "true"}, 255, "srun: error: --mpi=pmi2 is not supported by goslurm's srun yet\n"},
		{[]string{"srun", "-N1"}, 1, "srun: fatal: No command given to execute.\n"},
		{[]string{"srun", "--pty", "-o", "x", "true"}, 1, "srun: error: --error/--input/--output are incompatible with --pty\n"},
		{[]string{"srun", "--pty", "--input=none", "true"}, 1, "srun: error: --error/--input/--output are incompatible with --pty\n"},
		{[]string{"srun", "-e", "e.txt", "--pty", "true"}, 1, "srun: error: --error/--input/--output are incompatible with --pty\n"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, &procIO{stdout: &out, stderr: &errb, environ: []string{"SLURM_CONF=testdata/slurm.conf"}, cwd: "/"})
		if code != c.code || errb.String() != c.err {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", c.args, code, errb.String(), c.code, c.err)
		}
	}
}
