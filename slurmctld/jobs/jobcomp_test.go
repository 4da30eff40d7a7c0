package jobs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goslurm/goslurm/protocol/msg"
)

// cPrintf models the plugin's snprintf(job_rec, 1024, JOB_FORMAT, ...):
// every %s argument ends at its first NUL, and the result is cut to 1023
// bytes. It is written apart from compRecord.line to check that one.
func cPrintf(args ...any) string {
	const jobFormat = "JobId=%d UserId=%s(%d) GroupId=%s(%d) Name=%s JobState=%s Partition=%s " +
		"TimeLimit=%s StartTime=%s EndTime=%s NodeList=%s NodeCnt=%d ProcCnt=%d " +
		"WorkDir=%s ReservationName=%s Tres=%s Account=%s QOS=%s " +
		"WcKey=%s Cluster=%s SubmitTime=%s EligibleTime=%s%s%s " +
		"DerivedExitCode=%s ExitCode=%s %s\n"
	for i, a := range args {
		if s, ok := a.(string); ok {
			if k := strings.IndexByte(s, 0); k >= 0 {
				args[i] = s[:k]
			}
		}
	}
	s := fmt.Sprintf(jobFormat, args...)
	if len(s) > 1023 {
		s = s[:1023]
	}
	return s
}

// TestJobCompFiletxtHostile: user text in a jobcomp/filetxt record is
// printed as the plugin prints it, field by field: markers, '=', spaces
// and newlines as they are, cut at a NUL, nothing in one field ever
// changes another; user and group names at most 31 bytes; a record
// longer than the plugin's buffer cut to 1023 bytes.
func TestJobCompFiletxtHostile(t *testing.T) {
	long := strings.Repeat("n", 1100)
	cases := []struct {
		name, account, workDir, comment string
		user                            string
		wantName                        string
	}{
		{name: "plain", wantName: "plain"},
		{name: "\x00LIMIT\x00", wantName: ""},
		{name: "x\x00TRES\x00y", wantName: "x"},
		{name: "a TimeLimit=9 Tres=cpu=99 \x00LIMIT\x00", account: "\x00TRES\x00", wantName: "a TimeLimit=9 Tres=cpu=99 "},
		{name: "two\nlines JobId=7 ExitCode=0:0", comment: "c=\x00LIMIT\x00\n", wantName: "two\nlines JobId=7 ExitCode=0:0"},
		{name: "sp ace=eq", account: "acct with space=1", workDir: "/tmp/a b=\nc", wantName: "sp ace=eq"},
		{name: "longuser", user: strings.Repeat("u", 40), wantName: "longuser"},
		{name: long, wantName: long},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%.20q", tc.name), func(t *testing.T) {
			m := hookManager(HookConfig{JobCompType: "jobcomp/filetxt", JobCompLoc: "/var/log/jc",
				GroupName: func(gid uint32) string { return strings.Repeat("g", 35) }})
			cl := testCluster()
			d := batchDesc(alice)
			d.Name = msg.Str(tc.name)
			d.TimeLimit = 7
			if tc.account != "" {
				d.Account = msg.Str(tc.account)
			}
			if tc.workDir != "" {
				d.WorkDir = msg.Str(tc.workDir)
			}
			if tc.comment != "" {
				d.Comment = msg.Str(tc.comment)
			}
			id := mustSubmit(t, m, cl, d, alice, t0)
			if tc.user != "" {
				m.Job(id).UserName = tc.user
			}
			mustSchedule(t, m, cl, t0)
			finishJob(t, m, cl, id, 2<<8, t0+1)
			jc := scriptsOf(m.TakeScripts(cl), ScriptJobCompFile)
			if len(jc) != 1 {
				t.Fatalf("%d records", len(jc))
			}
			j := m.Job(id)
			user := "alice"
			if tc.user != "" {
				user = tc.user[:31]
			}
			workDir := "/tmp"
			if tc.workDir != "" {
				workDir = tc.workDir
			}
			tm := compTime
			want := cPrintf(id, user, 1000, strings.Repeat("g", 31), 1000, tc.name, "FAILED", "debug",
				"7", tm(t0), tm(t0+1), "n1", 1, 1, workDir, "", "cpu=1,mem=4G,node=1,billing=1", j.Account, "",
				"", "unknown", tm(t0), tm(t0), "", "", "0:0", "2:0", "")
			if got := jc[0].Line; got != want {
				t.Errorf("record\n got %q\nwant %q", got, want)
			}
			if name := "Name=" + tc.wantName + " JobState="; len(want) < 1023 && !strings.Contains(want, name) {
				t.Errorf("record %q lacks %q", want, name)
			}
			if strings.Contains(jc[0].Line, "\x00") {
				t.Errorf("record holds a NUL: %q", jc[0].Line)
			}
			if len(tc.name) > 1000 && (len(jc[0].Line) != 1023 || strings.HasSuffix(jc[0].Line, "\n")) {
				t.Errorf("a long record is %d bytes, want 1023 without its newline", len(jc[0].Line))
			}
		})
	}
}

