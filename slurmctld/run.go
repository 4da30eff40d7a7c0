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
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdaemon "github.com/coreos/go-systemd/v22/daemon"
	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/slurmctld/ctld"
	"github.com/goslurm/goslurm/slurmctld/state"
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
	if os.Getenv(daemonEnv) == "" {
		// Read before the log is set up: on stderr, as slurm_conf_init
		// reports them; the log gets them after (read_slurm_conf).
		for _, p := range cfg.Problems() {
			fmt.Fprintf(stderr, "slurmctld: error: %s\n", p)
		}
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
	log, logFile, err := setupLog(cli, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "slurmctld: fatal: %v\n", err)
		return 1
	}
	defer logFile.Close()
	fatal := func(format string, args ...any) int {
		slurmlog.Fatal(log, fmt.Sprintf(format, args...))
		return 1
	}
	c := cfg.Conf
	host, long, err := hostnames()
	if err != nil {
		return fatal("%v", err)
	}
	idx := controllerIndex(cfg, host, long)
	if idx < 0 {
		return fatal("This host (%s/%s) not a valid controller", host, long)
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
	local, err := localMunge(cfg, os.Getenv)
	if err != nil {
		return fatal("%v", err)
	}
	authn, acceptSlurm, err := security(cfg, local)
	if err != nil {
		return fatal("%v", err)
	}
	signer, err := credSigner(cfg, local)
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

	cd := &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: acceptSlurm}
	ctld.RegisterBackupBodies(cd.Bodies)
	d := &daemon{
		cli: cli, path: path, cfg: cfg, log: log, logFile: logFile, auth: authn, codec: cd, signer: signer,
		idx: idx, lns: lns, sw: &ctld.Switch{},
		served: make(chan error, len(lns)),
		fatal:  fatal,
	}
	d.srv = &server.Server{
		Auth: authn, Handler: d.sw, Codec: cd,
		Timeout: cfg.MessageTimeout,
		Log:     log,
	}
	log.Info(fmt.Sprintf("slurmctld version %s started on cluster %s", ctld.Version, c.ClusterName))
	for _, p := range cfg.Problems() {
		log.Error(p)
	}
	ctld.StartMemDump()
	d.sigs = make(chan os.Signal, 4)
	signal.Notify(d.sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE, syscall.SIGUSR2)
	defer signal.Stop(d.sigs)

	code := d.loop()
	_, _ = sdaemon.SdNotify(false, sdaemon.SdNotifyStopping)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.MessageTimeout+5*time.Second)
	defer cancel()
	if err := d.srv.Shutdown(sctx); err != nil && !errors.Is(err, server.ErrServerClosed) {
		log.Error(fmt.Sprintf("shutdown: %v", err))
	}
	for _, ln := range lns {
		ln.Close()
	}
	if code == 0 && idx > 0 && !d.inControl {
		log.Info("BackupController terminating")
	} else if code == 0 {
		log.Info("Slurmctld shutdown completing")
	}
	return code
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

// hostnames returns this host's short and full names (gethostname_short
// and gethostname).
func hostnames() (short, long string, err error) {
	long, err = os.Hostname()
	if err != nil {
		return "", "", err
	}
	short = long
	if i := strings.IndexByte(long, '.'); i > 0 {
		short = long[:i]
	}
	return short, long, nil
}

