package conf

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden files")

// checkGolden compares got with testdata/golden/<name>.golden.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", "golden", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./conf -run %s -update)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from golden; diff:\n%s", file, lineDiff(string(want), got))
	}
}

// lineDiff shows the first differing lines.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d:\n-%s\n+%s", i+1, x, y))
			if len(out) > 10 {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// TestGoldenConfigs parses every testdata/configs/<name>/slurm.conf (with
// its cgroup.conf and gres.conf when present) and compares the dump with
// testdata/golden/<name>.golden.
func TestGoldenConfigs(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "configs", "*"))
	for _, dir := range dirs {
		if st, err := os.Stat(filepath.Join(dir, "slurm.conf")); err != nil || st.IsDir() {
			continue
		}
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			c, err := Load(OSFS{}, filepath.ToSlash(filepath.Join(dir, "slurm.conf")))
			if err != nil {
				t.Errorf("slurm.conf rejected:\n%v", err)
				fmt.Fprintf(&b, "# ERRORS\n%v\n", err)
			} else {
				b.WriteString(Dump(c))
			}
			if _, err := os.Stat(filepath.Join(dir, "cgroup.conf")); err == nil {
				cg, err := LoadCgroup(OSFS{}, filepath.ToSlash(filepath.Join(dir, "cgroup.conf")))
				b.WriteString("# cgroup.conf\n")
				if err != nil {
					t.Errorf("cgroup.conf rejected:\n%v", err)
					fmt.Fprintf(&b, "ERRORS\n%v\n", err)
				} else {
					b.WriteString(DumpCgroup(cg))
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "gres.conf")); err == nil {
				var types List
				if c != nil {
					types = append(List{"gpu", "mps", "shard"}, c.GresTypes...)
				}
				g, err := LoadGres(OSFS{}, filepath.ToSlash(filepath.Join(dir, "gres.conf")), types)
				b.WriteString("# gres.conf\n")
				if err != nil {
					t.Errorf("gres.conf rejected:\n%v", err)
					fmt.Fprintf(&b, "ERRORS\n%v\n", err)
				} else {
					b.WriteString(DumpGres(g, c))
				}
			}
			checkGolden(t, name, b.String())
		})
	}
}

// TestBrokenConfigs loads every testdata/broken/*.conf, which must fail.
// The full diagnostic list is compared with testdata/golden/broken/<name>.golden.
//
// Where <name>.slurm-error (or <name>.conf.slurm-error) holds the real
// slurmctld's output, the first error we report must contain Slurm's
// essential wording, defined as follows:
//  1. take the lines of the file; strip a "slurmctld: "/"slurmd: " prefix and
//     then an "error: " or "fatal: " prefix; if any line had such a level
//     prefix, keep only those lines;
//  2. drop environment noise (munge, pmix/mpi plugins, MailProg, address
//     resolution, "specified more than once" warnings, "Unable to process
//     configuration file", include retry notices) -- see slurmNoise;
//  3. the first line left is Slurm's essential message;
//  4. normalise both it and our first error: drop a leading C function name
//     ("_parse_next_key: "), replace every blank-separated token containing
//     '/' with "<path>", collapse blanks;
//  5. our normalised message must contain Slurm's.
func TestBrokenConfigs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "broken", "*.conf"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".conf")
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			c, err := Load(OSFS{}, filepath.ToSlash(f))
			var el ErrorList
			if err == nil {
				// Only a failure when the real slurmctld's recorded output
				// shows it rejecting the file; otherwise Slurm may well
				// accept it too (it only logs), so record and log.
				if hasSlurmError(f) {
					t.Errorf("%s was accepted; warnings: %v", f, c.Warnings)
				} else {
					t.Logf("%s accepted (no .slurm-error recorded); warnings: %v", f, c.Warnings)
				}
				b.WriteString("# ACCEPTED\n")
				for _, w := range c.Warnings {
					fmt.Fprintf(&b, "%s\n", w.String())
				}
			} else {
				el = err.(ErrorList)
				for _, d := range el {
					fmt.Fprintf(&b, "%s\n", d.String())
				}
			}
			checkGolden(t, filepath.Join("broken", name), b.String())
			for _, se := range []string{strings.TrimSuffix(f, ".conf") + ".slurm-error", f + ".slurm-error"} {
				data, rerr := os.ReadFile(se)
				if rerr != nil {
					continue
				}
				want := essentialSlurmError(string(data))
				if want == "" || len(el) == 0 {
					continue
				}
				got := normaliseMsg(el[0].Msg)
				if !strings.Contains(got, normaliseMsg(want)) {
					t.Errorf("first error does not carry Slurm's wording\n ours:  %s\n slurm: %s", got, normaliseMsg(want))
				}
			}
		})
	}
}

