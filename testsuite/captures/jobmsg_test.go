package captures

// Typed job bodies against real 22.05.8 traffic: every job descriptor, submit
// response, job info response and allocation response in the captures
// decodes with protocol/msg, uses its body up exactly and re-encodes to the
// same bytes; and the decoded values agree with what the commands printed
// and with what sbatch/srun were asked to send (capture README,
// /work/shared/captures/*.stdout.txt).

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// jobTypes are the message types whose bodies protocol/msg's job files own.
var jobTypes = []msgtype.Type{
	msgtype.REQUEST_SUBMIT_BATCH_JOB, msgtype.REQUEST_RESOURCE_ALLOCATION,
	msgtype.REQUEST_JOB_WILL_RUN, msgtype.REQUEST_UPDATE_JOB,
	msgtype.REQUEST_HET_JOB_ALLOCATION, msgtype.REQUEST_SUBMIT_BATCH_HET_JOB,
	msgtype.RESPONSE_SUBMIT_BATCH_JOB, msgtype.RESPONSE_JOB_INFO,
	msgtype.RESPONSE_JOB_STEP_INFO, msgtype.RESPONSE_RESOURCE_ALLOCATION,
	msgtype.RESPONSE_JOB_ALLOCATION_INFO, msgtype.RESPONSE_HET_JOB_ALLOCATION,
}

type jobFrame = capturedBody

// decodeJobFrames round-trips every job-type frame of the captures.
func decodeJobFrames(t *testing.T) []jobFrame {
	t.Helper()
	return roundTripCaptured(t, jobTypes)
}

func TestJobBodiesRoundTrip(t *testing.T) {
	frames := decodeJobFrames(t)
	got := map[string]int{}
	for _, f := range frames {
		got[f.mt.String()]++
	}
	// What decoded.txt counts for these types across the captures.
	want := map[string]int{
		"REQUEST_SUBMIT_BATCH_JOB":     2,
		"RESPONSE_SUBMIT_BATCH_JOB":    2,
		"RESPONSE_JOB_INFO":            2,
		"REQUEST_RESOURCE_ALLOCATION":  2,
		"RESPONSE_RESOURCE_ALLOCATION": 2,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round-tripped frames per type: got %v, want %v", got, want)
	}
	for _, f := range frames {
		t.Logf("%s c%d %v: %d body bytes decode and re-encode identically", f.file, f.conn, f.mt, len(f.raw))
	}
}

func findJobFrame(t *testing.T, frames []jobFrame, file string, mt msgtype.Type) jobFrame {
	t.Helper()
	for _, f := range frames {
		if f.file == file && f.mt == mt {
			return f
		}
	}
	t.Fatalf("%s: no %v frame", file, mt)
	return jobFrame{}
}

func jobStrs(a []msg.NullString) []string {
	var out []string
	for _, s := range a {
		out = append(out, s.Value)
	}
	return out
}

