package jobs

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// A refused submission uses up a job id only when slurmctld refused it
// after _copy_job_desc_to_job_record gave the record its id: the
// dependency, the constraint, the reservation (validate_job_resv) and
// whether the job could ever run. The checks before it (partition, node
// names, the array expression, the partition's access lists and limits)
// leave the id for the next job. Checked against real slurmctld 22.05 by
// submitting a held job, the refused one and a held job again.
func TestRefusedSubmitJobIDs(t *testing.T) {
	tests := []struct {
		name   string
		change func(d *msg.JobDesc)
		want   int // error code
		usesID bool
	}{
		{"unknown partition", func(d *msg.JobDesc) { d.Partition = msg.Str("nosuch") }, slurmerr.ESLURM_INVALID_PARTITION_NAME, false},
		{"unknown node", func(d *msg.JobDesc) { d.ReqNodes = msg.Str("n9") }, slurmerr.ESLURM_INVALID_NODE_NAME, false},
		{"invalid array", func(d *msg.JobDesc) { d.ArrayInx = msg.Str("1-99999999") }, slurmerr.ESLURM_INVALID_ARRAY, false},
		{"invalid array and dependency", func(d *msg.JobDesc) {
			d.ArrayInx = msg.Str("1-99999999")
			d.Dependency = msg.Str("bogus:1")
		}, slurmerr.ESLURM_INVALID_ARRAY, false},
		{"invalid dependency", func(d *msg.JobDesc) { d.Dependency = msg.Str("bogus:1") }, slurmerr.ESLURM_DEPENDENCY, true},
		{"unknown reservation", func(d *msg.JobDesc) { d.Reservation = msg.Str("nosuch") }, slurmerr.ESLURM_RESERVATION_INVALID, true},
		{"reservation of others", func(d *msg.JobDesc) { d.Reservation = msg.Str("rootonly") }, slurmerr.ESLURM_RESERVATION_ACCESS, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			cl.Reservations = []Reservation{{Name: "rootonly", Start: t0 - 10, End: t0 + 86400, Nodes: []int{0}, Users: []uint32{0}}}
			m := newTestManager(nil)
			held := func() uint32 {
				d := batchDesc(alice)
				d.Priority = 0
				return mustSubmit(t, m, cl, d, alice, t0)
			}
			before := held()
			d := batchDesc(alice)
			tc.change(d)
			if _, _, err := m.Submit(d, alice, cl, t0); code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
			after := held()
			want := before + 1
			if tc.usesID {
				want++
			}
			if after != want {
				t.Fatalf("next job id %d after %d, want %d", after, before, want)
			}
		})
	}
}
