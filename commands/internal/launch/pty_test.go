package launch

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/pack"
)

// TestIOServerPTYStreams: in a --pty step the node of task 0 announces one
// stdout stream (the terminal) and no stderr, the other nodes none at all;
// the stream is done at the terminal's EOF, its bytes written untouched.
func TestIOServerPTYStreams(t *testing.T) {
	key := []byte("MUNGE:key\x00")
	var out, errb syncBuf
	srv, err := newIOServer(key, 2, 2, false, &out, &errb, strings.NewReader(""), -1, []uint32{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.close()
	dial := func(node, stdout uint32) net.Conn {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(srv.port()))))
		if err != nil {
			t.Fatal(err)
		}
		var w pack.Writer
		jobcred.AppendIOInit(&w, &jobcred.IOInit{Version: 0x2600, NodeID: node, StdoutObjs: stdout, IOKey: key})
		if _, err := c.Write(w.Bytes()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1 := dial(1, 0)
	defer c1.Close()
	c0 := dial(0, 1)
	defer c0.Close()
	c0.Write(frame(ioStdout, 0, "/dev/pts/3\r\n"))
	select {
	case <-srv.done:
		t.Fatal("done before the terminal's EOF")
	default:
	}
	c0.Write(frame(ioStdout, 0, ""))
	<-srv.done
	if out.String() != "/dev/pts/3\r\n" || errb.String() != "" {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
}
