package slurmauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Server socket paths Slurm 23.11+ uses; clients try them in
// DefaultSackPaths order.
const (
	SackSocketSlurmd    = "/run/slurm/sack.socket"
	SackSocketSlurmctld = "/run/slurmctld/sack.socket"
	SackSocketSlurmdbd  = "/run/slurmdbd/sack.socket"
)

// Socket permissions (the decision, documented):
//
//   - the socket is 0666: any local user may connect, which grants nothing
//     but a token for the identity the kernel reports for that user
//     (SO_PEERCRED), exactly as munged's socket is world-writable;
//   - its directory must be owned by this process's uid or root and
//     writable by nobody else (0755 when we create it, as Slurm does with
//     /run/slurm*). Otherwise another user could unlink the socket and
//     put an impostor in its place, which would hand out tokens nobody
//     accepts and, worse, answer "valid" to a command's verify request.
const (
	SackSocketMode = 0o666
	SackDirMode    = 0o755
)

// DefaultSackTimeout bounds one sack exchange (connect to close).
const DefaultSackTimeout = 10 * time.Second

// DefaultSackMaxConns bounds concurrent sack connections per server.
const DefaultSackMaxConns = 128

// ListenSack prepares path's directory and listens on path with the
// permissions above. The directory is created (0755) when missing, its
// parent must exist; an existing directory must not be a symbolic link,
// must be owned by us or root and not group/other writable. A stale socket
// at path is removed; any other kind of file there is an error.
//
// Like Slurm, the socket is not removed when the listener closes: several
// daemons on one host may take turns owning it.
func ListenSack(path string) (*net.UnixListener, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("slurmauth: sack socket %q: want an absolute path", path)
	}
	dir := filepath.Dir(path)
	if err := os.Mkdir(dir, SackDirMode); err == nil {
		if err := os.Chmod(dir, SackDirMode); err != nil {
			return nil, fmt.Errorf("slurmauth: sack dir %s: %w", dir, err)
		}
	} else if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("slurmauth: sack dir %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return nil, fmt.Errorf("slurmauth: sack dir %s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("slurmauth: sack dir %s is not a directory", dir)
	}
	if euid := uint32(os.Geteuid()); st.Uid != euid && st.Uid != 0 {
		return nil, fmt.Errorf("slurmauth: sack dir %s is owned by uid %d, not %d or root", dir, st.Uid, euid)
	}
	if st.Mode&0o022 != 0 {
		return nil, fmt.Errorf("slurmauth: sack dir %s is group/other writable (mode 0%o)", dir, st.Mode&0o7777)
	}
	if err := unix.Lstat(path, &st); err == nil {
		if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			return nil, fmt.Errorf("slurmauth: %s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("slurmauth: removing stale %s: %w", path, err)
		}
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("slurmauth: sack: %w", err)
	}
	l.SetUnlinkOnClose(false)
	if err := os.Chmod(path, SackSocketMode); err != nil {
		l.Close()
		return nil, fmt.Errorf("slurmauth: sack: %w", err)
	}
	return l, nil
}

