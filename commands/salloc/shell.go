package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
)

// defaultCommand is what salloc runs when no command is given
// (_salloc_default_command): with LaunchParameters=use_interactive_step an
// interactive step through the srun beside salloc, else the user's login
// shell from the password database.
func (s *salloc) defaultCommand(c *conf.Config, uid uint32, argv0 string) []string {
	if c.LaunchParameters.Has("use_interactive_step") {
		dir := ""
		if i := strings.LastIndexByte(argv0, '/'); i >= 0 {
			dir = argv0[:i+1]
		}
		return []string{"/bin/sh", "-c", dir + "srun " + c.InteractiveStepOptions}
	}
	if sh, ok := passwdShell(strconv.FormatUint(uint64(uid), 10), 2); ok {
		return []string{sh}
	}
	s.log.Errorf("warning - no user information for user %d", uid)
	sh, _ := passwdShell("nobody", 0)
	return []string{sh}
}

// passwdShell is the shell field of the /etc/passwd entry whose field
// (0: name, 2: uid) is key.
func passwdShell(key string, field int) (string, bool) {
	f, err := os.Open(filepath.Join("/etc", "passwd"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), ":")
		if len(parts) == 7 && parts[field] == key {
			return parts[6], true
		}
	}
	return "", false
}
