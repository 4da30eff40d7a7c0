package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// TestSlurmctldDownNodeCompleting compares a COMPLETING job whose nodes
// go DOWN (scontrol update state=down) while their epilog still runs:
// the job stops waiting for a node as soon as it is DOWN
// (kill_running_job_by_node_name within the update), so the commands
// run right after the update see it waiting only for the other node,
// then no longer COMPLETING.
func TestSlurmctldDownNodeCompleting(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The node epilog waits (at most a minute) for dir/go-<node> while
	// dir/hold-<node> exists.
	nodeEpilog := filepath.Join(dir, "node-epilog.sh")
	if err := os.WriteFile(nodeEpilog, fmt.Appendf(nil, `#!/bin/sh
if [ -e %[1]s/hold-$SLURMD_NODENAME ]; then
  i=0; while [ ! -e %[1]s/go-$SLURMD_NODENAME ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
fi
exit 0
`, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	c := ctldharness.New(t, ctldharness.Options{Nodes: 2, CPUs: 2, ExtraConf: []string{"Epilog=" + nodeEpilog}})
	touch := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	collect := func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		out := map[string]string{}
		for _, g := range []string{"go-*", "hold-*"} {
			left, _ := filepath.Glob(filepath.Join(dir, g))
			for _, f := range left {
				os.Remove(f)
			}
		}
		defer touch("go-n1")
		defer touch("go-n2")
		touch("hold-n1")
		touch("hold-n2")
		job := ctldSbatch(t, c, "-D", c.Dir, "-o", "/dev/null", "-N", "2", "--wrap", "true")
		ctldWaitJob(t, c, job, 60*time.Second, "COMPLETING")
		if err := c.Poll(60*time.Second, func() bool { return ctldNodeStates(c) == "n1=completing n2=completing" }); err != nil {
			t.Fatalf("nodes %q, want both completing", ctldNodeStates(c))
		}
		// What the commands see right after each update, without waiting.
		look := func(tag string) {
			out[tag+": squeue"] = ctldRun(c, "squeue", "-h", "-o", "%i %T %N")
			out[tag+": job"] = ctldJobFields(c, job)
			out[tag+": nodes"] = ctldNodeStates(c)
		}
		look("1 completing")
		for i, n := range []string{"n2", "n1"} {
			tag := fmt.Sprintf("%d %s down", i+2, n)
			out[tag+": update"] = ctldRun(c, "scontrol", "update", "nodename="+n, "state=down", "reason=test")
			look(tag)
		}
		touch("go-n1")
		touch("go-n2")
		out["4 resume"] = ctldRun(c, "scontrol", "update", "nodename=n[1-2]", "state=resume")
		if err := c.Poll(60*time.Second, func() bool { return ctldNodeStates(c) == "n1=idle n2=idle" }); err != nil {
			t.Fatalf("nodes %q after resume, want idle", ctldNodeStates(c))
		}
		out["5 after: job"] = ctldJobFields(c, job)
		return out
	}
	want, got := ctldOnBoth(t, c, real, ours, collect)
	ctldCompareShown(t, want, got)
}
