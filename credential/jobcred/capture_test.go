package jobcred_test

import (
	"bytes"
	"testing"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/jobcred/internal/capturecreds"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

var captureFiles = []string{"srun-hostname.pcap", "srun-N2-hostname.pcap", "batch-launch-complete.pcap", "scancel-running.pcap"}

// TestCaptureCredentialsRoundTrip: every credential in the real 22.05
// traffic unpacks, and packs again (body re-packed from the typed struct,
// not copied) to the identical bytes.
func TestCaptureCredentialsRoundTrip(t *testing.T) {
	byType := map[msgtype.Type]int{}
	for _, name := range captureFiles {
		found, _, err := capturecreds.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			c, n, err := jobcred.Unpack(f.Bytes, f.Version)
			if err != nil {
				t.Fatalf("%s conn %d %v: %v", f.File, f.ConnID, f.MsgType, err)
			}
			repacked, err := jobcred.EncodeBody(&c.Body, f.Version)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(repacked, c.Signed()) {
				t.Errorf("%s conn %d %v: re-packed body differs", f.File, f.ConnID, f.MsgType)
			}
			if got := c.Bytes(); !bytes.Equal(got, f.Bytes[:n]) {
				t.Errorf("%s conn %d %v: credential bytes differ", f.File, f.ConnID, f.MsgType)
			}
			byType[f.MsgType]++
			b := c.Body
			t.Logf("%s c%d %v: %v uid=%d gid=%d user=%q gids=%v step_hosts=%q job_hosts=%q nhosts=%d ntasks=%d ctime=%d cores=%v/%v sock=%v cpus=%v jobmem=%v stepmem=%v sig=%d bytes %.12q",
				f.File, f.ConnID, f.MsgType, b.StepID, b.UID, b.GID, b.PwName.S, b.GIDs, b.StepHostlist.S, b.JobHostlist.S,
				b.JobNHosts, b.JobNTasks, b.CTime, hex(b.JobCoreBitmap), hex(b.StepCoreBitmap), b.SocketGroups, b.CPUGroups, b.JobMem, b.StepMem,
				len(c.Signature), c.Signature)
		}
	}
	t.Logf("credentials by message type: %v", byType)
	for _, mt := range []msgtype.Type{msgtype.RESPONSE_JOB_STEP_CREATE, msgtype.REQUEST_LAUNCH_TASKS, msgtype.REQUEST_BATCH_JOB_LAUNCH} {
		if byType[mt] == 0 {
			t.Errorf("no credential found in any %v", mt)
		}
	}
}

func hex(b *jobcred.Bitmap) string {
	if b == nil {
		return "NULL"
	}
	return b.Hex()
}
