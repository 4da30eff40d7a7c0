package cgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the processes the tests put in cgroups:
// re-executed with helperEnv set, TestMain runs the named helper instead
// of the tests.
const helperEnv = "GOSLURM_CGROUP_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helperCmd returns a command running helper mode with args.
func helperCmd(t *testing.T, mode string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	return cmd
}

func runHelper(mode string, args []string) int {
	switch mode {
	case "sleep":
		time.Sleep(time.Hour)
	case "daemon":
		// A classic daemon: fork, setsid, fork again, and the parents exit;
		// the last process writes its pid to args[0].
		exe, _ := os.Executable()
		c := exec.Command(exe, args...)
		c.Env = append(os.Environ(), helperEnv+"=daemon2")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "daemon2":
		// Second fork: the session leader leaves, the daemon is orphaned.
		exe, _ := os.Executable()
		c := exec.Command(exe, args[0], strconv.Itoa(os.Getpid()))
		c.Env = append(os.Environ(), helperEnv+"=daemon3")
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "daemon3":
		// Announce ourselves only once orphaned, so the step holds just
		// the daemon when the test looks.
		for os.Getppid() == atoi(args[1]) {
			time.Sleep(time.Millisecond)
		}
		writePid(args[0])
		time.Sleep(time.Hour)
	case "forker":
		// Keeps forking sleeping children, as a process trying to
		// outrun a kill would.
		writePid(args[0])
		exe, _ := os.Executable()
		for {
			c := exec.Command(exe)
			c.Env = append(os.Environ(), helperEnv+"=sleep")
			if err := c.Start(); err == nil {
				go func() { _ = c.Wait() }()
			}
			time.Sleep(2 * time.Millisecond)
		}
	case "alloc":
		mb, _ := strconv.Atoi(args[0])
		buf := make([]byte, mb<<20)
		for i := 0; i < len(buf); i += 4096 {
			buf[i] = 1
		}
		fmt.Println("allocated", len(buf)>>20, "MB")
		return 0
	case "cpus":
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return 1
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				fmt.Println(strings.TrimSpace(v))
				return 0
			}
		}
		return 1
	case "readnull":
		f, err := os.Open("/dev/null")
		if errors.Is(err, syscall.EPERM) {
			return 3
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		f.Close()
		return 0
	}
	return 2
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func writePid(file string) {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o644); err == nil {
		_ = os.Rename(tmp, file)
	}
}

// waitPidFile waits for a helper to write its pid. The generous bound is
// a hang guard (so cleanups still run), not a performance assertion.
func waitPidFile(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(file); err == nil {
			pid, err := strconv.Atoi(string(b))
			if err != nil {
				t.Fatalf("pid file %s: %q", file, b)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", file)
	return 0
}

// gone reports whether pid no longer runs (absent, or a zombie waiting
// for a parent that does not reap).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && (s[i+2] == 'Z' || s[i+2] == 'X')
}
