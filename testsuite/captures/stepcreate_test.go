package captures

// REQUEST_JOB_STEP_CREATE / RESPONSE_JOB_STEP_CREATE (protocol/msg's
// stepcreate.go) against real 22.05.8 traffic: srun hostname (one node, n1)
// and srun -N2 hostname (n1 and n2). Every such frame decodes, uses its body
// up exactly and re-encodes to the same bytes; the values agree with the
// scenario; and the credential in the response is the one jobcred finds at
// that place and the one srun then forwards in REQUEST_LAUNCH_TASKS.

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

type stepCreateFrame = capturedBody

// decodeStepCreateFrames round-trips every 5001/5002 frame and every
// REQUEST_LAUNCH_TASKS frame (for the credential comparison).
func decodeStepCreateFrames(t *testing.T) []stepCreateFrame {
	t.Helper()
	return roundTripCaptured(t, []msgtype.Type{msgtype.REQUEST_JOB_STEP_CREATE, msgtype.RESPONSE_JOB_STEP_CREATE, msgtype.REQUEST_LAUNCH_TASKS})
}

func TestStepCreateRoundTrip(t *testing.T) {
	frames := decodeStepCreateFrames(t)
	got := map[string]int{}
	for _, f := range frames {
		if f.mt != msgtype.REQUEST_LAUNCH_TASKS {
			got[f.file+" "+f.mt.String()]++
			t.Logf("%s c%d %v: %d body bytes decode and re-encode identically", f.file, f.conn, f.mt, len(f.raw))
		}
	}
	// decoded.txt: one request and one response in each srun capture.
	want := map[string]int{
		"srun-hostname.pcap REQUEST_JOB_STEP_CREATE":     1,
		"srun-hostname.pcap RESPONSE_JOB_STEP_CREATE":    1,
		"srun-N2-hostname.pcap REQUEST_JOB_STEP_CREATE":  1,
		"srun-N2-hostname.pcap RESPONSE_JOB_STEP_CREATE": 1,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round-tripped step create frames: got %v, want %v", got, want)
	}
}

// credentialOffset finds the credential in a RESPONSE_JOB_STEP_CREATE body
// by reading the fields in front of it with plain pack calls, independently
// of protocol/msg.
func credentialOffset(t *testing.T, body []byte) int {
	t.Helper()
	r := pack.NewReader(body)
	r.U32()           // def_cpu_bind_type
	r.OptStr()        // resv_ports
	r.U32()           // job_step_id
	if r.U16() != 0 { // step layout present
		r.OptStr() // front_end
		r.OptStr() // node_list
		n := r.U32()
		r.U16() // start_protocol_ver
		r.U32() // task_cnt
		r.U32() // task_dist
		for i := uint32(0); i < n && r.Err() == nil; i++ {
			r.U32Array()
		}
	}
	if err := r.Err(); err != nil {
		t.Fatalf("walking to the credential: %v", err)
	}
	return r.Offset()
}

