package interop

// The protocol issue's integration test: a real Slurm 22.05 cluster
// (slurmctld + two slurmd, testsuite/realslurm) driven by goslurm's own
// client, codec, message bodies and auth only, along the call sequences of
// the real commands (reference/protocol-client.md §6): ping, scontrol show
// config, sinfo, sbatch, scontrol show job, scancel. What we read back is
// checked against the generated slurm.conf, and what we did is checked with
// the real squeue and scontrol.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/testsuite/realslurm"
	"golang.org/x/sys/unix"
)

// Slurm's INFINITE (a partition's MaxTime=INFINITE).
const slurmInfinite uint32 = 0xffffffff

func TestProtocolAgainstRealSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	const cpus, mem = 2, 1000
	c := realslurm.Start(t, realslurm.Options{Nodes: 2, CPUs: cpus, RealMemory: mem})
	t.Logf("real cluster up in %v (%s)", c.Startup.Round(time.Millisecond), c.Dir)
	conf := parseSlurmConf(t, c.Conf)

	p := &ctldRPC{t: t, g: msg.Registry(), cl: &client.Client{
		Controllers:  []string{c.CtldAddr()},
		Auth:         &auth.Munge{Client: c.Munge.Client()},
		SlurmUserUID: c.SlurmUserUID,
		Sweeps:       2,
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p.ctx = ctx

	// (a) scontrol ping: REQUEST_PING restricted to SlurmUser.
	if err := p.cl.Ping(ctx, 0); err != nil {
		t.Fatalf("ping: %v", err)
	}

	// (b) scontrol show config: REQUEST_BUILD_INFO {last_update 0}.
	bi := p.call(msgtype.REQUEST_BUILD_INFO, msg.LastUpdateRequest{}, msgtype.RESPONSE_BUILD_INFO).(msg.BuildInfo)
	checkStr := func(what string, got msg.NullString, want string) {
		t.Helper()
		if !got.Valid || got.Value != want {
			t.Errorf("%s = %#v, slurm.conf has %q", what, got, want)
		}
	}
	checkU32 := func(what string, got uint32, want string) {
		t.Helper()
		if strconv.FormatUint(uint64(got), 10) != want {
			t.Errorf("%s = %d, slurm.conf has %q", what, got, want)
		}
	}
	checkStr("ClusterName", bi.ClusterName, conf.global["ClusterName"])
	checkU32("SlurmctldPort", bi.SlurmctldPort, conf.global["SlurmctldPort"])
	checkU32("SlurmdPort", bi.SlurmdPort, conf.global["SlurmdPort"])
	checkStr("AuthType", bi.AuthType, conf.global["AuthType"])
	checkStr("AuthInfo", bi.AuthInfo, conf.global["AuthInfo"])
	checkStr("SelectType", bi.SelectType, conf.global["SelectType"])
	checkStr("SchedulerType", bi.SchedType, conf.global["SchedulerType"])
	checkStr("SlurmUser", bi.SlurmUserName, conf.global["SlurmUser"])
	checkStr("StateSaveLocation", bi.StateSaveLocation, conf.global["StateSaveLocation"])
	checkStr("SLURM_CONF", bi.SlurmConf, c.Conf)
	// SlurmctldHost=localhost: the address stays "localhost", the machine
	// name becomes slurmctld's short host name (read_config.c does that
	// for "localhost").
	wantMachine := conf.global["SlurmctldHost"]
	if wantMachine == "localhost" {
		h, _ := os.Hostname()
		wantMachine, _, _ = strings.Cut(h, ".")
	}
	if len(bi.ControlAddr) != 1 || bi.ControlAddr[0].Value != conf.global["SlurmctldHost"] ||
		len(bi.ControlMachine) != 1 || bi.ControlMachine[0].Value != wantMachine {
		t.Errorf("ControlAddr %#v ControlMachine %#v, want [%q] and [%q] (SlurmctldHost=%s)", bi.ControlAddr, bi.ControlMachine,
			conf.global["SlurmctldHost"], wantMachine, conf.global["SlurmctldHost"])
	}
	if bi.SlurmUserID != c.SlurmUserUID {
		t.Errorf("SlurmUserID = %d, want %d", bi.SlurmUserID, c.SlurmUserUID)
	}
	if !strings.HasPrefix(bi.Version.Value, "22.05.") {
		t.Errorf("Version = %#v, want 22.05.x", bi.Version)
	}
	t.Logf("build info: cluster %s, version %s, ctld port %d, slurmd port %d, %s, %s",
		bi.ClusterName.Value, bi.Version.Value, bi.SlurmctldPort, bi.SlurmdPort, bi.AuthType.Value, bi.SelectType.Value)
	// §6.10: a client whose copy is newer than the last change gets
	// SLURM_NO_CHANGE_IN_DATA (the controller's test is
	// last_update-1 >= its own; the reply's last_update is the time it was
	// made, so reply+1 is always "no change" while the config is unchanged).
	p.noChange(msgtype.REQUEST_BUILD_INFO, msg.LastUpdateRequest{LastUpdate: bi.LastUpdate + 1})

	// (c) sinfo, second RPC: REQUEST_NODE_INFO {0, SHOW_LOCAL}.
	ni := p.call(msgtype.REQUEST_NODE_INFO, msg.InfoRequest{ShowFlags: msg.ShowLocal}, msgtype.RESPONSE_NODE_INFO).(msg.NodeInfoResponse)
	var nodeNames []string
	for _, n := range ni.Nodes {
		if n.Name.Valid {
			nodeNames = append(nodeNames, n.Name.Value)
		}
	}
	if len(conf.nodes) != len(c.Nodes) || !slices.Equal(nodeNames, conf.nodeNames) {
		t.Fatalf("nodes %q, slurm.conf has %q", nodeNames, conf.nodeNames)
	}
	for i, n := range ni.Nodes {
		cn := conf.nodes[i]
		checkStr(n.Name.Value+" NodeHostname", n.NodeHostname, cn["NodeHostname"])
		checkStr(n.Name.Value+" NodeAddr", n.NodeAddr, cn["NodeAddr"])
		checkU32(n.Name.Value+" Port", uint32(n.Port), cn["Port"])
		checkU32(n.Name.Value+" CPUs", uint32(n.CPUs), cn["CPUs"])
		if strconv.FormatUint(n.RealMemory, 10) != cn["RealMemory"] {
			t.Errorf("%s RealMemory = %d, slurm.conf has %s", n.Name.Value, n.RealMemory, cn["RealMemory"])
		}
		bad := msg.NodeStateDrain | msg.NodeStateNoRespond | msg.NodeStateFail | msg.NodeStatePoweredDown | msg.NodeStateInvalidReg
		if n.NodeState&msg.NodeStateBase != msg.NodeStateIdle || n.NodeState&bad != 0 {
			t.Errorf("%s state %#x, want IDLE", n.Name.Value, n.NodeState)
		}
		if !strings.HasPrefix(n.Version.Value, "22.05.") {
			t.Errorf("%s slurmd version %#v", n.Name.Value, n.Version)
		}
		t.Logf("node %s: %s:%d cpus %d mem %d state %#x version %s", n.Name.Value, n.NodeAddr.Value, n.Port,
			n.CPUs, n.RealMemory, n.NodeState, n.Version.Value)
	}

	// (d) sinfo, first RPC: REQUEST_PARTITION_INFO {0, SHOW_LOCAL}.
	pi := p.call(msgtype.REQUEST_PARTITION_INFO, msg.InfoRequest{ShowFlags: msg.ShowLocal}, msgtype.RESPONSE_PARTITION_INFO).(msg.PartitionInfoResponse)
	if len(pi.Partitions) != 1 {
		t.Fatalf("%d partitions, slurm.conf has 1: %#v", len(pi.Partitions), pi.Partitions)
	}
	part := pi.Partitions[0]
	partName := conf.partition["PartitionName"]
	checkStr("partition name", part.Name, partName)
	if got, err := hostlist.Expand(part.Nodes.Value); err != nil || !slices.Equal(got, nodeNames) {
		t.Errorf("partition Nodes %#v expands to %q (%v), want %q", part.Nodes, got, err, nodeNames)
	}
	inx, err := part.NodeInx.Bits()
	if err != nil || len(inx) != len(ni.Nodes) {
		t.Errorf("partition node_inx %#v: bits %v (%v), want every one of %d nodes", part.NodeInx, inx, err, len(ni.Nodes))
	}
	for _, i := range inx {
		if i >= len(ni.Nodes) || !slices.Contains(nodeNames, ni.Nodes[i].Name.Value) {
			t.Errorf("partition node_inx bit %d names no node", i)
		}
	}
	if part.TotalNodes != uint32(len(c.Nodes)) || part.TotalCPUs != uint32(len(c.Nodes)*cpus) {
		t.Errorf("partition totals: %d nodes %d cpus, want %d and %d", part.TotalNodes, part.TotalCPUs, len(c.Nodes), len(c.Nodes)*cpus)
	}
	if part.Flags&msg.PartFlagDefault == 0 || part.StateUp != msg.PartitionUp || part.MaxTime != slurmInfinite {
		t.Errorf("partition flags %#x state %d max time %#x: want Default=YES State=UP MaxTime=INFINITE", part.Flags, part.StateUp, part.MaxTime)
	}
	t.Logf("partition %s: nodes %s node_inx %s total %d nodes %d cpus", part.Name.Value, part.Nodes.Value,
		part.NodeInx.Hex.Value, part.TotalNodes, part.TotalCPUs)
	p.noChange(msgtype.REQUEST_PARTITION_INFO, msg.InfoRequest{LastUpdate: pi.LastUpdate + 1, ShowFlags: msg.ShowLocal})

	// (e) sbatch: REQUEST_SUBMIT_BATCH_JOB with a job_desc as sbatch builds
	// it.
	work := t.TempDir()
	const sleepName = "goslurm-interop-sleep"
	// The script says when it runs, so the cancel below is not sent while
	// the batch launch is still on its way to slurmd: a real 22.05 slurmd
	// can then miss the kill and leave the job COMPLETING until the script
	// ends by itself (seen once under load).
	sleepOut := filepath.Join(work, "sleep.out")
	desc := sbatchDesc(c, work, sleepName, "#!/bin/sh\necho started\nsleep 30\n", sleepOut)
	desc.Partition = msg.Str(partName)
	desc.TimeLimit = 5 // minutes
	desc.SetDefaultBits()
	jobID := p.submit(desc)

	// (f) scontrol show job ID: REQUEST_JOB_INFO_SINGLE {id, SHOW_LOCAL}.
	j := p.job(jobID)
	if !j.Name.Valid || j.Name.Value != sleepName || j.UserID != desc.UserID || j.GroupID != desc.GroupID ||
		j.Partition.Value != partName || j.WorkDir.Value != work || j.TimeLimit != 5 || j.BatchFlag == 0 {
		t.Errorf("job %d read back: name %#v uid %d gid %d partition %#v work dir %#v time limit %d batch %d; submitted %q %d %d %q %q 5 batch",
			jobID, j.Name, j.UserID, j.GroupID, j.Partition, j.WorkDir, j.TimeLimit, j.BatchFlag,
			sleepName, desc.UserID, desc.GroupID, partName, work)
	}
	if st := j.JobState & msg.JobStateBase; st != msg.JobPending && st != msg.JobRunning {
		t.Errorf("job %d state %#x, want PENDING or RUNNING", jobID, j.JobState)
	}
	t.Logf("job %d: %q state %#x nodes %#v", jobID, j.Name.Value, j.JobState, j.Nodes)
	// REQUEST_JOB_INFO (squeue's RPC) lists it too.
	all := p.call(msgtype.REQUEST_JOB_INFO, msg.JobInfoRequest{ShowFlags: msg.ShowLocal}, msgtype.RESPONSE_JOB_INFO).(msg.JobInfoMsg)
	if !slices.ContainsFunc(all.Jobs, func(x msg.JobInfo) bool { return x.JobID == jobID && x.Name.Value == sleepName }) {
		t.Errorf("REQUEST_JOB_INFO lacks job %d: %d jobs", jobID, len(all.Jobs))
	}

	// (h) The real commands see the job we submitted.
	id := strconv.FormatUint(uint64(jobID), 10)
	out := realCmd(t, c, "squeue", "-h", "-j", id, "-o", "%i|%j|%u|%P|%l")
	if want := id + "|" + sleepName + "|root|" + partName + "|5:00"; strings.TrimSpace(out) != want {
		t.Errorf("real squeue: %q, want %q", out, want)
	}
	out = realCmd(t, c, "scontrol", "show", "job", id)
	for _, want := range []string{"JobId=" + id + " JobName=" + sleepName, "UserId=root(0)", "Partition=" + partName,
		"TimeLimit=00:05:00", "WorkDir=" + work} {
		if !strings.Contains(out, want) {
			t.Errorf("real scontrol show job %s lacks %q:\n%s", id, want, out)
		}
	}

	// Let it start on a real slurmd, so the cancel below goes all the way
	// to a running batch script.
	j = p.waitJob(jobID, 30*time.Second, "RUNNING", func(j *msg.JobInfo) bool {
		return j.JobState&msg.JobStateBase == msg.JobRunning
	})
	if !j.Nodes.Valid || !slices.Contains(nodeNames, j.Nodes.Value) || j.BatchHost.Value != j.Nodes.Value {
		t.Errorf("running job %d: nodes %#v batch host %#v, want one of %q", jobID, j.Nodes, j.BatchHost, nodeNames)
	}
	if out := realCmd(t, c, "squeue", "-h", "-j", id, "-o", "%i|%T|%N"); strings.TrimSpace(out) != id+"|RUNNING|"+j.Nodes.Value {
		t.Errorf("real squeue of the running job: %q, want %q", out, id+"|RUNNING|"+j.Nodes.Value)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if b, _ := os.ReadFile(sleepOut); string(b) == "started\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d: the batch script did not start within 30 s (no %s)", jobID, sleepOut)
		}
	}
	t.Logf("job %d running on %s", jobID, j.Nodes.Value)

	// (g) scancel ID: REQUEST_KILL_JOB {step NO_VAL, sjob_id "ID", signal 9}.
	kill := msg.JobStepKillRequest{
		StepID: msg.StepID{JobID: pack.NoVal, StepID: pack.NoVal, StepHetComp: pack.NoVal},
		SJobID: msg.Str(id),
		Signal: uint16(syscall.SIGKILL),
	}
	if err := p.cl.CallRC(ctx, msgtype.REQUEST_KILL_JOB, p.encode(msgtype.REQUEST_KILL_JOB, kill)); err != nil {
		t.Fatalf("REQUEST_KILL_JOB %s: %v", id, err)
	}
	j = p.waitJob(jobID, 30*time.Second, "CANCELLED and no longer completing", func(j *msg.JobInfo) bool {
		return j.JobState&msg.JobStateBase == msg.JobCancelled && j.JobState&msg.JobCompleting == 0
	})
	t.Logf("job %d after REQUEST_KILL_JOB: state %#x", jobID, j.JobState)
	if out := realCmd(t, c, "scontrol", "show", "job", id); !strings.Contains(out, "JobState=CANCELLED") {
		t.Errorf("real scontrol show job %s after our cancel:\n%s", id, out)
	}
	// Cancelling again: the job is done (scancel ignores this for SIGKILL).
	err = p.cl.CallRC(ctx, msgtype.REQUEST_KILL_JOB, p.encode(msgtype.REQUEST_KILL_JOB, kill))
	if slurmerr.Code(err) != slurmerr.ESLURM_ALREADY_DONE {
		t.Errorf("second REQUEST_KILL_JOB: %v, want ESLURM_ALREADY_DONE", err)
	}

	// A short job that runs to completion on a real slurmd and writes its
	// output file.
	const echoName = "goslurm-interop-echo"
	outFile := filepath.Join(work, "echo.out")
	desc = sbatchDesc(c, work, echoName, "#!/bin/sh\necho hello-from-goslurm\n", outFile)
	desc.TimeLimit = 1
	desc.SetDefaultBits()
	echoID := p.submit(desc)
	j = p.waitJob(echoID, 60*time.Second, "COMPLETED", func(j *msg.JobInfo) bool {
		return j.JobState&msg.JobStateBase > msg.JobSuspended && j.JobState&msg.JobCompleting == 0
	})
	if j.JobState&msg.JobStateBase != msg.JobComplete || j.ExitCode != 0 {
		t.Fatalf("job %d ended in state %#x exit code %#x, want COMPLETED 0", echoID, j.JobState, j.ExitCode)
	}
	if !j.Partition.Valid || j.Partition.Value != partName {
		t.Errorf("job %d: default partition %#v, want %q", echoID, j.Partition, partName)
	}
	got, err := os.ReadFile(outFile)
	if err != nil || string(got) != "hello-from-goslurm\n" {
		t.Fatalf("job %d output %s: %q (%v), want %q", echoID, outFile, got, err, "hello-from-goslurm\n")
	}
	t.Logf("job %d ran on %s and wrote %q", echoID, j.Nodes.Value, got)
	eid := strconv.FormatUint(uint64(echoID), 10)
	out = realCmd(t, c, "scontrol", "show", "job", eid)
	for _, want := range []string{"JobId=" + eid + " JobName=" + echoName, "JobState=COMPLETED", "ExitCode=0:0", "StdOut=" + outFile} {
		if !strings.Contains(out, want) {
			t.Errorf("real scontrol show job %s lacks %q:\n%s", eid, want, out)
		}
	}
}

