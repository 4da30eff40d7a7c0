// Package demo tests `make demo` the way a newcomer runs it: in a copy of
// the module, as an ordinary user (nobody, when the test runs as root),
// with an empty build cache and no network; then checks what the showcase
// printed, that the env file works, and that `make demo-stop` leaves no
// process behind.
package demo

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runner runs commands in the module copy as the demo's user.
type runner struct {
	dir  string // the module copy
	env  []string
	cred *syscall.Credential // nil: as ourselves
	uid  int
}

func (r *runner) run(ctx context.Context, t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	// The daemons detach (setsid) and must not hold our pipe: the demo
	// starts them with their output in log files. WaitDelay guards the
	// test against a regression there.
	cmd.WaitDelay = 30 * time.Second
	err := cmd.Run()
	return out.String(), err
}

func TestMakeDemo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the demo needs Linux")
	}
	if testing.Short() {
		t.Skip("builds every binary from an empty cache (about 2 minutes on 2 cores)")
	}
	for _, tool := range []string{"make", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found in PATH")
	}
	root := moduleRoot(t)

	// A world-traversable work area: the demo user must reach it.
	base, err := os.MkdirTemp("", "goslurm-demotest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(base, "goslurm")
	home := filepath.Join(base, "home")
	tmp := filepath.Join(base, "tmp")
	copyModule(t, root, mod)
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Dependencies come from a vendor directory made here with our module
	// cache, so the demo user builds offline with a cache of its own.
	vendor := exec.Command(goBin, "mod", "vendor")
	vendor.Dir = mod
	if out, err := vendor.CombinedOutput(); err != nil {
		t.Fatalf("go mod vendor: %v\n%s", err, out)
	}

	r := &runner{dir: mod, uid: os.Getuid()}
	r.env = []string{
		"PATH=" + filepath.Dir(goBin) + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"GOCACHE=" + filepath.Join(home, "gocache"),
		"GOFLAGS=-mod=vendor -buildvcs=false",
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		"LANG=C",
	}
	if os.Getuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Skipf("running as root and no user nobody to run the demo as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		r.uid = uid
		r.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		chownTree(t, base, uid, gid)
		r.env = append(r.env, "USER=nobody", "LOGNAME=nobody")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if out, err := r.run(ctx, t, "bash", "-c", "test -w "+mod+" && go version"); err != nil {
		t.Skipf("the demo user cannot use %s or go: %v\n%s", mod, err, out)
	}
	t.Cleanup(func() {
		// Whatever happened, nothing of the demo may outlive the test.
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer scancel()
		if out, err := r.run(sctx, t, "make", "demo-stop"); err != nil {
			t.Errorf("cleanup: make demo-stop: %v\n%s", err, out)
		}
		killLeftovers(t, r.uid, base)
	})

	start := time.Now()
	out, err := r.run(ctx, t, "make", "demo")
	t.Logf("make demo took %v", time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, out)
	}
	checkShowcase(t, out)

	// The advertised one-liner works.
	envFile := filepath.Join(mod, "bin", "demo.env")
	got, err := r.run(ctx, t, "bash", "-c", ". "+envFile+" && sinfo -h -o '%D %t' && squeue -h | wc -l")
	if err != nil || strings.TrimSpace(got) != "4 idle\n0" {
		t.Errorf("using the env file: %v\n%q, want \"4 idle\\n0\"", err, got)
	}

	demoDir := demoDirOf(t, envFile)
	out, err = r.run(ctx, t, "make", "demo-stop")
	if err != nil {
		t.Fatalf("make demo-stop: %v\n%s", err, out)
	}
	if left := leftovers(r.uid, base); len(left) > 0 {
		t.Errorf("processes left after make demo-stop: %v", left)
	}
	for _, p := range []string{demoDir, envFile} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s still exists after make demo-stop", p)
		}
	}
}

