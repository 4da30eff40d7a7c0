package interop

// srun --pty on a private real cluster whose node n1 is a real slurmd and
// n2 is ours, each invocation run four ways (real or our srun, on n1 or
// n2) inside a pseudo-terminal the test opens: what the terminal shows
// (node names, job ids and pts numbers masked) and the exit status must be
// the same as real srun on a real slurmd. The test types into the
// terminal and resizes it as a user would.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// ptyStep is one action on the terminal: wait until the output holds
// wait, then type send and/or resize to rows x cols.
type ptyStep struct {
	wait       string
	send       string
	rows, cols uint16
}

type ptyCase struct {
	name  string
	args  []string // after srun; NODE is replaced by the node
	steps []ptyStep
	noTTY bool // run with pipes, not a terminal
}

type ptyResult struct {
	out      string // the terminal's output, masked
	code     int
	restored bool // the terminal was back in canonical mode when srun ended
}

// openTestPTY opens a terminal pair of the given size.
func openTestPTY(t *testing.T, rows, cols uint16) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	var n uint32
	var ierr error
	rc, _ := m.SyscallConn()
	rc.Control(func(fd uintptr) {
		if ierr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ierr != nil {
			return
		}
		if n, ierr = unix.IoctlGetUint32(int(fd), unix.TIOCGPTN); ierr != nil {
			return
		}
		ierr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	})
	if ierr != nil {
		m.Close()
		t.Fatal(ierr)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	return m, s
}

var (
	ptyPts   = regexp.MustCompile(`/dev/pts/[0-9]+`)
	ptyNodes = regexp.MustCompile(`\bn[12]\b`)
)

func ptyMask(s string) string {
	s = ptyPts.ReplaceAllString(s, "/dev/pts/N")
	s = ptyNodes.ReplaceAllString(s, "nX")
	s = srIDs.ReplaceAllString(s, "${1}N")
	// The terminal's echo of ^C lands in whichever line is being written
	// when it comes: it is counted, not placed.
	echoes := strings.Count(s, "^C")
	s = strings.ReplaceAll(s, "^C", "")
	// Lines from the task and srun's own come in no fixed order.
	lines := strings.SplitAfter(s, "\n")
	slices.Sort(lines)
	return strings.Repeat("^C", echoes) + strings.Join(lines, "")
}

// ptyRun runs srun in a new session on a new terminal, plays the steps and
// returns what the terminal showed.
func ptyRun(t *testing.T, conf, srun, dir string, cs ptyCase, node string) ptyResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var args []string
	for _, a := range cs.args {
		args = append(args, strings.ReplaceAll(a, "NODE", node))
	}
	cmd := exec.Command(srun, args...)
	cmd.Dir = dir
	home, _ := os.UserHomeDir()
	cmd.Env = []string{"SLURM_CONF=" + conf, "PATH=/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + home, "LANG=C", "TERM=xterm"}
	if cs.noTTY {
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return ptyResult{out: ptyMask(out.String()), code: cmd.ProcessState.ExitCode()}
	}
	master, slave := openTestPTY(t, 33, 101)
	defer master.Close()
	before, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// srun is the session leader on this terminal, as in a login shell's
	// foreground: a resize sends it SIGWINCH.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		slave.Close()
		t.Fatal(err)
	}
	var mu sync.Mutex
	var out bytes.Buffer
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	output := func() string {
		mu.Lock()
		defer mu.Unlock()
		return out.String()
	}
	fail := func(format string, a ...any) {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		slave.Close()
		t.Fatalf("%s on %s: %s\noutput: %q", cs.name, node, fmt.Sprintf(format, a...), output())
	}
	for _, st := range cs.steps {
		for st.wait != "" && !strings.Contains(output(), st.wait) {
			select {
			case <-ctx.Done():
				fail("no %q within 90 s", st.wait)
			case err := <-exited:
				exited <- err
				fail("srun ended before %q: %v", st.wait, err)
			case <-time.After(20 * time.Millisecond):
			}
		}
		if st.rows != 0 {
			rc, _ := master.SyscallConn()
			rc.Control(func(fd uintptr) {
				unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: st.rows, Col: st.cols})
			})
		}
		if st.send != "" {
			master.Write([]byte(st.send))
		}
	}
	var werr error
	select {
	case werr = <-exited:
	case <-ctx.Done():
		fail("srun did not end within 90 s")
	}
	after, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	restored := err == nil && after.Lflag == before.Lflag && after.Iflag == before.Iflag && after.Oflag == before.Oflag
	// With the last slave closed the master reads what is left, then EIO.
	slave.Close()
	select {
	case <-readDone:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s on %s: terminal output never ended", cs.name, node)
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		t.Fatal(werr)
	}
	return ptyResult{out: ptyMask(output()), code: cmd.ProcessState.ExitCode(), restored: restored}
}

