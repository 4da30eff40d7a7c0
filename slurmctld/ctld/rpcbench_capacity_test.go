package ctld

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/munge/mungetest"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/server"
)

// BenchmarkCtldRPC measures the controller's own CPU per small RPC, served
// over loopback with auth/munge as slurmctld serves it (every request's
// credential decoded by a private munged, every reply signed). The load
// comes from a child process (this test binary running
// TestRPCBenchGenerator), 64 requests in flight, so the process CPU
// measured here is the server's alone: cpu-us/req is what to compare.
// Profile with -cpuprofile to see where it goes.
//
//	go test -run '^$' -bench CtldRPC -benchtime 20000x ./slurmctld/ctld
//
// GOSLURM_RPCBENCH_LOCAL=1: server and generator encode and decode MUNGE
// credentials in process (munge.Local with munged's key), as slurmctld
// does with GOSLURM_MUNGE_KEY.
func BenchmarkCtldRPC(b *testing.B) {
	d := mungetest.Start(b, mungetest.Options{})
	ctl := rpcBenchController(b)
	authn := rpcBenchAuth(b, d.Socket, d.KeyFile)
	srv := &server.Server{Auth: authn, Handler: ctl,
		Codec: &codec.Codec{Bodies: msg.Registry()}, Log: slog.New(slog.DiscardHandler)}
	// GOSLURM_RPCBENCH_KEEPALIVE=1 listens as net.Listen does (keep-alive
	// on every accepted connection), for comparison.
	listen := server.Listen
	if os.Getenv("GOSLURM_RPCBENCH_KEEPALIVE") != "" {
		listen = func(ctx context.Context, network, addr string) (net.Listener, error) {
			var lc net.ListenConfig
			return lc.Listen(ctx, network, addr)
		}
	}
	ln, err := listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })

	for _, name := range []string{"REQUEST_PING", "REQUEST_JOB_INFO_SINGLE", "REQUEST_NODE_INFO"} {
		b.Run(name, func(b *testing.B) {
			// Warm up connections, munged and the runtime; untimed.
			rpcBenchRun(b, ln.Addr().String(), d.Socket, d.KeyFile, name, 500)
			b.ResetTimer()
			before := rpcBenchCPU()
			t0 := time.Now()
			rpcBenchRun(b, ln.Addr().String(), d.Socket, d.KeyFile, name, b.N)
			wall := time.Since(t0)
			cpu := rpcBenchCPU() - before
			b.StopTimer()
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/req")
			b.ReportMetric(float64(b.N)/wall.Seconds(), "req/s")
		})
	}
}

// rpcBenchRun runs the generator child for n requests of type name and
// fails b if any went wrong.
func rpcBenchRun(b *testing.B, addr, socket, key, name string, n int) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestRPCBenchGenerator$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOSLURM_RPCBENCH_ADDR="+addr, "GOSLURM_RPCBENCH_SOCKET="+socket, "GOSLURM_RPCBENCH_KEY="+key,
		"GOSLURM_RPCBENCH_TYPE="+name, "GOSLURM_RPCBENCH_N="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("generator: %v\n%s", err, out)
	}
}

// rpcBenchAuth is auth/munge through munged's socket, or in process with
// its key under GOSLURM_RPCBENCH_LOCAL=1.
func rpcBenchAuth(tb testing.TB, socket, keyFile string) *auth.Munge {
	m := &auth.Munge{Client: &munge.Client{Socket: socket}}
	if os.Getenv("GOSLURM_RPCBENCH_LOCAL") == "1" {
		key, err := munge.LoadKey(keyFile)
		if err != nil {
			tb.Fatal(err)
		}
		if m.Codec, err = munge.NewLocal(key, munge.LocalConfig{}); err != nil {
			tb.Fatal(err)
		}
	}
	return m
}

// rpcBenchCPU is this process's user+system CPU time.
func rpcBenchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func rpcBenchController(b *testing.B) *Controller {
	b.Helper()
	c, err := conf.Parse("slurm.conf", []byte(testConf), conf.MapFS{})
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := NewConfig(c, "/etc/slurm/slurm.conf")
	if err != nil {
		b.Fatal(err)
	}
	ctl, err := New(Options{Config: cfg, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	return ctl
}

// TestRPCBenchGenerator is BenchmarkCtldRPC's load generator; it does
// nothing unless the benchmark started it.
func TestRPCBenchGenerator(t *testing.T) {
	addr := os.Getenv("GOSLURM_RPCBENCH_ADDR")
	if addr == "" {
		t.Skip("BenchmarkCtldRPC's load generator")
	}
	n, _ := strconv.Atoi(os.Getenv("GOSLURM_RPCBENCH_N"))
	cl := &client.Client{Controllers: []string{addr},
		Auth:           rpcBenchAuth(t, os.Getenv("GOSLURM_RPCBENCH_SOCKET"), os.Getenv("GOSLURM_RPCBENCH_KEY")),
		MessageTimeout: 60 * time.Second, Sweeps: 1}
	var mt msgtype.Type
	var body any
	var want msgtype.Type
	switch os.Getenv("GOSLURM_RPCBENCH_TYPE") {
	case "REQUEST_PING":
		mt, want = msgtype.REQUEST_PING, msgtype.RESPONSE_SLURM_RC
	case "REQUEST_JOB_INFO_SINGLE":
		mt, body, want = msgtype.REQUEST_JOB_INFO_SINGLE, msg.JobIDShowRequest{JobID: 1, ShowFlags: msg.ShowLocal}, msgtype.RESPONSE_SLURM_RC
	case "REQUEST_NODE_INFO":
		mt, body, want = msgtype.REQUEST_NODE_INFO, msg.InfoRequest{ShowFlags: msg.ShowLocal}, msgtype.RESPONSE_NODE_INFO
	default:
		t.Fatalf("unknown type %q", os.Getenv("GOSLURM_RPCBENCH_TYPE"))
	}
	var raw []byte
	if body != nil {
		bc, _ := msg.Registry().Lookup(mt)
		var w pack.Writer
		if err := bc.Encode(&w, codec.Version2205, body); err != nil {
			t.Fatal(err)
		}
		raw = w.Bytes()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				r, err := cl.Call(context.Background(), mt, raw)
				if err == nil && r.Frame.Header.MsgType != want {
					err = fmt.Errorf("reply %v, want %v", r.Frame.Header.MsgType, want)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
