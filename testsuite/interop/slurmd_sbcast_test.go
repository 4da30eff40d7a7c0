package interop

// Debian's sbcast against goslurm's slurmd and Debian's slurmd side by
// side, in one cluster: a job of nobody on each node, the same transfers
// to each, and the outputs, exit codes and resulting files compared.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

const nobodyID = 65534

// sbcastRig is what the scenario needs from a cluster.
type sbcastRig struct {
	// runAs runs a real command as uid/gid and returns its output and
	// exit code.
	runAs func(uid, gid uint32, name string, args ...string) (string, string, int)
	// job starts a job of nobody on node that sleeps, and returns its id
	// once it runs.
	job    func(t *testing.T, node string) string
	cancel func(job string)
	dir    string // a directory to put the test's files in
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// describe is a file's content summary, mode, owner and, when mtime is
// set, its modification time.
func describe(path string, mtime bool) string {
	st, err := os.Lstat(path)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return "stat: " + errno.Error()
		}
		return "stat: " + err.Error()
	}
	sys := st.Sys().(*syscall.Stat_t)
	s := fmt.Sprintf("mode=%v uid=%d gid=%d size=%d", st.Mode(), sys.Uid, sys.Gid, st.Size())
	if mtime {
		s += fmt.Sprintf(" mtime=%d", st.ModTime().Unix())
	}
	return s
}

// sbcastScenario runs the transfers to node and returns a transcript
// with the node name, job id and directories replaced by placeholders.
func sbcastScenario(t *testing.T, r sbcastRig, node string) string {
	t.Helper()
	base := filepath.Join(r.dir, "sbcast-"+node)
	mk := func(d string, uid int, mode os.FileMode) string {
		if err := os.MkdirAll(d, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	mk(base, 0, 0o755)
	src := mk(filepath.Join(base, "src"), nobodyID, 0o755)
	dst := mk(filepath.Join(base, "dst"), nobodyID, 0o755)
	locked := mk(filepath.Join(base, "locked"), 0, 0o755)

	// 300 KB over several blocks (-s 64k), not all alike, so LZ4 has
	// matches and literals to encode.
	var payload []byte
	for i := 0; len(payload) < 300_000; i++ {
		payload = append(payload, fmt.Sprintf("line %d of the sbcast payload %x\n", i, i*i*7919)...)
	}
	file := filepath.Join(src, "payload")
	if err := os.WriteFile(file, payload, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(file, nobodyID, nobodyID); err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1_600_000_000, 0)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(src, "prog")
	if b, err := os.ReadFile("/usr/bin/env"); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}

	job := r.job(t, node)
	defer r.cancel(job)
	var b strings.Builder
	sb := func(title string, args ...string) {
		args = append([]string{"-j", job}, args...)
		out, errOut, code := r.runAs(nobodyID, nobodyID, "sbcast", args...)
		fmt.Fprintf(&b, "== %s\n%s%s-- exit %d\n", title, out, errOut, code)
	}
	same := func(path string) {
		got, err := os.ReadFile(path)
		fmt.Fprintf(&b, "content equal: %v (%v)\n", err == nil && string(got) == string(payload), err)
	}
	plain := filepath.Join(dst, "plain")
	sb("plain copy", file, plain)
	same(plain)
	fmt.Fprintf(&b, "%s\n", describe(plain, false))
	if err := os.WriteFile(plain, []byte("changed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sb("exists, no -f", file, plain)
	fmt.Fprintf(&b, "%s\n", describe(plain, false))
	sb("exists, -f", "-f", file, plain)
	same(plain)
	fmt.Fprintf(&b, "%s\n", describe(plain, false))
	pres := filepath.Join(dst, "preserved")
	sb("preserve", "-p", file, pres)
	same(pres)
	fmt.Fprintf(&b, "%s\n", describe(pres, true))
	sb("cannot write", file, filepath.Join(locked, "x"))
	fmt.Fprintf(&b, "%s\n", describe(filepath.Join(locked, "x"), false))
	lz := filepath.Join(dst, "lz4")
	sb("lz4, 64k blocks", "-C", "-s", "64k", file, lz)
	same(lz)
	fmt.Fprintf(&b, "%s\n", describe(lz, false))
	sb("empty source", "/dev/null", filepath.Join(dst, "empty"))
	fmt.Fprintf(&b, "%s\n", describe(filepath.Join(dst, "empty"), false))
	sb("no such directory", file, filepath.Join(dst, "nodir", "x"))
	sb("unsupported compression name", "--compress=zlib", file, filepath.Join(dst, "zlib"))
	same(filepath.Join(dst, "zlib"))
	sb("send-libs", "--send-libs", "--exclude=none", exe, filepath.Join(dst, "prog"))
	fmt.Fprintf(&b, "%s\n", describe(filepath.Join(dst, "prog"), false))
	libs, _ := filepath.Glob(filepath.Join(dst, "prog_libs", "*"))
	for i := range libs {
		libs[i] = filepath.Base(libs[i]) + " " + describe(libs[i], false)
	}
	sort.Strings(libs)
	fmt.Fprintf(&b, "libs: %s %q\n", describe(filepath.Join(dst, "prog_libs"), false), libs)
	sb("send-libs again, -f", "-f", "--send-libs", "--exclude=none", exe, filepath.Join(dst, "prog"))

	// srun --bcast to a directory, with the libraries: the task runs the
	// copy, with its library directory first in LD_LIBRARY_PATH.
	bdir := mk(filepath.Join(base, "srun"), nobodyID, 0o755)
	out, errOut, code := r.runAs(nobodyID, nobodyID, "srun", "-N1", "-n1", "-w", node, "--bcast="+bdir+"/",
		"--send-libs", "--bcast-exclude=none", "env")
	fmt.Fprintf(&b, "== srun --bcast --send-libs\n%s-- exit %d\n", errOut, code)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "LD_LIBRARY_PATH=") {
			fmt.Fprintf(&b, "%s\n", l)
		}
	}
	ents, _ := os.ReadDir(bdir)
	for _, e := range ents {
		fmt.Fprintf(&b, "%s %s\n", e.Name(), describe(filepath.Join(bdir, e.Name()), false))
	}

	s := b.String()
	s = regexp.MustCompile(`slurm_bcast_\d+\.\d+_`+node).ReplaceAllString(s, "slurm_bcast_JOB.STEP_NODE")
	s = strings.ReplaceAll(s, base, "BASE")
	s = strings.ReplaceAll(s, "("+node+")", "(NODE)")
	return s
}

func realRunAs(c *realslurm.Cluster) func(uid, gid uint32, name string, args ...string) (string, string, int) {
	return func(uid, gid uint32, name string, args ...string) (string, string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := c.Command(ctx, name, args...)
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), exitCode(err)
	}
}

