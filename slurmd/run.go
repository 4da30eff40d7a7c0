package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	sdaemon "github.com/coreos/go-systemd/v22/daemon"
	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmd/daemon"
	"github.com/goslurm/goslurm/slurmd/hwinfo"
	"github.com/goslurm/goslurm/slurmd/slurmlog"
)

// daemonEnv marks the re-executed, detached child of a daemonizing slurmd.
const daemonEnv = "GOSLURM_SLURMD_DAEMONIZED"

// loadConfig reads slurm.conf and resolves it for this node.
func loadConfig(path, nodeName string) (*daemon.Config, error) {
	c, err := conf.Load(conf.OSFS{}, path)
	if err != nil {
		return nil, err
	}
	host, err := daemon.ShortHostname()
	if err != nil {
		return nil, err
	}
	return daemon.NewConfig(c, path, nodeName, host)
}

func run(cli *CLI, stderr io.Writer) int {
	path := confPath(cli)
	cfg, err := loadConfig(path, cli.NodeName)
	if err != nil {
		fmt.Fprintf(stderr, "slurmd: fatal: %v\n", err)
		return 1
	}
	if !cli.Foreground && os.Getenv(daemonEnv) == "" {
		return daemonize(stderr)
	}
	if cli.Foreground {
		// Our own children must not believe they were daemonized.
		os.Unsetenv(daemonEnv)
	} else if _, err := unix.Setsid(); err != nil && !errors.Is(err, unix.EPERM) {
		fmt.Fprintf(stderr, "slurmd: fatal: setsid: %v\n", err)
		return 1
	}

	log, closeLog, err := setupLog(cli, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "slurmd: fatal: %v\n", err)
		return 1
	}
	defer closeLog()
	fatal := func(format string, args ...any) int {
		slurmlog.Fatal(log, fmt.Sprintf(format, args...))
		return 1
	}

	if err := os.MkdirAll(cfg.SpoolDir, 0o755); err != nil {
		return fatal("Unable to initialize slurmd spooldir: %v", err)
	}
	if err := setWorkDir(cli, cfg); err != nil {
		return fatal("%v", err)
	}
	if cli.Nice != nil {
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, *cli.Nice); err != nil {
			log.Error(fmt.Sprintf("Unable to set nice value: %v", err))
		}
	}
	if cli.Mlock {
		if err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE); err != nil {
			log.Error(fmt.Sprintf("failed to mlock() slurmd pages: %v", err))
		}
	}
	pid, err := writePidFile(cfg.PidFile)
	if err != nil {
		return fatal("Unable to create pidfile `%s': %v", cfg.PidFile, err)
	}
	defer func() {
		os.Remove(cfg.PidFile)
		pid.Close()
	}()

	authn, credv, acceptSlurm, err := security(cfg)
	if err != nil {
		return fatal("%v", err)
	}
	gres, err := loadGres(cfg, log)
	if err != nil {
		return fatal("%v", err)
	}
	stats := daemon.HostStats
	if cli.Boot {
		stats = sinceStart(stats)
	}
	if err := checkStepd(cli); err != nil {
		log.Error(fmt.Sprintf("%v: job launches will fail", err))
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	d, err := daemon.New(daemon.Options{
		Config: cfg, Auth: authn, CredVerifier: credv, AcceptAuthSlurm: acceptSlurm,
		Steps:      newSteps(cli, cfg),
		Hardware:   hardware,
		Gres:       gres,
		Stats:      stats,
		ClearState: cli.Clean,
		Reload:     func() (*daemon.Config, error) { return loadConfig(path, cli.NodeName) },
		Shutdown:   stop,
		Log:        log,
	})
	if err != nil {
		return fatal("%v", err)
	}
	ln, err := d.Listen()
	if err != nil {
		return fatal("%v", err)
	}
	log.Info(fmt.Sprintf("slurmd version %s started", daemon.SlurmVersion))
	served := make(chan error, 1)
	go func() { served <- d.Serve(ln) }()
	if _, err := sdaemon.SdNotify(false, sdaemon.SdNotifyReady); err != nil {
		log.Error(fmt.Sprintf("sd_notify: %v", err))
	}
	log.Info(fmt.Sprintf("slurmd started on %s", time.Now().Format("Mon, 02 Jan 2006 15:04:05 -0700")))

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(sigs)
	for running := true; running; {
		select {
		case s := <-sigs:
			switch s {
			case syscall.SIGHUP:
				log.Info("got SIGHUP, reconfiguring")
				go d.Reconfigure()
			case syscall.SIGPIPE:
				// ignored, as slurmd does
			default:
				log.Info(fmt.Sprintf("Caught %s. Shutting down.", sigName(s)))
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
	sctx, cancel := context.WithTimeout(context.Background(), cfg.MessageTimeout+5*time.Second)
	defer cancel()
	if err := d.Shutdown(sctx); err != nil && !errors.Is(err, server.ErrServerClosed) {
		log.Error(fmt.Sprintf("shutdown: %v", err))
	}
	log.Info("Slurmd shutdown completing")
	return 0
}

func sigName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	if s == syscall.SIGINT {
		return "SIGINT"
	}
	return s.String()
}

// daemonize re-executes slurmd detached (new session, standard streams on
// /dev/null) and returns at once, as Slurm's xdaemon leaves the parent.
func daemonize(stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "slurmd: fatal: %v\n", err)
		return 1
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(stderr, "slurmd: fatal: %v\n", err)
		return 1
	}
	defer null.Close()
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "slurmd: fatal: cannot daemonize: %v\n", err)
		return 1
	}
	_ = cmd.Process.Release()
	return 0
}

