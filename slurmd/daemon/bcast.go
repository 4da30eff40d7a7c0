package daemon

import (
	"context"
	"strings"

	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/server"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmd/bcast"
)

// newBcast is the daemon's sbcast service: the same signature verifier
// as job credentials, and the job revocations of the credential state.
func (d *Daemon) newBcast() *bcast.Service {
	return &bcast.Service{
		Node: d.opts.Config.NodeName,
		Creds: &bcast.CredChecker{Sigs: d.opts.CredVerifier, Clock: d.clock, Started: d.clock(),
			Node: d.opts.Config.NodeName, Version: codec.Version(jobcred.Version2205)},
		Revoked: func(job uint32, ctime int64) bool {
			return d.creds.revoked(&jobcred.Credential{Body: jobcred.Body{
				StepID: jobcred.StepID{JobID: job}, CTime: ctime}})
		},
		Clock: d.clock,
		Log:   d.log,
	}
}

// rpcFileBcast is REQUEST_FILE_BCAST (sbcast, srun --bcast), from any
// user: the identity comes from the message's authentication and the
// credential.
func (d *Daemon) rpcFileBcast(ctx context.Context, r *server.Request) *server.Response {
	req, ok := r.Body.(msg.FileBcast)
	if !ok {
		return server.RC(slurmerr.ESLURM_PROTOCOL_INCOMPLETE_PACKET)
	}
	return server.RC(d.bcast.Handle(ctx, &req, bcast.Caller{UID: r.Identity.UID, GID: r.Identity.GID}))
}

// libdirFixup is _handle_libdir_fixup: when the step's executable came
// with srun --bcast --send-libs, its library directory goes first in the
// tasks' LD_LIBRARY_PATH.
func (d *Daemon) libdirFixup(req *msg.LaunchTasksRequest) {
	dir, ok := d.bcast.LibDir(req.UID, req.StepID.JobID, req.StepID.StepID)
	if !ok {
		return
	}
	for i, e := range req.Env {
		if v, found := strings.CutPrefix(e.Value, "LD_LIBRARY_PATH="); found {
			req.Env[i] = msg.Str("LD_LIBRARY_PATH=" + dir + ":" + v)
			return
		}
	}
	req.Env = append(req.Env, msg.Str("LD_LIBRARY_PATH="+dir))
}
