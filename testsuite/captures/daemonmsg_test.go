package captures

// The slurmd <-> slurmctld and srun <-> slurmd bodies of protocol/msg's
// daemon files against real 22.05.8 traffic: every frame of those types in
// the captures decodes, uses its body up exactly and re-encodes to the same
// bytes, and the decoded values agree with the scenarios (capture README:
// two nodes n1/n2 with 16 CPUs each, sbatch --wrap='echo hello-from-batch',
// srun hostname, srun -N2 hostname, scancel of a running job).

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// daemonTypes are the message types the daemon files own.
var daemonTypes = []msgtype.Type{
	msgtype.MESSAGE_NODE_REGISTRATION_STATUS, msgtype.RESPONSE_NODE_REGISTRATION,
	msgtype.REQUEST_NODE_REGISTRATION_STATUS, msgtype.REQUEST_HEALTH_CHECK,
	msgtype.REQUEST_ACCT_GATHER_UPDATE, msgtype.REQUEST_DAEMON_STATUS,
	msgtype.RESPONSE_PING_SLURMD, msgtype.RESPONSE_ACCT_GATHER_UPDATE, msgtype.REQUEST_ACCT_GATHER_ENERGY,
	msgtype.REQUEST_BATCH_JOB_LAUNCH, msgtype.REQUEST_LAUNCH_TASKS, msgtype.REQUEST_LAUNCH_PROLOG,
	msgtype.REQUEST_REATTACH_TASKS, msgtype.RESPONSE_REATTACH_TASKS,
	msgtype.REQUEST_TERMINATE_JOB, msgtype.REQUEST_KILL_TIMELIMIT, msgtype.REQUEST_KILL_PREEMPTED,
	msgtype.REQUEST_ABORT_JOB, msgtype.MESSAGE_EPILOG_COMPLETE,
	msgtype.REQUEST_SIGNAL_TASKS, msgtype.REQUEST_TERMINATE_TASKS,
	msgtype.REQUEST_COMPLETE_BATCH_SCRIPT, msgtype.REQUEST_STEP_COMPLETE, msgtype.REQUEST_COMPLETE_PROLOG,
	msgtype.RESPONSE_LAUNCH_TASKS, msgtype.MESSAGE_TASK_EXIT,
}

type daemonFrame = capturedBody

// decodeDaemonFrames round-trips every daemon-type frame of the captures.
func decodeDaemonFrames(t *testing.T) []daemonFrame {
	t.Helper()
	return roundTripCaptured(t, daemonTypes)
}

func TestDaemonBodiesRoundTrip(t *testing.T) {
	frames := decodeDaemonFrames(t)
	got := map[string]int{}
	for _, f := range frames {
		got[f.mt.String()]++
	}
	// decoded.txt's counts for these types, summed over the captures.
	want := map[string]int{
		"MESSAGE_NODE_REGISTRATION_STATUS": 3,
		"RESPONSE_NODE_REGISTRATION":       3,
		"REQUEST_BATCH_JOB_LAUNCH":         1,
		"REQUEST_COMPLETE_BATCH_SCRIPT":    2,
		"REQUEST_TERMINATE_JOB":            5,
		"MESSAGE_EPILOG_COMPLETE":          1,
		"REQUEST_LAUNCH_TASKS":             3,
		"RESPONSE_LAUNCH_TASKS":            3,
		"MESSAGE_TASK_EXIT":                3,
		"REQUEST_STEP_COMPLETE":            3,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("round-tripped frames per type:\n got %v\nwant %v", got, want)
	}
	t.Logf("round-tripped %d frames: %v", len(frames), got)
}

func daemonFrames(frames []daemonFrame, file string, mt msgtype.Type) []daemonFrame {
	var out []daemonFrame
	for _, f := range frames {
		if f.file == file && f.mt == mt {
			out = append(out, f)
		}
	}
	return out
}

func nsStrings(a []msg.NullString) []string {
	var out []string
	for _, s := range a {
		out = append(out, s.Value)
	}
	return out
}

func hasEnv(env []msg.NullString, entry string) bool {
	return slices.Contains(nsStrings(env), entry)
}

