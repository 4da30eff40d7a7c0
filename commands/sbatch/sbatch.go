package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// version is what --version prints (Debian's build says slurm-wlm).
const version = "slurm 22.05.8"

// procIO is the process's environment, injectable for tests.
type procIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	environ        []string
	cwd            string
	hostname       string
	umask          int
	priority       int
	now            func() time.Time
	sleep          func(time.Duration)
}

func sysIO() *procIO {
	cwd, _ := os.Getwd()
	host, _ := os.Hostname()
	m := syscall.Umask(0)
	syscall.Umask(m)
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		prio = 0
	} else {
		// The raw syscall returns 20 - nice.
		prio = 20 - prio
	}
	return &procIO{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, environ: os.Environ(),
		cwd: cwd, hostname: host, umask: m, priority: prio, now: time.Now, sleep: time.Sleep}
}

type sbatch struct {
	io        *procIO
	log       *jobopt.Log
	env       *jobopt.Env
	errorExit int
	conf      *conf.Config
}

func run(args []string, pio *procIO) int {
	s := &sbatch{io: pio, log: &jobopt.Log{Prog: "sbatch", W: pio.stderr},
		env: jobopt.NewEnv(pio.environ), errorExit: 1}
	if len(args) > 0 {
		s.log.Prog = filepath.Base(args[0])
	}
	if v, ok := s.env.Get("SLURM_EXIT_ERROR"); ok {
		if n, _ := strconv.Atoi(v); n == 0 {
			s.log.Errorf("SLURM_EXIT_ERROR has zero value")
		} else {
			s.errorExit = n
		}
	}
	code, err := s.main(args)
	if err != nil {
		var ee *jobopt.ExitError
		if errors.As(err, &ee) {
			return ee.Code
		}
		s.log.Errorf("%v", err)
		return s.errorExit
	}
	return code
}

func (s *sbatch) newOpts() *jobopt.Opts {
	o := jobopt.NewOpts(jobopt.Sbatch, s.log)
	o.Getenv = s.env.Lookup
	o.Now = s.io.now
	o.Cwd = s.io.cwd
	o.Reset(true)
	return o
}

// early handles --help, --usage and --version.
func (s *sbatch) early(err error) (int, bool) {
	switch {
	case errors.Is(err, jobopt.ErrHelp):
		io.WriteString(s.io.stdout, helpText)
		return 0, true
	case errors.Is(err, jobopt.ErrUsage):
		io.WriteString(s.io.stdout, usageText)
		return 0, true
	case errors.Is(err, jobopt.ErrVersion):
		fmt.Fprintln(s.io.stdout, version)
		return 0, true
	}
	return 0, false
}

