package interop

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/forward"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// buildSlurmd compiles goslurm's slurmd and its step supervisor,
// slurmstepd, into one private directory that any user may enter (jobs of
// other users run the supervisor binary as themselves), and returns the
// slurmd path; slurmd finds slurmstepd next to itself, as in bin/.
func buildSlurmd(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build slurmd: %v", err)
	}
	dir, err := os.MkdirTemp("", "goslurm-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Registered before the cluster's own clean-up, so it runs after it:
	// supervisors left behind by a failed test (they run in their own
	// sessions, with a clean environment) go too.
	t.Cleanup(func() { killExe(dir) })
	for _, p := range []string{"slurmd", "slurmd/slurmstepd"} {
		out := filepath.Join(dir, filepath.Base(p))
		cmd := exec.Command(gobin, "build", "-o", out, "github.com/goslurm/goslurm/"+p)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", p, err, b)
		}
	}
	return filepath.Join(dir, "slurmd")
}

// killExe SIGKILLs every process running a binary from dir.
func killExe(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range procs {
		exe, err := os.Readlink(filepath.Join(d, "exe"))
		if err != nil || filepath.Dir(strings.TrimSuffix(exe, " (deleted)")) != dir {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// nodeStates returns `sinfo -h -N -o "%N %T"` as node -> state.
func nodeStates(t *testing.T, c *realslurm.Cluster) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := c.Command(ctx, "sinfo", "-h", "-N", "-o", "%N %T").Output()
	if err != nil {
		t.Fatalf("sinfo: %v", err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			m[f[0]] = f[1]
		}
	}
	return m
}

// waitState polls sinfo until node is in state want.
func waitState(t *testing.T, c *realslurm.Cluster, p *realslurm.Proc, node, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last map[string]string
	for time.Now().Before(deadline) {
		last = nodeStates(t, c)
		if last[node] == want {
			return
		}
		select {
		case <-p.Done():
			t.Fatalf("our slurmd exited: %v", p.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatalf("%s not %s within %v (sinfo: %v)", node, want, within, last)
}

func showNode(t *testing.T, c *realslurm.Cluster, node string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := c.Command(ctx, "scontrol", "show", "node", node).Output()
	if err != nil {
		t.Fatalf("scontrol show node %s: %v", node, err)
	}
	return string(out)
}

func count(s, sub string) int { return strings.Count(s, sub) }

func kind(ours bool) string {
	if ours {
		return "goslurm"
	}
	return "real"
}

// TestGoSlurmdUnderRealSlurmctld runs goslurm's slurmd as node n1 of a real
// Slurm 22.05 cluster (real slurmctld, real slurmd n2, one host, one
// munged) and checks what the real controller and commands make of it.
// Ours is n1 so that it heads the forwarding trees over both nodes.
func TestGoSlurmdUnderRealSlurmctld(t *testing.T) {
	const ours, real = "n1", "n2"
	bin := buildSlurmd(t)
	c := realslurm.Start(t, realslurm.Options{
		Nodes:    2,
		External: []string{ours},
		// Pings every SlurmdTimeout/3 s, so a short run sees several.
		ExtraConf: []string{"SlurmdTimeout=9"},
	})
	p, err := c.Launch("goslurmd-"+ours, bin, nil, "-D", "-vvv", "-N", ours, "-f", c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	logOf := func() string { return c.Log(ours) }

	t.Run("registers and is idle", func(t *testing.T) {
		start := time.Now()
		waitState(t, c, p, ours, "idle", 60*time.Second)
		t.Logf("%s idle %v after launch", ours, time.Since(start).Round(time.Millisecond))
		if !strings.Contains(logOf(), "registered with the controller as "+ours) {
			t.Errorf("no registration in our log:\n%s", logOf())
		}
		if st := nodeStates(t, c); st[real] != "idle" {
			t.Errorf("real %s: %q", real, st[real])
		}
	})

	t.Run("scontrol show node", func(t *testing.T) {
		out := showNode(t, c, ours)
		t.Logf("%s", out)
		for _, want := range []string{"NodeName=" + ours + " ", "CPUTot=2 ", "RealMemory=1000 ", "State=IDLE ", "Version=22.05.8", "NodeAddr=127.0.0.1 "} {
			if !strings.Contains(out, want) {
				t.Errorf("scontrol show node %s lacks %q", ours, want)
			}
		}
		for _, bad := range []string{"Reason=", "DRAIN", "INVAL", "NOT_RESPONDING"} {
			if strings.Contains(out, bad) {
				t.Errorf("scontrol show node %s shows %q", ours, bad)
			}
		}
	})

	t.Run("pings keep it up", func(t *testing.T) {
		before := count(logOf(), "Processing RPC: REQUEST_PING")
		// Longer than SlurmdTimeout: a node that did not answer would
		// be marked NOT_RESPONDING (idle*) by now.
		time.Sleep(12 * time.Second)
		after := count(logOf(), "Processing RPC: REQUEST_PING")
		if after <= before {
			t.Errorf("no ping reached our slurmd in 12 s (%d before, %d after)", before, after)
		}
		if st := nodeStates(t, c)[ours]; st != "idle" {
			t.Errorf("%s after pings: %q", ours, st)
		}
		t.Logf("pings answered during the wait: %d", after-before)
	})

	t.Run("interior node of a forwarding tree", func(t *testing.T) {
		// Width 1 puts both nodes in one span headed by ours: it must
		// relay the untouched message to the real slurmd and answer
		// with the real node's reply in its ret_list.
		addrs := map[string]string{}
		for _, n := range c.Nodes {
			addrs[n.Name] = "127.0.0.1:" + strconv.Itoa(n.Port)
		}
		resolve := func(name string) (string, error) {
			if a, ok := addrs[name]; ok {
				return a, nil
			}
			return "", fmt.Errorf("unknown node %s", name)
		}
		var dials atomic.Int32
		s := &forward.Sender{Resolve: resolve, Auth: &auth.Munge{Client: c.Munge.Client()},
			Codec: &codec.Codec{Bodies: msg.Registry()}, ConnectRetries: -1,
			Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := s.Send(ctx, []string{ours, real}, forward.Request{MsgType: msgtype.REQUEST_PING, RUID: auth.UIDAny, TreeWidth: 1})
		if err != nil {
			t.Fatal(err)
		}
		if dials.Load() != 1 {
			t.Errorf("root opened %d connections, want 1 (ours relays to %s)", dials.Load(), real)
		}
		if len(res) != 2 {
			t.Fatalf("results %v", res)
		}
		for _, r := range res {
			t.Logf("%v", r)
			if r.Failed() || r.MsgType != msgtype.RESPONSE_PING_SLURMD {
				t.Errorf("%s: %v", r.Node, r)
			}
		}
	})

	t.Run("ping round trip, ours and real", func(t *testing.T) {
		addrs := map[string]string{}
		for _, n := range c.Nodes {
			addrs[n.Name] = "127.0.0.1:" + strconv.Itoa(n.Port)
		}
		s := &forward.Sender{Resolve: func(name string) (string, error) { return addrs[name], nil },
			Auth: &auth.Munge{Client: c.Munge.Client()}, Codec: &codec.Codec{Bodies: msg.Registry()}, ConnectRetries: -1}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for _, node := range []string{ours, real} {
			var ds []time.Duration
			for i := 0; i < 30; i++ {
				t0 := time.Now()
				res, err := s.Send(ctx, []string{node}, forward.Request{MsgType: msgtype.REQUEST_PING, RUID: auth.UIDAny})
				if err != nil || len(res) != 1 || res[0].MsgType != msgtype.RESPONSE_PING_SLURMD {
					t.Fatalf("%s: %v %v", node, res, err)
				}
				ds = append(ds, time.Since(t0))
			}
			slices.Sort(ds)
			t.Logf("REQUEST_PING to %s slurmd (%s): median %v, p90 %v over %d", kind(node == ours), node, ds[len(ds)/2], ds[len(ds)*9/10], len(ds))
		}
	})

	t.Run("reconfigure registers again and stays idle", func(t *testing.T) {
		before := count(logOf(), "registered with the controller")
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if out, err := c.Command(ctx, "scontrol", "reconfigure").CombinedOutput(); err != nil {
			t.Fatalf("scontrol reconfigure: %v\n%s", err, out)
		}
		deadline := time.Now().Add(30 * time.Second)
		for count(logOf(), "registered with the controller") <= before {
			if time.Now().After(deadline) {
				t.Fatalf("no registration after reconfigure; log:\n%s", logOf())
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !strings.Contains(logOf(), "Reconfigure request received") {
			t.Error("REQUEST_RECONFIGURE not seen")
		}
		waitState(t, c, p, ours, "idle", 10*time.Second)
		if out := showNode(t, c, ours); !strings.Contains(out, "State=IDLE ") {
			t.Errorf("after reconfigure:\n%s", out)
		}
	})

	t.Run("restart registers again and stays idle", func(t *testing.T) {
		before := count(logOf(), "registered with the controller")
		if err := p.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.Done():
		case <-time.After(30 * time.Second):
			t.Fatal("our slurmd did not stop on SIGTERM")
		}
		if err := p.Err(); err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
		if p, err = c.Launch("goslurmd-"+ours, bin, nil, "-D", "-vvv", "-N", ours, "-f", c.Conf); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for count(logOf(), "registered with the controller") <= before {
			if time.Now().After(deadline) {
				t.Fatalf("no registration after restart; log:\n%s", logOf())
			}
			time.Sleep(100 * time.Millisecond)
		}
		waitState(t, c, p, ours, "idle", 10*time.Second)
		if out := showNode(t, c, ours); strings.Contains(out, "Reason=") {
			t.Errorf("after restart:\n%s", out)
		}
	})

	t.Run("srun -N2 hostname spans a real and a goslurm node", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("our slurmd runs jobs as their user: needs root")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := c.Command(ctx, "srun", "-N2", "-w", "n[1-2]", "-l", "sh", "-c", "echo $SLURMD_NODENAME $SLURM_PROCID")
		cmd.Dir = c.Dir
		out, err := cmd.CombinedOutput()
		t.Logf("srun -N2: err=%v\n%s", err, out)
		if err != nil {
			t.Fatalf("srun -N2 across %s and %s: %v", ours, real, err)
		}
		// -l labels each line with the task rank; both nodes answered.
		for _, want := range []string{"0: n1 0", "1: n2 1"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("srun output lacks %q", want)
			}
		}
		cmd = c.Command(ctx, "srun", "-N2", "-w", "n[1-2]", "hostname")
		cmd.Dir = c.Dir
		if out, err = cmd.Output(); err != nil {
			t.Fatalf("srun -N2 hostname: %v", err)
		}
		host, _ := os.Hostname()
		if got := strings.Fields(string(out)); len(got) != 2 || got[0] != got[1] || !strings.HasPrefix(host, got[0]) {
			t.Errorf("srun -N2 hostname printed %q, want the host name twice", out)
		}
		waitState(t, c, p, ours, "idle", 30*time.Second)
		waitState(t, c, p, real, "idle", 30*time.Second)
	})

	t.Run("sbatch runs on the goslurm node and writes its output", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("our slurmd runs jobs as their user: needs root")
		}
		out := filepath.Join(c.Dir, "out-%j")
		job := submit(t, c, c.Dir, nil, "-w", ours, "-o", out, "--wrap", "echo hello from $SLURMD_NODENAME; hostname >/dev/null")
		waitJob(t, c, job, []string{"COMPLETED"}, 60*time.Second)
		got, err := os.ReadFile(strings.ReplaceAll(out, "%j", job))
		if err != nil || string(got) != "hello from "+ours+"\n" {
			t.Errorf("job output %q (%v), want %q", got, err, "hello from "+ours+"\n")
		}
		waitState(t, c, p, ours, "idle", 30*time.Second)
	})

	if t.Failed() || os.Getenv("GOSLURM_SHOW_LOGS") != "" {
		b, _ := os.ReadFile(filepath.Join(c.Dir, "log", "slurmd-"+ours+".log"))
		t.Logf("our slurmd log:\n%s", b)
		b, _ = os.ReadFile(filepath.Join(c.Dir, "log", "slurmctld.log"))
		t.Logf("slurmctld log:\n%s", b)
	}
}
