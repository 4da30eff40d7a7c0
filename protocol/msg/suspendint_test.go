package msg

import (
	"bytes"
	"testing"

	"github.com/goslurm/goslurm/protocol/msgtype"
)

func TestSuspendIntRoundTrip(t *testing.T) {
	for _, x := range []SuspendInt{
		{},
		{IndfSusp: 1, JobCoreSpec: 0xfffe, JobID: 42, Op: SuspendJob},
		{IndfSusp: 1, JobCoreSpec: 0xfffe, JobID: 0x03fffffe, Op: ResumeJob},
		{IndfSusp: 0, JobCoreSpec: 2, JobID: 1, Op: 7},
	} {
		checkRoundTrip(t, msgtype.REQUEST_SUSPEND_INT, x, 9)
	}
}

// TestSuspendIntBytes pins the layout of suspend_int_msg_t as
// _pack_suspend_int_msg writes it with switch/none: pack8 indf_susp,
// pack16 job_core_spec, pack32 job_id, pack16 op, all big-endian.
func TestSuspendIntBytes(t *testing.T) {
	for _, tc := range []struct {
		in   SuspendInt
		want []byte
	}{
		{SuspendInt{IndfSusp: 1, JobCoreSpec: 0xfffe, JobID: 2, Op: SuspendJob},
			[]byte{0x01, 0xff, 0xfe, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00}},
		{SuspendInt{IndfSusp: 1, JobCoreSpec: 0xfffe, JobID: 0x01020304, Op: ResumeJob},
			[]byte{0x01, 0xff, 0xfe, 0x01, 0x02, 0x03, 0x04, 0x00, 0x01}},
	} {
		got := encodeBody(t, msgtype.REQUEST_SUSPEND_INT, tc.in)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("%+v: % x, want % x", tc.in, got, tc.want)
		}
	}
}