// checkShowcase checks each step of the showcase in the output of make demo.
func checkShowcase(t *testing.T, out string) {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	// srun's lines come in any order; its own "srun: ..." notes are not
	// task output.
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{"srun -N4 -l hostname", []string{"0: " + host, "1: " + host, "2: " + host, "3: " + host}},
		{"srun -N4 -l printenv SLURMD_NODENAME", []string{"0: n1", "1: n2", "2: n3", "3: n4"}},
	} {
		var got []string
		for _, l := range block(out, "$ "+c.cmd) {
			if !strings.HasPrefix(l, "srun: ") {
				got = append(got, l)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("showcase: %s printed %q, want %q (in any order)", c.cmd, got, c.want)
		}
	}
	want := []struct {
		what string
		re   string
	}{
		{"sinfo: four idle nodes", `(?m)^debug\*\s+up\s+infinite\s+4\s+idle n\[1-4\]$`},
		{"sbatch", `(?m)^Submitted batch job \d+$`},
		{"squeue while the array runs", `(?m)^\s+\d+_[1-6]\s+debug\s+demo\s+\S+\s+R\s+`},
		{"six output files", `(?m)^array-\d+_6\.out$`},
		{"the cluster stays up", `(?m)^The cluster is up\. Use it with:  \. \S+/bin/demo\.env$`},
	}
	for _, w := range want {
		if !regexp.MustCompile(w.re).MatchString(out) {
			t.Errorf("showcase: no %s (/%s/) in:\n%s", w.what, w.re, out)
		}
	}
	// Every array task wrote its line, each on one of the four nodes.
	for i := 1; i <= 6; i++ {
		re := fmt.Sprintf(`(?m)^array task %d of job \d+ ran on n[1-4]$`, i)
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("showcase: no output of array task %d", i)
		}
	}
	if strings.Contains(out, "FAILED") {
		t.Errorf("showcase reports failed steps:\n%s", out)
	}
}

// block returns the lines printed after the line first, up to the next
// empty line.
func block(out, first string) []string {
	_, rest, ok := strings.Cut(out, "\n"+first+"\n")
	if !ok {
		return nil
	}
	rest, _, _ = strings.Cut(rest, "\n\n")
	return strings.Split(strings.TrimRight(rest, "\n"), "\n")
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// copyModule copies the module's source tree: regular files only, without
// .git, bin/ and build leftovers, so the copy is what a clone builds from.
func copyModule(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			switch rel {
			case ".git", "bin", "vendor", "testdata/fuzz-cache":
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || strings.HasSuffix(rel, ".test") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, info.Mode().Perm()|0o644)
	})
	if err != nil {
		t.Fatalf("copying the module: %v", err)
	}
}

func chownTree(t *testing.T, dir string, uid, gid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// demoDirOf reads the demo's directory from its env file.
func demoDirOf(t *testing.T, envFile string) string {
	t.Helper()
	data, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("env file: %v", err)
	}
	m := regexp.MustCompile(`(?m)^export GOSLURM_DEMO_DIR='([^']+)'$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no GOSLURM_DEMO_DIR in %s:\n%s", envFile, data)
	}
	return string(m[1])
}

// leftovers lists processes of uid that belong to the demo under base: a
// working directory, command line or environment naming base (the demo
// directory is under base/tmp, the binaries under base/goslurm/bin).
func leftovers(uid int, base string) []string {
	ents, _ := os.ReadDir("/proc")
	var left []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		p := filepath.Join("/proc", e.Name())
		st, err := os.Stat(p)
		if err != nil || int(st.Sys().(*syscall.Stat_t).Uid) != uid {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		environ, _ := os.ReadFile(filepath.Join(p, "environ"))
		exe, _ := os.Readlink(filepath.Join(p, "exe"))
		if strings.HasPrefix(cwd, base+"/") || strings.HasPrefix(exe, base+"/") ||
			bytes.Contains(cmdline, []byte(base+"/")) || bytes.Contains(environ, []byte(base+"/")) {
			left = append(left, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
	}
	return left
}

// killLeftovers SIGKILLs what leftovers finds (processes this test started
// through make demo), so a failed test does not leave a cluster running.
func killLeftovers(t *testing.T, uid int, base string) {
	for _, l := range leftovers(uid, base) {
		pid, _ := strconv.Atoi(strings.Fields(l)[0])
		t.Logf("killing leftover %s", l)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
