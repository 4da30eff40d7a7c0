package ctld

import (
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/slurmctld/gres"
)

// The GRES records a node's slurmd registered survive a restart (saved
// with the node state) and a reconfigure: jobs still running hold device
// indices into them, so a job started before the node registers again
// must not be given the same devices by count alone.
func TestGresRecordsSurviveRestart(t *testing.T) {
	c, _ := newTestController(t, "")
	recs := []gres.Record{{Name: "gpu", Type: "a100", Count: 2, HasFile: true}}
	n1, n2 := node(c, "n1"), node(c, "n2")
	c.mu.Lock()
	n1.gresRecs = recs
	n2.gresRecs = []gres.Record{} // registered, without records
	c.mu.Unlock()
	st := saveAndRead(t, c)

	r, _ := newTestController(t, "")
	r.RestoreNodes(st.Nodes)
	if got := node(r, "n1").gresRecs; !reflect.DeepEqual(got, recs) {
		t.Errorf("n1 after restart: %+v, want %+v", got, recs)
	}
	if got := node(r, "n2").gresRecs; got == nil || len(got) != 0 {
		t.Errorf("n2 after restart: %#v, want registered without records", got)
	}
	if got := node(r, "n3").gresRecs; got != nil {
		t.Errorf("n3 never registered, restored as %#v", got)
	}

	var fresh Node
	restoreNode(&fresh, node(r, "n1"), false)
	if !reflect.DeepEqual(fresh.gresRecs, recs) {
		t.Errorf("after reconfigure: %+v, want %+v", fresh.gresRecs, recs)
	}
}
