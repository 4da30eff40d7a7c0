package interop

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/wire"
	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// A recorder between the commands and slurmctld that keeps each
// connection's request and reply frames, so the admin messages can be
// checked byte for byte: real bytes decode with our codecs and encode back
// to the same bytes, and our controller's replies decode to what real
// slurmctld's do.

type wireExchange struct{ req, resp []byte }

type wireRecorder struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	got      []wireExchange
	wg       sync.WaitGroup
}

func startWireRecorder(t *testing.T, upstream string) *wireRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &wireRecorder{ln: ln, upstream: upstream}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				r.relay(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		r.wg.Wait()
	})
	return r
}

// relay passes one request and its one reply (every admin RPC is one of
// each) and keeps both.
func (r *wireRecorder) relay(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	req, err := wire.ReadRaw(c, 0)
	if err != nil {
		return
	}
	up, err := net.DialTimeout("tcp", r.upstream, 10*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	_ = up.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := up.Write(req); err != nil {
		return
	}
	resp, err := wire.ReadRaw(up, 0)
	if err != nil {
		return
	}
	r.mu.Lock()
	r.got = append(r.got, wireExchange{req, resp})
	r.mu.Unlock()
	_, _ = c.Write(resp)
}

func (r *wireRecorder) take() []wireExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.got
	r.got = nil
	return g
}

// wireBody decodes a raw frame's body with our codecs, checks that it
// encodes back to the same bytes, and returns the type and the body.
func wireBody(t *testing.T, raw []byte) (msgtype.Type, any) {
	t.Helper()
	f, err := codec.DecodeFrame(raw)
	if err != nil {
		t.Fatalf("frame: %v", err)
	}
	mt := f.Header.MsgType
	bc, ok := msg.Registry().Lookup(mt)
	if !ok {
		t.Fatalf("%v: no body codec", mt)
	}
	rd := pack.NewReader(f.Body)
	v, err := bc.Decode(rd, f.Header.Version)
	if err == nil {
		err = rd.Done()
	}
	if err != nil {
		t.Fatalf("%v: decoding %x: %v", mt, f.Body, err)
	}
	var w pack.Writer
	if err := bc.Encode(&w, f.Header.Version, v); err != nil {
		t.Fatalf("%v: encoding: %v", mt, err)
	}
	if !bytes.Equal(w.Bytes(), f.Body) {
		t.Errorf("%v: round trip\n got  %x\n want %x", mt, w.Bytes(), f.Body)
	}
	return mt, v
}

// wireMask blanks the reply fields that carry the time.
func wireMask(v any) any {
	switch b := v.(type) {
	case msg.FrontEndInfoResponse:
		b.LastUpdate = 0
		return b
	case *msg.FrontEndInfoResponse:
		c := *b
		c.LastUpdate = 0
		return c
	}
	return v
}

type wireCmd struct {
	nobody bool
	args   []string
}

// wireRun runs a real command against the recorder and returns the
// exchanges it made, each as "request type -> reply type" and the decoded
// reply.
func wireRun(t *testing.T, rec *wireRecorder, conf string, c wireCmd) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, oracle.Binary(t, c.args[0]), c.args[1:]...)
	cmd.Env = []string{"SLURM_CONF=" + conf, "PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	if c.nobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	_ = cmd.Run() // the replies are compared, not the exit status
	var out []string
	for _, x := range rec.take() {
		qt, _ := wireBody(t, x.req)
		rt, body := wireBody(t, x.resp)
		out = append(out, fmt.Sprintf("%v -> %v %#v", qt, rt, wireMask(body)))
	}
	return out
}

func TestSlurmctldAdminWire(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{"TopologyPlugin=topology/tree"}})
	topo := "SwitchName=s0 Nodes=n1 LinkSpeed=100\nSwitchName=s1 Nodes=n2\nSwitchName=top Switches=s[0-1]\n"
	if err := os.WriteFile(filepath.Join(c.Dir, "etc", "topology.conf"), []byte(topo), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := startWireRecorder(t, "127.0.0.1:"+strconv.Itoa(c.CtldPort))
	data, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	port := rec.ln.Addr().(*net.TCPAddr).Port
	conf := strings.Replace(string(data), fmt.Sprintf("SlurmctldPort=%d", c.CtldPort), fmt.Sprintf("SlurmctldPort=%d", port), 1)
	// Not under t.TempDir, whose parent nobody cannot enter.
	confDir, err := os.MkdirTemp("", "ctldh-wire-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(confDir) })
	if err := os.Chmod(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(confDir, "slurm.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := []wireCmd{
		{args: []string{"scontrol", "show", "topology"}},
		{args: []string{"scontrol", "show", "frontend"}},
		{args: []string{"scontrol", "show", "burstbuffer"}},
		{args: []string{"scontrol", "show", "assoc_mgr"}},
		// Not qos=: 22.05 without accounting crashes on a QOS filter.
		{args: []string{"scontrol", "show", "assoc_mgr", "users=root,nobody", "accounts=a,b", "flags=users,assoc,qos"}},
		{args: []string{"scontrol", "show", "bbstat", "a", "b"}},
		{args: []string{"scontrol", "update", "FrontendName=n1", "State=RESUME"}},
		{args: []string{"sshare", "-a"}},
		{args: []string{"sshare", "-u", "root", "-A", "a,b"}},
		{args: []string{"scontrol", "token"}},
		{args: []string{"scontrol", "token", "username=nobody", "lifespan=60"}},
		{args: []string{"scontrol", "setdebug", "debug"}},
		{args: []string{"scontrol", "setdebugflags", "+Backfill"}},
		{args: []string{"scontrol", "setdebugflags", "-Backfill"}},
		{args: []string{"scontrol", "schedloglevel", "1"}},
		{args: []string{"strigger", "--get"}},
		{args: []string{"strigger", "--clear", "--id=7"}},
		{args: []string{"strigger", "--clear", "--jobid=9"}},
		{nobody: true, args: []string{"strigger", "--set", "--node=n1", "--down", "--program=/bin/true"}},
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) string {
		var b strings.Builder
		for _, cmd := range cmds {
			fmt.Fprintf(&b, "== %s\n", strings.Join(cmd.args, " "))
			for _, l := range wireRun(t, rec, confPath, cmd) {
				b.WriteString(l + "\n")
			}
		}
		return b.String()
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	t.Logf("real slurmctld:\n%s", want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("replies differ (-real +ours):\n%s", d)
	}

	// A trigger real slurmctld accepts: its set request and the listing
	// that holds it decode and encode back to the same bytes.
	c.Start(real, "-c", "-i")
	defer c.Stop()
	set := wireRun(t, rec, confPath, wireCmd{args: []string{"strigger", "--set", "--node=n1", "--down", "--program=/bin/true", "--offset=60", "--flags=perm"}})
	get := wireRun(t, rec, confPath, wireCmd{args: []string{"strigger", "--get"}})
	t.Logf("real trigger set: %v\nget: %v", set, get)
	if len(get) != 1 || !strings.Contains(get[0], "TrigID:") || strings.Contains(get[0], "Triggers:[]msg.Trigger(nil)") {
		t.Errorf("real strigger --get: %v", get)
	}
}