// setupLog opens the log: -L or SlurmdLogFile (Slurm's file format), and a
// copy on standard error in the foreground; the level is SlurmdDebug, or
// info raised by one step per -v.
func setupLog(cli *CLI, cfg *daemon.Config, stderr io.Writer) (*slog.Logger, func(), error) {
	level, err := slurmlog.ParseLevel(cfg.Conf.SlurmdDebug)
	if err != nil {
		level = slurmlog.LevelInfo
	}
	if cli.Verbose > 0 {
		level = slurmlog.Raise(slurmlog.LevelInfo, cli.Verbose)
	}
	flags := []string(cfg.Conf.DebugFlags)
	var handlers []slog.Handler
	closer := func() {}
	logFile := cfg.LogFile
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
		handlers = append(handlers, slurmlog.New(stderr, slurmlog.Options{Level: level, DebugFlags: flags, Program: "slurmd"}))
	}
	return slog.New(slurmlog.Fanout(handlers)), closer, nil
}

// setWorkDir is -s (the log file's directory, else the spool directory);
// otherwise the spool directory too, so no file system stays busy.
func setWorkDir(cli *CLI, cfg *daemon.Config) error {
	dir := cfg.SpoolDir
	if cli.SetWD && cfg.LogFile != "" {
		dir = filepath.Dir(cfg.LogFile)
	}
	if err := os.Chdir(dir); err != nil {
		return fmt.Errorf("unable to chdir to %s: %w", dir, err)
	}
	return nil
}

// writePidFile creates the pid file, write-locked for as long as slurmd
// runs (a second slurmd for the same node fails here).
func writePidFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("locked by another slurmd: %w", err)
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

// loadGres reads gres.conf (beside slurm.conf; optional) and resolves the
// node's GRES as slurmd does, device files checked (slurmd/hwinfo).
func loadGres(cfg *daemon.Config, log *slog.Logger) ([]*conf.NodeGresRecord, error) {
	c := cfg.Conf
	path := filepath.Join(filepath.Dir(cfg.ConfPath), "gres.conf")
	var g *conf.GresConfig
	if _, err := os.Stat(path); err == nil {
		if g, err = conf.LoadGres(conf.OSFS{}, path, c.GresTypes); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	} else if len(cfg.Line.Gres) == 0 {
		return nil, nil
	} else {
		g = &conf.GresConfig{}
	}
	gr, err := hwinfo.LoadGres(c, g, cfg.NodeName, nil, hwinfo.GresOptions{Sleep: time.Sleep})
	if err != nil {
		return nil, err
	}
	for _, m := range gr.Messages {
		if m.Level == "error" {
			log.Error(m.Text)
		} else {
			log.Info(m.Text)
		}
	}
	return gr.Records, nil
}

// security picks the message authentication (AuthType) and the credential
// signature scheme (CredType).
func security(cfg *daemon.Config) (auth.Authenticator, jobcred.SignatureVerifier, bool, error) {
	c := cfg.Conf
	var mc *munge.Client
	mungeClient := func() *munge.Client {
		if mc == nil {
			mc = &munge.Client{}
			if s, ok := c.AuthInfo.Get("socket"); ok {
				mc.Socket = s
			}
		}
		return mc
	}
	var authn auth.Authenticator
	acceptSlurm := false
	switch c.AuthType {
	case "", "auth/munge":
		m := auth.Munge{Client: mungeClient()}
		if cfg.Multiple {
			authn = &server.SharedMunge{Munge: m}
		} else {
			authn = &m
		}
	case "auth/slurm":
		opts, err := slurmauth.ParseAuthInfo(c.AuthInfo)
		if err != nil {
			return nil, nil, false, err
		}
		key, err := slurmauth.LoadKey(slurmauth.KeyPath(opts, cfg.ConfPath, os.Getenv))
		if err != nil {
			return nil, nil, false, err
		}
		authn = &slurmauth.Slurm{Key: key, Cluster: c.ClusterName, TTL: opts.TTL, Replay: &slurmauth.ReplayCache{}}
		acceptSlurm = true
	default:
		return nil, nil, false, fmt.Errorf("AuthType=%s is not supported", c.AuthType)
	}

	switch c.CredType {
	case "", jobcred.CredTypeMunge:
		return authn, daemon.MungeCreds(mungeClient(), cfg.SlurmUID, cfg.Multiple), acceptSlurm, nil
	case jobcred.CredTypeHMAC:
		opts, err := slurmauth.ParseAuthInfo(c.AuthInfo)
		if err != nil {
			return nil, nil, false, err
		}
		secret, err := readKey(slurmauth.KeyPath(opts, cfg.ConfPath, os.Getenv))
		if err != nil {
			return nil, nil, false, err
		}
		v, err := jobcred.NewHMACVerifier(jobcred.HMACKey{Secret: secret})
		return authn, v, acceptSlurm, err
	}
	return nil, nil, false, fmt.Errorf("CredType=%s is not supported", c.CredType)
}

// readKey reads the shared key the HMAC credential scheme uses (the
// auth/slurm key file), refusing a link, a non-regular file or one that
// group or others can read.
func readKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: must be a regular file with mode 0600 or stricter", path)
	}
	return io.ReadAll(io.LimitReader(f, 1<<16))
}

// sinceStart is -b: uptime counted from slurmd's start, so the controller
// sees a boot newer than any reboot it asked for (scontrol reboot).
func sinceStart(stats func() daemon.Stats) func() daemon.Stats {
	base := stats().UpTime
	return func() daemon.Stats {
		s := stats()
		s.UpTime -= min(base, s.UpTime)
		return s
	}
}