// sbatch -p parked --wrap='echo hello' (capture README), run from
// /tmp/real-slurm under env -i PATH=... HOME=/root SLURM_CONF=...
func TestSbatchDescriptor(t *testing.T) {
	frames := decodeJobFrames(t)
	j := findJobFrame(t, frames, "sbatch.pcap", msgtype.REQUEST_SUBMIT_BATCH_JOB).body.(msg.JobDesc)
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
	}
	check("Name", j.Name, msg.Str("cap-sbatch"))
	check("Partition", j.Partition, msg.Str("parked"))
	check("Script", j.Script, msg.Str("#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho hello\n"))
	check("WorkDir", j.WorkDir, msg.Str("/tmp/real-slurm"))
	check("SubmitLine", j.SubmitLine, msg.Str("sbatch --parsable -p parked -J cap-sbatch -o /dev/null --wrap=echo hello"))
	check("StdOut", j.StdOut, msg.Str("/dev/null"))
	check("StdIn", j.StdIn, msg.Str("/dev/null"))
	check("StdErr", j.StdErr, msg.NullString{})
	check("Account", j.Account, msg.NullString{})
	check("Argv", j.Argv, []msg.NullString(nil))
	check("UserID", j.UserID, uint32(0))
	check("GroupID", j.GroupID, uint32(0))
	check("MinCPUs", j.MinCPUs, uint32(1))
	check("TimeLimit", j.TimeLimit, pack.NoVal)
	check("SelectJobinfo", j.SelectJobinfo, msg.SelectConsTres)
	check("CrontabEntry", j.CrontabEntry, (*msg.CronEntry)(nil))
	env := jobStrs(j.Environment)
	for _, e := range []string{
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
		"SLURM_CONF=/tmp/real-slurm/etc/slurm.conf", "SLURM_SUBMIT_DIR=/tmp/real-slurm",
		"SLURM_JOB_NAME=cap-sbatch", "SLURM_UMASK=0022",
	} {
		if !slices.Contains(env, e) {
			t.Errorf("environment lacks %q: %q", e, env)
		}
	}
	// The packer set USE_DEFAULT_{ACCT,QOS,WCKEY} (account, qos, wckey NULL)
	// but not USE_DEFAULT_PART (-p given); SetDefaultBits agrees.
	wantBits := msg.UseDefaultAcct | msg.UseDefaultQOS | msg.UseDefaultWCKey
	check("Bitflags", j.Bitflags, wantBits)
	k := j
	k.Bitflags = 0
	k.SetDefaultBits()
	check("SetDefaultBits", k.Bitflags, wantBits)

	r := findJobFrame(t, frames, "sbatch.pcap", msgtype.RESPONSE_SUBMIT_BATCH_JOB).body.(msg.SubmitResponse)
	check("response", r, msg.SubmitResponse{JobID: 1, StepID: msg.StepIDBatch})
}

// sbatch -w n1 --wrap='echo hello-from-batch' printed hello-from-batch.
func TestBatchLaunchDescriptor(t *testing.T) {
	frames := decodeJobFrames(t)
	j := findJobFrame(t, frames, "batch-launch-complete.pcap", msgtype.REQUEST_SUBMIT_BATCH_JOB).body.(msg.JobDesc)
	if !strings.HasSuffix(j.Script.Value, "\necho hello-from-batch\n") {
		t.Errorf("script %q", j.Script.Value)
	}
	if j.ReqNodes != msg.Str("n1") {
		t.Errorf("ReqNodes %#v", j.ReqNodes)
	}
	r := findJobFrame(t, frames, "batch-launch-complete.pcap", msgtype.RESPONSE_SUBMIT_BATCH_JOB).body.(msg.SubmitResponse)
	if r.StepID != msg.StepIDBatch || r.ErrorCode != 0 || r.JobID == 0 || r.JobSubmitUserMsg.Valid {
		t.Errorf("response %#v", r)
	}
}

// squeue.stdout.txt, as squeue printed it during squeue.pcap.
const jobSqueueStdout = `             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)
                 5     debug cap-held     root PD       0:00      1 (JobHeldUser)
                 4     debug cap-held     root PD       0:00      1 (JobHeldUser)
                 2     debug cap-run1     root  R       0:01      1 n1
                 3     debug cap-run2     root  R       0:01      1 n2
                 1    parked cap-sbat     root PD       0:00      1 (PartitionDown)
`

// jobReasonNames: the state_reason numbers of these jobs (reason_22.txt) and
// squeue's text for them.
var jobReasonNames = map[uint16]string{6: "PartitionDown", 16: "JobHeldUser"}

