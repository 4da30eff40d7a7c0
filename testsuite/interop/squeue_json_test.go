package interop

// Differential tests of squeue --json/--yaml and sinfo --json/--yaml
// (issue 7): real Slurm 22.05's commands (openapi/v0.0.38 through the
// json and yaml serializer plugins) against ours, first on a real
// cluster, then on a cluster run by our slurmctld. The documents are
// compared byte for byte after masking the values a node samples (load,
// free memory) and the scheduler's evaluation time, and the JSON ones
// also as parsed documents.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// volatileKeys change between two runs a few milliseconds apart: sampled
// by slurmd, or stamped by each scheduling pass.
var volatileKeys = []string{"cpu_load", "free_memory", "last_sched_evaluation"}

var (
	volatileJSON = regexp.MustCompile(`"(` + strings.Join(volatileKeys, "|") + `)": -?[0-9]+`)
	volatileYAML = regexp.MustCompile(`!!str (` + strings.Join(volatileKeys, "|") + `): !!int -?[0-9]+`)
)

// maskDoc blanks the volatile values of a --json or --yaml document.
func maskDoc(s string) string {
	s = volatileJSON.ReplaceAllString(s, `"$1": <masked>`)
	return volatileYAML.ReplaceAllString(s, `!!str $1: <masked>`)
}

// jsonInvocations are run with the real command and ours on one cluster.
func jsonInvocations() map[string][][]string {
	return map[string][][]string{
		"squeue": {
			{"--json"}, {"--yaml"},
			// 22.05 ignores filters, formats and sorting with --json:
			// the openapi handler dumps every job.
			{"--json", "-t", "PD", "-u", "root", "-p", "debug", "-o", "%i"},
			{"--yaml", "-l", "-S", "-i", "-n", "arr"},
			{"--json", "-j", "1"}, {"--yaml", "-w", "n1", "-A", "acct1"},
			// -r sets SLURM_BITSTR_LEN=0, which the job decoder uses for
			// array_task_string.
			{"--json", "-r"}, {"--yaml", "--array"},
			{"--json", "-i", "5"}, {"--yaml", "-s"}, {"--json", "--yaml"}, {"--yaml", "--json"},
			{"--json", "-o", "%Z", "-l"},
			{"--json", "-v"}, {"--yaml", "-vv"}, {"--json", "-vvv"},
		},
		"sinfo": {
			{"--json"}, {"--yaml"},
			{"--json", "-N", "-l"}, {"--yaml", "-p", "debug", "-t", "idle"},
			{"--json", "-n", "n1"}, {"--yaml", "-R"}, {"--json", "-s"}, {"--yaml", "-i", "5"},
			{"--json", "-o", "%all", "-l"},
			{"--json", "-v"}, {"--yaml", "-vv"}, {"--json", "-vvv"},
		},
	}
}

// TestQueryJSONDiff compares squeue and sinfo --json/--yaml with the real
// commands on the query-test cluster (running, pending, held, suspended
// and array jobs, a heterogeneous job, a drained, a down and a never
// started node, hidden and down partitions).
func TestQueryJSONDiff(t *testing.T) {
	qc := startQueryCluster(t)
	inv := jsonInvocations()
	for _, name := range []string{"squeue", "sinfo"} {
		qc.build(t, name)
		for _, args := range inv[name] {
			qc.diffDoc(t, name, args, nil)
		}
		// SLURM_BITSTR_LEN cuts array_task_string as in the text output.
		qc.diffDoc(t, name, []string{"--json"}, []string{"SLURM_BITSTR_LEN=8"})
	}
	t.Run("nocontroller", func(t *testing.T) {
		conf := qc.closedConf(t)
		for _, name := range []string{"squeue", "sinfo"} {
			for _, a := range []string{"--json", "--yaml"} {
				qc.diffDoc(t, name, []string{a}, []string{"SLURM_CONF=" + conf})
			}
		}
	})
}

