package launch

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/server"
)

// quiet is the logger of our listeners: a message we cannot read is
// dropped as Slurm's client threads drop it, without noise on the user's
// terminal.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Listener is one of the ports srun and salloc open for messages pushed to
// them (by slurmctld or slurmstepd). Every request is verified, decoded
// and passed to Handle, whose non-nil answer is sent back.
type Listener struct {
	ln  net.Listener
	srv *server.Server
	wg  sync.WaitGroup
}

// Handle answers one pushed message.
type Handle func(mt msgtype.Type, body any) *server.Response

// Listen opens a listener on an ephemeral port of every address (the
// peers connect to whatever address they see us at).
func Listen(a auth.Authenticator, types []msgtype.Type, h Handle) (*Listener, error) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return nil, err
	}
	mux := server.Mux{}
	for _, mt := range types {
		mux[mt] = server.HandlerFunc(func(_ context.Context, r *server.Request) *server.Response {
			return h(r.Header.MsgType, r.Body)
		})
	}
	// Peers sign with the cluster's auth: with auth/slurm their frames
	// carry sections a 22.05 codec refuses.
	_, slurmAuth := a.(*slurmauth.Slurm)
	cd := &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: slurmAuth}
	l := &Listener{ln: ln, srv: &server.Server{Auth: a, Handler: mux, Log: quiet, Codec: cd,
		ReplyRUID: func(auth.Identity) uint32 { return auth.UIDAny }}}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.srv.Serve(ln)
	}()
	return l, nil
}

// Port is the listening port.
func (l *Listener) Port() uint16 { return uint16(l.ln.Addr().(*net.TCPAddr).Port) }

// Close stops accepting and waits for the messages in progress.
func (l *Listener) Close() {
	l.srv.Shutdown(context.Background())
	l.ln.Close()
	l.wg.Wait()
}