func TestSqueueRecords(t *testing.T) {
	frames := decodeJobFrames(t)
	m := findJobFrame(t, frames, "squeue.pcap", msgtype.RESPONSE_JOB_INFO).body.(msg.JobInfoMsg)
	byID := map[string]msg.JobInfo{}
	for _, j := range m.Jobs {
		byID[strconv.Itoa(int(j.JobID))] = j
	}
	lines := strings.Split(strings.TrimSpace(jobSqueueStdout), "\n")[1:]
	if len(lines) != len(m.Jobs) {
		t.Fatalf("%d records, squeue printed %d", len(m.Jobs), len(lines))
	}
	for _, line := range lines {
		f := strings.Fields(line)
		id, part, name, user, st, elapsed, nodes, where := f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]
		j, ok := byID[id]
		if !ok {
			t.Errorf("job %s not in the response", id)
			continue
		}
		if j.Partition.Value != part {
			t.Errorf("job %s: partition %q, squeue %q", id, j.Partition.Value, part)
		}
		if n := j.Name.Value; n[:min(8, len(n))] != name {
			t.Errorf("job %s: name %q, squeue %q", id, n, name)
		}
		if user != "root" || j.UserID != 0 {
			t.Errorf("job %s: uid %d, squeue %q", id, j.UserID, user)
		}
		if strconv.Itoa(int(j.NumNodes)) != nodes {
			t.Errorf("job %s: num_nodes %d, squeue %s", id, j.NumNodes, nodes)
		}
		switch st {
		case "R":
			if j.JobState&msg.JobStateBase != msg.JobRunning {
				t.Errorf("job %s: state %#x, squeue R", id, j.JobState)
			}
			if j.Nodes.Value != where || j.BatchHost.Value != where {
				t.Errorf("job %s: nodes %q batch host %q, squeue %q", id, j.Nodes.Value, j.BatchHost.Value, where)
			}
			// squeue's TIME is now - start_time; the reply's last_update is
			// the controller's now.
			d := m.LastUpdate - j.StartTime
			if got := fmt.Sprintf("%d:%02d", d/60, d%60); got != elapsed {
				t.Errorf("job %s: elapsed %s, squeue %s", id, got, elapsed)
			}
			// node_inx indexes the node table (n1, n2).
			bits, err := j.NodeInx.Bits()
			wantBit := int(where[1] - '1')
			if err != nil || j.NodeInx.NBits != 2 || !reflect.DeepEqual(bits, []int{wantBit}) {
				t.Errorf("job %s: node_inx %#v (%v %v)", id, j.NodeInx, bits, err)
			}
		case "PD":
			if j.JobState != msg.JobPending {
				t.Errorf("job %s: state %#x, squeue PD", id, j.JobState)
			}
			if "("+jobReasonNames[j.StateReason]+")" != where {
				t.Errorf("job %s: reason %d, squeue %s", id, j.StateReason, where)
			}
			if j.Nodes.Valid || !j.NodeInx.Null || j.StartTime != 0 {
				t.Errorf("job %s: pending job with nodes %#v inx %#v start %d", id, j.Nodes, j.NodeInx, j.StartTime)
			}
		default:
			t.Fatalf("unexpected state %q", st)
		}
		if j.WorkDir != msg.Str("/tmp/real-slurm") || j.TresReqStr != msg.Str("cpu=1,mem=4G,node=1,billing=1") {
			t.Errorf("job %s: work dir %#v tres %#v", id, j.WorkDir, j.TresReqStr)
		}
		if j.ArrayTaskID != pack.NoVal || j.ArrayTaskStr.Valid || j.JobResrcs != nil || j.SelectJobinfo != msg.SelectConsTres {
			t.Errorf("job %s: array %#x/%#v resources %v select %d", id, j.ArrayTaskID, j.ArrayTaskStr, j.JobResrcs, j.SelectJobinfo)
		}
	}
}

