package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/credential/slurmauth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"golang.org/x/sys/unix"
)

// submitRetries is sbatch's MAX_RETRIES for a busy controller.
const submitRetries = 15

// maxWaitSleep is sbatch's MAX_WAIT_SLEEP_TIME for --wait polling.
const maxWaitSleep = 32 * time.Second

func (s *sbatch) loadConf() (*conf.Config, error) {
	path, ok := s.env.Get("SLURM_CONF")
	if !ok || path == "" {
		path = "/etc/slurm/slurm.conf"
	}
	c, err := conf.Load(conf.OSFS{}, path)
	if err != nil {
		s.log.Fatalf("Could not establish a configuration source")
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// newClient builds the controller client of slurm.conf: SlurmctldHost
// order, SlurmctldPort, MessageTimeout and the AuthType's signer.
func (s *sbatch) newClient(c *conf.Config) (*client.Client, error) {
	port := c.SlurmctldPort.First
	if port == 0 {
		port = 6817
	}
	var ctls []string
	for _, h := range c.SlurmctldHost {
		addr := h.Addr
		if addr == "" {
			addr = h.Host
		}
		ctls = append(ctls, net.JoinHostPort(addr, strconv.Itoa(int(port))))
	}
	var a auth.Authenticator
	switch c.AuthType {
	case "", "auth/munge":
		m := &auth.Munge{Client: &munge.Client{}}
		if sock, ok := c.AuthInfo.Get("socket"); ok {
			m.Client.Socket = sock
		}
		a = m
	case "auth/slurm":
		opts, err := slurmauth.ParseAuthInfo(c.AuthInfo)
		if err != nil {
			return nil, err
		}
		getenv := func(k string) string { v, _ := s.env.Get(k); return v }
		paths := slurmauth.SackSocketPaths(c.ClusterName, getenv)
		if opts.SackSocket != "" {
			paths = []string{opts.SackSocket}
		}
		a = &slurmauth.Slurm{Sack: &slurmauth.SackClient{Paths: paths}, Cluster: c.ClusterName, TTL: opts.TTL}
	default:
		return nil, fmt.Errorf("AuthType %s is not supported", c.AuthType)
	}
	// The controller signs its replies with the cluster's auth: a
	// codec refusing auth/slurm sections could not read them.
	cd := &codec.Codec{Bodies: msg.Registry(), AcceptAuthSlurm: c.AuthType == "auth/slurm"}
	return &client.Client{Controllers: ctls, Auth: a, Codec: cd,
		MessageTimeout: time.Duration(c.MessageTimeout) * time.Second,
		// Failover as Slurm's commands do it: TCPTimeout per dead
		// controller host, SlurmctldTimeout while a backup is in standby.
		ConnectTimeout:   time.Duration(c.TCPTimeout) * time.Second,
		SlurmctldTimeout: time.Duration(c.SlurmctldTimeout) * time.Second}, nil
}

func encode(mt msgtype.Type, body any) ([]byte, error) {
	bc, ok := msg.Registry().Lookup(mt)
	if !ok {
		return nil, fmt.Errorf("no codec for %v", mt)
	}
	var w pack.Writer
	if err := bc.Encode(&w, codec.Version2205, body); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

func decode(f *codec.Frame) (any, error) {
	bc, ok := msg.Registry().Lookup(f.Header.MsgType)
	if !ok {
		return nil, fmt.Errorf("no codec for %v", f.Header.MsgType)
	}
	r := pack.NewReader(f.Body)
	v, err := bc.Decode(r, f.Header.Version)
	if err == nil {
		err = r.Done()
	}
	return v, err
}

// call sends one request and returns the decoded reply, or the Slurm
// error a RESPONSE_SLURM_RC carries. A RESPONSE_SLURM_RC_MSG is treated as
// Slurm's unpacker does: its text is logged as errors, line by line, and
// its code returned.
func (s *sbatch) call(ctx context.Context, cl *client.Client, mt msgtype.Type, body any, want msgtype.Type) (any, error) {
	b, err := encode(mt, body)
	if err != nil {
		return nil, err
	}
	r, err := cl.Call(ctx, mt, b)
	if err != nil {
		return nil, err
	}
	switch r.Frame.Header.MsgType {
	case want:
		return decode(&r.Frame)
	case msgtype.RESPONSE_SLURM_RC:
		if err := client.ReturnCode(&r.Frame); err != nil {
			return nil, err
		}
		return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
	case msgtype.RESPONSE_SLURM_RC_MSG:
		rd := pack.NewReader(r.Frame.Body)
		rc := rd.U32()
		text := rd.Str()
		if err := rd.Done(); err != nil {
			return nil, slurmerr.Error{Code: slurmerr.SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR}
		}
		if text != "" {
			for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				s.log.Errorf("%s", line)
			}
		}
		if rc == 0 {
			return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
		}
		return nil, slurmerr.FromRC(rc)
	}
	return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
}

// strerror is what %m prints for a failed call.
func strerror(err error) string {
	if code := slurmerr.Code(err); code != 0 {
		return slurmerr.Message(code)
	}
	return err.Error()
}

func (s *sbatch) submit(o *jobopt.Opts, descs []*msg.JobDesc, quiet bool) (int, error) {
	desc := descs[0]
	c := s.conf
	cl, err := s.newClient(c)
	if err != nil {
		s.log.Errorf("%v", err)
		return s.errorExit, nil
	}
	ctx := context.Background()

	for _, d := range descs {
		if err := s.validateGres(c, d); err != nil {
			s.log.Errorf("%s", strerror(err))
			return s.errorExit, nil
		}
		d.SetDefaultBits()
	}
	if o.Clusters != "" {
		// Choosing among clusters needs slurmdbd, which we do not talk
		// to: this is what Slurm prints when it cannot reach one.
		s.log.Errorf("Problem talking to database")
		s.log.Errorf("'%s' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list clusters' to see available clusters.", o.Clusters)
		return s.errorExit, nil
	}
	if o.TestOnly && len(descs) > 1 {
		s.log.Errorf("--test-only of heterogeneous jobs is not supported by goslurm's sbatch yet")
		return s.errorExit, nil
	}
	if o.TestOnly {
		// slurm_job_will_run first asks whether the cluster is federated.
		s.fedInfo(ctx, cl)
		v, err := s.call(ctx, cl, msgtype.REQUEST_JOB_WILL_RUN, *desc, msgtype.RESPONSE_JOB_WILL_RUN)
		if err != nil {
			fmt.Fprintf(s.io.stderr, "allocation failure: %s\n", strerror(err))
			return 1, nil
		}
		wr := v.(msg.WillRunResponse)
		s.log.Infof("Job %d to start at %s using %d processors on nodes %s in partition %s",
			wr.JobID, time.Unix(wr.StartTime, 0).Format("2006-01-02T15:04:05"),
			wr.ProcCnt, wr.NodeList.Value, wr.PartName.Value)
		return 0, nil
	}

	// slurm_submit_batch_job (not slurm_job_will_run) fills the session.
	for _, d := range descs {
		if d.AllocSID == pack.NoVal {
			if sid, err := unix.Getsid(0); err == nil {
				d.AllocSID = uint32(sid)
			}
		}
	}
	mt, body := msgtype.REQUEST_SUBMIT_BATCH_JOB, any(*desc)
	if len(descs) > 1 {
		list := msg.JobDescList{}
		for _, d := range descs {
			list.Jobs = append(list.Jobs, *d)
		}
		mt, body = msgtype.REQUEST_SUBMIT_BATCH_HET_JOB, list
	}
	var resp msg.SubmitResponse
	for retries := 0; ; {
		v, err := s.call(ctx, cl, mt, body, msgtype.RESPONSE_SUBMIT_BATCH_JOB)
		if err == nil {
			resp = v.(msg.SubmitResponse)
			break
		}
		var note string
		switch slurmerr.Code(err) {
		case slurmerr.ESLURM_ERROR_ON_DESC_TO_RECORD_COPY:
			note = "Slurm job queue full, sleeping and retrying"
		case slurmerr.ESLURM_NODES_BUSY:
			note = "Job creation temporarily disabled, retrying"
		case int(unix.EAGAIN):
			note = "Slurm temporarily unable to accept job, sleeping and retrying"
		}
		if note == "" || retries >= submitRetries {
			s.log.Errorf("Batch job submission failed: %s", strerror(err))
			return s.errorExit, nil
		}
		switch {
		case retries > 0:
			s.log.Debugf("%s", note)
		case slurmerr.Code(err) == slurmerr.ESLURM_NODES_BUSY:
			s.log.Infof("%s", note)
		default:
			s.log.Errorf("%s", note)
		}
		retries++
		s.io.sleep(time.Duration(retries) * time.Second)
	}
	if resp.JobSubmitUserMsg.Valid && resp.JobSubmitUserMsg.Value != "" {
		s.log.Infof("%s", resp.JobSubmitUserMsg.Value)
	}
	if !quiet {
		if o.Parsable {
			fmt.Fprintf(s.io.stdout, "%d\n", resp.JobID)
		} else {
			fmt.Fprintf(s.io.stdout, "Submitted batch job %d\n", resp.JobID)
		}
	}
	if o.Wait {
		return s.wait(ctx, cl, resp.JobID, time.Duration(c.MinJobAge)*time.Second), nil
	}
	return 0, nil
}

// validateGres is the part of gres_job_state_validate a client can do with
// slurm.conf alone: every GRES named in the request must be in GresTypes
// (gpu always is when --gpus* is used).
func (s *sbatch) validateGres(c *conf.Config, d *msg.JobDesc) error {
	bad := slurmerr.Error{Code: slurmerr.ESLURM_INVALID_GRES}
	gpu := false
	for _, f := range []msg.NullString{d.TresPerJob, d.TresPerNode, d.TresPerSocket, d.TresPerTask, d.CPUsPerTres, d.MemPerTres} {
		if !f.Valid {
			continue
		}
		for _, tok := range strings.Split(f.Value, ",") {
			name := strings.TrimPrefix(tok, "gres:")
			name, _, _ = strings.Cut(name, ":")
			name, _, _ = strings.Cut(name, "(")
			if !slices.Contains([]string(c.GresTypes), name) {
				return bad
			}
			gpu = gpu || name == "gpu"
		}
	}
	if d.NtasksPerTres != pack.NoVal16 && d.NtasksPerTres != 0 && !gpu {
		if d.NumTasks != 0 && d.NumTasks != pack.NoVal {
			// Slurm would ask for ntasks/ntasks_per_tres GPUs, which
			// GresTypes must then list.
			if !slices.Contains([]string(c.GresTypes), "gpu") {
				return bad
			}
			return nil
		}
		s.log.Errorf("gres_job_state_validate: --ntasks-per-tres needs either a GRES GPU specification or a node/ntask specification")
		return bad
	}
	return nil
}

// fedInfo sends REQUEST_FED_INFO as the Slurm API does before some calls;
// goslurm supports no federation, so the answer is not used.
func (s *sbatch) fedInfo(ctx context.Context, cl *client.Client) {
	_, _ = cl.Call(ctx, msgtype.REQUEST_FED_INFO, nil)
}

// Job state values (slurm.h) --wait needs.
const (
	jobStateBase = 0x000000ff
	jobSuspended = 2
)

// wait polls the job until it and all its array tasks have finished and
// returns the highest exit status (1 for a job killed by a signal), as
// sbatch's _job_wait.
func (s *sbatch) wait(ctx context.Context, cl *client.Client, id uint32, minJobAge time.Duration) int {
	sleep := 2 * time.Second
	ec := 0
	for {
		s.io.sleep(sleep)
		if sleep < minJobAge/2 && sleep < maxWaitSleep {
			sleep *= 4
		}
		// slurm_load_job without SHOW_LOCAL first asks whether the
		// cluster is federated (it is not: the reply is ignored).
		s.fedInfo(ctx, cl)
		v, err := s.call(ctx, cl, msgtype.REQUEST_JOB_INFO_SINGLE,
			msg.JobIDShowRequest{JobID: id, ShowFlags: msg.ShowAll | msg.ShowLocal}, msgtype.RESPONSE_JOB_INFO)
		if err != nil {
			if errors.Is(err, slurmerr.Error{Code: slurmerr.ESLURM_INVALID_JOB_ID}) {
				s.log.Errorf("Job %d no longer found and exit code not found", id)
				return ec
			}
			s.log.Errorf("Currently unable to load job state information, retrying: %s", strerror(err))
			continue
		}
		complete := true
		for _, j := range v.(msg.JobInfoMsg).Jobs {
			if j.JobState&jobStateBase <= jobSuspended {
				complete = false
				break
			}
			st := unix.WaitStatus(j.ExitCode)
			code := 1
			if st.Exited() {
				code = st.ExitStatus()
			}
			ec = max(ec, code)
		}
		if complete {
			return ec
		}
	}
}
