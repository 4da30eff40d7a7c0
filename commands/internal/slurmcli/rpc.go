package slurmcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Encode packs body as the 22.05 body of mt with protocol/msg's codecs.
func (c *Conn) Encode(mt msgtype.Type, body any) ([]byte, error) {
	bc, ok := c.registry().Lookup(mt)
	if !ok {
		return nil, fmt.Errorf("%v: no codec", mt)
	}
	var w pack.Writer
	if err := bc.Encode(&w, codec.Version2205, body); err != nil {
		return nil, fmt.Errorf("%v: encode: %w", mt, err)
	}
	return w.Bytes(), nil
}

func (c *Conn) registry() *codec.Registry {
	if c.reg == nil {
		c.reg = msg.Registry()
	}
	return c.reg
}

// RPC sends body as mt to slurmctld and decodes a reply of type want.
// A RESPONSE_SLURM_RC reply gives (nil, its error), so (nil, nil) for a
// zero code; a RESPONSE_SLURM_RC_MSG reply is handled by RCMsg; any other
// type is SLURM_UNEXPECTED_MSG_ERROR.
func (c *Conn) RPC(ctx context.Context, mt msgtype.Type, body any, want msgtype.Type) (any, error) {
	b, err := c.Encode(mt, body)
	if err != nil {
		return nil, err
	}
	c.LogAuth()
	r, err := c.Client.Call(ctx, mt, b)
	if err != nil {
		return nil, err
	}
	f := r.Frame
	switch f.Header.MsgType {
	case want:
	case msgtype.RESPONSE_SLURM_RC_MSG:
		return nil, c.RCMsg(&f)
	case msgtype.RESPONSE_SLURM_RC:
		return nil, client.ReturnCode(&f)
	default:
		return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
	}
	return c.DecodeReply(&f)
}

// RPCRC sends a request answered by a return code; nil for success.
func (c *Conn) RPCRC(ctx context.Context, mt msgtype.Type, body any) error {
	_, err := c.RPC(ctx, mt, body, msgtype.RESPONSE_SLURM_RC)
	return err
}

// DecodeReply decodes the body of f with its type's codec; the body must
// be used up.
func (c *Conn) DecodeReply(f *codec.Frame) (any, error) {
	mt := f.Header.MsgType
	if mt == msgtype.RESPONSE_SLURM_RC {
		return nil, client.ReturnCode(f)
	}
	dc, ok := c.registry().Lookup(mt)
	if !ok {
		return nil, fmt.Errorf("%v: no codec", mt)
	}
	// A command decodes a reply once and exits or drops it: its strings
	// may share one copy of the body.
	rd := pack.NewSharedReader(f.Body)
	v, err := dc.Decode(rd, f.Header.Version)
	if err == nil {
		err = rd.Done()
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w: %w", mt, client.ErrReceive, err)
	}
	return v, nil
}

// RCMsg handles a RESPONSE_SLURM_RC_MSG reply: Slurm's unpacker logs its
// text as errors, one "prog: error: LINE" per line, and the code becomes
// the result.
func (c *Conn) RCMsg(f *codec.Frame) error {
	dc, ok := codec.DefaultRegistry().Lookup(msgtype.RESPONSE_SLURM_RC_MSG)
	if !ok {
		return slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
	}
	v, err := dc.Decode(pack.NewReader(f.Body), f.Header.Version)
	if err != nil {
		return fmt.Errorf("%v: %w: %w", msgtype.RESPONSE_SLURM_RC_MSG, client.ErrReceive, err)
	}
	m := v.(codec.ReturnCodeMsg)
	if !m.MsgNull {
		w := c.logWriter()
		for _, line := range strings.Split(m.Msg, "\n") {
			if line != "" {
				fmt.Fprintf(w, "%s: error: %s\n", c.Prog, line)
			}
		}
	}
	return slurmerr.FromRC(m.RC)
}

// logWriter is Log after Flush (commands buffer their stdout, and Slurm's
// log lines come after what was printed before them); stderr if unset.
func (c *Conn) logWriter() io.Writer {
	if c.Flush != nil {
		c.Flush()
	}
	if c.Log == nil {
		return os.Stderr
	}
	return c.Log
}

// LogAuth logs the auth plugin's start-up lines, which Slurm prints once,
// at the first RPC, from -vv on. Commands that send RPCs through
// Client.Call directly call it first.
func (c *Conn) LogAuth() {
	if c.authLogged {
		return
	}
	c.authLogged = true
	if c.Verbose < 2 {
		return
	}
	w := c.logWriter()
	fmt.Fprintf(w, "%s: debug:  auth/munge: init: Munge authentication plugin loaded\n", c.Prog)
	fmt.Fprintf(w, "%s: debug:  hash/k12: init: init: KangarooTwelve hash plugin loaded\n", c.Prog)
}
