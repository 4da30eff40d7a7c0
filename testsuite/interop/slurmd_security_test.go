package interop

// Security checks of goslurm's slurmd from the outside (ENGINEERING.md,
// items 3-5 of the slurmd issue): step credentials that are forged,
// expired, replayed or for another node are refused over the wire, and
// job output files are opened as the user without following symbolic
// links. (The clean Prolog/Epilog environment is checked with real jobs
// in TestGoSlurmdJobs.)

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/credential/jobcred/mungesign"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

func TestGoSlurmdSecurity(t *testing.T) {
	g := startGoslurmdCluster(t)
	c := g.Cluster

	t.Run("step credentials: forged, expired, replayed, wrong node", func(t *testing.T) {
		const cpus = 2
		node := c.Nodes[0]
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		tmpl := capturedLaunch(t)
		// The credential is signed as slurmctld signs it: cred/munge on
		// the cluster's munged.
		signer := &mungesign.Signer{Client: c.Munge.Client(), SlurmdUID: c.SlurmUserUID}
		slurmd := &client.Client{
			Controllers: []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(node.Port))},
			Auth:        &auth.Munge{Client: c.Munge.Client()},
			Sweeps:      1,
		}
		me := currentIDs(t)
		workDir := t.TempDir()
		newCred := func(jobID uint32, hosts string, now time.Time) *jobcred.Credential {
			body := jobcred.Body{
				StepID:         jobcred.StepID{JobID: jobID, StepID: 0, StepHetComp: pack.NoVal},
				UID:            me.uid,
				GID:            me.gid,
				PwName:         jobcred.Str(me.name),
				PwDir:          jobcred.Str(me.home),
				PwShell:        jobcred.Str("/bin/sh"),
				GIDs:           me.gids,
				GrNames:        me.groups,
				JobCoreSpec:    0xfffe,
				JobPartition:   jobcred.Str("debug"),
				StepHostlist:   jobcred.Str(hosts),
				JobCoreBitmap:  jobcred.BitmapOf(cpus, 0),
				StepCoreBitmap: jobcred.BitmapOf(cpus, 0),
				SocketGroups:   []jobcred.SocketGroup{{CoresPerSocket: 1, SocketsPerNode: cpus, RepCount: 1}},
				CPUGroups:      []jobcred.CPUGroup{{CPUs: cpus, Reps: 1}},
				JobNHosts:      1,
				JobNTasks:      1,
				JobHostlist:    jobcred.Str(hosts),
				JobMem:         []jobcred.MemGroup{{MB: 500, Reps: 1}},
				StepMem:        []jobcred.MemGroup{{MB: 500, Reps: 1}},
			}
			cred, err := jobcred.Create(ctx, body, jobcred.Version2205, signer, now)
			if err != nil {
				t.Fatalf("signing the credential: %v", err)
			}
			return cred
		}
		launch := func(cred *jobcred.Credential, marker string) (*launchListeners, error) {
			l := newLaunchListeners(t, slurmd.Auth)
			req := tmpl
			req.StepID = msg.StepID{JobID: cred.Body.StepID.JobID, StepID: 0, StepHetComp: pack.NoVal}
			req.UID, req.GID = me.uid, me.gid
			req.UserName = msg.Str(me.name)
			req.GIDs = nil
			req.Cred = cred
			req.NNodes, req.NTasks = 1, 1
			req.GlobalTaskIDs = [][]uint32{{0}}
			req.CompleteNodelist = msg.Str(node.Name)
			req.AliasList = msg.NullString{}
			req.NodeCPUs = cpus
			req.JobMemLim, req.StepMemLim = 500, 500
			req.RespPorts = []uint16{l.respPort()}
			req.IOPorts = []uint16{l.ioPort()}
			req.Cwd = msg.Str(workDir)
			req.Argv = []msg.NullString{msg.Str("/bin/echo"), msg.Str(marker)}
			req.MPIPluginID = msg.MPINone
			req.Env = []msg.NullString{msg.Str("PATH=/usr/bin:/bin"), msg.Str("HOME=" + me.home), msg.Str("SLURM_MPI_TYPE=none")}
			req.SpankJobEnv = nil
			req.Flags = 0
			req.OFName, req.EFName, req.IFName = msg.NullString{}, msg.NullString{}, msg.NullString{}
			body := encodeBody(t, msgtype.REQUEST_LAUNCH_TASKS, &req)
			r, err := slurmd.CallTo(ctx, 0, msgtype.REQUEST_LAUNCH_TASKS, body, c.SlurmUserUID)
			if err == nil {
				err = rcMsg(&r.Frame)
			}
			if err != nil {
				l.close()
				return nil, err
			}
			return l, nil
		}

		// Job ids far above anything the controller hands out.
		jobID := uint32(4_100_000)
		cred := newCred(jobID, node.Name, time.Now())
		marker := fmt.Sprintf("goslurm-cred-%d", jobID)
		l, err := launch(cred, marker)
		if err != nil {
			t.Fatalf("our slurmd refused a good credential: %v", err)
		}
		if out := l.readOutput(ctx, t, jobcred.IOKey(cred)); out != marker+"\n" {
			t.Errorf("task output %q, want %q", out, marker+"\n")
		}
		l.close()

		forged := newCred(jobID+1, node.Name, time.Now())
		raw := forged.Bytes()
		i := bytes.Index(raw, []byte("debug"))
		if i < 0 {
			t.Fatal("partition name not found in the credential bytes")
		}
		raw[i] = 'D'
		tampered, err := jobcred.Decode(raw, jobcred.Version2205)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			cred *jobcred.Credential
			want int
		}{
			{"replayed", cred, slurmerr.ESLURMD_CREDENTIAL_REPLAYED},
			{"forged (body changed after signing)", tampered, slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL},
			{"expired (created 10 minutes ago)", newCred(jobID+2, node.Name, time.Now().Add(-10*time.Minute)), slurmerr.ESLURMD_CREDENTIAL_EXPIRED},
			{"for another node", newCred(jobID+3, "n9", time.Now()), slurmerr.ESLURMD_INVALID_JOB_CREDENTIAL},
		} {
			_, err := launch(tc.cred, "must-not-run")
			if !errors.Is(err, slurmerr.Error{Code: tc.want}) {
				t.Errorf("%s: got %v, want %s", tc.name, err, slurmerr.Error{Code: tc.want})
			}
		}
	})

	t.Run("output opened as the user, no symlink followed", func(t *testing.T) {
		const nobody = 65534
		dir := userDir(t, c, "nobody", nobody, nobody)
		secret := filepath.Join(c.Dir, "secret")
		const content = "root's file\n"
		if err := os.WriteFile(secret, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		as := []string{"--uid=" + strconv.Itoa(nobody), "--gid=" + strconv.Itoa(nobody), "-D", dir}

		// A control: the user's job runs and creates its output as the user.
		ok := filepath.Join(dir, "ok.out")
		job := submit(t, c, dir, nil, append(as, "-o", ok, "--wrap", "id -u")...)
		waitJob(t, c, job, []string{"COMPLETED"}, 60*time.Second)
		if b, _ := os.ReadFile(ok); string(b) != strconv.Itoa(nobody)+"\n" {
			t.Fatalf("the control job wrote %q", b)
		}
		if st, err := os.Stat(ok); err != nil || st.Sys().(*syscall.Stat_t).Uid != nobody {
			t.Errorf("output not created by the user: %v", err)
		}

		for _, flag := range []string{"-o", "-e"} {
			link := filepath.Join(dir, "link"+flag+".out")
			if err := os.Symlink(secret, link); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(link, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			job := submit(t, c, dir, nil, append(as, flag, link, "--wrap", "echo pwned; echo pwned >&2")...)
			info := waitJob(t, c, job, []string{"COMPLETED", "FAILED"}, 60*time.Second)
			t.Logf("%s through a symlink: JobState=%s ExitCode=%s", flag, info["JobState"], info["ExitCode"])
			if b, _ := os.ReadFile(secret); string(b) != content {
				t.Fatalf("%s through a symlink wrote the root-owned file: %q", flag, b)
			}
			if st, _ := os.Lstat(link); st == nil || st.Mode()&os.ModeSymlink == 0 {
				t.Errorf("%s: the symlink was replaced", flag)
			}
		}
		if st, err := os.Stat(secret); err != nil || st.Sys().(*syscall.Stat_t).Uid != 0 || st.Mode().Perm() != 0o644 {
			t.Errorf("the root-owned file changed: %v %v", st.Mode(), err)
		}

		// No symlink is followed at all, even to a file the user may
		// write (O_NOFOLLOW, not only the user's permissions).
		mine := filepath.Join(dir, "mine")
		if err := os.WriteFile(mine, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(mine, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link-mine.out")
		if err := os.Symlink(mine, link); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(link, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		job = submit(t, c, dir, nil, append(as, "-o", link, "--wrap", "echo followed")...)
		waitJob(t, c, job, []string{"COMPLETED", "FAILED"}, 60*time.Second)
		if b, _ := os.ReadFile(mine); string(b) != content {
			t.Errorf("output through a symlink to the user's own file: %q", b)
		}

		// A directory only root may write: the user cannot create the
		// output there, so slurmd did not open it as root.
		rootOnly := filepath.Join(c.Dir, "rootonly")
		if err := os.Mkdir(rootOnly, 0o700); err != nil {
			t.Fatal(err)
		}
		job = submit(t, c, dir, nil, append(as, "-o", filepath.Join(rootOnly, "x.out"), "--wrap", "echo x")...)
		waitJob(t, c, job, []string{"COMPLETED", "FAILED"}, 60*time.Second)
		if _, err := os.Lstat(filepath.Join(rootOnly, "x.out")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("output created in a root-only directory: %v", err)
		}
	})
}
