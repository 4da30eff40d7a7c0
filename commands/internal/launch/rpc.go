// Package launch is what srun and salloc share with Slurm 22.05's
// allocation and step-launch API (src/api/allocate.c, step_ctx.c,
// step_launch.c, step_io.c): getting an allocation from slurmctld and
// waiting for it, creating a job step, launching its tasks on every node
// through the forwarding tree, the listeners slurmstepd and slurmctld talk
// back to (task launch and exit reports, the stdio stream, SRUN_*
// messages), signal forwarding and the exit status srun reports.
package launch

import (
	"context"
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Ctl is a command's link to slurmctld plus its logger.
type Ctl struct {
	Conn *slurmcli.Conn
	Log  *jobopt.Log
}

func encode(mt msgtype.Type, body any) ([]byte, error) {
	bc, ok := msg.Registry().Lookup(mt)
	if !ok {
		return nil, fmt.Errorf("no codec for %v", mt)
	}
	var w pack.Writer
	if err := bc.Encode(&w, codec.Version2205, body); err != nil {
		return nil, fmt.Errorf("encoding %v: %w", mt, err)
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
	if err != nil {
		return nil, fmt.Errorf("decoding %v: %w", f.Header.MsgType, err)
	}
	return v, nil
}

// Call sends one request to slurmctld and returns the decoded reply of
// type want, or the Slurm error a return-code reply carries (the text of a
// RESPONSE_SLURM_RC_MSG is logged as errors, as Slurm's unpacker does).
func (c *Ctl) Call(ctx context.Context, mt msgtype.Type, body any, want msgtype.Type) (any, error) {
	b, err := encode(mt, body)
	if err != nil {
		return nil, err
	}
	r, err := c.Conn.Client.Call(ctx, mt, b)
	if err != nil {
		return nil, err
	}
	switch r.Frame.Header.MsgType {
	case want:
		return decode(&r.Frame)
	case msgtype.RESPONSE_SLURM_RC:
		v, err := decode(&r.Frame)
		if err != nil {
			return nil, err
		}
		if err := v.(codec.ReturnCode).Err(); err != nil {
			return nil, err
		}
		if want == msgtype.RESPONSE_SLURM_RC {
			return v, nil
		}
	case msgtype.RESPONSE_SLURM_RC_MSG:
		v, err := decode(&r.Frame)
		if err != nil {
			return nil, err
		}
		m := v.(codec.ReturnCodeMsg)
		if m.Msg != "" {
			for _, line := range strings.Split(strings.TrimSuffix(m.Msg, "\n"), "\n") {
				c.Log.Errorf("%s", line)
			}
		}
		if m.RC != 0 {
			return nil, slurmerr.FromRC(m.RC)
		}
	}
	return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
}

// CallRC sends a request answered by RESPONSE_SLURM_RC.
func (c *Ctl) CallRC(ctx context.Context, mt msgtype.Type, body any) error {
	_, err := c.Call(ctx, mt, body, msgtype.RESPONSE_SLURM_RC)
	return err
}

// Strerror is what Slurm's %m / slurm_strerror prints for err.
func Strerror(err error) string {
	if code := slurmerr.Code(err); code != 0 {
		return slurmerr.Message(code)
	}
	return err.Error()
}