func TestDaemonRegistrationValues(t *testing.T) {
	frames := decodeDaemonFrames(t)
	nodes := map[string]bool{}
	for _, f := range frames {
		switch b := f.body.(type) {
		case msg.NodeRegistration:
			nodes[b.NodeName.Value] = true
			if b.CPUs != 16 || b.Boards != 1 || uint32(b.Sockets)*uint32(b.Cores)*uint32(b.Threads) != 16 {
				t.Errorf("%s: %s CPUs %d boards %d sockets %d cores %d threads %d", f.file, b.NodeName.Value,
					b.CPUs, b.Boards, b.Sockets, b.Cores, b.Threads)
			}
			if b.Version.Value != "22.05.8" || b.Flags&msg.SlurmdRegFlagResp == 0 || b.Status != 0 {
				t.Errorf("%s: version %#v flags %#x status %d", f.file, b.Version, b.Flags, b.Status)
			}
			if !b.Hostname.Valid || !b.OS.Valid || !b.Arch.Valid || b.RealMemory == 0 {
				t.Errorf("%s: hostname %#v os %#v arch %#v memory %d", f.file, b.Hostname, b.OS, b.Arch, b.RealMemory)
			}
			if b.Timestamp < b.SlurmdStartTime || b.SlurmdStartTime == 0 {
				t.Errorf("%s: timestamp %d before start %d", f.file, b.Timestamp, b.SlurmdStartTime)
			}
		case msg.NodeRegResponse:
			names := map[string]uint32{}
			for _, tr := range b.Tres {
				names[tr.Type.Value+"/"+tr.Name.Value] = tr.ID
			}
			for k, id := range map[string]uint32{"cpu/": 1, "mem/": 2, "energy/": 3, "node/": 4, "billing/": 5, "fs/disk": 6} {
				if names[k] != id {
					t.Errorf("%s: TRES %s id %d, want %d (list %v)", f.file, k, names[k], id, names)
				}
			}
			if b.NodeName.Valid {
				t.Errorf("%s: node name %#v for a static node", f.file, b.NodeName)
			}
		}
	}
	if !nodes["n1"] || !nodes["n2"] {
		t.Errorf("registered nodes %v, want n1 and n2", nodes)
	}
}

func TestDaemonBatchLaunchValues(t *testing.T) {
	frames := decodeDaemonFrames(t)
	const file = "batch-launch-complete.pcap"
	l := daemonFrames(frames, file, msgtype.REQUEST_BATCH_JOB_LAUNCH)
	if len(l) != 1 {
		t.Fatalf("%d batch launches", len(l))
	}
	b := l[0].body.(msg.BatchJobLaunch)
	if !strings.HasSuffix(b.Script.Value, "\necho hello-from-batch\n") || !strings.HasPrefix(b.Script.Value, "#!") {
		t.Errorf("script %q", b.Script.Value)
	}
	if b.Nodes != msg.Str("n1") || b.JobID == 0 || b.UserName.Valid || b.GIDs != nil {
		t.Errorf("nodes %#v job %d user %#v gids %v", b.Nodes, b.JobID, b.UserName, b.GIDs)
	}
	if b.Cred == nil || b.Cred.IsSigned() || b.Cred.Body.StepID.JobID != b.JobID ||
		b.Cred.Body.StepID.StepID != msg.StepIDBatch || b.Cred.Version != uint16(codec.Version2205) {
		t.Errorf("credential %+v", b.Cred)
	}
	if len(b.Environment) == 0 || !hasEnv(b.Environment, "SLURM_JOB_ID="+fmt.Sprint(b.JobID)) &&
		!slices.ContainsFunc(nsStrings(b.Environment), func(s string) bool { return strings.HasPrefix(s, "PATH=") }) {
		t.Errorf("environment %v", nsStrings(b.Environment))
	}
	if len(b.CPUsPerNode) != 1 || len(b.CPUCountReps) != 1 || b.CPUCountReps[0] != 1 {
		t.Errorf("cpu groups %v x %v", b.CPUsPerNode, b.CPUCountReps)
	}
	if b.SelectJobinfo != msg.SelectConsTres && b.SelectJobinfo != msg.SelectConsRes && b.SelectJobinfo != msg.SelectLinear {
		t.Errorf("select plugin %d", b.SelectJobinfo)
	}

	c := daemonFrames(frames, file, msgtype.REQUEST_COMPLETE_BATCH_SCRIPT)
	if len(c) != 1 {
		t.Fatalf("%d batch completions", len(c))
	}
	cb := c[0].body.(msg.CompleteBatchScript)
	if cb.JobID != b.JobID || cb.JobRC != 0 || cb.SlurmRC != 0 || cb.NodeName != msg.Str("n1") {
		t.Errorf("complete batch script %+v", cb)
	}
	k := daemonFrames(frames, file, msgtype.REQUEST_TERMINATE_JOB)
	if len(k) != 1 {
		t.Fatalf("%d terminate jobs", len(k))
	}
	kj := k[0].body.(msg.KillJob)
	if kj.StepID.JobID != b.JobID || kj.StepID.StepID != pack.NoVal || kj.Nodes != msg.Str("n1") {
		t.Errorf("terminate job %+v", kj)
	}
	// Kill credentials are sent unsigned since 22.05.
	if kj.Cred == nil || kj.Cred.IsSigned() || kj.Cred.Body.StepID.JobID != b.JobID {
		t.Errorf("terminate job credential %+v", kj.Cred)
	}
}