// TestJobCompResize: a job losing a node (--no-kill and a node failure,
// job_pre_resize_acctg) is logged as RESIZING with all its nodes and
// CPUs, starting and ending at the resize (resize_time is set before the
// record is written); its end record starts at the resize and has the
// nodes left. jobcomp/script gets the
// same split.
func TestJobCompResize(t *testing.T) {
	for _, typ := range []string{"jobcomp/filetxt", "jobcomp/script"} {
		t.Run(typ, func(t *testing.T) {
			m := hookManager(HookConfig{JobCompType: typ, JobCompLoc: "/var/log/jc"})
			cl := testCluster()
			j := noKillAlloc(t, m, cl, 0)
			cpus := j.TotalCPUs
			if _, err := m.NodeDown("n2", cl, t0+5); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Kill(&msg.JobStepKillRequest{StepID: msg.StepID{JobID: j.ID, StepID: NoVal, StepHetComp: NoVal}, Signal: 9}, alice, cl, t0+9); err != nil {
				t.Fatal(err)
			}
			kind := ScriptJobCompFile
			if typ == "jobcomp/script" {
				kind = ScriptJobCompScript
			}
			recs := scriptsOf(m.TakeScripts(cl), kind)
			if len(recs) != 2 {
				t.Fatalf("%d records, want 2", len(recs))
			}
			tm := compTime
			want := [][]string{
				{"JobState=RESIZING", "StartTime=" + tm(t0+5) + " ", "EndTime=" + tm(t0+5) + " ", "NodeList=n[1-3] NodeCnt=3 ProcCnt=" + fmt.Sprint(cpus) + " "},
				// The request's TRES stay as they were (tres_req_cnt).
				{"JobState=CANCELLED", "StartTime=" + tm(t0+5) + " ", "EndTime=" + tm(t0+9) + " ", "NodeList=n[1,3] NodeCnt=2 ",
					fmt.Sprintf(" Tres=cpu=%d,", cpus), ",node=3,"},
			}
			if typ == "jobcomp/script" {
				want = [][]string{
					{"JOBSTATE=RESIZING", fmt.Sprint("START=", t0+5), fmt.Sprint("END=", t0+5), "NODES=n[1-3]", "NODECNT=3", fmt.Sprint("PROCS=", cpus)},
					{"JOBSTATE=CANCELLED", fmt.Sprint("START=", t0+5), fmt.Sprint("END=", t0+9), "NODES=n[1,3]", "NODECNT=2"},
				}
			}
			for i, r := range recs {
				got := r.Line
				if typ == "jobcomp/script" {
					got = strings.Join(r.Env, "\n") + "\n"
				}
				for _, w := range want[i] {
					if typ == "jobcomp/script" {
						w = "\n" + w + "\n"
					}
					if !strings.Contains("\n"+got, w) {
						t.Errorf("record %d lacks %q:\n%s", i, w, got)
					}
				}
			}
		})
	}
}
