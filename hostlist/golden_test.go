package hostlist

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// goldenExprs are checked against testdata/hostlist.golden, whose hosts,
// ranged and sorted lines were verified against real Slurm 22.05.8
// (testsuite/interop runs the same expressions through real scontrol);
// "safe" lines are Sort where it keeps hosts scontrol loses.
var goldenExprs = []string{
	"", "n1,n2,n3,a5,a01", "n1,n2,n3,a5,a01,n2", "n[1-3],n3", "n[1-5],n[3-8]",
	"n[8-012]", "n[098-101]", "n01,n1", "rack[1-2]-n[01-04]", "r[1-2]c[1-2]n[1-2]",
	"a[x]b[1-2]c[1-3]", "n[1-", "[1-", "a[b[1-2]", "x[ 1]y[2]", "n[1, 2]", "n[5-]",
	"n[1a-3]", "n[+1-3]", "n[1-2]x", "n[1-2]][3]", "n[]", "n[1-65536]", "n[1-65537]",
	"a[1-40000,1-40000]b[1]", "n[0-18446744073709551615]", "n[18446744073709551616]",
	"[3-10,9-15,09-12]", "[0-11,3-10,9-15,09-12]", "a\nb1,ab2", "rack10-n1,rack9-n1,rack1-n1",
	"b,a,b1,a1", "n[10-12],n9", "z9,z10,z09,z010", "n[01-03],n[2-5]",
}

func goldenLine(expr string) string {
	var log []string
	hl, err := ParseLog(expr, func(m string) { log = append(log, m) })
	var b strings.Builder
	fmt.Fprintf(&b, "expr %q\n", expr)
	for _, m := range log {
		fmt.Fprintf(&b, "  log %s\n", m)
	}
	if err != nil {
		fmt.Fprintf(&b, "  error %s\n", err)
		return b.String()
	}
	hosts := hl.Hosts()
	if len(hosts) > 12 {
		hosts = append(hosts[:12:12], fmt.Sprintf("... (%d)", len(hosts)))
	}
	fmt.Fprintf(&b, "  hosts %q\n  count %d\n  ranged %s\n", hosts, hl.Count(), hl.Ranged())
	// "sorted" is SortAsScontrol, as real scontrol prints it; "safe" is
	// Sort, listed only where it differs (where scontrol loses hosts).
	c := hl.Copy()
	c.SortAsScontrol()
	s := hl.Copy()
	s.Sort()
	u := hl.Copy()
	u.Uniq()
	fmt.Fprintf(&b, "  sorted %s\n", c.Ranged())
	if s.Ranged() != c.Ranged() {
		fmt.Fprintf(&b, "  safe %s\n", s.Ranged())
	}
	fmt.Fprintf(&b, "  uniq %s (%d)\n", u.Ranged(), u.Count())
	return b.String()
}

func TestGolden(t *testing.T) {
	var b strings.Builder
	for _, e := range goldenExprs {
		b.WriteString(goldenLine(e))
	}
	path := filepath.Join("testdata", "hostlist.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}