func TestDaemonSrunValues(t *testing.T) {
	frames := decodeDaemonFrames(t)
	for _, tc := range []struct {
		file  string
		nodes []string
	}{
		{"srun-hostname.pcap", []string{"n1"}},
		{"srun-N2-hostname.pcap", []string{"n1", "n2"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			launches := daemonFrames(frames, tc.file, msgtype.REQUEST_LAUNCH_TASKS)
			if len(launches) != len(tc.nodes) {
				t.Fatalf("%d launches, want %d", len(launches), len(tc.nodes))
			}
			var first msg.LaunchTasksRequest
			for i, f := range launches {
				l := f.body.(msg.LaunchTasksRequest)
				if i == 0 {
					first = l
				} else if l.Cred == nil || first.Cred == nil || !bytes.Equal(l.Cred.Bytes(), first.Cred.Bytes()) {
					t.Errorf("launch %d: credential differs from the first node's", i)
				}
				if got := nsStrings(l.Argv); !slices.Equal(got, []string{"hostname"}) {
					t.Errorf("argv %q", got)
				}
				if l.NNodes != uint32(len(tc.nodes)) || len(l.GlobalTaskIDs) != len(tc.nodes) || l.NTasks != uint32(len(tc.nodes)) {
					t.Errorf("nnodes %d ntasks %d task ids %v", l.NNodes, l.NTasks, l.GlobalTaskIDs)
				}
				for n := range l.GlobalTaskIDs {
					if !slices.Equal(l.GlobalTaskIDs[n], []uint32{uint32(n)}) {
						t.Errorf("node %d task ids %v", n, l.GlobalTaskIDs[n])
					}
				}
				if l.Cred == nil || !l.Cred.IsSigned() || l.Cred.Body.StepID.JobID != l.StepID.JobID ||
					l.Cred.Body.StepID.StepID != l.StepID.StepID {
					t.Errorf("credential %+v for step %+v", l.Cred, l.StepID)
				}
				if !strings.HasPrefix(string(jobcred.IOKey(l.Cred)), "MUNGE:") {
					t.Errorf("cred signature %q", jobcred.IOKey(l.Cred))
				}
				// srun 22.05 leaves orig_addr unset (AF_UNSPEC, a lone u16 0);
				// slurmd takes srun's address from the header.
				if len(l.RespPorts) != 1 || len(l.IOPorts) != 1 || !l.OrigAddr.IsZero() {
					t.Errorf("resp %v io %v orig %v", l.RespPorts, l.IOPorts, l.OrigAddr)
				}
				if l.SwitchJobinfo != msg.SwitchNone || l.MPIPluginID == 0 {
					t.Errorf("switch %d mpi %d", l.SwitchJobinfo, l.MPIPluginID)
				}
				if !hasEnv(l.Env, fmt.Sprintf("SLURM_JOB_ID=%d", l.StepID.JobID)) || !hasEnv(l.Env, fmt.Sprintf("SLURM_NNODES=%d", len(tc.nodes))) {
					t.Errorf("env lacks SLURM_JOB_ID/SLURM_NNODES: %v", nsStrings(l.Env))
				}
				want := tc.nodes[0]
				if len(tc.nodes) == 2 {
					want = "n[1-2]"
				}
				if l.CompleteNodelist.Value != want {
					t.Errorf("complete_nodelist %#v, want %q", l.CompleteNodelist, want)
				}
			}
			step := first.StepID
			seen := map[string]bool{}
			for _, f := range daemonFrames(frames, tc.file, msgtype.RESPONSE_LAUNCH_TASKS) {
				r := f.body.(msg.LaunchTasksResponse)
				seen[r.NodeName.Value] = true
				if r.StepID != step || r.ReturnCode != 0 || len(r.LocalPIDs) != 1 || len(r.TaskIDs) != 1 || r.LocalPIDs[0] == 0 {
					t.Errorf("launch response %+v", r)
				}
			}
			tasks := map[uint32]bool{}
			for _, f := range daemonFrames(frames, tc.file, msgtype.MESSAGE_TASK_EXIT) {
				e := f.body.(msg.TaskExit)
				if e.StepID != step || e.ReturnCode != 0 {
					t.Errorf("task exit %+v", e)
				}
				for _, id := range e.TaskIDs {
					tasks[id] = true
				}
			}
			if len(tasks) != len(tc.nodes) || len(seen) != len(tc.nodes) {
				t.Errorf("exited tasks %v, responding nodes %v", tasks, seen)
			}
			for _, n := range tc.nodes {
				if !seen[n] {
					t.Errorf("no launch response from %s", n)
				}
			}
			for _, f := range daemonFrames(frames, tc.file, msgtype.REQUEST_STEP_COMPLETE) {
				s := f.body.(msg.StepComplete)
				if s.StepID.JobID != step.JobID || s.StepRC != 0 || s.RangeFirst > s.RangeLast || s.RangeLast >= uint32(len(tc.nodes)) {
					t.Errorf("step complete %+v", s)
				}
			}
			for _, f := range daemonFrames(frames, tc.file, msgtype.REQUEST_TERMINATE_JOB) {
				k := f.body.(msg.KillJob)
				if k.StepID.JobID != step.JobID || k.StepID.StepID != pack.NoVal {
					t.Errorf("terminate job %+v", k.StepID)
				}
			}
		})
	}
}