// hasSlurmError reports whether f has a recorded slurmctld output with an
// essential error line.
func hasSlurmError(f string) bool {
	for _, se := range []string{strings.TrimSuffix(f, ".conf") + ".slurm-error", f + ".slurm-error"} {
		if data, err := os.ReadFile(se); err == nil && essentialSlurmError(string(data)) != "" {
			return true
		}
	}
	return false
}

var (
	slurmPrefix = regexp.MustCompile(`^(slurmctld|slurmd|slurmd-\S+|slurmdbd|scontrol): `)
	levelPrefix = regexp.MustCompile(`^(error|fatal): `)
	slurmNoise  = regexp.MustCompile(`(?i)munge|pmix|mpi/|MPI:|MailProg|getaddrinfo|slurm_set_addr|slurm_get_port|` +
		`_validate_slurmd_addr|specified more than once|Unable to process configuration file|retrying in|` +
		`Couldn't load specified plugin|--num-threads|No memory enforcing`)
	funcPrefix = regexp.MustCompile(`^_?[a-z][a-z0-9_]*: `)
	spaces     = regexp.MustCompile(`\s+`)
)

// essentialSlurmError implements steps 1-3 of TestBrokenConfigs's rule.
func essentialSlurmError(out string) string {
	var leveled, plain []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(slurmPrefix.ReplaceAllString(strings.TrimSpace(l), ""))
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if levelPrefix.MatchString(l) {
			leveled = append(leveled, levelPrefix.ReplaceAllString(l, ""))
		} else {
			plain = append(plain, l)
		}
	}
	lines := plain
	if len(leveled) > 0 {
		lines = leveled
	}
	for _, l := range lines {
		if !slurmNoise.MatchString(l) {
			return l
		}
	}
	return ""
}

func normaliseMsg(s string) string {
	s = funcPrefix.ReplaceAllString(strings.TrimSpace(s), "")
	f := strings.Fields(s)
	for i, w := range f {
		if strings.Contains(w, "/") {
			f[i] = "<path>"
		}
	}
	return spaces.ReplaceAllString(strings.Join(f, " "), " ")
}

func TestEssentialSlurmError(t *testing.T) {
	out := "slurmctld: error: KillWait 1 specified more than once, latest value used\n" +
		"slurmctld: error: _parse_next_key: Parsing error at unrecognized key: HeartbeatInterval\n" +
		"slurmctld: fatal: Unable to process configuration file\n"
	if got := essentialSlurmError(out); got != "_parse_next_key: Parsing error at unrecognized key: HeartbeatInterval" {
		t.Errorf("got %q", got)
	}
	if got := normaliseMsg(`Parse error in file /tmp/x/slurm.conf line 3: " Foo=1"`); got != `Parse error in file <path> line 3: " Foo=1"` {
		t.Errorf("got %q", got)
	}
}

// DumpCgroup renders a CgroupConfig for golden files.
func DumpCgroup(c *CgroupConfig) string {
	var keys []string
	for k := range c.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := fmt.Sprintf("%+v\n", *c)
	s = strings.Replace(s, fmt.Sprintf("Set:%v", c.Set), "Set:"+strings.Join(keys, ","), 1)
	return s
}

// DumpGres renders a GresConfig and, when c is given, the records that
// apply to the first node of every NodeName line.
func DumpGres(g *GresConfig, c *Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "AutoDetect=%s\n", g.AutoDetect)
	for _, r := range g.Records {
		fmt.Fprintf(&b, "%s NodeName=%s Name=%s Type=%s File=%s nfiles=%d Multiple=%v Count=%d Cores=%s Links=%v Flags=%s AutoDetect=%s\n",
			r.Pos, r.NodeName, r.Name, r.Type, r.File, len(r.Files), r.MultipleFiles, r.Count, r.Cores, r.Links,
			strings.Join(r.Flags, ","), r.AutoDetect)
	}
	for _, w := range g.Warnings {
		fmt.Fprintf(&b, "warning %s\n", w)
	}
	if c != nil {
		for _, nl := range c.NodeLines {
			if nl.Count == 0 {
				continue
			}
			node := c.Nodes[c.NodeIndex[firstName(c, nl)]].Name
			recs, auto := g.ForNode(node)
			var parts []string
			for _, r := range recs {
				parts = append(parts, fmt.Sprintf("%s:%s:%d", r.Name, r.Type, r.Count))
			}
			fmt.Fprintf(&b, "node %s autodetect=%s gres=%s\n", node, auto, strings.Join(parts, ","))
		}
	}
	return b.String()
}

