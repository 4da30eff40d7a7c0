package stepd

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/cgroup"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
)

// cgroupRig is a rig whose steps run in cgroups (cgroup v1 on this host;
// skipped where the hierarchy is not usable).
func cgroupRig(t *testing.T) *rig {
	t.Helper()
	requireRoot(t)
	if v, err := cgroup.Detect("autodetect", "/sys/fs/cgroup"); err != nil || v != cgroup.V1 {
		t.Skipf("needs a cgroup v1 hierarchy (detected %v, %v)", v, err)
	}
	r := newRig(t, "nobody")
	cg := filepath.Join(r.dir, "cgroup.conf")
	if err := os.WriteFile(cg, []byte("CgroupPlugin=cgroup/v1\nConstrainRAMSpace=yes\nConstrainSwapSpace=yes\nAllowedSwapSpace=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.mgr.Config.ProctrackType = "proctrack/cgroup"
	r.mgr.Config.CgroupConf = cg
	// A node name of our own: with MultipleSlurmd the cgroups are
	// /slurm_<node>/..., apart from any real slurmd's on this host.
	r.mgr.Config.NodeName = "gsstepdtest"
	r.mgr.Config.NodeCPUs = 16
	r.mgr.Config.RealMemoryMB = 4096
	r.mgr.Config.MultipleSlurmd = true
	t.Cleanup(func() {
		// The step's own cgroups are gone with the step; the root Slurm
		// leaves behind is ours to remove (rmdir: only if empty).
		dirs, _ := filepath.Glob("/sys/fs/cgroup/*/slurm_gsstepdtest")
		for _, d := range dirs {
			syscall.Rmdir(d)
		}
	})
	return r
}

// TestCgroupKillsDaemonizedProcesses: a process that leaves the script's
// session and process group (setsid) is still part of the step and dies
// with it.
func TestCgroupKillsDaemonizedProcesses(t *testing.T) {
	r := cgroupRig(t)
	pidFile := filepath.Join(r.work, "daemon.pid")
	req := r.launch(t, "#!/bin/sh\nsetsid sh -c 'echo $$ > "+pidFile+"; exec sleep 300' < /dev/null > /dev/null 2>&1 &\n"+
		"while [ ! -s "+pidFile+" ]; do sleep 0.05; done\nexit 0\n", nil)
	r.start(t, req)
	if got := r.ctld.wait(t); got.JobRC != 0 {
		t.Fatalf("job_rc = %d", got.JobRC)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The completion is sent after the step's cgroup was emptied. The
	// process may linger as a zombie when nothing reaps orphans (PID 1 of
	// a container): that is dead too.
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("daemonized process %d survived the step", pid)
	}
}

// alive reports a process that exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestCgroupOutOfMemory: with ConstrainRAMSpace and a 32 MB job, a script
// that takes 200 MB is OOM-killed and the completion says SIG_OOM.
func TestCgroupOutOfMemory(t *testing.T) {
	r := cgroupRig(t)
	req := r.launch(t, "#!/bin/sh\nhead -c 200M /dev/zero | tail > /dev/null\n", func(m *msg.BatchJobLaunch) {
		body := m.Cred.Body
		body.JobMem = []jobcred.MemGroup{{MB: 32, Reps: 1}}
		body.StepMem = []jobcred.MemGroup{{MB: 32, Reps: 1}}
		cred, err := jobcred.Create(t.Context(), body, jobcred.Version2205, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		m.Cred = cred
	})
	r.start(t, req)
	if got := r.ctld.wait(t); got.JobRC != sigOOM {
		t.Errorf("job_rc = %d, want SIG_OOM %d", got.JobRC, sigOOM)
	}
}
