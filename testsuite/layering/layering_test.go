// Package layering enforces the architecture rule that the pure packages
// (hostlist, conf, the scheduling core, the protocol codec) stay free of I/O
// and wall-clock reads, so they remain deterministic and simulator-friendly.
package layering

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/goslurm/goslurm"

// purePackages lists go list patterns (relative to the module root) whose
// non-test code must not do network, process or database I/O, nor read the
// wall clock. A pattern whose directory does not exist yet is skipped, so the
// rule applies the moment the package lands.
var purePackages = []string{
	"./hostlist/...",
	"./conf/...",
	"./slurmctld/sched/...",
	"./slurmctld/trigger/...",
	"./slurmctld/gres",
	"./protocol/pack/...",
	"./protocol/codec/...",
	"./protocol/msgtype/...",
	"./protocol/slurmerr/...",
	"./protocol/msg/...",
	"./credential/jobcred", // not its mungesign subpackage, which talks to munged
}

// forbidden imports for pure packages, matched on the full import path or as a
// path prefix followed by "/".
var forbidden = []string{
	"net",
	"os/exec",
	"database/sql",
	"golang.org/x/sys",
}

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Deps       []string
}

func listPackages(t *testing.T, pattern string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", pattern)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func isForbidden(path string) bool {
	for _, f := range forbidden {
		if path == f || strings.HasPrefix(path, f+"/") {
			return true
		}
	}
	return false
}

func TestPurePackagesDoNoIO(t *testing.T) {
	for _, pattern := range purePackages {
		dir := strings.TrimSuffix(pattern, "/...")
		if _, err := os.Stat(filepath.Join("../..", dir)); errors.Is(err, fs.ErrNotExist) {
			continue // not landed yet
		}
		for _, p := range listPackages(t, pattern) {
			// Deps is transitive, so an indirect route through another
			// package of ours is caught too.
			for _, dep := range p.Deps {
				if isForbidden(dep) {
					t.Errorf("%s depends on %s; pure packages must not do network, process or database I/O", p.ImportPath, dep)
				}
			}
			checkNoWallClock(t, p)
		}
	}
}

// checkNoWallClock fails on time.Now / time.Since / time.Until in non-test
// files: pure code takes the current time as an argument (an injected clock).
func checkNoWallClock(t *testing.T, p listedPackage) {
	t.Helper()
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		path := filepath.Join(p.Dir, name)
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		timeName := ""
		for _, imp := range f.Imports {
			if strings.Trim(imp.Path.Value, `"`) == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		if timeName == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if ok && id.Name == timeName {
				switch sel.Sel.Name {
				case "Now", "Since", "Until", "Sleep", "After", "Tick", "NewTimer", "NewTicker", "AfterFunc":
					t.Errorf("%s: %s uses time.%s; pure packages take a clock as input", fset.Position(sel.Pos()), p.ImportPath, sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// TestForbiddenMatcher keeps the matcher itself honest: a prefix such as
// "network" must not count as "net", while "net/http" must.
func TestForbiddenMatcher(t *testing.T) {
	cases := map[string]bool{
		"net":                    true,
		"net/http":               true,
		"os/exec":                true,
		"os":                     false,
		"network":                false,
		module + "/hostlist":     false,
		"golang.org/x/sys/unix":  true,
		"golang.org/x/sysfoo":    false,
		"database/sql/driver":    true,
		"github.com/x/net/thing": false,
	}
	for path, want := range cases {
		if got := isForbidden(path); got != want {
			t.Errorf("isForbidden(%q) = %v, want %v", path, got, want)
		}
	}
}
