// Command sackd runs goslurm's local token service (credential/slurmauth's
// SackServer) on its own, like the sackd of Slurm 23.11 and later: the
// commands of a cluster with AuthType=auth/slurm cannot read the key and ask
// this service for tokens over a UNIX socket instead.
//
// It exists for `make demo`, where no daemon of ours serves the socket yet
// (slurmctld and slurmd load the key but do not run the service). It always
// runs in the foreground; -D is accepted for Slurm's spelling. The socket is
// AuthInfo's sack_socket= (goslurm extension), else /run/slurm/sack.socket.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/slurmauth"
)

// CLI is sackd's command line.
type CLI struct {
	ConfFile   string `short:"f" placeholder:"config" help:"Read configuration from the specified file."`
	Foreground bool   `short:"D" help:"Run in the foreground (always the case)."`
	PidFile    string `name:"pid-file" placeholder:"path" help:"Write the process id to path."`
	Verbose    int    `short:"v" type:"counter" help:"Log each request."`
}

func main() {
	os.Exit(Main(os.Args, os.Stderr))
}

// Main runs sackd with args until SIGTERM or SIGINT; it returns the exit
// status.
func Main(args []string, stderr io.Writer) int {
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("sackd"), kong.Writers(stderr, stderr))
	if err != nil {
		fmt.Fprintf(stderr, "sackd: %v\n", err)
		return 1
	}
	if _, err := parser.Parse(args[1:]); err != nil {
		fmt.Fprintf(stderr, "sackd: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, &cli, stderr); err != nil {
		fmt.Fprintf(stderr, "sackd: fatal: %v\n", err)
		return 1
	}
	return 0
}

func confPath(cli *CLI) string {
	if cli.ConfFile != "" {
		return cli.ConfFile
	}
	if v := os.Getenv("SLURM_CONF"); v != "" {
		return v
	}
	return "/etc/slurm/slurm.conf"
}

func run(ctx context.Context, cli *CLI, stderr io.Writer) error {
	path := confPath(cli)
	c, err := conf.Load(conf.OSFS{}, path)
	if err != nil {
		return err
	}
	if c.AuthType != "auth/slurm" {
		return fmt.Errorf("%s: AuthType=%s: sackd serves auth/slurm only", path, c.AuthType)
	}
	opts, err := slurmauth.ParseAuthInfo(c.AuthInfo)
	if err != nil {
		return err
	}
	key, err := slurmauth.LoadKey(slurmauth.KeyPath(opts, path, os.Getenv))
	if err != nil {
		return err
	}
	sock := opts.SackSocket
	if sock == "" {
		sock = slurmauth.SackSocketSlurmd
	}
	level := slog.LevelInfo
	if cli.Verbose > 0 {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	srv := &slurmauth.SackServer{
		Auth:   &slurmauth.Slurm{Key: key, Cluster: c.ClusterName, TTL: opts.TTL},
		Logger: log,
	}
	l, err := slurmauth.ListenSack(sock)
	if err != nil {
		return err
	}
	// ListenSack leaves the socket behind on close (daemons may share it);
	// sackd owns its socket, so it removes it when it stops.
	defer os.Remove(sock)
	if cli.PidFile != "" {
		if err := os.WriteFile(cli.PidFile, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644); err != nil {
			l.Close()
			return err
		}
		defer os.Remove(cli.PidFile)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	log.Info("sackd started", "socket", sock, "cluster", c.ClusterName)
	select {
	case <-ctx.Done():
		srv.Close()
		if err := <-done; !errors.Is(err, slurmauth.ErrServerClosed) {
			return err
		}
		log.Info("sackd stopped")
		return nil
	case err := <-done:
		return err
	}
}
