package stepd

// The exec helper is the process that becomes the batch script. The
// supervisor starts it (its own binary, argument "exec-batch") with the
// user's credentials already applied by the kernel at fork time (setgroups,
// setgid, setuid through SysProcAttr.Credential: if any of them fails the
// fork fails and nothing runs). Everything that touches user-named paths
// happens here, as the user: chdir, opening stdin/stdout/stderr (outputs
// with O_NOFOLLOW). It then passes a copy of the stderr descriptor back to
// the supervisor (for Slurm's "*** JOB n CANCELLED ***" lines) and execs the
// script.
//
// File descriptors: 3 is the init pipe (JSON helperInit), 4 a unix socket
// to the supervisor carrying "ok" plus the stderr descriptor, or an error
// text.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// helperArg is the slurmstepd argument that selects the exec helper.
const helperArg = "exec-batch"

type helperInit struct {
	UID, GID uint32
	Groups   []uint32
	WorkDir  string
	Stdin    string
	Stdout   string
	Stderr   string
	Append   bool // --open-mode=append (else truncate)
	Script   string
	Argv     []string
	Env      []string
	Umask    int // -1: leave
	RLimits  map[string]uint64
	// Search looks Script up in the PATH of Env when it has no slash (srun
	// tasks; the batch script is a full path).
	Search bool
	// KeepGroups: the supervisor is not root and could not set Groups.
	KeepGroups bool
}

// Stdin, Stdout and Stderr name files to open; "" keeps the descriptor the
// helper inherited (the pipes of an srun I/O stream).

// searchPath resolves a command name the way slurmstepd's _build_path does:
// the first executable match in the task's PATH, else the name unchanged.
func searchPath(name string, env []string) string {
	if strings.Contains(name, "/") {
		return name
	}
	for _, kv := range env {
		v, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		for _, dir := range strings.Split(v, ":") {
			if dir == "" {
				dir = "."
			}
			p := dir + "/" + name
			if unix.Access(p, unix.X_OK) == nil {
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
					return p
				}
			}
		}
	}
	return name
}

// rlimitNames maps Slurm's SLURM_RLIMIT_<NAME> suffixes to resources.
var rlimitNames = map[string]int{
	"CPU": unix.RLIMIT_CPU, "FSIZE": unix.RLIMIT_FSIZE, "DATA": unix.RLIMIT_DATA,
	"STACK": unix.RLIMIT_STACK, "CORE": unix.RLIMIT_CORE, "RSS": unix.RLIMIT_RSS,
	"NPROC": unix.RLIMIT_NPROC, "NOFILE": unix.RLIMIT_NOFILE,
	"MEMLOCK": unix.RLIMIT_MEMLOCK, "AS": unix.RLIMIT_AS,
}

