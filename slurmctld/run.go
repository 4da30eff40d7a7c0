package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	sdaemon "github.com/coreos/go-systemd/v22/daemon"
	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/ctld"
	"github.com/goslurm/goslurm/slurmd/slurmlog"
)

// daemonEnv marks the re-executed, detached child of a daemonizing
// slurmctld.
const daemonEnv = "GOSLURM_SLURMCTLD_DAEMONIZED"

func run(cli *CLI, stderr io.Writer) int {
	path := confPath(cli)
	cfg, err := ctld.LoadConfig(path)
	if err != nil {
		fmt.Fprintf(stderr, "slurmctld: fatal: %v\n", err)
		return 1
	}
	if !cli.Foreground && os.Getenv(daemonEnv) == "" {
		return daemonize(stderr)
	}
	if cli.Foreground {
		os.Unsetenv(daemonEnv)
	} else if _, err := unix.Setsid(); err != nil && !errors.Is(err, unix.EPERM) {
		fmt.Fprintf(stderr, "slurmctld: fatal: setsid: %v\n", err)
		return 1
	}
	log, closeLog, err := setupLog(cli, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "slurmctld: fatal: %v\n", err)
		return 1
	}
	defer closeLog()
	fatal := func(format string, args ...any) int {
		slurmlog.Fatal(log, fmt.Sprintf(format, args...))
		return 1
	}
	c := cfg.Conf
	host, err := shortHostname()
	if err != nil {
		return fatal("%v", err)
	}
	idx := cfg.ControllerIndex(host)
	if idx < 0 && len(c.SlurmctldHost) > 0 && c.SlurmctldHost[0].Host == "localhost" {
		idx = 0
	}
	switch {
	case idx < 0:
		return fatal("This host (%s) not a valid controller", host)
	case idx > 0:
		return fatal("This host (%s) is a backup controller (SlurmctldHost[%d]); backup mode is not supported by goslurm's slurmctld", host, idx)
	}
	if cli.Nice != nil {
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, *cli.Nice); err != nil {
			log.Error(fmt.Sprintf("Unable to reset nice value to %d: %v", *cli.Nice, err))
		}
	}
	pid, err := writePidFile(c.SlurmctldPidFile)
	if err != nil {
		return fatal("Unable to create pidfile `%s': %v", c.SlurmctldPidFile, err)
	}
	defer func() {
		os.Remove(c.SlurmctldPidFile)
		pid.Close()
	}()
	authn, acceptSlurm, err := security(cfg)
	if err != nil {
		return fatal("%v", err)
	}
	signer, err := credSigner(cfg)
	if err != nil {
		return fatal("%v", err)
	}
	lns, err := listen(cfg, idx)
	if err != nil {
		return fatal("%v", err)
	}
	if err := becomeSlurmUser(cfg); err != nil {
		return fatal("%v", err)
	}
	if err := setWorkDir(cli, cfg.Conf.SlurmctldLogFile, cfg.Conf.StateSaveLocation); err != nil {
		return fatal("%v", err)
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	cd := &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: acceptSlurm}
	ctl, err := ctld.New(ctld.Options{
		Config: cfg, Auth: authn, Codec: cd,
		Reload:   func() (*ctld.Config, error) { return ctld.LoadConfig(path) },
		Shutdown: stop,
		Log:      log,
	})
	if err != nil {
		return fatal("%v", err)
	}
	closeState, err := openJobs(cli, cfg, ctl, signer, log)
	if err != nil {
		return fatal("%v", err)
	}
	defer closeState()
	if err := recoverFull(cli, cfg, ctl, log); err != nil {
		return fatal("%v", err)
	}
	srv := &server.Server{
		Auth: authn, Handler: ctl, Codec: cd,
		Timeout: cfg.MessageTimeout,
		Log:     log,
	}
	log.Info(fmt.Sprintf("slurmctld version %s started on cluster %s", ctld.Version, c.ClusterName))
	served := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { served <- srv.Serve(ln) }()
	}
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		ctl.Run(ctx)
	}()
	if _, err := sdaemon.SdNotify(false, sdaemon.SdNotifyReady); err != nil {
		log.Error(fmt.Sprintf("sd_notify: %v", err))
	}
	log.Info("Running as primary controller")

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(sigs)
	for running := true; running; {
		select {
		case s := <-sigs:
			switch s {
			case syscall.SIGHUP:
				log.Info("Reconfigure signal (SIGHUP) received")
				if err := ctl.Reconfigure(); err != nil {
					log.Error(fmt.Sprintf("reconfigure: %v", err))
				} else {
					go ctl.ReconfigureNodes()
				}
			case syscall.SIGPIPE:
			default:
				log.Info(fmt.Sprintf("Terminate signal (%s) received", sigName(s)))
				running = false
			}
		case <-ctx.Done():
			running = false
		case err := <-served:
			if !errors.Is(err, server.ErrServerClosed) {
				return fatal("%v", err)
			}
			running = false
		}
	}
	_, _ = sdaemon.SdNotify(false, sdaemon.SdNotifyStopping)
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.MessageTimeout+5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, server.ErrServerClosed) {
		log.Error(fmt.Sprintf("shutdown: %v", err))
	}
	bg.Wait()
	log.Info("Slurmctld shutdown completing")
	return 0
}

