package captures

import (
	"bytes"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// The typed bodies of protocol/msg's node, partition, config and small
// message files, checked against every such frame of the captures: each
// decodes exactly and re-encodes to the captured body bytes.

var nodeFamilyTypes = []msgtype.Type{
	msgtype.REQUEST_PING, msgtype.REQUEST_RECONFIGURE, msgtype.REQUEST_FED_INFO,
	msgtype.REQUEST_SHUTDOWN, msgtype.REQUEST_BUILD_INFO, msgtype.REQUEST_NODE_INFO,
	msgtype.REQUEST_PARTITION_INFO, msgtype.REQUEST_NODE_INFO_SINGLE,
	msgtype.REQUEST_JOB_INFO, msgtype.REQUEST_KILL_JOB, msgtype.REQUEST_CANCEL_JOB_STEP,
	msgtype.RESPONSE_FED_INFO, msgtype.REQUEST_UPDATE_NODE,
	msgtype.REQUEST_UPDATE_PARTITION, msgtype.RESPONSE_NODE_INFO,
	msgtype.RESPONSE_PARTITION_INFO, msgtype.RESPONSE_BUILD_INFO,
	msgtype.REQUEST_JOB_INFO_SINGLE, msgtype.REQUEST_JOB_READY, msgtype.RESPONSE_JOB_READY,
	msgtype.REQUEST_COMPLETE_JOB_ALLOCATION, msgtype.SRUN_JOB_COMPLETE,
}

// decodeNodeFamily round-trips every frame of those types in every capture.
func decodeNodeFamily(t *testing.T) []capturedBody {
	t.Helper()
	out := roundTripCaptured(t, nodeFamilyTypes)
	perType := map[msgtype.Type]int{}
	for _, f := range out {
		perType[f.mt]++
	}
	for mt, n := range perType {
		t.Logf("%-26v %d frames round-tripped", mt, n)
	}
	return out
}

func TestNodeFamilyBodiesRoundTrip(t *testing.T) {
	frames := decodeNodeFamily(t)
	seen := map[msgtype.Type]bool{}
	for _, f := range frames {
		seen[f.mt] = true
	}
	for _, mt := range []msgtype.Type{
		msgtype.REQUEST_PING, msgtype.REQUEST_BUILD_INFO, msgtype.REQUEST_NODE_INFO,
		msgtype.REQUEST_PARTITION_INFO, msgtype.REQUEST_JOB_INFO, msgtype.REQUEST_KILL_JOB,
		msgtype.REQUEST_FED_INFO, msgtype.RESPONSE_FED_INFO,
		msgtype.RESPONSE_NODE_INFO, msgtype.RESPONSE_PARTITION_INFO, msgtype.RESPONSE_BUILD_INFO,
		msgtype.REQUEST_JOB_INFO_SINGLE, msgtype.REQUEST_JOB_READY, msgtype.RESPONSE_JOB_READY,
		msgtype.REQUEST_COMPLETE_JOB_ALLOCATION, msgtype.SRUN_JOB_COMPLETE,
	} {
		if !seen[mt] {
			t.Errorf("no %v frame in the captures", mt)
		}
	}
}

// slurm.conf of the captures (testdata has no copy; the values are those of
// /work/shared/captures/slurm.conf): n1 and n2, 16 CPUs, 4096 MB, on
// 127.0.0.1 ports 6818 and 6819; partitions debug (default, UP) and parked
// (DOWN), both Nodes=ALL, MaxTime=INFINITE.
func TestNodeFamilyValues(t *testing.T) {
	frames := decodeNodeFamily(t)
	var nNode, nPart, nConf, nKill, nReq int
	for _, f := range frames {
		switch b := f.body.(type) {
		case msg.NodeInfoResponse:
			nNode++
			checkNodes(t, f.file, b)
		case msg.PartitionInfoResponse:
			nPart++
			checkPartitions(t, f.file, b)
		case msg.BuildInfo:
			nConf++
			checkBuildInfo(t, f.file, b)
		case msg.JobStepKillRequest:
			nKill++
			s := b.StepID
			if s.JobID != pack.NoVal || s.StepID != pack.NoVal || s.StepHetComp != pack.NoVal ||
				b.Signal != 9 || b.Flags != 0 || b.Sibling.Valid || !regexp.MustCompile(`^[0-9]+$`).MatchString(b.SJobID.Value) {
				t.Errorf("%s: scancel request %#v", f.file, b)
			}
		case msg.InfoRequest:
			nReq++
			if b.LastUpdate != 0 || b.ShowFlags&msg.ShowLocal == 0 {
				t.Errorf("%s: %v %#v", f.file, f.mt, b)
			}
		case msg.JobInfoRequest:
			// squeue: {0, SHOW_LOCAL, no id list}.
			if !reflect.DeepEqual(b, msg.JobInfoRequest{ShowFlags: msg.ShowLocal}) {
				t.Errorf("%s: job info request %#v", f.file, b)
			}
		}
	}
	if nNode == 0 || nPart == 0 || nConf != 1 || nKill != 2 || nReq == 0 {
		t.Errorf("checked %d node, %d partition, %d config, %d kill, %d info requests", nNode, nPart, nConf, nKill, nReq)
	}
}

func checkNodes(t *testing.T, file string, b msg.NodeInfoResponse) {
	t.Helper()
	if len(b.Nodes) != 2 || b.LastUpdate == 0 {
		t.Errorf("%s: %d nodes, last_update %d", file, len(b.Nodes), b.LastUpdate)
		return
	}
	for i, n := range b.Nodes {
		name := "n" + strconv.Itoa(i+1)
		if n.Name != msg.Str(name) || n.NodeHostname != msg.Str("localhost") || n.NodeAddr != msg.Str("127.0.0.1") ||
			n.Port != uint16(6818+i) || n.CPUs != 16 || n.RealMemory != 4096 || n.CPUsEfctv != 16 ||
			n.SelectNodeInfo.PluginID != msg.SelectConsTres {
			t.Errorf("%s: node %d: %+v", file, i, n)
		}
		// Before its slurmd registers (early in cluster-startup) a node is
		// UNKNOWN and has no version.
		if n.NodeState&msg.NodeStateBase != msg.NodeStateUnknown && n.Version != msg.Str("22.05.8") {
			t.Errorf("%s: node %s state %#x version %#v", file, name, n.NodeState, n.Version)
		}
		if !n.TresFmtStr.Valid || !bytes.Contains([]byte(n.TresFmtStr.Value), []byte("cpu=16,mem=4G")) {
			t.Errorf("%s: node %s tres %q", file, name, n.TresFmtStr.Value)
		}
	}
}

func checkPartitions(t *testing.T, file string, b msg.PartitionInfoResponse) {
	t.Helper()
	if len(b.Partitions) != 2 {
		t.Errorf("%s: %d partitions", file, len(b.Partitions))
		return
	}
	want := []struct {
		name  string
		flags uint16
		state uint16
	}{{"debug", msg.PartFlagDefault, msg.PartitionUp}, {"parked", 0, msg.PartitionDown}}
	for i, p := range b.Partitions {
		w := want[i]
		if p.Name != msg.Str(w.name) || p.Flags&msg.PartFlagDefault != w.flags || p.StateUp != w.state ||
			p.Nodes != msg.Str("n[1-2]") || p.TotalNodes != 2 || p.TotalCPUs != 32 || p.MaxTime != pack.Infinite {
			t.Errorf("%s: partition %d: %+v", file, i, p)
		}
		bits, err := p.NodeInx.Bits()
		if err != nil || !reflect.DeepEqual(bits, []int{0, 1}) || p.NodeInx != msg.BitmapOf(2, 0, 1) {
			t.Errorf("%s: %s node_inx %#v (%v, %v)", file, w.name, p.NodeInx, bits, err)
		}
	}
}

func checkBuildInfo(t *testing.T, file string, c msg.BuildInfo) {
	t.Helper()
	strs := map[string]msg.NullString{
		"ClusterName": c.ClusterName, "AuthType": c.AuthType, "CredType": c.CredType,
		"SelectType": c.SelectType, "SchedulerType": c.SchedType, "MailProg": c.MailProg,
		"ProctrackType": c.ProctrackType, "TaskPlugin": c.TaskPlugin, "MpiDefault": c.MPIDefault,
		"SlurmUser": c.SlurmUserName, "SlurmdUser": c.SlurmdUserName, "Version": c.Version,
		"JobCompType": c.JobCompType, "StateSaveLocation": c.StateSaveLocation,
		"SlurmdParameters": c.SlurmdParams, "AccountingStorageType": c.AccountingStorageType,
	}
	want := map[string]string{
		"ClusterName": "anchor", "AuthType": "auth/munge", "CredType": "cred/munge",
		"SelectType": "select/cons_tres", "SchedulerType": "sched/backfill", "MailProg": "/bin/true",
		"ProctrackType": "proctrack/cgroup", "TaskPlugin": "task/affinity", "MpiDefault": "none",
		"SlurmUser": "root", "SlurmdUser": "root", "Version": "22.05.8",
		"JobCompType": "jobcomp/none", "StateSaveLocation": "/tmp/real-slurm/ctld",
		"SlurmdParameters": "config_overrides", "AccountingStorageType": "accounting_storage/none",
	}
	for k, w := range want {
		if got := strs[k]; got != msg.Str(w) {
			t.Errorf("%s: %s = %#v, want %q", file, k, got, w)
		}
	}
	if c.SlurmctldPort != 6817 || c.SlurmdPort != 6818 || c.MaxJobCnt != 100000 ||
		c.SrunPortRangeLo != 60001 || c.SrunPortRangeHi != 63000 || c.Ret2Service != 2 ||
		c.SlurmUserID != 0 || c.SlurmdUserID != 0 {
		t.Errorf("%s: numbers: port %d/%d maxjob %d srun %d-%d ret2service %d", file, c.SlurmctldPort, c.SlurmdPort,
			c.MaxJobCnt, c.SrunPortRangeLo, c.SrunPortRangeHi, c.Ret2Service)
	}
	// SlurmctldHost=localhost: the address is as configured, the machine
	// name is the host's own name.
	if len(c.ControlMachine) != 1 || !c.ControlMachine[0].Valid || len(c.ControlAddr) != 1 || c.ControlAddr[0] != msg.Str("localhost") {
		t.Errorf("%s: control machine %#v addr %#v", file, c.ControlMachine, c.ControlAddr)
	}
	if c.SelectTypeParam&0x0004 == 0 { // CR_CORE
		t.Errorf("%s: select_type_param %#x lacks CR_Core", file, c.SelectTypeParam)
	}
	t.Logf("config: %d cgroup.conf pairs, %d select pairs, %d acct_gather pairs, plugstack %v",
		len(c.CgroupConf), len(c.SelectConfKeyPairs), len(c.AcctGatherConf), c.SlurmctldPlugStackConf != nil)
}
