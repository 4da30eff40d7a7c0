package interop

// Pending jobs that need nodes which are drained or down, real slurmctld
// against ours: the state description names the unavailable nodes
// ("ReqNodeNotAvail, UnavailableNodes:n2"), seen with the real squeue
// (default format, %r, --json) and scontrol show job, and it follows the
// nodes as they come back.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// unavailFields are the fields of `scontrol show job -o` compared here:
// the state, and the reason (the description, when there is one) up to
// the field after it.
var unavailFields = regexp.MustCompile(`\b(JobState)=(\S+)|\b(Reason)=(.*?) Dependency=`)

// unavailView is what the real commands show of the jobs ids.
func unavailView(t *testing.T, c *ctldharness.Cluster, ids ...uint32) map[string]string {
	t.Helper()
	var list []string
	for _, id := range ids {
		list = append(list, fmt.Sprint(id))
	}
	jobs := strings.Join(list, ",")
	out := map[string]string{}
	out["squeue"] = sortedLines(ctldRun(c, "squeue", "-h", "-j", jobs))
	out["squeue %r"] = sortedLines(ctldRun(c, "squeue", "-h", "-j", jobs, "-o", "%i|%T|%r"))
	var show []string
	for _, id := range ids {
		o := ctldRun(c, "scontrol", "show", "job", "-o", fmt.Sprint(id))
		var f []string
		for _, m := range unavailFields.FindAllStringSubmatch(o, -1) {
			f = append(f, m[1]+m[3]+"="+m[2]+m[4])
		}
		show = append(show, fmt.Sprint(id)+" "+strings.Join(f, " "))
	}
	out["scontrol show job"] = strings.Join(show, "\n") + "\n"
	// squeue --json lists every job whatever -j says: keep those asked.
	js, _, err := c.Run("squeue", "--json")
	if err != nil {
		t.Fatalf("squeue --json: %v", err)
	}
	var doc struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("squeue --json: %v\n%s", err, js)
	}
	var recs []string
	for _, j := range doc.Jobs {
		if !strings.Contains(","+jobs+",", fmt.Sprintf(",%v,", j["job_id"])) {
			continue
		}
		recs = append(recs, fmt.Sprintf("%v %v %v %v", j["job_id"], j["job_state"], j["state_reason"], j["state_description"]))
	}
	out["squeue --json"] = sortedLines(strings.Join(recs, "\n"))
	return out
}

// unavailSettle polls (60 s at most) until the reasons of jobs ids, as
// squeue %r shows them, satisfy done; it returns quietly either way so a
// controller that never gets there shows as a difference, not a hang.
func unavailSettle(c *ctldharness.Cluster, done func(reasons []string) bool, ids ...uint32) {
	var list []string
	for _, id := range ids {
		list = append(list, fmt.Sprint(id))
	}
	_ = c.Poll(60*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-j", strings.Join(list, ","), "-o", "%r")
		if err != nil {
			return false
		}
		r := strings.Split(strings.TrimSpace(o), "\n")
		return len(r) == len(ids) && done(r)
	})
}

// noneLeft: no job shows reason None (every job went through a pass).
func noneLeft(r []string) bool {
	for _, s := range r {
		if s == "None" || s == "" {
			return false
		}
	}
	return true
}

// TestSlurmctldUnavailableNodes: a job asking for a drained node (-w n2)
// names that node only; jobs that need more of the partition than is up
// (-N 3, --exclude) name the partition's unavailable nodes as one host
// range, excluded or not; the text follows a node that comes back.
func TestSlurmctldUnavailableNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster twice")
	}
	real := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	c := ctldharness.New(t, ctldharness.Options{Nodes: 4,
		ExtraConf: []string{"SchedulerParameters=batch_sched_delay=0"}})
	want, got := ctldOnBoth(t, c, real, ours, func(t *testing.T, c *ctldharness.Cluster) map[string]string {
		for _, n := range []string{"n1", "n2", "n3", "n4"} {
			ctldWaitState(t, c, n, "idle", 60*time.Second)
		}
		out := map[string]string{}
		out["drain"] = ctldRun(c, "scontrol", "update", "NodeName=n2", "State=DRAIN", "Reason=unavail test")
		out["down"] = ctldRun(c, "scontrol", "update", "NodeName=n3,n4", "State=DOWN", "Reason=unavail test")
		ctldWaitState(t, c, "n2", "drained", 60*time.Second)
		ctldWaitState(t, c, "n3", "down", 60*time.Second)
		sb := func(args ...string) uint32 {
			return ctldSbatch(t, c, append([]string{"-o", "/dev/null", "-t", "10"}, append(args, "--wrap", "sleep 600")...)...)
		}
		req := sb("-J", "req", "-w", "n2")
		excl := sb("-J", "excl", "-x", "n1", "-N", "2")
		reqTwo := sb("-J", "reqtwo", "-w", "n[1,3]")
		all := sb("-J", "all", "-N", "4")
		ids := []uint32{req, excl, reqTwo, all}
		unavailSettle(c, noneLeft, ids...)
		// Only the jobs naming nodes here: what the others show until
		// the next full pass (the text set at submission, or the node
		// count test's) depends on when real's periodic pass runs. The
		// node update below starts one.
		for k, v := range unavailView(t, c, req, reqTwo) {
			out["unavailable: "+k] = v
		}
		// n4 comes back: the text of the job that named it among others
		// drops it at the next pass.
		out["resume"] = ctldRun(c, "scontrol", "update", "NodeName=n4", "State=RESUME")
		ctldWaitState(t, c, "n4", "idle", 60*time.Second)
		unavailSettle(c, func(r []string) bool {
			return !strings.Contains(r[0], "n[2-4]")
		}, excl)
		for k, v := range unavailView(t, c, ids...) {
			out["n4 back: "+k] = v
		}
		ctldRun(c, "scancel", fmt.Sprint(req), fmt.Sprint(excl), fmt.Sprint(reqTwo), fmt.Sprint(all))
		return out
	})
	ctldCompare(t, want, got)
}
