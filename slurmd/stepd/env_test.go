package stepd

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// capturedLaunch decodes the REQUEST_BATCH_JOB_LAUNCH real slurmctld 22.05.8
// sent in testsuite/captures/testdata/batch-launch-complete.pcap (copied
// here as its raw body).
func capturedLaunch(t testing.TB) msg.BatchJobLaunch {
	t.Helper()
	raw, err := os.ReadFile("testdata/batch_launch_22.05.bin")
	if err != nil {
		t.Fatal(err)
	}
	bc, _ := msg.Registry().Lookup(msgtype.REQUEST_BATCH_JOB_LAUNCH)
	r := pack.NewReader(raw)
	v, err := bc.Decode(r, codec.Version2205)
	if err == nil {
		err = r.Done()
	}
	if err != nil {
		t.Fatalf("decode captured launch: %v", err)
	}
	return v.(msg.BatchJobLaunch)
}

// readRealEnv reads testdata/real_batch_env.txt (see record_test.go).
func readRealEnv(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/real_batch_env.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		out[k] = v
	}
	return out
}

// TestBatchEnvMatchesRealSlurm compares the environment we build from the
// captured launch with the one a real 22.05 batch job of the same shape
// printed (sbatch -w n1 -J cap-batch on a 16-CPU node, same submit
// environment). Values that differ between the two runs by nature (job id,
// cluster, paths, ports, pids) are masked; every name must match.
func TestBatchEnvMatchesRealSlurm(t *testing.T) {
	req := capturedLaunch(t)
	env, lim := BatchEnv(&req, NodeEnv{NodeName: "n1", ClusterName: "anchor",
		ConfPath: "/tmp/real-slurm/etc/slurm.conf", CtldHost: "localhost", CtldPort: 6817,
		SelectPluginID: 109, UserName: "root"})
	env = append(env, "SLURM_TASK_PID=1234") // added by the exec helper

	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	want := readRealEnv(t)
	delete(want, "PWD") // set by the job's shell, not by slurmstepd
	masked := map[string]bool{"SLURM_JOB_ID": true, "SLURM_JOBID": true, "SLURM_CLUSTER_NAME": true,
		"SLURM_CONF": true, "SLURM_SUBMIT_DIR": true, "SLURM_TASK_PID": true}
	norm := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			switch {
			case masked[k]:
				v = "*"
			case k == "SLURM_WORKING_CLUSTER": // cluster:host:port:version:select
				f := strings.Split(v, ":")
				if len(f) == 5 {
					f[0], f[2] = "*", "*"
				}
				v = strings.Join(f, ":")
			}
			out[k] = v
		}
		return out
	}
	if d := cmp.Diff(norm(want), norm(got)); d != "" {
		t.Errorf("batch env differs from real slurmstepd's (-real +ours):\n%s", d)
	}
	if lim.Umask != 0o022 {
		t.Errorf("umask = %#o, want 022 from SLURM_UMASK", lim.Umask)
	}
	if lim.RLimits["NOFILE"] != 20000 || len(lim.RLimits) != 10 {
		t.Errorf("rlimits = %v, want the 10 SLURM_RLIMIT_* of the capture", lim.RLimits)
	}
}

func TestBatchEnvLayout(t *testing.T) {
	tests := []struct {
		name      string
		cpus      []uint16
		reps      []uint32
		ntasks    uint32
		cpt       uint16
		wantTasks string
		wantCPUs  string
	}{
		{"one node no ntasks", []uint16{1}, []uint32{1}, 0, 1, "1", "1"},
		{"ntasks over two nodes", []uint16{4}, []uint32{2}, 6, 1, "3(x2)", "4(x2)"},
		{"uneven nodes", []uint16{4, 2}, []uint32{2, 1}, 0, 1, "4(x2),2", "4(x2),2"},
		{"cpus per task", []uint16{8}, []uint32{1}, 0, 2, "4", "8"},
		{"oversubscribed", []uint16{1}, []uint32{2}, 5, 1, "3,2", "1(x2)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &msg.BatchJobLaunch{JobID: 5, ArrayTaskID: NoVal, CPUsPerNode: tc.cpus,
				CPUCountReps: tc.reps, NTasks: tc.ntasks, CPUsPerTask: tc.cpt}
			env, _ := BatchEnv(req, NodeEnv{NodeName: "n1"})
			if v, _ := env.Get("SLURM_TASKS_PER_NODE"); v != tc.wantTasks {
				t.Errorf("SLURM_TASKS_PER_NODE = %q, want %q", v, tc.wantTasks)
			}
			if v, _ := env.Get("SLURM_JOB_CPUS_PER_NODE"); v != tc.wantCPUs {
				t.Errorf("SLURM_JOB_CPUS_PER_NODE = %q, want %q", v, tc.wantCPUs)
			}
			_, hasN := env.Get("SLURM_NTASKS")
			if hasN != (tc.ntasks != 0) {
				t.Errorf("SLURM_NTASKS set = %v with ntasks %d", hasN, tc.ntasks)
			}
		})
	}
}

func TestBatchEnvArrayAndMemory(t *testing.T) {
	req := &msg.BatchJobLaunch{JobID: 9, ArrayJobID: 8, ArrayTaskID: 3, CPUsPerNode: []uint16{2},
		CPUCountReps: []uint32{1}, PnMinMemory: memPerCPU | 100, Account: msg.Str("acct"),
		Environment: []msg.NullString{msg.Str("SLURM_NTASKS=7"), msg.Str("SLURM_CPUS_PER_TASK=9")}, NTasks: 2, CPUsPerTask: 1}
	env, _ := BatchEnv(req, NodeEnv{NodeName: "n1"})
	want := map[string]string{"SLURM_ARRAY_JOB_ID": "8", "SLURM_ARRAY_TASK_ID": "3",
		"SLURM_MEM_PER_CPU": "100", "SLURM_JOB_ACCOUNT": "acct",
		"SLURM_NTASKS": "7", // appended, so the submitted value wins
		"SLURM_NPROCS": "2", "SLURM_CPUS_PER_TASK": "1"}
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, _ := env.Get(k); v != want[k] {
			t.Errorf("%s = %q, want %q", k, v, want[k])
		}
	}
	if _, ok := env.Get("SLURM_MEM_PER_NODE"); ok {
		t.Error("SLURM_MEM_PER_NODE set with a per-CPU memory request")
	}
}
