package cli

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// allocEnv is the node variables of a batch job's environment.
var allocEnv = map[string]string{
	"SLURM_JOBID": "7", "SLURM_NODELIST": "n[1-2]", "SLURM_JOB_NODELIST": "n[1-2]",
	"SLURM_NNODES": "2", "SLURM_JOB_NUM_NODES": "2", "SLURM_JOB_CPUS_PER_NODE": "2(x2)",
	"SLURM_TASKS_PER_NODE": "1(x2)",
}

func envFunc(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// TestResizeScripts: the lines as real scontrol 22.05 writes them (see
// testsuite/interop TestScontrolResize for the comparison with it).
func TestResizeScripts(t *testing.T) {
	oneNode := &msg.Allocation{NodeList: msg.Str("n1"), NodeCnt: 1, CPUsPerNode: []uint16{2}, CPUCountReps: []uint32{1}}
	tests := []struct {
		name     string
		alloc    *msg.Allocation
		env      map[string]string
		sh, csh  string
		emptyEnv bool
	}{
		{name: "batch job", alloc: oneNode, env: allocEnv,
			sh: "export SLURM_NODELIST=\"n1\"\nexport SLURM_JOB_NODELIST=\"n1\"\nexport SLURM_NNODES=1\nexport SLURM_JOB_NUM_NODES=1\n" +
				"export SLURM_JOB_CPUS_PER_NODE=\"2\"\nunset SLURM_NPROCS\nunset SLURM_NTASKS\nunset SLURM_TASKS_PER_NODE\n",
			csh: "setenv SLURM_NODELIST \"n1\"\nsetenv SLURM_JOB_NODELIST \"n1\"\nsetenv SLURM_NNODES 1\nsetenv SLURM_JOB_NUM_NODES 1\n" +
				"setenv SLURM_JOB_CPUS_PER_NODE \"2\"\nunsetenv SLURM_NPROCS\nunsetenv SLURM_NTASKS\nunsetenv SLURM_TASKS_PER_NODE\n"},
		{name: "cpu groups",
			alloc: &msg.Allocation{NodeList: msg.Str("n[1-3]"), NodeCnt: 3, CPUsPerNode: []uint16{4, 2}, CPUCountReps: []uint32{2, 1}},
			env:   map[string]string{"SLURM_JOBID": "7", "SLURM_JOB_CPUS_PER_NODE": ""},
			sh:    "export SLURM_JOB_CPUS_PER_NODE=\"4(x2),2\"\n", csh: "setenv SLURM_JOB_CPUS_PER_NODE \"4(x2),2\"\n"},
		{name: "nothing set", alloc: oneNode, env: map[string]string{"SLURM_JOBID": "7"}},
		{name: "empty allocation", alloc: &msg.Allocation{NodeList: msg.Str("")},
			env: map[string]string{"SLURM_NODELIST": "x", "SLURM_NNODES": "1", "SLURM_JOB_CPUS_PER_NODE": "1"},
			sh:  "export SLURM_NODELIST=\"\"\nexport SLURM_NNODES=0\nexport SLURM_JOB_CPUS_PER_NODE=\"\"\n",
			csh: "setenv SLURM_NODELIST \"\"\nsetenv SLURM_NNODES 0\nsetenv SLURM_JOB_CPUS_PER_NODE \"\"\n"},
		{name: "null node list", alloc: &msg.Allocation{}, env: map[string]string{"SLURM_JOB_NODELIST": "x"},
			sh: "export SLURM_JOB_NODELIST=\"(null)\"\n", csh: "setenv SLURM_JOB_NODELIST \"(null)\"\n"},
	}
	for _, tt := range tests {
		sh, csh := resizeScripts(tt.alloc, envFunc(tt.env))
		if sh != tt.sh || csh != tt.csh {
			t.Errorf("%s: got\n%q\n%q\nwant\n%q\n%q", tt.name, sh, csh, tt.sh, tt.csh)
		}
	}
}

func TestLeadingJobID(t *testing.T) {
	tests := map[string]uint32{"123": 123, "123_4": 123, "12+1": 12, " 9": 9, "": 0, "x": 0,
		"4294967297": 1, "99999999999999999999999": 0xffffffff}
	for in, want := range tests {
		if got := leadingJobID(in); got != want {
			t.Errorf("leadingJobID(%q) = %d, want %d", in, got, want)
		}
	}
}

func resizeState(dir string, env map[string]string) (*state, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	s := &state{io: IO{Stdout: &out, Stderr: &errb, Getenv: envFunc(env), WorkDir: dir}, uid: -1}
	s.stdout = bufio.NewWriter(&out)
	return s, &out, &errb
}

const resizeMsg = "To reset Slurm environment variables, execute\n" +
	"  For bash or sh shells:  . ./slurm_job_7_resize.sh\n" +
	"  For csh shells:         source ./slurm_job_7_resize.csh\n"

// TestSaveResizeScripts: the files are replaced (never written through a
// link), owner-only executable, and a name that cannot be created is
// reported as Slurm does.
func TestSaveResizeScripts(t *testing.T) {
	alloc := &msg.Allocation{NodeList: msg.Str("n1"), NodeCnt: 1, CPUsPerNode: []uint16{2}, CPUCountReps: []uint32{1}}
	t.Run("written", func(t *testing.T) {
		dir := t.TempDir()
		victim := filepath.Join(dir, "victim")
		if err := os.WriteFile(victim, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, filepath.Join(dir, "slurm_job_7_resize.sh")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "slurm_job_7_resize.csh"), []byte("old old old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, out, errb := resizeState(dir, map[string]string{"SLURM_JOBID": "7", "SLURM_NNODES": "2"})
		s.saveResizeScripts(7, alloc)
		s.stdout.Flush()
		if out.String() != resizeMsg || errb.String() != "" {
			t.Errorf("got %q %q", out, errb)
		}
		for name, want := range map[string]string{"slurm_job_7_resize.sh": "export SLURM_NNODES=1\n",
			"slurm_job_7_resize.csh": "setenv SLURM_NNODES 1\n", "victim": "old\n"} {
			p := filepath.Join(dir, name)
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(p)
			wantMode := os.FileMode(0o700)
			if name == "victim" {
				wantMode = 0o644
			}
			if string(b) != want || fi.Mode() != wantMode {
				t.Errorf("%s: %v %q, want %v %q", name, fi.Mode(), b, wantMode, want)
			}
		}
	})
	for _, tc := range []struct {
		dirName, err string
		leftCsh      bool
	}{
		{"slurm_job_7_resize.csh", "Could not create file slurm_job_7_resize.csh: Is a directory\n", false},
		{"slurm_job_7_resize.sh", "Could not create file slurm_job_7_resize.sh: Is a directory\n", true},
	} {
		t.Run(tc.dirName, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, tc.dirName), 0o755); err != nil {
				t.Fatal(err)
			}
			s, out, errb := resizeState(dir, allocEnv)
			s.saveResizeScripts(7, alloc)
			s.stdout.Flush()
			if out.String() != "" || errb.String() != tc.err {
				t.Errorf("got %q %q, want \"\" %q", out, errb, tc.err)
			}
			// Slurm leaves the csh file it made before failing on the
			// sh one: empty and not yet made executable.
			fi, err := os.Lstat(filepath.Join(dir, "slurm_job_7_resize.csh"))
			if tc.leftCsh && (err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 != 0 || fi.Size() != 0) {
				t.Errorf("csh file: %v %v", fi, err)
			}
		})
	}
}

// TestResizeNeedsJobEnv: without SLURM_JOBID nothing is looked up or
// written (no controller is configured here: a lookup would fail loudly).
func TestResizeNeedsJobEnv(t *testing.T) {
	dir := t.TempDir()
	s, out, errb := resizeState(dir, map[string]string{"SLURM_JOB_ID": "7", "SLURM_NODELIST": "n1"})
	s.writeResizeScripts("7")
	s.stdout.Flush()
	ents, _ := os.ReadDir(dir)
	if out.Len() != 0 || errb.Len() != 0 || len(ents) != 0 {
		t.Errorf("got %q %q %v", out, errb, ents)
	}
}
