package ctld

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// filesGroupDB reads group and passwd files directly: the database when
// the binary has no cgo (NSS cannot be called), and the tests' fake.
type filesGroupDB struct {
	groupPath, passwdPath string
}

// records reads a colon-separated database file; a missing file has no
// records.
func records(path string) [][]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '+' || line[0] == '-' {
			// Comments and NIS compat entries are no groups.
			continue
		}
		out = append(out, strings.Split(line, ":"))
	}
	return out
}

func parseID(s string) (uint32, bool) {
	id, err := strconv.ParseUint(s, 10, 32)
	return uint32(id), err == nil
}

func memberList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (db filesGroupDB) group(name string) (uint32, []string, bool) {
	for _, g := range records(db.groupPath) {
		if len(g) >= 3 && g[0] == name {
			gid, ok := parseID(g[2])
			if !ok {
				return 0, nil, false
			}
			var mem []string
			if len(g) >= 4 {
				mem = memberList(g[3])
			}
			return gid, mem, true
		}
	}
	return 0, nil, false
}

func (db filesGroupDB) eachGroup(fn func(uint32, []string)) {
	for _, g := range records(db.groupPath) {
		if len(g) < 4 {
			continue
		}
		if gid, ok := parseID(g[2]); ok {
			fn(gid, memberList(g[3]))
		}
	}
}

func (db filesGroupDB) eachUser(fn func(uid, gid uint32)) {
	for _, p := range records(db.passwdPath) {
		if len(p) < 4 {
			continue
		}
		uid, ok1 := parseID(p[2])
		gid, ok2 := parseID(p[3])
		if ok1 && ok2 {
			fn(uid, gid)
		}
	}
}

func (db filesGroupDB) uid(name string) (uint32, bool) {
	pw := records(db.passwdPath)
	for _, p := range pw {
		if len(p) >= 3 && p[0] == name {
			return parseID(p[2])
		}
	}
	// A number names the user whose uid it is.
	if id, ok := parseID(name); ok {
		for _, p := range pw {
			if len(p) >= 3 && p[2] == name {
				return id, true
			}
		}
	}
	return 0, false
}

// filesShell is the shell field of name's line in a passwd file.
func filesShell(path, name string) string {
	for _, f := range records(path) {
		if len(f) == 7 && f[0] == name {
			return f[6]
		}
	}
	return ""
}
