package interop

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// licConf is the license configuration of the license test.
var licConf = []string{"Licenses=foo:2,bar:1"}

// licJobFields picks what scontrol show job says of a job's licenses and
// why it waits.
func licJobFields(c *ctldharness.Cluster, id uint32) string {
	out, _, err := c.Run("scontrol", "show", "job", "-o", strconv.Itoa(int(id)))
	if err != nil {
		return "error: " + err.Error()
	}
	var keep []string
	for _, f := range strings.Fields(out) {
		for _, k := range []string{"JobState=", "Reason=", "Licenses="} {
			if strings.HasPrefix(f, k) {
				keep = append(keep, f)
			}
		}
	}
	return strings.Join(keep, " ")
}

// licReason is the job's pending reason as squeue prints it.
func licReason(c *ctldharness.Cluster, id uint32) string {
	out, _, err := c.Run("squeue", "-h", "-j", strconv.Itoa(int(id)), "-o", "%r")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// licWaitReason waits until squeue gives the job that reason.
func licWaitReason(t *testing.T, c *ctldharness.Cluster, id uint32, want string) {
	t.Helper()
	var last string
	if err := c.Poll(60*time.Second, func() bool {
		last = licReason(c, id)
		return last == want
	}); err != nil {
		t.Fatalf("job %d: reason %q, want %q: %v", id, last, want, err)
	}
}

// licSnapshot is what the commands say of licenses and the jobs: squeue
// (sorted by job id), scontrol show job's fields, scontrol show lic in
// its forms.
func licSnapshot(c *ctldharness.Cluster, label string, ids ...uint32) string {
	var b strings.Builder
	fmt.Fprintf(&b, "=== %s\n", label)
	q := ctldRun(c, "squeue", "-h", "-o", "%i %T %r %W")
	lines := strings.Split(strings.TrimSpace(q), "\n")
	sort.Strings(lines)
	b.WriteString("squeue: " + strings.Join(lines, "\n        ") + "\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "job %d: %s\n", id, licJobFields(c, id))
	}
	for _, args := range [][]string{
		{"scontrol", "show", "licenses"},
		{"scontrol", "show", "lic", "foo"},
		{"scontrol", "-o", "show", "lic"},
		{"scontrol", "show", "lic", "nope"},
	} {
		fmt.Fprintf(&b, "$ %s\n%s", strings.Join(args, " "), ctldMasked(ctldRun(c, args...)))
	}
	return b.String()
}

// licScenario runs the license scenario on a started cluster and returns
// its transcript. restart stops the controller and starts it again on its
// saved state.
func licScenario(t *testing.T, c *ctldharness.Cluster, restart func()) string {
	var b strings.Builder
	sb := func(lic string) uint32 {
		return ctldSbatch(t, c, "-n1", "-L", lic, "-o", "/dev/null", "--wrap", "sleep 300")
	}
	b.WriteString(licSnapshot(c, "nothing running"))

	a := sb("foo:1")
	ctldWaitJob(t, c, a, 60*time.Second, "RUNNING")
	// foo:2 does not fit beside a's foo:1; the lower job fits and starts
	// all the same: a job waiting for licenses blocks nobody.
	bb := sb("foo:2")
	cc := sb("foo:1,bar:1")
	ctldWaitJob(t, c, cc, 60*time.Second, "RUNNING")
	licWaitReason(t, c, bb, "Licenses")
	for _, lic := range []string{"foo:3", "nope:1", "foo:1,bar:2", "foo:-1"} {
		fmt.Fprintf(&b, "$ sbatch -L %s\n%s", lic,
			submittedRE.ReplaceAllString(ctldRun(c, "sbatch", "-n1", "-L", lic, "-o", "/dev/null", "--wrap", "true"), "Submitted batch job <id>"))
	}
	b.WriteString(licSnapshot(c, "a and c running, b waiting", a, bb, cc))

	restart()
	licWaitReason(t, c, bb, "Licenses")
	b.WriteString(licSnapshot(c, "after a controller restart", a, bb, cc))

	if out, errOut, err := c.Run("scancel", strconv.Itoa(int(a)), strconv.Itoa(int(cc))); err != nil {
		t.Fatalf("scancel: %v\n%s%s", err, out, errOut)
	}
	ctldWaitJob(t, c, a, 60*time.Second, "CANCELLED")
	ctldWaitJob(t, c, cc, 60*time.Second, "CANCELLED")
	ctldWaitJob(t, c, bb, 60*time.Second, "RUNNING")
	b.WriteString(licSnapshot(c, "a and c cancelled, b running", bb))

	if out, errOut, err := c.Run("scancel", strconv.Itoa(int(bb))); err != nil {
		t.Fatalf("scancel: %v\n%s%s", err, out, errOut)
	}
	ctldWaitJob(t, c, bb, 60*time.Second, "CANCELLED")
	b.WriteString(licSnapshot(c, "everything ended", bb))

	// schedule() tests a job's partition before its licenses: behind a
	// job that found no resources, a job waiting for licenses shows
	// Priority.
	whole := ctldSbatch(t, c, "-N2", "-n8", "-L", "foo:2", "-o", "/dev/null", "--wrap", "sleep 300")
	ctldWaitJob(t, c, whole, 60*time.Second, "RUNNING")
	blocked := ctldSbatch(t, c, "-N2", "-n8", "-o", "/dev/null", "--wrap", "sleep 300")
	licWaitReason(t, c, blocked, "Resources")
	behind := sb("foo:1")
	var last string
	if err := c.Poll(60*time.Second, func() bool {
		last = licReason(c, behind)
		return last == "Priority" || last == "Licenses"
	}); err != nil {
		t.Fatalf("job %d: reason %q: %v", behind, last, err)
	}
	b.WriteString(licSnapshot(c, "behind a job without resources", whole, blocked, behind))
	if out, errOut, err := c.Run("scancel", strconv.Itoa(int(whole)), strconv.Itoa(int(blocked)), strconv.Itoa(int(behind))); err != nil {
		t.Fatalf("scancel: %v\n%s%s", err, out, errOut)
	}
	for _, id := range []uint32{whole, blocked, behind} {
		ctldWaitJob(t, c, id, 60*time.Second, "CANCELLED")
	}
	b.WriteString(licSnapshot(c, "all cancelled"))
	return b.String()
}

// TestSlurmctldLicenses: slurm.conf Licenses= are counted as real
// slurmctld counts them. Jobs take their licenses when they start and
// give them back when they end; a job whose licenses are not free waits
// with reason Licenses without holding up the jobs behind it; a request
// above the configured count or for an unknown license is refused at
// submit; the counts survive a controller restart with jobs running; and
// scontrol show licenses (REQUEST_LICENSE_INFO) prints the same.
func TestSlurmctldLicenses(t *testing.T) {
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	opts := ctldharness.Options{Nodes: 2, CPUs: 4, ExtraConf: licConf}
	var got [2]string
	for i, side := range []struct {
		ctld         string
		first, again []string
	}{
		{real, []string{"-c", "-i"}, []string{"-i"}},
		{ours, []string{"-c"}, nil},
	} {
		c := ctldharness.New(t, opts)
		c.Start(side.ctld, side.first...)
		got[i] = licScenario(t, c, func() {
			c.StopCtld()
			c.StartCtld(side.ctld, side.again...)
		})
		c.Stop()
	}
	t.Logf("real slurmctld:\n%s", got[0])
	if got[0] != got[1] {
		t.Errorf("licenses differ:\n--- real slurmctld\n%s--- ours\n%s", got[0], got[1])
	}
}