func TestStepCreateValues(t *testing.T) {
	frames := decodeStepCreateFrames(t)
	for _, tc := range []struct {
		file       string
		nodes      []string
		nodeList   string
		reqNodes   msg.NullString // -w, NULL without
		submitLine string
	}{
		{"srun-hostname.pcap", []string{"n1"}, "n1", msg.Str("n1"), "srun -N1 -w n1 hostname"},
		{"srun-N2-hostname.pcap", []string{"n1", "n2"}, "n[1-2]", msg.NullString{}, "srun -N2 hostname"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var reqs, resps, launches []stepCreateFrame
			for _, f := range frames {
				if f.file != tc.file {
					continue
				}
				switch f.mt {
				case msgtype.REQUEST_JOB_STEP_CREATE:
					reqs = append(reqs, f)
				case msgtype.RESPONSE_JOB_STEP_CREATE:
					resps = append(resps, f)
				case msgtype.REQUEST_LAUNCH_TASKS:
					launches = append(launches, f)
				}
			}
			if len(reqs) != 1 || len(resps) != 1 || len(launches) != len(tc.nodes) {
				t.Fatalf("%d requests, %d responses, %d launches", len(reqs), len(resps), len(launches))
			}
			n := uint32(len(tc.nodes))
			q := reqs[0].body.(msg.StepCreateRequest)
			p := resps[0].body.(msg.StepCreateResponse)
			t.Logf("request: %+v", q)
			t.Logf("response: bind %#x resv %#v step %d layout %+v select %d switch %d proto %#x",
				p.DefCPUBindType, p.ResvPorts, p.JobStepID, p.Layout, p.SelectJobinfo, p.SwitchJobinfo, p.UseProtocolVer)

			// The request: srun asks for any step id of its job on N nodes,
			// one task each, and tells where its step listener is.
			if q.StepID.StepID != pack.NoVal || q.StepID.StepHetComp != pack.NoVal || q.StepID.JobID == 0 {
				t.Errorf("request step id %+v", q.StepID)
			}
			if q.MinNodes != n || q.MaxNodes != n || q.NumTasks != n || q.CPUCount != n {
				t.Errorf("min_nodes %d max_nodes %d num_tasks %d cpu_count %d, want %d", q.MinNodes, q.MaxNodes, q.NumTasks, q.CPUCount, n)
			}
			if q.NodeList != tc.reqNodes || q.TresPerStep.Value != fmt.Sprintf("cpu:%d", n) || q.Container.Valid {
				t.Errorf("node_list %#v tres_per_step %#v container %#v", q.NodeList, q.TresPerStep, q.Container)
			}
			if q.Name.Value != "hostname" || !q.Host.Valid || q.Host.Value == "" || q.Port == 0 || q.SrunPID == 0 {
				t.Errorf("name %#v host %#v port %d srun pid %d", q.Name, q.Host, q.Port, q.SrunPID)
			}
			if q.SubmitLine.Value != tc.submitLine {
				t.Errorf("submit line %#v", q.SubmitLine)
			}

			// The response's layout: one task per node, task i on node i.
			l := p.Layout
			if l == nil {
				t.Fatal("no step layout")
			}
			if l.NodeList.Value != tc.nodeList || l.NodeCnt() != n || l.TaskCnt != n || l.FrontEnd.Valid {
				t.Errorf("layout nodes %#v cnt %d tasks %d front end %#v", l.NodeList, l.NodeCnt(), l.TaskCnt, l.FrontEnd)
			}
			for i, tids := range l.TIDs {
				if !slices.Equal(tids, []uint32{uint32(i)}) {
					t.Errorf("node %d task ids %v", i, tids)
				}
			}
			if l.StartProtocolVer != 0x2600 || p.UseProtocolVer != 0x2600 {
				t.Errorf("start_protocol_ver %#x use_protocol_ver %#x", l.StartProtocolVer, p.UseProtocolVer)
			}
			if p.SelectJobinfo != msg.SelectConsTres || p.SwitchJobinfo != msg.SwitchNone {
				t.Errorf("select plugin %d switch plugin %d", p.SelectJobinfo, p.SwitchJobinfo)
			}
			if p.JobStepID != 0 {
				t.Errorf("job_step_id %d, want the job's first step 0", p.JobStepID)
			}

			// The credential: the one jobcred finds at that offset, byte for
			// byte and field for field, followed by exactly the select and
			// switch plugin ids and use_protocol_ver.
			c := p.Cred
			if c == nil || !c.IsSigned() || !strings.HasPrefix(string(c.Signature), "MUNGE:") {
				t.Fatalf("credential %+v", c)
			}
			off := credentialOffset(t, resps[0].raw)
			jc, used, err := jobcred.Unpack(resps[0].raw[off:], jobcred.Version2205)
			if err != nil {
				t.Fatalf("jobcred at offset %d: %v", off, err)
			}
			if !bytes.Equal(c.Bytes(), resps[0].raw[off:off+used]) || !bytes.Equal(jc.Bytes(), c.Bytes()) ||
				!bytes.Equal(jc.Signed(), c.Signed()) || !reflect.DeepEqual(jc.Body, c.Body) {
				t.Errorf("credential differs from the one jobcred reads at offset %d", off)
			}
			if rest := len(resps[0].raw) - off - used; rest != 4+4+2 {
				t.Errorf("%d bytes after the credential, want 10", rest)
			}
			b := c.Body
			if b.StepID.JobID != q.StepID.JobID || b.StepID.StepID != p.JobStepID || b.StepID.StepHetComp != pack.NoVal {
				t.Errorf("credential step %v for job %d step %d", b.StepID, q.StepID.JobID, p.JobStepID)
			}
			if b.UID != q.UserID || b.StepHostlist.S != tc.nodeList || b.JobNHosts != n {
				t.Errorf("credential uid %d (request %d) step hosts %q job hosts %d", b.UID, q.UserID, b.StepHostlist.S, b.JobNHosts)
			}
			// srun forwards that very credential to every slurmd.
			for i, f := range launches {
				lt := f.body.(msg.LaunchTasksRequest)
				if lt.Cred == nil || !bytes.Equal(lt.Cred.Bytes(), c.Bytes()) {
					t.Errorf("launch %d: credential is not the step create response's", i)
				}
				if lt.StepID.JobID != q.StepID.JobID || lt.StepID.StepID != p.JobStepID {
					t.Errorf("launch %d: step %+v", i, lt.StepID)
				}
			}
		})
	}
}