// ctldRPC sends typed bodies with goslurm's client and decodes the replies with
// goslurm's codecs.
type ctldRPC struct {
	t   *testing.T
	ctx context.Context
	cl  *client.Client
	g   *codec.Registry
}

func (p *ctldRPC) encode(mt msgtype.Type, body any) []byte {
	p.t.Helper()
	bc, ok := p.g.Lookup(mt)
	if !ok {
		p.t.Fatalf("%v: no codec", mt)
	}
	var w pack.Writer
	if err := bc.Encode(&w, codec.Version2205, body); err != nil {
		p.t.Fatalf("%v: encode: %v", mt, err)
	}
	return w.Bytes()
}

// call sends body as mt and decodes the reply, which must be of type want
// and used up exactly.
func (p *ctldRPC) call(mt msgtype.Type, body any, want msgtype.Type) any {
	p.t.Helper()
	r, err := p.cl.Call(p.ctx, mt, p.encode(mt, body))
	if err != nil {
		p.t.Fatalf("%v: %v", mt, err)
	}
	f := r.Frame
	if f.Header.MsgType != want {
		p.t.Fatalf("%v: reply %v (rc %v), want %v", mt, f.Header.MsgType, client.ReturnCode(&f), want)
	}
	bc, ok := p.g.Lookup(want)
	if !ok {
		p.t.Fatalf("%v: no codec", want)
	}
	rd := pack.NewReader(f.Body)
	v, err := bc.Decode(rd, f.Header.Version)
	if err == nil {
		err = rd.Done()
	}
	if err != nil {
		p.t.Fatalf("%v: decode %d bytes: %v", want, len(f.Body), err)
	}
	return v
}

