package stepd

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const signalerEnv = "GOSLURM_STEPD_TEST_SIGNALER"

// signalerMain sends SIGKILL to the step socket named in the environment
// and prints the outcome: the test runs it under other uids.
func signalerMain() int {
	c, err := dialStep(os.Getenv(signalerEnv), 10*time.Second)
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	defer c.Close()
	if err := c.signal(int(syscall.SIGKILL), 0, "", uint32(os.Getuid())); err != nil {
		fmt.Println("signal:", err)
		return 1
	}
	fmt.Println("signal: ok")
	return 0
}

// TestSocketChecksPeerUID: the socket is world-connectable, but a signal
// is accepted only from root, SlurmUser or the job's owner, judged by
// SO_PEERCRED and not by anything the client sends.
func TestSocketChecksPeerUID(t *testing.T) {
	requireRoot(t)
	other, err := user.Lookup("daemon")
	if err != nil {
		t.Skip("no user daemon")
	}
	r := newRig(t, "nobody")
	// The test binary must be executable by the other uids.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(r.dir, "stepd.test")
	copyFile(t, self, exe)

	req := r.launch(t, "#!/bin/sh\necho ready\nsleep 300\n", nil)
	r.start(t, req)
	r.waitOutput(t, req.JobID, "ready")
	sock := SocketPath(r.spool, "n1", req.JobID, StepIDBatch)
	run := func(uid, gid int) string {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = []string{signalerEnv + "=" + sock}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, _ := cmd.CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	ouid, _ := strconv.Atoi(other.Uid)
	ogid, _ := strconv.Atoi(other.Gid)
	if out := run(ouid, ogid); !strings.Contains(out, "operation not permitted") {
		t.Errorf("signal from uid %d (not the owner): %q, want EPERM", ouid, out)
	}
	if st := r.waitState(t, req.JobID, StateRunning); st.JobID != req.JobID {
		t.Fatal("job gone after a refused signal")
	}
	if out := run(int(r.uid), int(r.gid)); out != "signal: ok" {
		t.Errorf("signal from the owner: %q", out)
	}
	if got := r.ctld.wait(t); got.JobRC != uint32(syscall.SIGKILL) {
		t.Errorf("job_rc = %d, want SIGKILL", got.JobRC)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
