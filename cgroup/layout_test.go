package cgroup

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/conf"
)

func TestLayoutPaths(t *testing.T) {
	cfg := &conf.CgroupConfig{CgroupMountpoint: "/sys/fs/cgroup"}
	tests := []struct {
		name string
		v    Version
		o    LayoutOptions
		uid  uint32
		id   StepID
		want StepPaths
	}{
		{"v1 batch", V1, LayoutOptions{NodeName: "n1"}, 1000, StepID{JobID: 42, StepID: StepBatch, HetComp: NoVal},
			StepPaths{User: "/slurm/uid_1000", Job: "/slurm/uid_1000/job_42", Step: "/slurm/uid_1000/job_42/step_batch"}},
		{"v1 multiple slurmd", V1, LayoutOptions{NodeName: "n1", MultipleSlurmd: true}, 0, StepID{JobID: 7, StepID: StepExtern, HetComp: NoVal},
			StepPaths{User: "/slurm_n1/uid_0", Job: "/slurm_n1/uid_0/job_7", Step: "/slurm_n1/uid_0/job_7/step_extern"}},
		{"v1 multiple slurmd without a name falls back", V1, LayoutOptions{MultipleSlurmd: true}, 5, StepID{JobID: 7, StepID: 3, HetComp: NoVal},
			StepPaths{User: "/slurm/uid_5", Job: "/slurm/uid_5/job_7", Step: "/slurm/uid_5/job_7/step_3"}},
		{"v1 het component", V1, LayoutOptions{}, 5, StepID{JobID: 7, StepID: 0, HetComp: 1},
			StepPaths{User: "/slurm/uid_5", Job: "/slurm/uid_5/job_7", Step: "/slurm/uid_5/job_7/step_0+1"}},
		{"v2", V2, LayoutOptions{NodeName: "n1"}, 1000, StepID{JobID: 42, StepID: 0, HetComp: NoVal},
			StepPaths{Job: "/system.slice/slurmstepd.scope/job_42", Step: "/system.slice/slurmstepd.scope/job_42/step_0",
				StepSlurm: "/system.slice/slurmstepd.scope/job_42/step_0/slurm", StepUser: "/system.slice/slurmstepd.scope/job_42/step_0/user"}},
		{"v2 multiple slurmd", V2, LayoutOptions{NodeName: "n2", MultipleSlurmd: true}, 1000, StepID{JobID: 9, StepID: StepInteractive, HetComp: NoVal},
			StepPaths{Job: "/system.slice/n2_slurmstepd.scope/job_9", Step: "/system.slice/n2_slurmstepd.scope/job_9/step_interactive",
				StepSlurm: "/system.slice/n2_slurmstepd.scope/job_9/step_interactive/slurm", StepUser: "/system.slice/n2_slurmstepd.scope/job_9/step_interactive/user"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLayout(tt.v, cfg, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			got := l.Paths(tt.uid, tt.id)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
			uid, id, err := l.ParseStepPath(got.Step)
			if err != nil {
				t.Fatal(err)
			}
			if tt.v == V1 && uid != tt.uid {
				t.Errorf("uid = %d, want %d", uid, tt.uid)
			}
			if id != tt.id {
				t.Errorf("id = %+v, want %+v", id, tt.id)
			}
		})
	}
}

func TestLayoutErrors(t *testing.T) {
	if _, err := NewLayout(3, nil, LayoutOptions{}); err == nil {
		t.Error("version 3: want error")
	}
	if _, err := NewLayout(V2, nil, LayoutOptions{MultipleSlurmd: true}); err == nil {
		t.Error("v2 multiple slurmd without node name: want error")
	}
	if _, err := NewLayout(V1, nil, LayoutOptions{NodeName: "a/b", MultipleSlurmd: true}); err == nil {
		t.Error("node name with '/': want error")
	}
	l, _ := NewLayout(V1, &conf.CgroupConfig{CgroupMountpoint: "/cg/"}, LayoutOptions{})
	if l.Mountpoint != "/cg" || l.Abs(Memory, "/slurm/x") != "/cg/memory/slurm/x" {
		t.Errorf("layout %+v abs %q", l, l.Abs(Memory, "/slurm/x"))
	}
	for _, bad := range []string{"/slurm/uid_1/job_2", "/other/uid_1/job_2/step_0", "/slurm/uid_x/job_2/step_0",
		"/slurm/uid_1/job_2/step_x", "/slurm/uid_1/job_2/step_0/task_0", "/slurm/uid_1/job_2/step_0+y"} {
		if _, _, err := l.ParseStepPath(bad); err == nil {
			t.Errorf("ParseStepPath(%q): want error", bad)
		}
	}
	for _, tt := range []struct {
		id   StepID
		want string
	}{
		{StepID{StepID: StepPending, HetComp: NoVal}, "step_TDB"},
		{StepID{StepID: 4294967290, HetComp: NoVal}, "step_interactive"},
		{StepID{StepID: 12, HetComp: 0}, "step_12+0"},
	} {
		if got := tt.id.DirName(); got != tt.want {
			t.Errorf("DirName(%+v) = %q, want %q", tt.id, got, tt.want)
		}
	}
}
