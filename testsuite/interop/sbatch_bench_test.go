package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/oracle"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// BenchmarkSbatchHold is the process wall time of "sbatch --hold" (ours
// and the real one) against the same real slurmctld, the issue's
// benchmark for sbatch. Held jobs never run.
//
//	go test ./testsuite/interop -run '^$' -bench SbatchHold -benchtime 50x
func BenchmarkSbatchHold(b *testing.B) {
	realBin := oracle.Binary(b, "sbatch")
	out := filepath.Join(b.TempDir(), "sbatch")
	if o, err := exec.Command("go", "build", "-o", out, "github.com/goslurm/goslurm/commands/sbatch").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, o)
	}
	c := realslurm.Start(b, realslurm.Options{Nodes: 1})
	dir := b.TempDir()
	script := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(script, []byte(sbScript), 0o755); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, bin string }{{"real", realBin}, {"goslurm", out}} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				cmd := exec.CommandContext(ctx, bc.bin, "--hold", "-Q", script)
				cmd.Args[0] = "sbatch"
				cmd.Dir = dir
				cmd.Env = c.Env()
				if o, err := cmd.CombinedOutput(); err != nil {
					cancel()
					b.Fatalf("%s: %v\n%s", bc.name, err, o)
				}
				cancel()
			}
		})
	}
}
