package conf

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// deviation is a testdata/broken case on which goslurm deliberately differs
// from Slurm 22.05. The case's .slurm-error still documents what real Slurm
// does; check asserts what we do instead (c is nil when we reject the
// configuration, errs holds our errors).
type deviation struct {
	reason string
	check  func(t *testing.T, c *Config, errs []Diagnostic)
}

// deviations is the complete list of intentional differences from 22.05 in
// testdata/broken. Adding to it needs a reason a user would accept.
var deviations = map[string]deviation{
	"include-glob": {
		reason: "Include accepts glob patterns (our extension, requested in the issue tracker); " +
			"22.05 reads the pattern as a literal file name, retries for 60 s and dies",
		check: func(t *testing.T, c *Config, errs []Diagnostic) {
			if c == nil {
				t.Fatalf("glob include rejected: %v", errs)
			}
			var got []string
			for _, f := range c.Files {
				got = append(got, strings.TrimPrefix(f, "testdata/broken/include-glob/"))
			}
			want := "slurm.conf common.conf conf.d/10-plugins.conf conf.d/20-sched.conf"
			if s := strings.Join(got, " "); !strings.HasPrefix(s, want) || strings.Contains(s, "README") {
				t.Errorf("files read = %s, want %s... in sorted glob order, README.txt not included", s, want)
			}
		},
	},
	"include-loop": {
		reason: "include loops are detected and reported; 22.05 recurses until it runs out of " +
			"file descriptors (\"Too many open files\") and then dies",
		check: func(t *testing.T, c *Config, errs []Diagnostic) {
			if c != nil || len(errs) == 0 {
				t.Fatal("include loop accepted")
			}
			if m := errs[0].Msg; !strings.Contains(m, "include cycle: ") || !strings.Contains(m, "loop-a.conf -> ") {
				t.Errorf("first error = %q, want an include cycle through loop-a.conf", m)
			}
		},
	},
}

// acceptedDir holds configurations one might expect to be broken but which
// the real 22.05 accepts: testdata/broken/accepted-by-real-slurm.
const acceptedDir = "accepted-by-real-slurm"

// oracleErrorLine picks "error: ..." lines out of an oracle record (the part
// before the complete stderr copy).
var oracleErrorLine = regexp.MustCompile(`(?m)^slurmctld: error: (.*)$`)

// TestAcceptedByRealSlurm loads every testdata/broken/accepted-by-real-slurm
// config, which must be accepted. Every error real slurmctld logged about the
// configuration itself (noise filtered as in TestBrokenConfigs) must appear
// among our warnings.
func TestAcceptedByRealSlurm(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "broken", acceptedDir, "*.conf"))
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	// Errors about runtime state rather than the file's content.
	runtime := regexp.MustCompile(`_find_node_record: lookup failure|slurm_set_addr|slurm_get_port|_validate_slurmd_addr`)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".conf")
		t.Run(name, func(t *testing.T) {
			c, err := Load(OSFS{}, filepath.ToSlash(f))
			var b strings.Builder
			if err != nil {
				t.Errorf("rejected, but real Slurm accepts it:\n%v", err)
				b.WriteString("# REJECTED\n" + err.Error() + "\n")
			} else {
				b.WriteString("# ACCEPTED\n")
				for _, w := range c.Warnings {
					b.WriteString(w.String() + "\n")
				}
			}
			checkGolden(t, filepath.Join("broken", acceptedDir, name), b.String())
			data, rerr := os.ReadFile(strings.TrimSuffix(f, ".conf") + ".oracle.txt")
			if rerr != nil || c == nil {
				return
			}
			head, _, _ := strings.Cut(string(data), "--- complete stderr")
			for _, m := range oracleErrorLine.FindAllStringSubmatch(head, -1) {
				if slurmNoise.MatchString(m[1]) || runtime.MatchString(m[1]) {
					continue
				}
				want := normaliseMsg(m[1])
				found := false
				for _, w := range c.Warnings {
					if strings.Contains(normaliseMsg(w.Msg), want) {
						found = true
					}
				}
				if !found {
					t.Errorf("real Slurm logs %q; no warning of ours carries it (warnings: %v)", m[1], c.Warnings)
				}
			}
		})
	}
}