func firstName(c *Config, nl *NodeLine) string {
	for _, n := range c.Nodes {
		if c.NodeLines[n.Line] == nl {
			return n.Name
		}
	}
	return ""
}

// TestBrokenDirs covers testdata/broken/<name>/ directories (slurm.conf plus
// cgroup.conf / gres.conf / included files): the errors of every file are
// concatenated into testdata/golden/broken/<name>.golden; at least one of
// them must fail. <name>/slurm-error (or <name>.slurm-error) is checked as
// in TestBrokenConfigs against the first error.
func TestBrokenDirs(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "broken", "*"))
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		name := filepath.Base(dir)
		if name == acceptedDir {
			continue // TestAcceptedByRealSlurm
		}
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			var first []Diagnostic
			record := func(what string, err error, warns []Diagnostic) {
				fmt.Fprintf(&b, "# %s\n", what)
				if el, ok := err.(ErrorList); ok {
					first = append(first, el...)
					for _, d := range el {
						fmt.Fprintf(&b, "%s\n", d.String())
					}
					return
				}
				b.WriteString("ACCEPTED\n")
				for _, w := range warns {
					fmt.Fprintf(&b, "%s\n", w.String())
				}
			}
			c, err := Load(OSFS{}, filepath.ToSlash(filepath.Join(dir, "slurm.conf")))
			var warns []Diagnostic
			if c != nil {
				warns = c.Warnings
			}
			record("slurm.conf", err, warns)
			if _, serr := os.Stat(filepath.Join(dir, "cgroup.conf")); serr == nil {
				cg, err := LoadCgroup(OSFS{}, filepath.ToSlash(filepath.Join(dir, "cgroup.conf")))
				var w []Diagnostic
				if cg != nil {
					w = cg.Warnings
				}
				record("cgroup.conf", err, w)
			}
			if _, serr := os.Stat(filepath.Join(dir, "gres.conf")); serr == nil {
				var types List
				if c != nil {
					types = append(List{"gpu", "mps", "shard"}, c.GresTypes...)
				}
				g, err := LoadGres(OSFS{}, filepath.ToSlash(filepath.Join(dir, "gres.conf")), types)
				var w []Diagnostic
				if g != nil {
					w = g.Warnings
				}
				record("gres.conf", err, w)
				if err == nil && c != nil {
					resolveBrokenGres(c, g, record)
				}
			}
			checkGolden(t, filepath.Join("broken", name), b.String())
			if dev, ok := deviations[name]; ok {
				t.Logf("intentional deviation from Slurm 22.05: %s", dev.reason)
				dev.check(t, c, first)
				return
			}
			for _, se := range []string{filepath.Join(dir, "slurm-error"), dir + ".slurm-error"} {
				data, rerr := os.ReadFile(se)
				if rerr != nil {
					continue
				}
				want := essentialSlurmError(string(data))
				if want == "" {
					continue
				}
				if len(first) == 0 {
					t.Errorf("accepted, but Slurm says: %s", want)
					continue
				}
				if got := normaliseMsg(first[0].Msg); !strings.Contains(got, normaliseMsg(want)) {
					t.Errorf("first error does not carry Slurm's wording\n ours:  %s\n slurm: %s", got, normaliseMsg(want))
				}
			}
			if len(first) == 0 {
				t.Logf("%s: every file accepted", dir)
			}
		})
	}
}

// resolveBrokenGres runs ResolveNode for the first node of every node line
// (slurmd's per-node checks; CLOUD nodes the way slurmctld loads them).
func resolveBrokenGres(c *Config, g *GresConfig, record func(string, error, []Diagnostic)) {
	seen := map[int]bool{}
	for _, n := range c.Nodes {
		if seen[n.Line] {
			continue
		}
		seen[n.Line] = true
		nl := c.NodeLines[n.Line]
		cpus := NodeCPUsFromConfig(nl)
		if strings.HasPrefix(strings.ToUpper(nl.State), "CLOUD") {
			cpus.Mode = CoresCPUIDs
		}
		ng, err := g.ResolveNode(c, n.Name, &cpus)
		var w []Diagnostic
		if ng != nil {
			w = ng.Warnings
		}
		record("gres.conf resolved for "+n.Name, err, w)
	}
}