func TestDaemonScancelValues(t *testing.T) {
	frames := decodeDaemonFrames(t)
	const file = "scancel-running.pcap"
	k := daemonFrames(frames, file, msgtype.REQUEST_TERMINATE_JOB)
	e := daemonFrames(frames, file, msgtype.MESSAGE_EPILOG_COMPLETE)
	c := daemonFrames(frames, file, msgtype.REQUEST_COMPLETE_BATCH_SCRIPT)
	if len(k) != 1 || len(e) != 1 || len(c) != 1 {
		t.Fatalf("%d terminate, %d epilog complete, %d batch complete", len(k), len(e), len(c))
	}
	kj := k[0].body.(msg.KillJob)
	ec := e[0].body.(msg.EpilogComplete)
	cb := c[0].body.(msg.CompleteBatchScript)
	if ec.JobID != kj.StepID.JobID || ec.ReturnCode != 0 || !ec.NodeName.Valid {
		t.Errorf("epilog complete %+v for job %d", ec, kj.StepID.JobID)
	}
	if ec.NodeName != kj.Nodes {
		t.Errorf("epilog from %#v, job on %#v", ec.NodeName, kj.Nodes)
	}
	// scancel sends SIGTERM: the script's raw wait status is 15 (killed by
	// signal 15, no exit code).
	if cb.JobID != kj.StepID.JobID || cb.JobRC != 15 || cb.SlurmRC != 0 || cb.NodeName != kj.Nodes {
		t.Errorf("complete batch script %+v", cb)
	}
}
