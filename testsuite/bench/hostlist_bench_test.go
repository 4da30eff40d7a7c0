// Package bench puts goslurm's numbers beside real Slurm 22.05's, measured in
// the same run on the same input. It measures; it asserts nothing about speed.
package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/goslurm/goslurm/testsuite/oracle"
)

// bigList is 100,000 hosts in two ranges; Slurm caps one range at 64K hosts.
const bigList = "n[000001-060000],m[1-40000]"

// BenchmarkScontrolHostnames runs `scontrol show hostnames` and
// `scontrol show hostlist` on a 100,000-host list with the real 22.05 binary
// and with ours, whole process included, as a user would.
func BenchmarkScontrolHostnames(b *testing.B) {
	real := oracle.Scontrol(b)
	ours := buildScontrol(b)
	conf := oracle.SlurmConf(b)

	expand := exec.Command(real, "show", "hostnames", bigList)
	expand.Env = append(os.Environ(), "SLURM_CONF="+conf)
	hosts, err := expand.Output()
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "hosts")
	if err := os.WriteFile(file, hosts, 0o644); err != nil {
		b.Fatal(err)
	}

	for _, impl := range []struct{ name, bin string }{{"slurm-22.05", real}, {"goslurm", ours}} {
		for _, op := range []struct{ name, verb, arg string }{
			{"expand", "hostnames", bigList},
			{"compress", "hostlist", file},
		} {
			b.Run(op.name+"/"+impl.name, func(b *testing.B) {
				for b.Loop() {
					cmd := exec.Command(impl.bin, "show", op.verb, op.arg)
					cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
					if out, err := cmd.Output(); err != nil || len(out) == 0 {
						b.Fatalf("%s show %s: %v", impl.bin, op.verb, err)
					}
				}
			})
		}
	}
}

func buildScontrol(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "scontrol")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/goslurm/goslurm/commands/scontrol")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build scontrol: %v\n%s", err, out)
	}
	return bin
}