// ptyCases are the invocations, each run as srun's arguments.
var ptyCases = []ptyCase{
	{name: "tty", args: []string{"-w", "NODE", "--pty", "tty"}},
	{name: "window size", args: []string{"-w", "NODE", "--pty", "bash", "-c", "stty size"}},
	{name: "typing and exit status", args: []string{"-w", "NODE", "--pty", "bash", "-c", "echo ready; read x; echo got-$x; exit 3"},
		steps: []ptyStep{{wait: "ready", send: "hello\r"}}},
	{name: "resize", args: []string{"-w", "NODE", "--pty", "bash", "-c",
		"trap 'stty size; exit 0' WINCH; echo ready; while :; do sleep 0.1; done"},
		steps: []ptyStep{{wait: "ready", rows: 40, cols: 120}}},
	{name: "ctrl-c reaches the task", args: []string{"-w", "NODE", "--pty", "bash", "-c", "echo ready; sleep 100"},
		steps: []ptyStep{{wait: "ready", send: "\x03"}}},
	{name: "two tasks, only task 0 on the terminal", args: []string{"-w", "NODE", "-n2", "--pty", "sh", "-c", "tty; r=$?; echo $SLURM_PROCID; exit $r"}},
	// Task 1 runs on n2, our slurmd, even in the reference run: this
	// checks that a node without task 0 streams nothing.
	{name: "two nodes, task 0's node streams", args: []string{"-N2", "--pty", "sh", "-c", "tty; r=$?; echo $SLURM_PROCID; exit $r"}},
	{name: "end of input with ^D", args: []string{"-w", "NODE", "--pty", "bash", "-c", "echo ready; cat; echo cat-done"},
		steps: []ptyStep{{wait: "ready", send: "abc\r"}, {wait: "abc\r\nabc", send: "\x04"}}},
	{name: "terminal environment", args: []string{"-w", "NODE", "--pty", "sh", "-c",
		`echo "$SLURM_PTY_WIN_ROW $SLURM_PTY_WIN_COL ${SLURM_PTY_PORT:+port}"; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-tty; [ $(ps -o sid= -p $$) -eq $$ ] && echo session-leader; [ $(ps -o tpgid= -p $$) -eq $(ps -o pgid= -p $$) ] && echo foreground`}},
	{name: "no terminal", args: []string{"-w", "NODE", "--pty", "echo", "hi"}, noTTY: true},
	{name: "with --output", args: []string{"-w", "NODE", "--pty", "-o", "x.out", "true"}, noTTY: true},
}

// ptyLaunches is how many of ptyCases reach a node.
func ptyLaunches() int {
	n := 0
	for _, cs := range ptyCases {
		if !slices.Contains(cs.args, "-o") {
			n++
		}
	}
	return n
}

