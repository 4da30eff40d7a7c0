package main

import (
	"bytes"
	"testing"
)

func TestFnameCreate(t *testing.T) {
	v := fnameVars{ntasks: 4, jobID: 42, stepID: 3, jobName: "nm"}
	for _, c := range []struct {
		spec string
		want fname
	}{
		{"", fname{ioStream, "", -1}}, {"all", fname{ioStream, "", -1}}, {"-", fname{ioStream, "", -1}},
		{"none", fname{ioRemote, "/dev/null", -1}},
		{"1", fname{ioRemote, "1", 1}}, {"4", fname{ioLocal, "4", -1}}, // rank beyond the step: a file named "4"
		{"out-%t.txt", fname{ioRemote, "out-%t.txt", -1}}, {"out.txt", fname{ioLocal, "out.txt", -1}},
		{"o-%j-%t", fname{ioRemote, "o-42-%t", -1}}, {"o-%J", fname{ioLocal, "o-42.3", -1}},
		{"o-%s", fname{ioLocal, "o-3", -1}}, {"o-%4j", fname{ioLocal, "o-0042", -1}},
		{"o-%3t", fname{ioRemote, "o-%3t", -1}}, {"o-%x-%%", fname{ioLocal, "o-nm-%", -1}},
		{"o-%%t", fname{ioRemote, "o-%%t", -1}}, {`o-\%j`, fname{ioLocal, "o-%j", -1}},
		{"o-%N-%n", fname{ioRemote, "o-%N-%n", -1}}, {"o-%q", fname{ioLocal, "o-%q", -1}},
	} {
		if got := fnameCreate(c.spec, v); got != c.want {
			t.Errorf("fnameCreate(%q) = %+v; want %+v", c.spec, got, c.want)
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
		// A het job allocation is refused before it is sent.
		{[]string{"srun", "-r1", "-n1", "true", ":", "-n1", "true"}, 1, "srun: fatal: --relative option invalid for job allocation request\n"},
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