// closedConf is the cluster's slurm.conf with the controller on a closed
// port.
func (qc *queryCluster) closedConf(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(qc.c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "SlurmctldPort=") {
			l = "SlurmctldPort=1"
		}
		lines = append(lines, l)
	}
	lines = append(lines, "MessageTimeout=2")
	conf := filepath.Join(qc.dir, "closed-json.conf")
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// diffDoc runs our command and the real one, each again in turn, until
// the two agree (pending jobs' expected start times move with each
// backfill pass, and a job's accrue_time is set by a pass that may come
// between the two runs); the documents are compared masked, and JSON ones
// also parsed.
func (qc *queryCluster) diffDoc(t *testing.T, name string, args, env []string) {
	t.Helper()
	same := func(a, b queryResult) bool {
		return a.code == b.code && a.stderr == b.stderr && maskDoc(a.stdout) == maskDoc(b.stdout)
	}
	ours := qc.run(t, qc.bins[name], name, args, env)
	var real queryResult
	for try := 0; try < 10; try++ {
		if real = qc.run(t, qc.real[name], name, args, env); same(real, ours) {
			break
		}
		if ours = qc.run(t, qc.bins[name], name, args, env); same(real, ours) {
			break
		}
	}
	what := fmt.Sprintf("%s %s %s", strings.Join(env, " "), name, strings.Join(args, " "))
	if real.code != ours.code || real.stderr != ours.stderr {
		t.Errorf("%s: exit %d, stderr %q; real: exit %d, stderr %q", what, ours.code, ours.stderr, real.code, real.stderr)
	}
	if real.stdout == "" && real.code != 0 {
		// An option error ends the command before the dump.
		if ours.stdout != "" {
			t.Errorf("%s: real printed nothing, ours:\n%s", what, ours.stdout)
		}
		return
	}
	// -v prints squeue's option list before the document.
	doc, ok := docPart(real.stdout)
	if !ok {
		t.Errorf("%s: real printed no document:\n%s", what, real.stdout)
		return
	}
	if r, o := maskDoc(real.stdout), maskDoc(ours.stdout); r != o {
		t.Errorf("%s: outputs differ\n%s", what, lineDiff(r, o))
	}
	if strings.HasPrefix(doc, "{") {
		oursDoc, _ := docPart(ours.stdout)
		rd, od := parseMasked(t, what+" (real)", doc), parseMasked(t, what+" (ours)", oursDoc)
		if !reflect.DeepEqual(rd, od) {
			t.Errorf("%s: parsed documents differ:\n%s", what, strings.Join(docDiff("", rd, od), "\n"))
		}
	}
}

// docPart returns the document in a command's output.
func docPart(s string) (string, bool) {
	for _, start := range []string{"{\n", "%YAML 1.1\n"} {
		if strings.HasPrefix(s, start) {
			return s, true
		}
		if i := strings.Index(s, "\n"+start); i >= 0 {
			return s[i+1:], true
		}
	}
	return "", false
}

// parseMasked decodes a JSON document and zeroes the volatile values.
func parseMasked(t *testing.T, what, s string) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Errorf("%s: not JSON: %v\n%s", what, err, s)
		return nil
	}
	maskParsed(v, volatileKeys)
	return v
}