// noChange sends body as mt and requires RESPONSE_SLURM_RC
// SLURM_NO_CHANGE_IN_DATA.
func (p *ctldRPC) noChange(mt msgtype.Type, body any) {
	p.t.Helper()
	err := p.cl.CallRC(p.ctx, mt, p.encode(mt, body))
	if !errors.Is(err, slurmerr.Error{Code: slurmerr.SLURM_NO_CHANGE_IN_DATA}) {
		p.t.Errorf("%v with a current last_update: %v, want SLURM_NO_CHANGE_IN_DATA", mt, err)
	}
}

// submit sends REQUEST_SUBMIT_BATCH_JOB and returns the job id.
func (p *ctldRPC) submit(desc *msg.JobDesc) uint32 {
	p.t.Helper()
	r := p.call(msgtype.REQUEST_SUBMIT_BATCH_JOB, *desc, msgtype.RESPONSE_SUBMIT_BATCH_JOB).(msg.SubmitResponse)
	if r.JobID == 0 || r.JobID == pack.NoVal || r.StepID != msg.StepIDBatch || r.ErrorCode != 0 {
		p.t.Fatalf("submit %q: response %#v", desc.Name.Value, r)
	}
	p.t.Logf("submitted %q: job %d", desc.Name.Value, r.JobID)
	return r.JobID
}

