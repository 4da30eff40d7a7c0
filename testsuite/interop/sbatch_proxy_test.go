package interop

// A recording TCP proxy between a command and slurmctld: both the real
// sbatch and ours are pointed at it (through a copy of slurm.conf with its
// port), so the requests they put on the wire can be compared.

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/goslurm/goslurm/protocol/wire"
)

type sbProxy struct {
	ln       net.Listener
	upstream string

	mu     sync.Mutex
	frames [][]byte // first frame of every connection, length prefix included
	wg     sync.WaitGroup
}

func sbStartProxy(t *testing.T, upstream string) *sbProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &sbProxy{ln: ln, upstream: upstream}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *sbProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *sbProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.relay(c)
		}()
	}
}

// relay reads the request frame, keeps it, forwards it and then copies
// bytes both ways until either side closes.
func (p *sbProxy) relay(c net.Conn) {
	defer c.Close()
	raw, err := wire.ReadRaw(c, 0)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.frames = append(p.frames, raw)
	p.mu.Unlock()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	if _, err := up.Write(raw); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		up.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(c, up)
	c.(*net.TCPConn).CloseWrite()
	<-done
}

// take returns and forgets the frames recorded so far.
func (p *sbProxy) take() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.frames
	p.frames = nil
	return f
}