func maskParsed(v any, keys []string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if contains(keys, k) {
				x[k] = "<masked>"
			} else {
				maskParsed(e, keys)
			}
		}
	case []any:
		for _, e := range x {
			maskParsed(e, keys)
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// docDiff lists the paths at which two parsed documents differ.
func docDiff(path string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		var keys []string
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			av, ain := am[k]
			bv, bin := bm[k]
			switch {
			case !ain:
				out = append(out, fmt.Sprintf("%s.%s: only in second (%v)", path, k, bv))
			case !bin:
				out = append(out, fmt.Sprintf("%s.%s: only in first (%v)", path, k, av))
			default:
				out = append(out, docDiff(path+"."+k, av, bv)...)
			}
		}
		return out
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		if len(al) != len(bl) {
			return []string{fmt.Sprintf("%s: %v vs %v", path, al, bl)}
		}
		var out []string
		for i := range al {
			out = append(out, docDiff(fmt.Sprintf("%s[%s]", path, itemName(al[i], i)), al[i], bl[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		return []string{fmt.Sprintf("%s: %v vs %v", path, a, b)}
	}
	return nil
}

// itemName names a list item by its job id or node name when it has one.
func itemName(v any, i int) string {
	if m, ok := v.(map[string]any); ok {
		if id, ok := m["job_id"]; ok {
			return fmt.Sprintf("job_id=%v", id)
		}
		if n, ok := m["name"]; ok {
			return fmt.Sprintf("name=%v", n)
		}
	}
	return fmt.Sprint(i)
}

// lineDiff shows the first differing line of two texts with some context.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	i := 0
	for i < len(al) && i < len(bl) && al[i] == bl[i] {
		i++
	}
	from := max(i-4, 0)
	var sb strings.Builder
	fmt.Fprintf(&sb, "first difference at line %d (real %d lines, ours %d)\n", i+1, len(al), len(bl))
	for j := from; j < i; j++ {
		sb.WriteString("  " + al[j] + "\n")
	}
	for j := i; j < min(i+4, len(al)); j++ {
		sb.WriteString("- " + al[j] + "\n")
	}
	for j := i; j < min(i+4, len(bl)); j++ {
		sb.WriteString("+ " + bl[j] + "\n")
	}
	return sb.String()
}

// ctldJSONSet submits the same jobs under either controller: running,
// pending on resources, held, an array, with a drained node and three
// partitions.
func ctldJSONSet(t *testing.T, c *ctldharness.Cluster) {
	t.Helper()
	// Drained first, so that no job can land on it.
	if out, errOut, err := c.Run("scontrol", "update", "NodeName=n3", "State=DRAIN", "Reason=json test"); err != nil {
		t.Fatalf("drain: %v\n%s%s", err, out, errOut)
	}
	ctldSbatch(t, c, "-N1", "-w", "n1", "-n", "2", "-t", "10", "-J", "run", "-o", "/dev/null", "--wrap", "sleep 120")
	ctldWaitJob(t, c, 1, 30*time.Second, "RUNNING")
	ctldSbatch(t, c, "-w", "n1", "--exclusive", "-J", "wait", "-o", "/dev/null", "--wrap", "true")
	ctldSbatch(t, c, "-H", "-p", "long", "--mem", "100", "-J", "held", "-o", "/dev/null", "--wrap", "true")
	ctldSbatch(t, c, "-H", "--array", "1-5%2", "-t", "5", "-J", "arr", "-o", "/dev/null", "--wrap", "true")
	ctldSbatch(t, c, "-H", "-p", "short", "--comment", "a comment with spaces", "-J", "cmt", "-o", "/dev/null", "--wrap", "true")
	if err := c.Poll(40*time.Second, func() bool {
		o, _, err := c.Run("squeue", "-h", "-t", "PD", "-o", "%r")
		return err == nil && !strings.Contains(o, "None")
	}); err != nil {
		o, _, _ := c.Run("squeue")
		t.Fatalf("pending reasons not set: %v\n%s", err, o)
	}
	time.Sleep(1500 * time.Millisecond)
}

func ctldJSONOptions() ctldharness.Options {
	return ctldharness.Options{Nodes: 3, CPUs: 4, ExtraConf: []string{"SchedulerParameters=bf_interval=1"},
		Partitions: []string{
			"PartitionName=debug Nodes=n[1-3] Default=YES MaxTime=INFINITE State=UP",
			"PartitionName=long Nodes=n[2-3] MaxTime=2-00:00:00 State=UP",
			"PartitionName=short Nodes=n1 MaxTime=30 State=UP",
		}}
}

// ctldTimeKeys are times that differ between two clusters started at
// different moments.
var ctldTimeKeys = []string{
	"accrue_time", "boot_time", "eligible_time", "end_time", "last_busy", "last_sched_evaluation",
	"reason_changed_at", "slurmd_start_time", "start_time", "submit_time", "cpu_load", "free_memory",
}

// TestSlurmctldQueryJSON runs the same job set under real slurmctld and
// under ours. Under each, our squeue and sinfo --json/--yaml must print
// what the real commands print. The real commands' documents under the
// two controllers are then compared (times masked): what differs there is
// our controller's data, logged for the controller's owners.
func TestSlurmctldQueryJSON(t *testing.T) {
	realCtld := ctldharness.RealSbin(t, "slurmctld")
	ours := ctldBuildOurs(t)
	qc := &queryCluster{bins: map[string]string{}, real: map[string]string{}, dir: t.TempDir()}
	qc.build(t, "squeue")
	qc.build(t, "sinfo")
	c := ctldharness.New(t, ctldJSONOptions())

	docs := map[string]map[string]string{}
	for _, ctld := range []struct{ name, bin string }{{"real", realCtld}, {"ours", ours}} {
		if ctld.name == "real" {
			c.Start(ctld.bin, "-c", "-i")
		} else {
			c.Start(ctld.bin, "-c")
		}
		ctldJSONSet(t, c)
		docs[ctld.name] = map[string]string{}
		for _, name := range []string{"squeue", "sinfo"} {
			for _, a := range []string{"--json", "--yaml"} {
				what := ctld.name + " slurmctld: " + name + " " + a
				var realOut, oursOut string
				for try := 0; try < 10; try++ {
					r, _, err := c.RunBin(qc.real[name], a)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					o, _, err := c.RunBin(qc.bins[name], a)
					if err != nil {
						t.Fatalf("%s (ours): %v", what, err)
					}
					realOut, oursOut = r, o
					if maskDoc(r) == maskDoc(o) {
						break
					}
				}
				if maskDoc(realOut) != maskDoc(oursOut) {
					t.Errorf("%s: documents differ\n%s", what, lineDiff(maskDoc(realOut), maskDoc(oursOut)))
				}
				docs[ctld.name][name+" "+a] = realOut
			}
		}
		c.Stop()
	}
	if dir := os.Getenv("GOSLURM_DIFF_DIR"); dir != "" {
		for ctld, m := range docs {
			for k, doc := range m {
				f := filepath.Join(dir, strings.ReplaceAll(ctld+"-ctld "+k, " ", "_"))
				_ = os.WriteFile(f, []byte(doc), 0o644)
			}
		}
	}
	seen := map[string]bool{}
	for _, name := range []string{"squeue", "sinfo"} {
		k := name + " --json"
		var rd, od any
		if err := json.Unmarshal([]byte(docs["real"][k]), &rd); err != nil {
			t.Fatalf("%s under real slurmctld: %v", k, err)
		}
		if err := json.Unmarshal([]byte(docs["ours"][k]), &od); err != nil {
			t.Fatalf("%s under our slurmctld: %v", k, err)
		}
		maskParsed(rd, ctldTimeKeys)
		maskParsed(od, ctldTimeKeys)
		for _, d := range docDiff("", rd, od) {
			known := ""
			for _, p := range knownCtldDiffs {
				if strings.HasPrefix(k+" "+d, p) {
					known, seen[p] = p, true
				}
			}
			if known == "" {
				t.Errorf("%s: controller data differs (real vs ours): %s", k, d)
			} else {
				t.Logf("%s: known controller difference (real vs ours): %s", k, d)
			}
		}
	}
	for _, p := range knownCtldDiffs {
		if !seen[p] {
			t.Logf("known controller difference no longer seen, remove it from knownCtldDiffs: %s", p)
		}
	}
}

// knownCtldDiffs are differences between the documents the real commands
// print under real slurmctld and under ours that come from our
// controller's data (slurmctld/, not owned by the query commands). Each
// is a prefix of "<command> --json <path>: <real> vs <ours>".
var knownCtldDiffs = []string{}