// TestSlurmdSbcast: a real slurmctld with our slurmd (n1) and a real
// slurmd (n2); the same sbcast transfers into a job of nobody on each.
func TestSlurmdSbcast(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the jobs and sbcast run as nobody")
	}
	bin := buildSlurmd(t)
	c := realslurm.Start(t, realslurm.Options{Nodes: 2, External: []string{"n1"}})
	p, err := c.Launch("goslurmd-n1", bin, nil, "-D", "-vv", "-N", "n1", "-f", c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, c, p, "n1", "idle", 60*time.Second)
	rig := sbcastRig{
		runAs: realRunAs(c),
		dir:   c.Dir,
		job: func(t *testing.T, node string) string {
			job := submit(t, c, "/", nil, "--uid=nobody", "--gid=nogroup", "-w", node, "-o", "/dev/null", "--wrap", "sleep 300")
			waitJob(t, c, job, []string{"RUNNING"}, 60*time.Second)
			return job
		},
		cancel: func(job string) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = c.Command(ctx, "scancel", job).Run()
		},
	}
	want := sbcastScenario(t, rig, "n2")
	got := sbcastScenario(t, rig, "n1")
	t.Logf("real slurmd:\n%s", want)
	if want != got {
		t.Errorf("real slurmd:\n%s\nours:\n%s", want, got)
		t.Logf("our slurmd's log:\n%s", c.Log("n1"))
	}

	t.Run("two nodes, relayed by ours", func(t *testing.T) {
		// Fan-out 1: the block goes to n1 (ours), which forwards it to
		// n2 and answers for both.
		job := submit(t, c, "/", nil, "--uid=nobody", "--gid=nogroup", "-N2", "-o", "/dev/null", "--wrap", "sleep 300")
		defer rig.cancel(job)
		waitJob(t, c, job, []string{"RUNNING"}, 60*time.Second)
		dir := filepath.Join(c.Dir, "sbcast-n1", "dst")
		src := filepath.Join(c.Dir, "sbcast-n1", "src", "payload")
		out, errOut, code := rig.runAs(nobodyID, nobodyID, "sbcast", "-f", "-F", "1", "-s", "100k", "-j", job, src, filepath.Join(dir, "both"))
		if code != 0 {
			t.Fatalf("sbcast: exit %d\n%s%s", code, out, errOut)
		}
		if a, b := describe(src, false), describe(filepath.Join(dir, "both"), false); a != b {
			t.Errorf("copy %s, source %s", b, a)
		}
		if !strings.Contains(c.Log("n2"), "fname="+filepath.Join(dir, "both")+" ") {
			t.Error("the real slurmd behind ours did not get the file")
		}
		if n := count(c.Log("n1"), "Security violation"); n != 0 {
			t.Errorf("%d security violations logged by ours", n)
		}
	})

	t.Run("64 MB, timed", func(t *testing.T) {
		src := filepath.Join(c.Dir, "sbcast-n1", "src", "big")
		big := make([]byte, 64<<20)
		for i := range big {
			big[i] = byte(i * 7 / 5)
		}
		if err := os.WriteFile(src, big, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(src, nobodyID, nobodyID); err != nil {
			t.Fatal(err)
		}
		for _, node := range []string{"n2", "n1"} {
			job := rig.job(t, node)
			for _, comp := range []string{"none", "lz4"} {
				start := time.Now()
				dst := filepath.Join(c.Dir, "sbcast-n1", "dst", "big-"+node+"-"+comp)
				_, errOut, code := rig.runAs(nobodyID, nobodyID, "sbcast", "--compress="+comp, "-j", job, src, dst)
				took := time.Since(start)
				if code != 0 {
					t.Errorf("%s %s: exit %d %s", node, comp, code, errOut)
				}
				if a, b := describe(src, false), describe(dst, false); a != b {
					t.Errorf("%s %s: copy %s, source %s", node, comp, b, a)
				}
				if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, big) {
					t.Errorf("%s %s: content differs (%v)", node, comp, err)
				}
				os.Remove(dst)
				t.Logf("sbcast of 64 MB (compress=%s) to %s slurmd: %v", comp, map[string]string{"n1": "our", "n2": "real"}[node], took.Round(time.Millisecond))
			}
			rig.cancel(job)
		}
	})
}

