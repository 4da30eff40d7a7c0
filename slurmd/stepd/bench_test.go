package stepd

import "testing"

// BenchmarkBatchLaunchToComplete measures one batch job through the
// supervisor: LaunchBatch (supervisor start, socket up), script start as
// the user through the exec helper, until slurmctld has the completion of a
// script that exits at once. Run as root:
//
//	go test -run '^$' -bench BatchLaunch ./slurmd/stepd/
func BenchmarkBatchLaunchToComplete(b *testing.B) {
	requireRoot(b)
	r := newRig(b, "nobody")
	for b.Loop() {
		req := r.launch(b, "#!/bin/sh\nexit 0\n", nil)
		r.start(b, req)
		r.ctld.wait(b)
	}
}
