package jobs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// job_set_top: operators always; users only with enable_user_top, and then
// only their own jobs (_set_top refuses the whole list at the first job of
// another user). Without it a user is refused before the ids are parsed.
func TestTopUserTop(t *testing.T) {
	tests := []struct {
		name    string
		caller  Caller
		userTop bool
		ids     string // %a1 %a2: alice's jobs, %b: bob's
		want    int
		moved   bool // alice's second job now has her first job's priority
	}{
		{"user, not enabled", alice, false, "%a2", slurmerr.ESLURM_ACCESS_DENIED, false},
		{"user, not enabled, unknown id", alice, false, "999999", slurmerr.ESLURM_ACCESS_DENIED, false},
		{"user, enabled, own job", alice, true, "%a2", 0, true},
		{"user, enabled, own then other's", alice, true, "%a2,%b", slurmerr.ESLURM_ACCESS_DENIED, false},
		{"user, enabled, other's", alice, true, "%b", slurmerr.ESLURM_ACCESS_DENIED, false},
		{"user, enabled, unknown id", alice, true, "%a2,999999", slurmerr.ESLURM_INVALID_JOB_ID, false},
		{"user, enabled, empty tokens skipped", alice, true, ",%a2,", 0, true},
		{"root, not enabled", root, false, "%a2", 0, true},
		{"SlurmUser, not enabled", Caller{UID: 64030, GID: 64030}, false, "%a2", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := testCluster()
			m := newTestManager(nil)
			a1 := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
			a2 := mustSubmit(t, m, cl, batchDesc(alice), alice, t0+1)
			b := mustSubmit(t, m, cl, batchDesc(bob), bob, t0+2)
			p1, p2 := m.Job(a1).Priority, m.Job(a2).Priority
			if p1 <= p2 {
				t.Fatalf("priorities %d %d: want the first job ahead", p1, p2)
			}
			ids := tc.ids
			for k, v := range map[string]uint32{"%a1": a1, "%a2": a2, "%b": b} {
				ids = strings.ReplaceAll(ids, k, fmt.Sprint(v))
			}
			_, err := m.TopJobs(&msg.SuspendRequest{JobIDStr: msg.Str(ids)}, tc.caller, tc.userTop, t0+10)
			if code(err) != tc.want {
				t.Fatalf("err %v, want code %d", err, tc.want)
			}
			got2 := m.Job(a2).Priority
			if tc.moved != (got2 == p1) {
				t.Fatalf("job 2 priority %d (was %d, job 1 had %d), moved=%v", got2, p2, p1, tc.moved)
			}
			if tc.moved && m.Job(a1).Priority >= got2 {
				t.Fatalf("job 1 priority %d not below job 2's %d", m.Job(a1).Priority, got2)
			}
		})
	}
}

// Top, the controller's entry point, follows the configuration.
func TestTopConfig(t *testing.T) {
	for _, tc := range []struct {
		params string
		want   int
	}{
		{"", slurmerr.ESLURM_ACCESS_DENIED},
		{"bf_continue,enable_user_top", 0},
	} {
		c := &conf.Config{SchedulerParameters: conf.ParseOptions(tc.params), MaxJobId: 67043328, FirstJobId: 1}
		cfg, err := ConfigFromConf(c, 64030)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Users = users
		cl := testCluster()
		m := New(cfg, nil)
		id := mustSubmit(t, m, cl, batchDesc(alice), alice, t0)
		if _, err := m.Top(&msg.SuspendRequest{JobIDStr: msg.Str(fmt.Sprint(id))}, alice, t0+1); code(err) != tc.want {
			t.Errorf("%q: err %v, want %d", tc.params, err, tc.want)
		}
	}
}

func TestUserTopEnabled(t *testing.T) {
	for _, tc := range []struct {
		params string
		want   bool
	}{
		{"", false},
		{"bf_continue", false},
		{"enable_user_top", true},
		{"bf_interval=30,Enable_User_Top", true},
		{"disable_user_top", false},
	} {
		if got := UserTopEnabled(conf.ParseOptions(tc.params)); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.params, got, tc.want)
		}
	}
}
