package conf

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// readShowConfig reads the slurm.conf part of a recorded `scontrol show
// config` (key = value lines up to the cgroup section) in output order.
func readShowConfig(t *testing.T, file string) (keys []string, vals map[string]string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vals = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Cgroup Support Configuration") {
			break
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "Configuration data as of") {
			continue
		}
		k = strings.TrimSpace(k)
		v = strings.TrimPrefix(v, " ")
		keys = append(keys, k)
		vals[k] = v
	}
	return keys, vals
}

// TestShowConfigMatchesRealSlurm is the differential test against real
// slurmctld 22.05.8: for every testdata/configs/<name> with an
// oracle-scontrol-show-config.txt, every key ShowConfigValue can render must
// equal what the real controller printed for the same slurm.conf. Keys it
// does not render are listed (runtime keys with their reason).
func TestShowConfigMatchesRealSlurm(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "configs", "*"))
	checked := map[string]int{}
	unrendered := map[string]int{}
	nconf := 0
	for _, dir := range dirs {
		oracle := filepath.Join(dir, "oracle-scontrol-show-config.txt")
		if _, err := os.Stat(oracle); err != nil {
			continue
		}
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			keys, want := readShowConfig(t, oracle)
			if len(keys) == 0 {
				t.Skipf("%s holds no key = value lines (scontrol could not reach the controller)", oracle)
			}
			nconf++
			c, err := Load(OSFS{}, filepath.ToSlash(filepath.Join(dir, "slurm.conf")))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				got, ok := c.ShowConfigValue(k)
				if !ok {
					unrendered[k]++
					continue
				}
				checked[k]++
				if got != want[k] {
					t.Errorf("%s: ours %q, real slurmctld %q", k, got, want[k])
				}
			}
		})
	}
	list := func(m map[string]int) string {
		var s []string
		for k := range m {
			if r, ok := ShowConfigRuntimeKeys[k]; ok {
				k += " (" + r + ")"
			}
			s = append(s, k)
		}
		sort.Strings(s)
		return strings.Join(s, ", ")
	}
	t.Logf("%d configs; %d keys compared: %s", nconf, len(checked), list(checked))
	t.Logf("not rendered (%d): %s", len(unrendered), list(unrendered))
	if nconf == 0 {
		t.Fatal("no oracle records found")
	}
}