// controllerIndex is _controller_index: this host's place in
// SlurmctldHost (by short or full name), -1 when it is none of them. A
// "localhost" entry stands for this host, as Slurm replaces it with the
// host's name when it reads slurm.conf.
func controllerIndex(cfg *ctld.Config, short, long string) int {
	if i := cfg.ControllerIndex(short); i >= 0 {
		return i
	}
	if i := cfg.ControllerIndex(long); i >= 0 {
		return i
	}
	for i, h := range cfg.Conf.SlurmctldHost {
		if strings.EqualFold(h.Host, "localhost") {
			return i
		}
	}
	return -1
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
		// No TCP keep-alive on accepted connections, as slurmctld: an RPC
		// lives for one request and reply.
		ln, err := server.Listen(context.Background(), "tcp", a)
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

// primaryGID is SlurmUser's group, from the user database through NSS
// (an LDAP or sssd SlurmUser has no /etc/passwd line).
func primaryGID(uid uint32) (uint32, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return 0, fmt.Errorf("no passwd entry for uid %d: %w", uid, err)
	}
	g, err := strconv.ParseUint(u.Gid, 10, 32)
	return uint32(g), err
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
// SlurmctldDebug, or info raised one step per -v. The file (nil without
// one) is reopened on SIGUSR2.
func setupLog(cli *CLI, cfg *ctld.Config, stderr io.Writer) (*slog.Logger, *reopenFile, error) {
	c := cfg.Conf
	level, err := slurmlog.ParseLevel(c.SlurmctldDebug)
	if err != nil {
		level = slurmlog.LevelInfo
	}
	if cli.Verbose > 0 {
		level = slurmlog.Raise(slurmlog.LevelInfo, cli.Verbose)
	}
	lv := new(slog.LevelVar)
	lv.Set(level)
	flags := slurmlog.NewFlagSet(c.DebugFlags)
	var handlers []slog.Handler
	var file *reopenFile
	logFile := c.SlurmctldLogFile
	if cli.LogFile != "" {
		logFile = cli.LogFile
	}
	if logFile != "" {
		file = &reopenFile{path: logFile}
		if err := file.Reopen(); err != nil {
			return nil, nil, err
		}
		handlers = append(handlers, slurmlog.New(file, slurmlog.Options{Level: lv, Flags: flags}))
	}
	if cli.Foreground || logFile == "" {
		handlers = append(handlers, slurmlog.New(stderr, slurmlog.Options{Level: lv, Flags: flags, Program: "slurmctld"}))
	}
	// Controlled: scontrol setdebug and setdebugflags change both.
	h := slurmlog.Controlled{Handler: slurmlog.Fanout(handlers), Level: lv, Flags: flags}
	return slog.New(h), file, nil
}

// reopenFile is the log file, reopened by path on SIGUSR2 so that
// logrotate can move it away (Slurm's "Logrotate signal").
type reopenFile struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

func (r *reopenFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	return r.f.Write(p)
}

// Reopen opens the path again (creating it) and closes the old file.
func (r *reopenFile) Reopen() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o640)
	if err != nil {
		return fmt.Errorf("unable to open logfile `%s': %w", r.path, err)
	}
	r.mu.Lock()
	old := r.f
	r.f = f
	r.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// Close closes the file; a nil reopenFile (no log file) does nothing.