// runHelper is the exec helper's main; it returns only on failure.
func runHelper() int {
	initF := os.NewFile(3, "init")
	status := os.NewFile(4, "status")
	if initF == nil || status == nil {
		fmt.Fprintln(os.Stderr, "slurmstepd: exec-batch is internal to slurmstepd")
		return 1
	}
	fail := func(format string, a ...any) int {
		status.Write([]byte("error: " + fmt.Sprintf(format, a...)))
		return 1
	}
	b, err := io.ReadAll(io.LimitReader(initF, maxInit))
	initF.Close()
	if err != nil {
		return fail("read init: %v", err)
	}
	var in helperInit
	if err := json.Unmarshal(b, &in); err != nil {
		return fail("init: %v", err)
	}
	if err := checkIdentity(&in); err != nil {
		return fail("%v", err)
	}

	var chdirErr error
	if err := os.Chdir(in.WorkDir); err != nil {
		chdirErr = err
		if err := os.Chdir("/tmp"); err != nil {
			return fail("chdir /tmp: %v", err)
		}
	}
	stdin, stdout, stderr := 0, 1, 2
	if in.Stdin != "" {
		if stdin, err = unix.Open(in.Stdin, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return fail("Could not open stdin file %s: %v", in.Stdin, err)
		}
	}
	flags := unix.O_CREAT | unix.O_WRONLY | unix.O_APPEND | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if !in.Append {
		flags |= unix.O_TRUNC
	}
	if in.Stdout != "" {
		if stdout, err = unix.Open(in.Stdout, flags, 0o666); err != nil {
			return fail("Could not open stdout file %s: %v", in.Stdout, err)
		}
	}
	switch {
	case in.Stderr != "" && in.Stderr == in.Stdout:
		stderr = stdout
	case in.Stderr != "":
		if stderr, err = unix.Open(in.Stderr, flags, 0o666); err != nil {
			return fail("Could not open stderr file %s: %v", in.Stderr, err)
		}
	}
	rights := unix.UnixRights(stderr)
	if err := unix.Sendmsg(int(status.Fd()), []byte("ok"), rights, nil, 0); err != nil {
		return fail("pass stderr: %v", err)
	}
	status.Close()

	for i, fd := range []int{stdin, stdout, stderr} {
		if fd == i { // already in place: only drop close-on-exec
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
				return 1
			}
		} else if err := unix.Dup3(fd, i, 0); err != nil {
			return 1
		}
	}
	errOut := os.NewFile(2, "stderr")
	if chdirErr != nil {
		fmt.Fprintf(errOut, "slurmstepd: error: couldn't chdir to `%s': %v: going to /tmp instead\n", in.WorkDir, chdirErr)
	}
	for name, v := range in.RLimits {
		res, ok := rlimitNames[name]
		if !ok {
			continue
		}
		var cur unix.Rlimit
		if unix.Getrlimit(res, &cur) != nil {
			continue
		}
		want := v
		if want > cur.Max { // an unprivileged process cannot raise its hard limit
			want = cur.Max
		}
		cur.Cur = want
		unix.Setrlimit(res, &cur)
	}
	if in.Umask >= 0 {
		unix.Umask(in.Umask)
	}
	env := Env(slices.Clone(in.Env))
	env.Set("SLURM_TASK_PID", strconv.Itoa(os.Getpid()))
	if in.Search {
		in.Script = searchPath(in.Script, env)
	}
	err = syscall.Exec(in.Script, in.Argv, env)
	fmt.Fprintf(errOut, "slurmstepd: error: execve(): %s: %v\n", in.Script, err)
	if en, ok := err.(syscall.Errno); ok {
		return int(en)
	}
	return 1
}

// checkIdentity refuses to go on unless the kernel really applied the
// user's ids and groups: belt and braces over SysProcAttr.Credential.
func checkIdentity(in *helperInit) error {
	if uint32(os.Getuid()) != in.UID || uint32(os.Geteuid()) != in.UID ||
		uint32(os.Getgid()) != in.GID || uint32(os.Getegid()) != in.GID {
		return fmt.Errorf("refusing to run: running as uid %d/%d gid %d/%d, want uid %d gid %d",
			os.Getuid(), os.Geteuid(), os.Getgid(), os.Getegid(), in.UID, in.GID)
	}
	if in.KeepGroups {
		return nil
	}
	got, err := unix.Getgroups()
	if err != nil {
		return fmt.Errorf("refusing to run: getgroups: %v", err)
	}
	want := make([]int, 0, len(in.Groups))
	for _, g := range in.Groups {
		want = append(want, int(g))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(slices.Compact(got), slices.Compact(want)) {
		return fmt.Errorf("refusing to run: groups %v, want %v", got, want)
	}
	return nil
}

// receiveStatus reads the helper's verdict from the supervisor's end of the
// status socket: the stderr descriptor on success, the helper's error
// otherwise (io.EOF text if it died without a word).
func receiveStatus(fd int) (*os.File, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("exec helper: %w", err)
	}
	text := string(buf[:n])
	if text != "ok" {
		if text == "" {
			text = "exec helper exited before starting the script"
		}
		return nil, fmt.Errorf("%s", strings.TrimPrefix(text, "error: "))
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("exec helper: no stderr descriptor")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("exec helper: no stderr descriptor")
	}
	return os.NewFile(uintptr(fds[0]), "job-stderr"), nil
}