func (s *sbatch) main(args []string) (int, error) {
	// Like Slurm, nothing works without a configuration.
	c, err := s.loadConf()
	if err != nil {
		return 1, nil
	}
	s.conf = c
	o := s.newOpts()
	o.AllowSpecResources = c.AllowSpecResourcesUsage
	o.CPUFreqGovernors = c.CpuFreqGovernors
	// The first pass does not see het-job separators.
	var local []string
	for _, a := range args {
		if a != ":" {
			local = append(local, a)
		}
	}
	if err := o.ApplyEnv(jobopt.SbatchEarlyEnv); err != nil {
		return 0, err
	}
	// First pass: every command-line option in order (Slurm processes
	// them as if from the environment here, so errors show up before the
	// script is read), the script name and its arguments.
	n, err := o.ParseArgs(local, jobopt.FromEnv, false, s.io.stderr)
	if code, done := s.early(err); done {
		return code, nil
	}
	if err != nil {
		return 0, err
	}
	scriptArgv := append([]string(nil), local[n:]...)
	if len(scriptArgv) > 0 && o.Wrap != nil {
		s.log.Errorf("Script arguments not permitted with --wrap option")
		return s.errorExit, nil
	}
	if len(scriptArgv) > 0 {
		if full := searchPath(o.Chdir, scriptArgv[0], s.env); full != "" {
			scriptArgv[0] = full
		}
	}
	s.log.Verbose = o.Verbose - o.Quiet
	quiet := o.Quiet > 0

	var body []byte
	if o.Wrap != nil {
		body = []byte("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + *o.Wrap + "\n")
	} else {
		body, err = s.readScript(scriptArgv)
		if err != nil {
			return s.errorExit, nil
		}
	}
	file := "stdin"
	if len(scriptArgv) > 0 {
		file = filepath.Base(scriptArgv[0])
	}

	in := &jobopt.BatchInput{Env: s.env, ScriptArgv: scriptArgv, Script: string(body),
		SubmitLine: strings.Join(args, " "), Hostname: s.io.hostname,
		Umask: s.io.umask, Priority: s.io.priority,
		PropagateRlimits: c.PropagateResourceLimits, PropagateRlimitsExcept: c.PropagateResourceLimitsExcept}

	// Second pass, once per het-job component: directives, then the
	// environment, then the command line up to the next ":".
	var comps []component
	compArgs := args
	script := in.Script
	for inx := 0; ; inx++ {
		o.Reset(false)
		more, code, err := s.applyDirectives(o, file, body, inx)
		if err != nil || code != 0 {
			return code, err
		}
		if err := o.ApplyEnv(jobopt.SbatchEnv); err != nil {
			return 0, err
		}
		off, err := o.ParseArgs(compArgs, jobopt.FromCLI, true, s.io.stderr)
		if err != nil {
			return 0, err
		}
		fini := false
		if off < len(compArgs) && compArgs[off] == ":" {
			compArgs = compArgs[off:]
		} else if !more {
			fini = true
		}
		be, err := o.Verify(in)
		if err != nil {
			return 0, err
		}
		// --bbf: the burst buffer file goes into the script, after its
		// first line (sbatch does not send it as the burst_buffer field).
		if o.BurstBufferFile != "" {
			data, err := os.ReadFile(o.BurstBufferFile)
			if err != nil {
				s.log.Errorf("Invalid --bbf specification")
				return s.errorExit, nil
			}
			in.Script = addToScript(in.Script, string(data))
		}
		if inx == 0 {
			script = in.Script
		}
		desc, env, err := o.BatchComponent(in)
		if err != nil {
			return 0, err
		}
		comps = append(comps, component{desc: desc, env: env, be: be})
		het := inx
		if fini && inx == 0 {
			het = -1
		}
		o.SetGPUEnv(comps[0].env, het)
		if fini {
			break
		}
	}
	if len(comps) == 1 {
		comps[0].be.Write(comps[0].env, -1)
	} else {
		// Slurm writes every component's task variables into the first
		// component's environment.
		for i, cp := range comps {
			cp.be.Write(comps[0].env, i)
		}
	}
	descs := make([]*msg.JobDesc, len(comps))
	for i, cp := range comps {
		cp.desc.Environment = nil
		for _, kv := range cp.env.List() {
			cp.desc.Environment = append(cp.desc.Environment, msg.Str(kv))
		}
		descs[i] = cp.desc
	}
	descs[0].Script = msg.Str(script)
	return s.submit(o, descs, quiet)
}

// component is one het-job component being built.
type component struct {
	desc *msg.JobDesc
	env  *jobopt.Env
	be   *jobopt.BatchEnv
}

// applyDirectives applies component inx's #SBATCH lines and the script's
// #BSUB/#PBS translation, and says whether more components follow.
func (s *sbatch) applyDirectives(o *jobopt.Opts, file string, body []byte, inx int) (bool, int, error) {
	words, legacy, more, err := jobopt.DirectivesFor(file, body, "#SBATCH", inx)
	if legacy {
		s.log.Errorf("Change from #SLURM to #SBATCH in your script and verify the options are valid in sbatch")
	}
	var de *jobopt.DirectiveError
	if errors.As(err, &de) {
		s.log.Fatalf("%v", de)
		return false, 1, nil
	}
	if err := o.ApplyDirectives(words, s.io.stderr); err != nil {
		return false, 0, err
	}
	if err := o.ApplyForeignDirectives(file, body, s.io.stderr); err != nil {
		if errors.As(err, &de) {
			s.log.Fatalf("%v", de)
			return false, 1, nil
		}
		return false, 0, err
	}
	return more, 0, nil
}

// addToScript is run_command_add_to_script: text goes after the "#!"
// line (or in front of a script not starting with '#'), newline-ended.
func addToScript(script, text string) string {
	if text == "" {
		return script
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if script == "" || script[0] != '#' {
		return text + script
	}
	if i := strings.IndexByte(script, '\n'); i >= 0 {
		return script[:i+1] + text + script[i+1:]
	}
	return script + "\n" + text
}

// readScript reads the script file or stdin and applies sbatch's checks.
func (s *sbatch) readScript(argv []string) ([]byte, error) {
	var data []byte
	var err error
	if len(argv) == 0 {
		data, err = io.ReadAll(s.io.stdin)
	} else {
		data, err = os.ReadFile(argv[0])
		if err != nil {
			s.log.Errorf("Unable to open file %s", argv[0])
			return nil, err
		}
	}
	fail := func(lines ...string) ([]byte, error) {
		for _, l := range lines {
			s.log.Errorf("%s", l)
		}
		return nil, errors.New("bad script")
	}
	switch {
	case len(data) == 0 || err != nil:
		return fail("Batch script is empty!")
	case strings.TrimSpace(string(data)) == "":
		return fail("Batch script contains only whitespace!")
	case len(data) < 2 || data[0] != '#' || data[1] != '!':
		return fail("This does not look like a batch script.  The first",
			"line must start with #! followed by the path to an interpreter.",
			"For instance: #!/bin/sh")
	case strings.IndexByte(string(data), 0) >= 0:
		return fail("The Slurm controller does not allow scripts that",
			"contain a NULL character '\\0'.")
	case strings.Contains(string(data), "\r\n"):
		return fail("Batch script contains DOS line breaks (\\r\\n)",
			"instead of expected UNIX line breaks (\\n).")
	}
	return data, nil
}

// searchPath is search_path(cwd, cmd, false, R_OK, false) as sbatch uses
// it for the script name: "./x" and "/x" are left alone, otherwise the
// first existing cwd/cmd or $PATH/cmd.
func searchPath(cwd, cmd string, env *jobopt.Env) string {
	if cmd == "" || cmd[0] == '.' || cmd[0] == '/' {
		return ""
	}
	dirs := []string{cwd}
	if p, ok := env.Get("PATH"); ok {
		dirs = append(dirs, strings.Split(p, ":")...)
	}
	for _, d := range dirs {
		var full string
		if strings.HasPrefix(d, ".") {
			full = cwd + "/" + d + "/" + cmd
		} else {
			full = d + "/" + cmd
		}
		if _, err := os.Stat(full); err == nil {
			return full
		}
	}
	return ""
}
