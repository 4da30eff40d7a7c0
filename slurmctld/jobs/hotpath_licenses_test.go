package jobs

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/msg"
)

// The parse cached on a job is what conf.ParseLicenses reads from the
// text the job holds, whatever the text was before: valid, refused,
// empty.
func TestLicenseRequestCache(t *testing.T) {
	texts := []string{"foo:1", "foo:1,bar:2", "foo,foo:2", "foo:-1", "bad name:1", "bar;foo:3", "", "foo:1"}
	j := &Job{}
	for _, keep := range []bool{true, false} {
		for _, prev := range texts {
			for _, text := range texts {
				j.Licenses = prev
				j.licenseRequest(true)
				j.Licenses = text
				for range 2 { // the second call may answer from the cache
					got, ok := j.licenseRequest(keep)
					want, wantOK := conf.ParseLicenses(text)
					if text == "" {
						want, wantOK = nil, true
					}
					if ok != wantOK || !reflect.DeepEqual(got, want) {
						t.Fatalf("%q after %q (keep %v): %v %v, want %v %v", text, prev, keep, got, ok, want, wantOK)
					}
				}
			}
		}
	}
}

// A pass caches the requests it reads; scontrol update Licenses= then
// makes the next pass see the new request, and the counts follow.
func TestLicenseCacheFollowsUpdate(t *testing.T) {
	m, cl := newTestManager(nil), licCluster()
	a := licSubmit(t, m, cl, "foo:2", t0)
	b := licSubmit(t, m, cl, "foo:1", t0+1)
	mustSchedule(t, m, cl, t0+2)
	ja, jb := m.Job(a), m.Job(b)
	if !ja.Running() || !jb.Pending() || jb.Reason != ReasonLicenses {
		t.Fatalf("a %d, b %d reason %d", ja.Base(), jb.Base(), jb.Reason)
	}
	if ja.lic.src != "foo:2" || jb.lic.src != "foo:1" {
		t.Fatalf("a pass cached %q and %q", ja.lic.src, jb.lic.src)
	}
	d := msg.NewJobDesc()
	d.JobID = b
	d.Licenses = msg.Str("bar:1")
	if _, err := m.Update(d, alice, cl, t0+3); err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, m, cl, t0+4)
	if !jb.Running() {
		t.Fatalf("job %d with bar:1: state %d reason %d", b, jb.Base(), jb.Reason)
	}
	want := []LicenseCount{{"bar", 1, 1}, {"foo", 2, 2}}
	if got := m.LicenseUsage(cl.Licenses).Counts(); !reflect.DeepEqual(got, want) {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	// A reconfiguration rewrites the text (reversed order): the counts
	// come from the new text.
	ja.Licenses = "foo:1,bar:1"
	m.RestoreLicenses(cl.Licenses, t0+5)
	if ja.Licenses != "bar:1,foo:1" {
		t.Fatalf("restored %q", ja.Licenses)
	}
	want = []LicenseCount{{"bar", 1, 2}, {"foo", 2, 1}}
	if got := m.LicenseUsage(cl.Licenses).Counts(); !reflect.DeepEqual(got, want) {
		t.Errorf("counts after restore %+v, want %+v", got, want)
	}
}

// scontrol show licenses counts under the controller's read lock: the
// exported LicenseUsage only reads the cache, so concurrent calls do not
// race (go test -race), and it leaves no cache behind.
func TestLicenseUsageReadOnly(t *testing.T) {
	m, cl := newTestManager(nil), licCluster()
	ids := []uint32{licSubmit(t, m, cl, "foo:1", t0), licSubmit(t, m, cl, "bar:1", t0)}
	mustSchedule(t, m, cl, t0+1)
	for _, id := range ids {
		m.Job(id).lic = licenseCache{} // as a record read back at start-up
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_ = m.LicenseUsage(cl.Licenses).Counts()
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if src := m.Job(id).lic.src; src != "" {
			t.Errorf("job %d: LicenseUsage cached %q", id, src)
		}
	}
	if got := m.LicenseUsage(cl.Licenses).Counts(); got[0].Used != 1 || got[1].Used != 1 {
		t.Errorf("counts %+v", got)
	}
}

// The cache is not journaled and does not enter the list cache's
// fingerprint: a pass filling it repacks no record.
func TestLicenseCacheNotSaved(t *testing.T) {
	m, cl := newTestManager(nil), licCluster()
	id := licSubmit(t, m, cl, "foo:2", t0)
	j := m.Job(id)
	before, _ := sumOf(jobHasher(), j, nil)
	j.licenseRequest(true)
	if j.lic.src == "" {
		t.Fatal("nothing cached")
	}
	if after, _ := sumOf(jobHasher(), j, nil); after != before {
		t.Error("the cache changes the job's fingerprint")
	}
	if s := tableJSON(t, m); strings.Contains(s, `"lic"`) {
		t.Errorf("journaled table holds the cache: %s", s)
	}
}