// recoverFull is -R: the saved partitions and node records replace what
// slurm.conf says (the default start, in openJobs, kept only the DOWN,
// DRAIN and FAIL node states, reasons, comments and extras).
func recoverFull(cli *CLI, cfg *ctld.Config, ctl *ctld.Controller, log *slog.Logger) error {
	if !cli.Recover || cli.Clear {
		return nil
	}
	path := filepath.Join(cfg.Conf.StateSaveLocation, nodeStateName)
	st, err := ctld.ReadSavedState(path)
	if err != nil {
		if cli.Ignore {
			log.Error(fmt.Sprintf("node and partition state recovery: %v", err))
			return nil
		}
		return fmt.Errorf("node and partition state recovery: %w (start with -i to skip it)", err)
	}
	if st == nil {
		log.Info(fmt.Sprintf("No node state file (%s) to recover", path))
		return nil
	}
	ctl.RecoverFull(st)
	return nil
}

func sigName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return s.String()
}

func shortHostname() (string, error) {
	h, err := os.Hostname()
	if err != nil {
		return "", err
	}
	if i := strings.IndexByte(h, '.'); i > 0 {
		h = h[:i]
	}
	return h, nil
}

// listen opens every port of SlurmctldPort's range, on the controller's
// address with CommunicationParameters=NoCtldInAddrAny.
func listen(cfg *ctld.Config, idx int) ([]net.Listener, error) {
	h := cfg.Conf.SlurmctldHost[idx]
	host := h.Addr
	if host == "" {
		host = h.Host
	}
	if cfg.Conf.CommunicationParameters.Has("NoCtldInAddrAny") {
		ips, err := net.LookupIP(host)
		if err != nil || len(ips) == 0 {
			return nil, fmt.Errorf("unable to resolve %s: %v", host, err)
		}
		host = ips[0].String()
		for _, ip := range ips {
			if ip.To4() != nil {
				host = ip.String()
				break
			}
		}
	}
	var lns []net.Listener
	for _, a := range cfg.ListenAddrs(host) {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("slurm_init_msg_engine_addrname_port error %w", err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// becomeSlurmUser drops root privileges to SlurmUser, as slurmctld does
// once its sockets and files are open.
func becomeSlurmUser(cfg *ctld.Config) error {
	uid := cfg.SlurmUID
	if os.Geteuid() != 0 || uid == 0 || uint32(os.Geteuid()) == uid {
		if os.Geteuid() != 0 && uint32(os.Geteuid()) != uid {
			return fmt.Errorf("slurmctld must run as SlurmUser (%s, uid %d) or root, not uid %d", cfg.Conf.SlurmUser, uid, os.Geteuid())
		}
		return nil
	}
	gid, err := primaryGID(uid)
	if err != nil {
		return err
	}
	if err := unix.Setgroups([]int{int(gid)}); err != nil {
		return fmt.Errorf("failed to set supplementary groups: %w", err)
	}
	if err := unix.Setgid(int(gid)); err != nil {
		return fmt.Errorf("failed to set GID to %d: %w", gid, err)
	}
	if err := unix.Setuid(int(uid)); err != nil {
		return fmt.Errorf("can not set uid to SlurmUser(%d): %w", uid, err)
	}
	return nil
}

func primaryGID(uid uint32) (uint32, error) {
	data, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ":")
		if len(f) > 3 && f[2] == strconv.Itoa(int(uid)) {
			g, err := strconv.ParseUint(f[3], 10, 32)
			return uint32(g), err
		}
	}
	return 0, fmt.Errorf("no passwd entry for uid %d", uid)
}

// daemonize re-executes slurmctld detached and returns at once.
func daemonize(stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "slurmctld: fatal: %v\n", err)
		return 1
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(stderr, "slurmctld: fatal: %v\n", err)
		return 1
	}
	defer null.Close()
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "slurmctld: fatal: cannot daemonize: %v\n", err)
		return 1
	}
	_ = cmd.Process.Release()
	return 0
}

