package stepd

import "testing"

func TestExpandBatchPath(t *testing.T) {
	job := &PathJob{JobID: 42, StepID: StepIDBatch, ArrayJobID: 40, ArrayTaskID: NoVal,
		UserName: "alice", JobName: "myjob", Hostname: "n1", WorkDir: "/home/alice"}
	arr := *job
	arr.ArrayTaskID = 7
	tests := []struct {
		name   string
		job    *PathJob
		format string
		want   string
	}{
		{"plain absolute", job, "/tmp/out.txt", "/tmp/out.txt"},
		{"relative joins work dir", job, "out.txt", "/home/alice/out.txt"},
		{"job id", job, "/o/%j.out", "/o/42.out"},
		{"J of batch has no step", job, "/o/%J.out", "/o/42.out"},
		{"default name", job, DefaultBatchOutput(job), "/home/alice/slurm-42.out"},
		{"default array name", &arr, DefaultBatchOutput(&arr), "/home/alice/slurm-40_7.out"},
		{"A without array is job id", job, "/o/%A", "/o/42"},
		{"a without array is NO_VAL", job, "/o/%a", "/o/4294967294"},
		{"user host name", job, "/o/%u-%N-%x", "/o/alice-n1-myjob"},
		{"node id and task", job, "/o/%n.%t", "/o/0.0"},
		{"step is batch", job, "/o/%s", "/o/batch"},
		{"literal percent", job, "/o/100%%-%j", "/o/100%-42"},
		{"width", job, "/o/%5j", "/o/00042"},
		{"width capped at 10", job, "/o/%12j", "/o/0000000042"},
		{"unknown kept", job, "/o/%z%j", "/o/%z42"},
		{"unknown after width keeps last digit", job, "/o/%5z", "/o/5z"},
		{"trailing percent", job, "/o/x%", "/o/x%"},
		{"backslash disables expansion", job, `/o/\%j.out`, "/o/%j.out"},
		{"double backslash is one", job, `/o/a\\b%j`, `/o/a\b%j`},
		// Slurm appends an escaped relative name to the work dir without a slash.
		{"relative backslash", job, `x\%j`, "/home/alicex%j"},
		{"work dir with slash", &PathJob{JobID: 1, StepID: StepIDBatch, ArrayTaskID: NoVal, WorkDir: "/w/"}, "o", "/w/o"},
		{"array ids", &arr, "/o/%A_%a_%3a", "/o/40_7_007"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExpandBatchPath(tc.format, tc.job, 0); got != tc.want {
				t.Errorf("ExpandBatchPath(%q) = %q, want %q", tc.format, got, tc.want)
			}
		})
	}
}

func TestExpandStepPath(t *testing.T) {
	job := &PathJob{JobID: 42, StepID: 3, ArrayTaskID: NoVal, NodeID: 2, UserName: "alice",
		Hostname: "n1", WorkDir: "/home/alice"}
	tests := []struct {
		format string
		task   uint32
		want   string
	}{
		{"/o/out-%t", 5, "/o/out-5"},
		{"/o/%N-%n-%u", 0, "/o/n1-2-alice"},
		{"rel-%t", 1, "/home/alice/rel-1"},
		{"/o/%3t", 7, "/o/007"},
		{"/o/%%t", 7, "/o/%t"},
		{"/o/%j", 7, "/o/%j"},           // srun expands job patterns before sending
		{"/o/%t.%n", 1, "/o/1.2"},       // the char after %t is copied, the next one scanned
		{"/o/%t%n", 1, "/o/1%n"},        // Slurm's quirk: the % right after %t is copied
		{"3", 3, "/home/alice/3"},       // a bare number: only that task gets the file
		{"3", 4, "/dev/null"},           //
		{`/o/\%t`, 1, "/o/%t"},          // escaped: no expansion
		{"/o/%z-%t", 2, "/o/%z-2"},      // unknown kept
		{"/o/%10t", 2, "/o/0000000002"}, // width 10
	}
	for _, tc := range tests {
		if got := ExpandStepPath(tc.format, job, tc.task); got != tc.want {
			t.Errorf("ExpandStepPath(%q, task %d) = %q, want %q", tc.format, tc.task, got, tc.want)
		}
	}
}
