package conf

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// FileSystem is the only way the parsers touch files. Paths are slash
// separated; absolute paths start with "/". OSFS reads the real file system,
// MapFS serves files from memory (tests, fuzzing, configless setups).
type FileSystem interface {
	// ReadFile returns the whole content of the named file.
	ReadFile(name string) ([]byte, error)
	// Glob returns the sorted names matching pattern (path.Match syntax).
	Glob(pattern string) ([]string, error)
}

// OSFS reads files from the operating system.
type OSFS struct{}

// ReadFile implements FileSystem.
func (OSFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(filepath.FromSlash(name)) }

// Glob implements FileSystem.
func (OSFS) Glob(pattern string) ([]string, error) {
	m, err := filepath.Glob(filepath.FromSlash(pattern))
	if err != nil {
		return nil, err
	}
	for i := range m {
		m[i] = filepath.ToSlash(m[i])
	}
	sort.Strings(m)
	return m, nil
}

// MapFS is an in-memory FileSystem keyed by cleaned slash paths.
type MapFS map[string]string

// ReadFile implements FileSystem.
func (m MapFS) ReadFile(name string) ([]byte, error) {
	s, ok := m[path.Clean(name)]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return []byte(s), nil
}

// Glob implements FileSystem.
func (m MapFS) Glob(pattern string) ([]string, error) {
	pattern = path.Clean(pattern)
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	var out []string
	for name := range m {
		if ok, _ := path.Match(pattern, name); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// errText renders a file error the way Slurm's %m would (strerror text).
func errText(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// hasGlobMeta reports whether p contains glob metacharacters.
func hasGlobMeta(p string) bool { return strings.ContainsAny(p, "*?[") }