// TestSrunPTY runs every case with real srun on a real slurmd under a real
// slurmctld (the reference), then real and our srun on a real slurmd (n1)
// and on ours (n2): first under the real slurmctld, then under ours.
func TestSrunPTY(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: our slurmd runs the tasks")
	}
	if _, err := os.Stat("/usr/bin/srun"); err != nil {
		t.Skipf("no real srun: %v", err)
	}
	const realNode, ourNode = "n1", "n2"
	slurmd := buildSlurmd(t)
	ours := srBuild(t)
	srunOf := map[string]string{"real": "/usr/bin/srun", "ours": ours + "/srun"}
	combos := []struct{ srun, node string }{{"ours", realNode}, {"real", ourNode}, {"ours", ourNode}}
	slurmdKind := map[string]string{realNode: "real", ourNode: "our"}
	work := t.TempDir()
	want := map[string]ptyResult{}
	same, runs := 0, 0
	check := func(t *testing.T, ctld string, cs ptyCase, srun, node string, got ptyResult) {
		runs++
		w := want[cs.name]
		if got != w {
			t.Errorf("%s: %s srun, %s slurmd, %s slurmctld:\ngot  exit %d restored %v %q\nwant exit %d restored %v %q",
				cs.name, srun, slurmdKind[node], ctld, got.code, got.restored, got.out, w.code, w.restored, w.out)
			return
		}
		same++
	}

	t.Run("real slurmctld", func(t *testing.T) {
		c := realslurm.Start(t, realslurm.Options{Nodes: 2, External: []string{ourNode}})
		defer c.Stop()
		p, err := c.Launch("goslurmd-"+ourNode, slurmd, nil, "-D", "-vvv", "-N", ourNode, "-f", c.Conf)
		if err != nil {
			t.Fatal(err)
		}
		waitState(t, c, p, ourNode, "idle", 60*time.Second)
		defer func() {
			if t.Failed() {
				t.Logf("logs:\n%s", c.Logs())
			}
		}()
		for _, cs := range ptyCases {
			srWaitIdle(t, c)
			ref := ptyRun(t, c.Conf, srunOf["real"], work, cs, realNode)
			t.Logf("%s: real srun on real slurmd: exit %d, terminal %q", cs.name, ref.code, ref.out)
			if !cs.noTTY && !ref.restored {
				t.Errorf("%s: real srun left the terminal raw", cs.name)
			}
			want[cs.name] = ref
			for _, co := range combos {
				srWaitIdle(t, c)
				check(t, "real", cs, co.srun, co.node, ptyRun(t, c.Conf, srunOf[co.srun], work, cs, co.node))
			}
		}
		// The runs on n2 really were our slurmd's.
		if n := count(c.Log(ourNode), "Processing RPC: REQUEST_LAUNCH_TASKS"); n < 2*ptyLaunches() {
			t.Errorf("our slurmd handled %d launches, want %d", n, 2*ptyLaunches())
		}
	})
	if t.Failed() {
		return
	}

	t.Run("our slurmctld", func(t *testing.T) {
		ctld := ctldBuildOurs(t)
		c := ctldharness.New(t, ctldharness.Options{Nodes: 2, OurSlurmd: slurmd, OurNodes: []string{ourNode}})
		c.Start(ctld, "-c")
		defer c.Stop()
		defer func() {
			if t.Failed() {
				t.Logf("logs:\n%s", c.Logs())
			}
		}()
		for _, cs := range ptyCases {
			for _, co := range append([]struct{ srun, node string }{{"real", realNode}}, combos...) {
				goslurmWaitIdle(t, c)
				check(t, "our", cs, co.srun, co.node, ptyRun(t, c.Conf, srunOf[co.srun], work, cs, co.node))
			}
		}
	})
	t.Run("our slurmd with proctrack/cgroup", func(t *testing.T) {
		// The terminal's session in the step cgroup: one node, ours.
		g := startGoslurmdCluster(t)
		for _, cs := range ptyCases {
			if slices.Contains(cs.args, "-N2") {
				continue
			}
			for _, srun := range []string{"real", "ours"} {
				srWaitIdle(t, g.Cluster)
				check(t, "real", cs, srun, ourNode, ptyRun(t, g.Conf, srunOf[srun], work, cs, "n1"))
			}
		}
	})
	t.Logf("%d/%d runs identical to real srun on a real slurmd under a real slurmctld", same, runs)
}
