package jobs

import (
	"encoding/json"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/sched"
)

const t0 = int64(1_800_000_000)

var (
	root  = Caller{UID: 0, GID: 0, Host: "10.0.0.1", ProtocolVersion: 0x2600}
	alice = Caller{UID: 1000, GID: 1000, Host: "10.0.0.2", ProtocolVersion: 0x2600}
	bob   = Caller{UID: 1001, GID: 1001, Host: "10.0.0.3", ProtocolVersion: 0x2600}
)

// testCluster: n[1-4], 16 single-core sockets each (as the capture's
// nodes), partitions debug (default), rootonly, grp (AllowGroups gid 500),
// short (MaxTime 10, MaxNodes 2).
func testCluster() *Cluster {
	cl := &Cluster{Config: sched.DefaultConfig()}
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		cl.Nodes = append(cl.Nodes, sched.Node{Name: n, Sockets: 16, CoresPerSocket: 1, ThreadsPerCore: 1,
			CPUs: 16, RealMemory: 4096, Weight: 1})
	}
	all := []int{0, 1, 2, 3}
	base := sched.Partition{Nodes: all, MaxTime: sched.Infinite32, DefaultTime: sched.NoValue32,
		MaxNodes: sched.Infinite32, MaxCPUsPerNode: sched.Infinite32}
	debug := base
	debug.Name, debug.Default = "debug", true
	ro := base
	ro.Name, ro.RootOnly = "rootonly", true
	grp := base
	grp.Name, grp.AllowGroups, grp.AllowGIDs = "grp", []string{"staff"}, []uint32{500}
	short := base
	short.Name, short.MaxTime, short.MaxNodes, short.Nodes = "short", 10, 2, []int{0, 1}
	cl.Partitions = []sched.Partition{debug, ro, grp, short}
	return cl
}

func users(uid uint32) (User, bool) {
	switch uid {
	case 0:
		return User{Name: "root", Gecos: "root", Dir: "/root", Shell: "/bin/bash", Groups: []uint32{0}}, true
	case 1000:
		return User{Name: "alice", Dir: "/home/alice", Shell: "/bin/sh", GID: 1000, Groups: []uint32{1000, 500}}, true
	case 1001:
		return User{Name: "bob", Dir: "/home/bob", Shell: "/bin/sh", GID: 1001, Groups: []uint32{1001}}, true
	}
	return User{}, false
}

func newTestManager(j Journal) *Manager {
	cfg := DefaultConfig()
	cfg.SlurmUserID = 64030
	cfg.Users = users
	cfg.ClusterName = "test"
	cfg.MinJobAge = 300
	return New(cfg, j)
}

func batchDesc(c Caller) *msg.JobDesc {
	d := msg.NewJobDesc()
	d.Name = msg.Str("job")
	d.Script = msg.Str("#!/bin/sh\necho hello\n")
	d.Environment = []msg.NullString{msg.Str("PATH=/bin"), msg.Str("HOME=/tmp")}
	d.WorkDir = msg.Str("/tmp")
	d.StdOut = msg.Str("/tmp/out")
	d.UserID, d.GroupID = c.UID, c.GID
	d.MinNodes = 1
	return d
}

func code(err error) int { return slurmerr.Code(err) }

func mustSubmit(t *testing.T, m *Manager, cl *Cluster, d *msg.JobDesc, c Caller, now int64) uint32 {
	t.Helper()
	r, _, err := m.Submit(d, c, cl, now)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return r.JobID
}

func mustSchedule(t *testing.T, m *Manager, cl *Cluster, now int64) []Action {
	t.Helper()
	out, err := m.Schedule(cl, now, false)
	if err != nil {
		t.Fatalf("schedule: %v", err)
	}
	return out.Actions
}

func launches(acts []Action) []LaunchBatch {
	var out []LaunchBatch
	for _, a := range acts {
		if l, ok := a.(LaunchBatch); ok {
			out = append(out, l)
		}
	}
	return out
}

// tableJSON is the whole table, payloads included, for comparisons.
func tableJSON(t *testing.T, m *Manager) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Next uint32
		Jobs []*Job
	}{m.nextID, m.Jobs()})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// finishJob completes a running batch job with status rc and cleans its
// nodes.
func finishJob(t *testing.T, m *Manager, cl *Cluster, id uint32, rc uint32, now int64) {
	t.Helper()
	j := m.Job(id)
	if _, err := m.CompleteBatch(&msg.CompleteBatchScript{JobID: id, JobRC: rc, NodeName: msg.Str(j.BatchHost)}, root, cl, now); err != nil {
		t.Fatalf("complete %d: %v", id, err)
	}
	for _, n := range append([]string(nil), j.Completing...) {
		if _, err := m.EpilogComplete(id, n, root, now); err != nil {
			t.Fatal(err)
		}
	}
}