// setupLog opens the log: -L or SlurmctldLogFile, and a copy on standard
// error in the foreground (or when there is no log file); the level is
// SlurmctldDebug, or info raised one step per -v.
func setupLog(cli *CLI, cfg *ctld.Config, stderr io.Writer) (*slog.Logger, func(), error) {
	c := cfg.Conf
	level, err := slurmlog.ParseLevel(c.SlurmctldDebug)
	if err != nil {
		level = slurmlog.LevelInfo
	}
	if cli.Verbose > 0 {
		level = slurmlog.Raise(slurmlog.LevelInfo, cli.Verbose)
	}
	flags := []string(c.DebugFlags)
	var handlers []slog.Handler
	closer := func() {}
	logFile := c.SlurmctldLogFile
	if cli.LogFile != "" {
		logFile = cli.LogFile
	}
	if logFile != "" {
		f, err := os.OpenFile(logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o640)
		if err != nil {
			return nil, nil, fmt.Errorf("unable to open logfile `%s': %w", logFile, err)
		}
		closer = func() { f.Close() }
		handlers = append(handlers, slurmlog.New(f, slurmlog.Options{Level: level, DebugFlags: flags}))
	}
	if cli.Foreground || logFile == "" {
		handlers = append(handlers, slurmlog.New(stderr, slurmlog.Options{Level: level, DebugFlags: flags, Program: "slurmctld"}))
	}
	return slog.New(slurmlog.Fanout(handlers)), closer, nil
}

// setWorkDir is -s (the log file's directory, else StateSaveLocation);
// otherwise the log file's directory or /tmp, as slurmctld does, so no
// file system stays busy.
func setWorkDir(cli *CLI, logFile, stateDir string) error {
	dir := "/tmp"
	switch {
	case logFile != "":
		dir = filepath.Dir(logFile)
	case cli.SetWD && stateDir != "":
		dir = stateDir
	}
	if err := os.Chdir(dir); err != nil {
		return fmt.Errorf("chdir(%s): %w", dir, err)
	}
	return nil
}

// writePidFile creates the pid file, write-locked while slurmctld runs.
func writePidFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("locked by another slurmctld: %w", err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteString(strconv.Itoa(os.Getpid()) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// security picks the message authentication (AuthType).
func security(cfg *ctld.Config) (auth.Authenticator, bool, error) {
	c := cfg.Conf
	switch c.AuthType {
	case "", "auth/munge":
		mc := &munge.Client{}
		if s, ok := c.AuthInfo.Get("socket"); ok {
			mc.Socket = s
		}
		return &auth.Munge{Client: mc}, false, nil
	case "auth/slurm":
		opts, err := slurmauth.ParseAuthInfo(c.AuthInfo)
		if err != nil {
			return nil, false, err
		}
		key, err := slurmauth.LoadKey(slurmauth.KeyPath(opts, cfg.Path, os.Getenv))
		if err != nil {
			return nil, false, err
		}
		return &slurmauth.Slurm{Key: key, Cluster: c.ClusterName, TTL: opts.TTL, Replay: &slurmauth.ReplayCache{}}, true, nil
	}
	return nil, false, fmt.Errorf("AuthType=%s is not supported", c.AuthType)
}
