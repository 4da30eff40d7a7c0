package forward

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// scriptedDial fails the first fails attempts (all of them when fails < 0)
// with err, then dials for real; it counts the attempts.
func scriptedDial(fails int, err error, attempts *atomic.Int32) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		n := int(attempts.Add(1))
		if fails < 0 || n <= fails {
			return nil, err
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

func dialErr(errno syscall.Errno) error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
}

// TestRootConnectRetries: the root retries a connect that timed out, as
// slurm_send_addr_recv_msgs does, counting the TCPTimeout it waited against
// the retry budget (i += TCPTimeout-1, then the loop's i++), and does not
// pause before the retry; other errors end the attempt at once. The
// injected dialer fails at once, so nothing here waits for a timeout.
func TestRootConnectRetries(t *testing.T) {
	goTimeout := fmt.Errorf("dial tcp: %w", context.DeadlineExceeded)
	tests := []struct {
		name     string
		tcp      time.Duration
		retries  int
		fails    int // -1: every attempt
		err      error
		attempts int32
		ok       bool
	}{
		// Budget 10, each timeout uses 3: attempts at 0, 3, 6 and 9.
		{"ETIMEDOUT until the budget is spent", 3 * time.Second, 10, -1, dialErr(syscall.ETIMEDOUT), 4, false},
		{"ETIMEDOUT then up", 3 * time.Second, 10, 3, dialErr(syscall.ETIMEDOUT), 4, true},
		{"dial deadline counts as a timeout", 3 * time.Second, 10, -1, goTimeout, 4, false},
		// Slurm's default TCPTimeout (2 s): attempts at 0, 2, 4, 6, 8, 10.
		{"default TCPTimeout", 0, 10, -1, dialErr(syscall.ETIMEDOUT), 6, false},
		// Under a second still uses one step: attempts at 0..3.
		{"TCPTimeout under a second", 500 * time.Millisecond, 3, -1, dialErr(syscall.ETIMEDOUT), 4, false},
		{"no retries", 3 * time.Second, -1, -1, dialErr(syscall.ETIMEDOUT), 1, false},
		{"unreachable is not retried", 3 * time.Second, 10, -1, dialErr(syscall.EHOSTUNREACH), 1, false},
		{"refused once, retried a second later", 3 * time.Second, 10, 1, dialErr(syscall.ECONNREFUSED), 2, true},
	}
	c := newCluster(t, 1, 2, 5*time.Second, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var attempts atomic.Int32
			s := &Sender{Resolve: c.resolve, Auth: c.auth, MessageTimeout: 5 * time.Second,
				TCPTimeout: tc.tcp, ConnectRetries: tc.retries, Dial: scriptedDial(tc.fails, tc.err, &attempts)}
			res, err := s.Send(context.Background(), []string{"n1"}, ping(0))
			if err != nil {
				t.Fatal(err)
			}
			if got := attempts.Load(); got != tc.attempts {
				t.Errorf("%d connect attempts, want %d", got, tc.attempts)
			}
			if tc.ok {
				if res[0].Failed() || res[0].RC() != 1 {
					t.Errorf("result %v, want n1's rc 1", res[0])
				}
			} else if !res[0].Failed() || res[0].Err != slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR {
				t.Errorf("result %v, want a connection error", res[0])
			}
		})
	}
}

// TestInteriorConnectNoRetry: a forwarding slurmd tries each sub-head once
// (_forward_thread uses slurm_open_msg_conn directly), timed out or not.
func TestInteriorConnectNoRetry(t *testing.T) {
	c := newCluster(t, 3, 2, 5*time.Second, nil)
	var attempts atomic.Int32
	fw := &Forwarder{Resolve: c.resolve, MessageTimeout: 5 * time.Second, TCPTimeout: 3 * time.Second,
		TreeWidth: 2, Dial: scriptedDial(-1, dialErr(syscall.ETIMEDOUT), &attempts)}
	f := codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil)
	_ = c.auth.Sign(context.Background(), &f, auth.UIDAny)
	f.Header.Forward = codec.Forward{Count: 2, Nodes: "n[2-3]", TreeWidth: 2}
	p := fw.Forward(context.Background(), &f, codec.AddrIPv4([4]byte{127, 0, 0, 1}, 999))
	reply := codec.NewFrame(msgtype.RESPONSE_SLURM_RC, codec.AuthBlob{}, []byte{0, 0, 0, 0})
	p.Attach(&reply)
	if got := attempts.Load(); got != 2 {
		t.Errorf("%d connect attempts for 2 sub-heads, want 2", got)
	}
	for _, it := range reply.Header.RetList {
		if it.MsgType != msgtype.RESPONSE_FORWARD_FAILED || it.Err != slurmerr.SLURM_COMMUNICATIONS_CONNECTION_ERROR {
			t.Errorf("%s: %+v, want a connection error", it.NodeName, it)
		}
	}
	if len(reply.Header.RetList) != 2 {
		t.Errorf("ret_list %+v, want 2 entries", reply.Header.RetList)
	}
}