// SackServer is the local token service run inside our daemons. It mints
// tokens (context "sack") for whoever connects, with the uid and gid the
// kernel reports for the connecting process, and verifies tokens for them.
type SackServer struct {
	// Auth supplies the key, cluster, TTL, host, version and clock. Its Key
	// is required.
	Auth *Slurm
	// Timeout bounds each connection; 0 means DefaultSackTimeout.
	Timeout time.Duration
	// MaxConns bounds concurrent connections; 0 means DefaultSackMaxConns.
	// Connections beyond it wait in the kernel's backlog.
	MaxConns int
	// Logger; nil means slog.Default().
	Logger *slog.Logger

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	closed    bool
	wg        sync.WaitGroup
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("slurmauth: sack server closed")

func (s *SackServer) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Serve accepts connections on l until Close, answering one request per
// connection. It returns ErrServerClosed after Close.
func (s *SackServer) Serve(l *net.UnixListener) error {
	if s.Auth == nil || s.Auth.Key == nil {
		return errors.New("slurmauth: sack server needs a key")
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	if s.listeners == nil {
		s.listeners = make(map[net.Listener]struct{})
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()

	limit := s.MaxConns
	if limit <= 0 {
		limit = DefaultSackMaxConns
	}
	sem := make(chan struct{}, limit)
	var delay time.Duration
	for {
		sem <- struct{}{}
		c, err := l.AcceptUnix()
		if err != nil {
			<-sem
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
				delay = min(max(delay*2, 5*time.Millisecond), time.Second)
				s.log().Warn("sack: accept", "err", err, "retry_in", delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-sem }()
			s.serveConn(c)
		}()
	}
}

// Close stops all Serve loops and waits for connections in progress.
func (s *SackServer) Close() error {
	s.mu.Lock()
	s.closed = true
	var err error
	for l := range s.listeners {
		if e := l.Close(); e != nil && err == nil {
			err = e
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *SackServer) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultSackTimeout
}

// serveConn answers one request. A request that cannot be framed (short,
// bad length, unknown rpc) gets no answer, as in Slurm: the connection is
// closed. A framed request whose body is malformed gets the rpc's failure
// reply.
func (s *SackServer) serveConn(c *net.UnixConn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(s.timeout()))
	uid, gid, pid, err := peerCred(c)
	if err != nil {
		s.log().Error("sack: peer credentials", "err", err)
		return
	}
	lg := s.log().With("uid", uid, "gid", gid, "pid", pid)
	var hdr [SackHeaderLength]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		lg.Debug("sack: short request", "err", err)
		return
	}
	version, rpc, rest, err := ParseSackHeader(hdr[:])
	if err != nil {
		lg.Warn("sack: refused request", "err", err)
		return
	}
	body := make([]byte, rest) // rest <= MaxSackRequest, checked
	if _, err := io.ReadFull(c, body); err != nil {
		lg.Debug("sack: short request", "err", err)
		return
	}
	req, err := decodeSackBody(version, rpc, body)
	if err != nil {
		lg.Warn("sack: refused request", "err", err)
		s.reply(c, rpc, "", slurmerr.ESLURM_AUTH_UNPACK)
		return
	}
	switch rpc {
	case SackCreate:
		a := s.Auth
		tok, err := a.Key.Mint(MintParams{
			Context: ContextSack, UID: uid, GID: gid, RUID: req.RUID, Payload: req.Payload,
			Cluster: a.Cluster, Host: a.host(), Version: a.version(), Now: a.now(), TTL: a.TTL,
		})
		if err != nil {
			lg.Error("sack: mint", "err", err)
			s.reply(c, rpc, "", slurmerr.ESLURM_AUTH_UNABLE_TO_SIGN)
			return
		}
		lg.Debug("sack: token created", "ruid", req.RUID)
		s.reply(c, rpc, tok, 0)
	case SackVerify:
		a := s.Auth
		_, err := a.Key.Parse(req.Token, VerifyParams{Now: a.now(), DecoderUID: uid, Cluster: a.Cluster})
		rc := slurmerr.Code(err)
		if err != nil {
			lg.Debug("sack: token refused", "err", err)
		}
		s.reply(c, rpc, "", rc)
	}
}

func (s *SackServer) reply(c net.Conn, rpc uint32, tok string, rc int) {
	w := pack.NewWriter(nil)
	switch rpc {
	case SackCreate:
		if rc != 0 || tok == "" {
			w.U32(0)
		} else {
			w.Str(tok)
		}
	case SackVerify:
		w.U32(uint32(int32(rc)))
	}
	if _, err := c.Write(w.Bytes()); err != nil {
		s.log().Debug("sack: reply", "err", err)
	}
}

// Run is a convenience for daemons: listen on path and serve in the
// background until ctx is done. The returned function waits for shutdown.
func (s *SackServer) Run(ctx context.Context, path string) (wait func() error, err error) {
	l, err := ListenSack(path)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	go func() {
		<-ctx.Done()
		s.Close()
	}()
	return func() error {
		err := <-done
		if errors.Is(err, ErrServerClosed) {
			return nil
		}
		return err
	}, nil
}
