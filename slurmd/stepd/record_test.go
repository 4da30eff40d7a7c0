package stepd

// TestRecordRealBatchEnv records, once, the environment a real Slurm 22.05
// batch job sees, into testdata/real_batch_env.txt. It runs only with
// GOSLURM_RECORD=1 (it needs a real cluster and rewrites testdata). The job
// is submitted the way the batch-launch capture was (env -i with the same
// variables, -w n1 -J cap-batch, a 16-CPU node), so the captured launch
// message fed to our env builder describes the same kind of job.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/realslurm"
)

// TestRecordRealTaskEnv records the environment of a real srun task
// (srun -N1 -w n1 env, submitted like srun-hostname.pcap's srun) into
// testdata/real_task_env.txt.
func TestRecordRealTaskEnv(t *testing.T) {
	if os.Getenv("GOSLURM_RECORD") != "1" {
		t.Skip("set GOSLURM_RECORD=1 to record testdata/real_task_env.txt from a real cluster")
	}
	c := realslurm.Start(t, realslurm.Options{Nodes: 1, CPUs: 16, RealMemory: 4096})
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := c.Command(ctx, "srun", "-N1", "-w", "n1", "env")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "USER=root", "LOGNAME=root",
		"SHELL=/bin/bash", "LANG=C.UTF-8", "SLURM_CONF=" + c.Conf}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("srun: %v\n%s", err, c.Logs())
	}
	header := "# env of a real Slurm 22.05.8 srun task: srun -N1 -w n1 env\n" +
		"# cluster " + c.Name + ", submit dir " + dir + ", spool " + c.Dir + "\n"
	if err := os.WriteFile("testdata/real_task_env.txt", append([]byte(header), out...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRecordRealBatchEnv(t *testing.T) {
	if os.Getenv("GOSLURM_RECORD") != "1" {
		t.Skip("set GOSLURM_RECORD=1 to record testdata/real_batch_env.txt from a real cluster")
	}
	c := realslurm.Start(t, realslurm.Options{Nodes: 1, CPUs: 16, RealMemory: 4096})
	dir := t.TempDir()
	out := filepath.Join(dir, "env.out")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := c.Command(ctx, "sbatch", "--parsable", "-w", "n1", "-J", "cap-batch", "-o", out, "--wrap=env")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "USER=root", "LOGNAME=root",
		"SHELL=/bin/bash", "LANG=C.UTF-8", "SLURM_CONF=" + c.Conf}
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v: %s", err, b)
	}
	jobID := strings.TrimSpace(string(b))
	for {
		q, _ := c.Command(ctx, "squeue", "-h", "-j", jobID).CombinedOutput()
		if strings.TrimSpace(string(q)) == "" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("job %s did not finish: %s\n%s", jobID, q, c.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	env, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, c.Logs())
	}
	header := "# env of a real Slurm 22.05.8 batch job: sbatch -w n1 -J cap-batch --wrap=env\n" +
		"# job " + jobID + ", cluster " + c.Name + ", submit dir " + dir + ", spool " + c.Dir + "\n"
	if err := os.WriteFile("testdata/real_batch_env.txt", append([]byte(header), env...), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d bytes", len(env))
}