// TestSlurmdSbcastOurCtld: the same with our slurmctld (and its sbcast
// credential): our slurmd (n2) against a real slurmd (n1).
func TestSlurmdSbcastOurCtld(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the jobs and sbcast run as nobody")
	}
	ctld := ctldBuildOurs(t)
	slurmd := buildSlurmd(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, OurSlurmd: slurmd, OurNodes: []string{"n2"}})
	c.Start(ctld, "-c")
	t.Cleanup(c.Stop)
	rig := sbcastRig{
		runAs: func(uid, gid uint32, name string, args ...string) (string, string, int) {
			out, errOut, err := c.RunAs(uid, gid, name, args...)
			return out, errOut, exitCode(err)
		},
		dir: c.Dir,
		job: func(t *testing.T, node string) string {
			id := ctldSbatch(t, c, "--uid=nobody", "--gid=nogroup", "-w", node, "-o", "/dev/null", "--wrap", "sleep 300")
			ctldWaitJob(t, c, id, 60*time.Second, "RUNNING")
			return strconv.FormatUint(uint64(id), 10)
		},
		cancel: func(job string) { _, _, _ = c.Run("scancel", job) },
	}
	want := sbcastScenario(t, rig, "n1")
	got := sbcastScenario(t, rig, "n2")
	t.Logf("real slurmd:\n%s", want)
	if want != got {
		t.Errorf("real slurmd:\n%s\nours:\n%s", want, got)
	}
}
