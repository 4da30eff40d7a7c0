package sim

import (
	"os"
	"path/filepath"
	"testing"
)

// tracesDir is the shared trace folder next to the repository
// (../shared/data/traces from the module root).
const tracesDir = "../../../../shared/data/traces"

// BenchmarkSimulate replays the first 5,000 jobs of each shared trace under
// each policy (the full traces are timed with the slurmsim command; see
// doc/scheduling-simulation.md). It skips when the traces are absent.
func BenchmarkSimulate(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(tracesDir, "*.swf.gz"))
	if len(files) == 0 {
		b.Skip("no traces in " + tracesDir)
	}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		tr, err := ReadTrace(f, ReadOptions{MaxJobs: 5000})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range []Policy{FIFO, Backfill} {
			b.Run(filepath.Base(path)+"/"+p.String(), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Run(tr, Options{Policy: p}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