// job reads one job with REQUEST_JOB_INFO_SINGLE, as scontrol show job.
func (p *ctldRPC) job(id uint32) *msg.JobInfo {
	p.t.Helper()
	m := p.call(msgtype.REQUEST_JOB_INFO_SINGLE, msg.JobIDShowRequest{JobID: id, ShowFlags: msg.ShowLocal}, msgtype.RESPONSE_JOB_INFO).(msg.JobInfoMsg)
	if len(m.Jobs) != 1 || m.Jobs[0].JobID != id {
		p.t.Fatalf("REQUEST_JOB_INFO_SINGLE %d: %d records", id, len(m.Jobs))
	}
	return &m.Jobs[0]
}

// waitJob polls the job until done reports true, for at most limit.
func (p *ctldRPC) waitJob(id uint32, limit time.Duration, what string, done func(*msg.JobInfo) bool) *msg.JobInfo {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		j := p.job(id)
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("job %d not %s after %v: state %#x reason %d", id, what, limit, j.JobState, j.StateReason)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sbatchDesc is the job_desc sbatch sends for a script (capture sbatch.pcap):
// our uid/gid, alloc node and session, the submit directory, the
// environment with sbatch's SLURM_* additions, stdin /dev/null, min_cpus 1.
func sbatchDesc(c *realslurm.Cluster, dir, name, script, stdout string) *msg.JobDesc {
	host, _ := os.Hostname()
	sid, err := unix.Getsid(0)
	if err != nil {
		sid = os.Getpid()
	}
	j := msg.NewJobDesc()
	j.Name = msg.Str(name)
	j.Script = msg.Str(script)
	j.UserID, j.GroupID = uint32(os.Getuid()), uint32(os.Getgid())
	j.AllocNode = msg.Str(host)
	j.AllocSID = uint32(sid)
	j.WorkDir = msg.Str(dir)
	j.StdIn = msg.Str("/dev/null")
	j.StdOut = msg.Str(stdout)
	j.MinNodes = 1
	j.MinCPUs = 1
	j.TaskDist = 0x2000 // SLURM_DIST_UNKNOWN
	j.SubmitLine = msg.Str(fmt.Sprintf("sbatch -J %s -o %s script", name, stdout))
	for _, e := range []string{
		"PATH=/usr/bin:/bin", "HOME=" + dir, "SLURM_CONF=" + c.Conf,
		"SLURM_SUBMIT_DIR=" + dir, "SLURM_JOB_NAME=" + name, "SLURM_UMASK=0022",
	} {
		j.Environment = append(j.Environment, msg.Str(e))
	}
	return j
}

// realCmd runs a real Slurm command against c and returns its output.
func realCmd(t *testing.T, c *realslurm.Cluster, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := c.Command(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("real %s %q: %v: %s", name, args, err, stderr.String())
	}
	return string(out)
}

// slurmConf is the generated slurm.conf: single-parameter lines, node lines
// (in order) and the partition line.
type slurmConf struct {
	global    map[string]string
	nodes     []map[string]string
	nodeNames []string
	partition map[string]string
}

func parseSlurmConf(t *testing.T, path string) slurmConf {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := slurmConf{global: map[string]string{}}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		kv := map[string]string{}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			kv[k] = v
		}
		switch {
		case kv["NodeName"] != "":
			sc.nodes = append(sc.nodes, kv)
			sc.nodeNames = append(sc.nodeNames, kv["NodeName"])
		case kv["PartitionName"] != "":
			sc.partition = kv
		default:
			k, v, _ := strings.Cut(line, "=")
			sc.global[k] = v
		}
	}
	return sc
}