// scontrol show job <running id>: REQUEST_JOB_INFO_SINGLE {job_id, 0x10}
// -> one running record of that id.
func TestScontrolShowJobRecord(t *testing.T) {
	frames := decodeJobFrames(t)
	m := findJobFrame(t, frames, "scontrol-show-job.pcap", msgtype.RESPONSE_JOB_INFO).body.(msg.JobInfoMsg)
	var reqID uint32
	var showFlags uint16
	// The request read with plain byte offsets, independently of msg.
	for _, f := range roundTripCaptured(t, []msgtype.Type{msgtype.REQUEST_JOB_INFO_SINGLE}) {
		if f.file == "scontrol-show-job.pcap" {
			reqID = binary.BigEndian.Uint32(f.raw)
			showFlags = binary.BigEndian.Uint16(f.raw[4:])
		}
	}
	if len(m.Jobs) != 1 {
		t.Fatalf("%d records", len(m.Jobs))
	}
	j := m.Jobs[0]
	if j.JobID != reqID || j.ShowFlags != showFlags || showFlags != msg.ShowLocal {
		t.Errorf("job %d show_flags %#x, request %d %#x", j.JobID, j.ShowFlags, reqID, showFlags)
	}
	if j.JobState&msg.JobStateBase != msg.JobRunning || !j.Nodes.Valid || j.StartTime == 0 || j.NodeInx.Null {
		t.Errorf("not a running job: state %#x nodes %#v start %d", j.JobState, j.Nodes, j.StartTime)
	}
	if j.Partition != msg.Str("debug") || j.TimeLimit != pack.Infinite {
		t.Errorf("partition %#v time limit %#x", j.Partition, j.TimeLimit)
	}
}

// srun -N1 -w n1 hostname and srun -N2 hostname: the allocation requests and
// the controller's grants (both nodes print "vm").
func TestSrunAllocations(t *testing.T) {
	frames := decodeJobFrames(t)
	cases := []struct {
		file       string
		nodes      uint32
		reqNodes   msg.NullString
		submitLine string
		nodeList   string
		cpuGroups  []uint16
		cpuReps    []uint32
	}{
		{"srun-hostname.pcap", 1, msg.Str("n1"), "srun -N1 -w n1 hostname", "n1", []uint16{1}, []uint32{1}},
		{"srun-N2-hostname.pcap", 2, msg.NullString{}, "srun -N2 hostname", "n[1-2]", []uint16{1}, []uint32{2}},
	}
	for _, c := range cases {
		j := findJobFrame(t, frames, c.file, msgtype.REQUEST_RESOURCE_ALLOCATION).body.(msg.JobDesc)
		if j.Name != msg.Str("hostname") || j.MinNodes != c.nodes || j.MaxNodes != c.nodes ||
			j.ReqNodes != c.reqNodes || j.SubmitLine != msg.Str(c.submitLine) ||
			!reflect.DeepEqual(jobStrs(j.Argv), []string{"hostname"}) || j.WorkDir != msg.Str("/tmp/real-slurm") {
			t.Errorf("%s: request name %#v nodes %d-%d req %#v line %#v argv %q dir %#v", c.file,
				j.Name, j.MinNodes, j.MaxNodes, j.ReqNodes, j.SubmitLine, jobStrs(j.Argv), j.WorkDir)
		}
		// srun listens for the allocation push and for SRUN_* messages.
		if j.AllocRespPort == 0 || j.OtherPort == 0 || j.RespHost.Valid {
			t.Errorf("%s: ports %d/%d resp_host %#v", c.file, j.AllocRespPort, j.OtherPort, j.RespHost)
		}
		a := findJobFrame(t, frames, c.file, msgtype.RESPONSE_RESOURCE_ALLOCATION).body.(msg.Allocation)
		if a.NodeCnt != c.nodes || a.NodeList != msg.Str(c.nodeList) || a.ErrorCode != 0 ||
			a.Partition != msg.Str("debug") || a.BatchHost != msg.Str("n1") || a.NodeAddrs != nil ||
			!reflect.DeepEqual(a.CPUsPerNode, c.cpuGroups) || !reflect.DeepEqual(a.CPUCountReps, c.cpuReps) {
			t.Errorf("%s: allocation %#v", c.file, a)
		}
	}
}
