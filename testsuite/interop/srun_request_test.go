package interop

// The job requests goslurm's srun and salloc put on the wire against the
// ones real srun and salloc send for the same command line, recorded by the
// proxy sbatch's differential uses: the message sequence to slurmctld, the
// REQUEST_RESOURCE_ALLOCATION job descriptor and the REQUEST_JOB_STEP_CREATE
// body, with what differs between any two runs (ports, pids, session, job
// and step ids) masked.

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/testsuite/realslurm"
)

type srRequests struct {
	types []msgtype.Type
	alloc *msg.JobDesc
	het   []msg.JobDesc // REQUEST_HET_JOB_ALLOCATION's components
	step  *msg.StepCreateRequest
}

func srRecord(t *testing.T, proxy *sbProxy, confPath, bin, dir string, args []string) srRequests {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Dir = dir
	cmd.Env = []string{"SLURM_CONF=" + confPath, "PATH=/usr/bin:/bin", "LANG=C", "HOME=/root", "PWD=" + dir}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %q timed out:\n%s", bin, args, out.String())
	}
	var r srRequests
	for _, raw := range proxy.take() {
		f, err := codec.DecodeFrame(raw)
		if err != nil {
			t.Fatalf("decode frame: %v", err)
		}
		r.types = append(r.types, f.Header.MsgType)
		switch f.Header.MsgType {
		case msgtype.REQUEST_RESOURCE_ALLOCATION, msgtype.REQUEST_JOB_STEP_CREATE, msgtype.REQUEST_HET_JOB_ALLOCATION:
		default:
			continue
		}
		bc, _ := msg.Registry().Lookup(f.Header.MsgType)
		rd := pack.NewReader(f.Body)
		v, err := bc.Decode(rd, f.Header.Version)
		if err == nil {
			err = rd.Done()
		}
		if err != nil {
			t.Fatalf("decode %v: %v", f.Header.MsgType, err)
		}
		mask := func(d *msg.JobDesc) {
			d.AllocRespPort, d.OtherPort, d.AllocSID = 0, 0, 0
			d.Environment = nil // the whole environment of the caller
			if d.BeginTime != 0 && max(d.BeginTime-time.Now().Unix(), time.Now().Unix()-d.BeginTime) <= 5 {
				// --begin=now: the second the command ran.
				d.BeginTime = 1
			}
		}
		switch d := v.(type) {
		case msg.JobDescList:
			for i := range d.Jobs {
				mask(&d.Jobs[i])
			}
			r.het = d.Jobs
		case msg.JobDesc:
			mask(&d)
			r.alloc = &d
		case msg.StepCreateRequest:
			d.StepID.JobID, d.Port, d.SrunPID = 0, 0, 0
			r.step = &d
		}
	}
	return r
}

func TestSrunRequestsAgainstRealSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Slurm cluster")
	}
	c := realslurm.Start(t, realslurm.Options{Nodes: 2, CPUs: 2})
	proxy := sbStartProxy(t, c.CtldAddr())
	confPath := sbProxyConf(t, c, proxy.port())
	ours := srBuild(t)
	work := t.TempDir()
	cases := [][]string{
		{"srun", "hostname"},
		{"srun", "-N2", "hostname"},
		{"srun", "-n3", "-l", "true"},
		{"srun", "-N2", "-n2", "-J", "named", "-t", "10", "true"},
		{"srun", "-c", "2", "true"},
		{"srun", "--ntasks-per-node=2", "-N1", "true"},
		{"srun", "-w", "n2", "-p", "debug", "true"},
		{"srun", "-x", "n1", "--mem=100", "true"},
		{"srun", "-I", "true"},
		{"salloc", "-N1", "true"},
		{"salloc", "-n3", "-J", "x", "true"},
		{"salloc", "-N2", "srun", "true"},
	}
	failed := 0
	for _, args := range cases {
		srWaitIdle(t, c)
		rr := srRecord(t, proxy, confPath, "/usr/bin/"+args[0], work, args)
		srWaitIdle(t, c)
		or := srRecord(t, proxy, confPath, ours+"/"+args[0], work, args)
		var diffs []string
		if d := cmp.Diff(fmt.Sprint(rr.types), fmt.Sprint(or.types)); d != "" {
			diffs = append(diffs, "message sequence (-real +ours):\n"+d)
		}
		if d := cmp.Diff(rr.het, or.het); d != "" {
			diffs = append(diffs, "het job allocation request (-real +ours):\n"+d)
		}
		if d := cmp.Diff(rr.alloc, or.alloc); d != "" {
			diffs = append(diffs, "allocation request (-real +ours):\n"+d)
		}
		if d := cmp.Diff(rr.step, or.step); d != "" {
			diffs = append(diffs, "step create request (-real +ours):\n"+d)
		}
		if len(diffs) > 0 {
			failed++
			t.Errorf("%q:\n%s", args, strings.Join(diffs, "\n"))
		}
	}
	t.Logf("%d/%d command lines put the same requests on the wire as real Slurm 22.05", len(cases)-failed, len(cases))
}