func (r *reopenFile) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// logrotate is SIGUSR2: the log file is reopened.
func (d *daemon) logrotate() {
	d.log.Info("Logrotate signal (SIGUSR2) received")
	if d.logFile == nil {
		return
	}
	if err := d.logFile.Reopen(); err != nil {
		d.log.Error(err.Error())
	}
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

// security picks the message authentication (AuthType); local, when not
// nil, does auth/munge's work in process.
func security(cfg *ctld.Config, local munge.Codec) (auth.Authenticator, bool, error) {
	c := cfg.Conf
	switch c.AuthType {
	case "", "auth/munge":
		mc := &munge.Client{}
		if s, ok := c.AuthInfo.Get("socket"); ok {
			mc.Socket = s
		}
		return &auth.Munge{Client: mc, Codec: local}, false, nil
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

// daemon is what stays across the switches between standby and control:
// the sockets, the server and its switching handler, the signals.
type daemon struct {
	cli     *CLI
	path    string
	cfg     *ctld.Config
	log     *slog.Logger
	logFile *reopenFile
	auth    auth.Authenticator
	codec   *codec.Codec
	signer  jobcred.Signer
	idx     int
	lns     []net.Listener
	sw      *ctld.Switch
	srv     *server.Server
	sigs    chan os.Signal
	served  chan error
	fatal   func(format string, args ...any) int

	serving   bool
	notified  bool
	inControl bool
	// next is the standby handler a backup stepping down installed
	// before closing its state, and nextCtx/nextStop its lifetime.
	next     *ctld.Standby
	nextCtx  context.Context
	nextStop context.CancelFunc
}

// loop alternates standby and control, as slurmctld's main loop does:
// a backup starts in standby, and returns to it when the primary asks
// for control back; the primary runs in control once.
func (d *daemon) loop() int {
	pcli := *d.cli
	for {
		if d.idx > 0 {
			took, code := d.standby()
			if !took {
				return code
			}
			// A takeover recovers everything (read_slurm_conf(2)), and a
			// backup never discards the state.
			pcli.Recover, pcli.Clear = true, false
		}
		resume, code := d.control(&pcli)
		if code != 0 || !resume || d.idx == 0 {
			return code
		}
	}
}

// serve starts the accept loops once: the sockets then stay open across
// modes, so commands are answered (in standby: told so) throughout.
func (d *daemon) serve() {
	if d.serving {
		return
	}
	d.serving = true
	for _, ln := range d.lns {
		go func() { d.served <- d.srv.Serve(ln) }()
	}
}

func (d *daemon) notifyReady() {
	if d.notified {
		return
	}
	d.notified = true
	if _, err := sdaemon.SdNotify(false, sdaemon.SdNotifyReady); err != nil {
		d.log.Error(fmt.Sprintf("sd_notify: %v", err))
	}
}

func (d *daemon) peers() *ctld.Peers {
	c := d.cfg.Conf
	port := int(c.SlurmctldPort.First)
	if port == 0 {
		port = 6817
	}
	p := &ctld.Peers{Index: d.idx, SlurmUID: d.cfg.SlurmUID, Log: d.log,
		Client: &client.Client{Auth: d.auth, Codec: d.codec, MessageTimeout: d.cfg.MessageTimeout,
			ConnectTimeout: d.cfg.TCPTimeout, SlurmUserUID: d.cfg.SlurmUID, Sweeps: 1}}
	for _, h := range c.SlurmctldHost {
		a := h.Addr
		if a == "" {
			a = h.Host
		}
		p.Names = append(p.Names, h.Host)
		p.Client.Controllers = append(p.Client.Controllers, net.JoinHostPort(a, strconv.Itoa(port)))
	}
	return p
}

func (d *daemon) newStandby(stop func()) *ctld.Standby {
	dir := d.cfg.Conf.StateSaveLocation
	return &ctld.Standby{
		Peers:          d.peers(),
		Timeout:        time.Duration(d.cfg.Conf.SlurmctldTimeout) * time.Second,
		MessageTimeout: d.cfg.MessageTimeout,
		SlurmUser:      d.cfg.SlurmUser,
		StateLocked:    func() (bool, error) { return state.Locked(dir) },
		Shutdown:       stop,
		Log:            d.log,
		Config:         d.cfg,
	}
}

// standby is run_backup: it returns true when this backup is to take
// over, false (with the exit status) when it is to stop.
func (d *daemon) standby() (took bool, code int) {
	sb, ctx, stop := d.next, d.nextCtx, d.nextStop
	d.next, d.nextCtx, d.nextStop = nil, nil, nil
	if sb == nil {
		ctx, stop = context.WithCancel(context.Background())
		sb = d.newStandby(stop)
		d.sw.Set(sb)
	}
	defer stop()
	d.inControl = false
	d.serve()
	d.notifyReady()
	result := make(chan bool, 1)
	go func() { result <- sb.Wait(ctx) }()
	for {
		select {
		case took := <-result:
			return took, 0
		case s := <-d.sigs:
			switch s {
			case syscall.SIGHUP:
				d.log.Info("Reconfigure signal (SIGHUP) received")
				if cfg, err := ctld.LoadConfig(d.path); err != nil {
					d.log.Error(fmt.Sprintf("reconfigure: %v", err))
				} else {
					d.cfg = cfg
				}
			case syscall.SIGPIPE:
			case syscall.SIGUSR2:
				d.logrotate()
			default:
				d.log.Info("Terminate signal (SIGINT or SIGTERM) received")
				stop()
			}
		case err := <-d.served:
			if !errors.Is(err, server.ErrServerClosed) {
				stop()
				<-result
				return false, d.fatal("%v", err)
			}
		}
	}
}

// waitStateFree waits (up to CONTROL_TIMEOUT) until no controller holds
// StateSaveLocation: a backup giving control back closes it before it
// answers REQUEST_CONTROL, but one that did not answer may still hold it.
func (d *daemon) waitStateFree() error {
	dir := d.cfg.Conf.StateSaveLocation
	if dir == "" {
		return nil
	}
	deadline := time.Now().Add(ctld.ControlTimeout)
	for {
		held, err := state.Locked(dir)
		if err != nil || !held {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("StateSaveLocation %s is still locked by another slurmctld: %w", dir, state.ErrLocked)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// control runs this slurmctld as the controller until it stops (resume
// false) or a backup hands control back to the primary (resume true).
func (d *daemon) control(cli *CLI) (resume bool, code int) {
	cfg, log := d.cfg, d.log
	peers := d.peers()
	// _shutdown_backup_controller: whoever takes control first tells the
	// backups to give it up (their state saved) or to stay in standby.
	_ = peers.Relinquish(context.Background(), ctld.ControlTimeout, true)
	if err := d.waitStateFree(); err != nil {
		if d.idx > 0 {
			log.Error(fmt.Sprintf("not taking over: %v", err))
			return true, 0
		}
		return false, d.fatal("%v", err)
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ctl, err := ctld.New(ctld.Options{
		Config: cfg, Auth: d.auth, Codec: d.codec,
		Reload:   func() (*ctld.Config, error) { return ctld.LoadConfig(d.path) },
		Shutdown: stop,
		Log:      log,
		Verbose:  cli.Verbose,
	})
	if err != nil {
		return false, d.fatal("%v", err)
	}
	closeState, err := openJobs(cli, cfg, ctl, d.signer, log)
	if err != nil {
		if d.idx > 0 && errors.Is(err, state.ErrLocked) {
			log.Error(fmt.Sprintf("not taking over: %v", err))
			return true, 0
		}
		return false, d.fatal("%v", err)
	}
	if err := recoverFull(cli, cfg, ctl, log); err != nil {
		closeState()
		return false, d.fatal("%v", err)
	}
	var relinquish atomic.Bool
	relinquished := make(chan struct{})
	(&ctld.Control{Index: d.idx, ControlTime: time.Now().Unix(), Relinquish: func() <-chan struct{} {
		relinquish.Store(true)
		stop()
		return relinquished
	}}).Install(ctl)
	d.sw.Set(ctl)
	d.inControl = true
	d.serve()
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		ctl.Run(ctx)
	}()
	bg.Add(1)
	go func() {
		defer bg.Done()
		ctld.RunMemTrim(ctx)
	}()
	d.notifyReady()
	log.Info("Running as primary controller")
	if timeout := time.Duration(cfg.Conf.SlurmctldTimeout) * time.Second; d.idx == 0 && timeout > 0 && len(peers.Client.Controllers) > 1 {
		// Reassert control: a network or security problem could have let
		// a backup take over while this primary runs.
		bg.Add(1)
		go func() {
			defer bg.Done()
			t := time.NewTicker(timeout)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					_ = peers.Relinquish(ctx, ctld.ControlTimeout, true)
				}
			}
		}()
	}
	if timeout := time.Duration(cfg.Conf.SlurmctldTimeout) * time.Second; timeout > 0 && len(peers.Client.Controllers) > 1 {
		// ping_controllers(true): whoever is in control pings the
		// others; one that does not answer fires the backup failure
		// triggers (the primary too, once a backup is in control).
		bg.Add(1)
		go func() {
			defer bg.Done()
			t := time.NewTicker(timeout + time.Second)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					ctl.BackupSilent(peers.Silent(ctx))
				}
			}
		}()
	}

	for running := true; running; {
		select {
		case s := <-d.sigs:
			switch s {
			case syscall.SIGHUP:
				log.Info("Reconfigure signal (SIGHUP) received")
				switch err := ctl.ReconfigureSignal(); {
				case errors.Is(err, ctld.ErrNeedRestart):
					// The new configuration is in place; only the
					// nodes are not told, as 22.05 does.
					log.Error(fmt.Sprintf("reconfigure: %v", err))
					d.cfg = ctl.Config()
				case err != nil:
					log.Error(fmt.Sprintf("reconfigure: %v", err))
				default:
					d.cfg = ctl.Config()
					go ctl.ReconfigureNodes()
				}
			case syscall.SIGPIPE:
			case syscall.SIGUSR2:
				d.logrotate()
			default:
				log.Info(fmt.Sprintf("Terminate signal (%s) received", sigName(s)))
				running = false
			}
		case <-ctx.Done():
			running = false
		case err := <-d.served:
			if !errors.Is(err, server.ErrServerClosed) {
				stop()
				bg.Wait()
				closeState()
				return false, d.fatal("%v", err)
			}
			running = false
		}
	}
	stop()
	bg.Wait()
	// Requests still being served by this controller finish before its
	// state closes; new ones meet the next handler.
	resume = relinquish.Load() && d.idx > 0
	var drain func(context.Context) error
	if resume {
		d.nextCtx, d.nextStop = context.WithCancel(context.Background())
		d.next = d.newStandby(d.nextStop)
		drain = d.sw.Set(d.next)
	} else {
		drain = d.sw.Set(nil)
	}
	dctx, cancel := context.WithTimeout(context.Background(), cfg.MessageTimeout+5*time.Second)
	defer cancel()
	if err := drain(dctx); err != nil {
		log.Error(fmt.Sprintf("requests still running at the switch: %v", err))
	}
	closeState()
	close(relinquished)
	if resume {
		log.Info("Relinquished control, returning to standby")
	}
	return resume, 0
}
