package daemon

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/protocol/wire"
	"github.com/goslurm/goslurm/slurmd/hwinfo"
)

// maxRegDelay is _registration_engine's MAX_DELAY: retries back off 1, 2,
// 4 .. 128 s.
const maxRegDelay = 128 * time.Second

// NodeRegistration builds MESSAGE_NODE_REGISTRATION_STATUS as slurmd's
// _fill_registration_msg does. status is 0, or ESLURMD_PROLOG_FAILED /
// ESLURMD_SETUP_ENVIRONMENT_ERROR to have the node drained.
func (d *Daemon) NodeRegistration(status uint32) (*msg.NodeRegistration, error) {
	cfg := d.config()
	hw, err := d.opts.Hardware(cfg.TmpFS)
	if err != nil {
		return nil, fmt.Errorf("hardware detection: %w", err)
	}
	st := d.opts.Stats()
	now := d.clock()
	d.mu.Lock()
	if d.startTime.IsZero() {
		d.startTime = now
	}
	start := d.startTime
	d.mu.Unlock()

	arch, osName := archOS()
	r := &msg.NodeRegistration{
		Timestamp:       now.Unix(),
		SlurmdStartTime: start.Unix(),
		Status:          status,
		Hostname:        msg.Str(cfg.Hostname),
		NodeName:        msg.Str(cfg.NodeName),
		Arch:            msg.Str(arch),
		OS:              msg.Str(osName),
		RealMemory:      hw.RealMemory,
		TmpDisk:         hw.TmpDisk,
		UpTime:          st.UpTime,
		// Slurm's slurm.conf hash is not reproduced; NO_VAL skips the
		// controller's comparison instead of logging a mismatch.
		HashVal:  NoVal,
		CPULoad:  st.CPULoad,
		FreeMem:  st.FreeMem,
		Flags:    msg.SlurmdRegFlagResp,
		GresInfo: PackGresInfo(d.opts.Gres),
		Version:  msg.Str(SlurmVersion),
	}
	d.layout(r, hw, cfg)
	for _, s := range d.steps.Running() {
		r.Steps = append(r.Steps, s.ID)
	}
	return r, nil
}

// layout picks the CPU layout registration reports, as slurmd's
// _read_config does (hwinfo.ReportedLayout): the configured one, unless
// the hardware has fewer CPUs and config_overrides is off (then the real
// one, and the controller drains the node), or only the socket/core split
// differs under cons_res/cons_tres or gang scheduling.
func (d *Daemon) layout(r *msg.NodeRegistration, hw Hardware, cfg *Config) {
	hl := hwinfo.Layout{CPUs: int(hw.CPUs), Boards: int(hw.Boards), Sockets: int(hw.Sockets),
		CoresPerSocket: int(hw.Cores), ThreadsPerCore: int(hw.Threads)}
	out := hl
	if nl := cfg.Line; nl != nil && nl.CPUs != 0 {
		cl := hwinfo.LayoutFromConfig(int(nl.CPUs), int(nl.Boards), int(nl.Sockets), int(nl.CoresPerSocket), int(nl.ThreadsPerCore))
		var msgs []hwinfo.Message
		out, msgs = hwinfo.ReportedLayout(hl, cl, cfg.ConfigOverrides, crOrGang(cfg))
		for _, m := range msgs {
			switch m.Level {
			case "error":
				d.log.Error(m.Text)
			case "debug":
				d.log.Debug(m.Text)
			default:
				d.log.Info(m.Text)
			}
		}
	}
	r.CPUs, r.Boards, r.Sockets = u16(out.CPUs), u16(max(out.Boards, 1)), u16(out.Sockets)
	r.Cores, r.Threads = u16(out.CoresPerSocket), u16(out.ThreadsPerCore)
}

// crOrGang: a consumable-resource select plugin or gang scheduling.
func crOrGang(cfg *Config) bool {
	switch cfg.Conf.SelectType {
	case "select/cons_res", "select/cons_tres":
		return true
	}
	for _, m := range cfg.Conf.PreemptMode {
		if strings.EqualFold(m, "GANG") {
			return true
		}
	}
	return false
}

func u16(v int) uint16 {
	if v < 0 {
		return 0
	}
	if v > 0xffff {
		return 0xffff
	}
	return uint16(v)
}

// Register sends one registration and takes the controller's TRES list from
// its answer.
func (d *Daemon) Register(ctx context.Context) error {
	reg, err := d.NodeRegistration(0)
	if err != nil {
		return err
	}
	body, err := d.encode(msgtype.MESSAGE_NODE_REGISTRATION_STATUS, reg)
	if err != nil {
		return err
	}
	reply, err := d.controller().Call(ctx, msgtype.MESSAGE_NODE_REGISTRATION_STATUS, body)
	if err != nil {
		return err
	}
	switch reply.Frame.Header.MsgType {
	case msgtype.RESPONSE_NODE_REGISTRATION:
		b, err := d.decode(reply.Frame.Header.MsgType, reply.Frame.Header.Version, reply.Frame.Body)
		if err != nil {
			return fmt.Errorf("RESPONSE_NODE_REGISTRATION: %w", err)
		}
		resp, _ := b.(msg.NodeRegResponse)
		d.mu.Lock()
		d.tres = resp.Tres
		d.registered = true
		d.mu.Unlock()
	case msgtype.RESPONSE_SLURM_RC:
		// slurmctld answers 0 even to a registration it rejects (to
		// stop retry storms); any answer ends the retries.
		if err := codecRC(reply.Frame.Body); err != nil {
			d.log.Error(fmt.Sprintf("registration answered with %v", err))
		}
		d.mu.Lock()
		d.registered = true
		d.mu.Unlock()
	default:
		return fmt.Errorf("registration answered with %v", reply.Frame.Header.MsgType)
	}
	return nil
}

func codecRC(body []byte) error {
	r := pack.NewReader(body)
	rc := r.U32()
	if r.Err() != nil {
		return r.Err()
	}
	return slurmerr.FromRC(rc)
}

func (d *Daemon) kickRegistration() {
	select {
	case d.regKick <- struct{}{}:
	default:
	}
}

// registrationEngine is _registration_engine: after each kick, register
// until the controller answers, backing off 1, 2, 4 .. 128 s.
func (d *Daemon) registrationEngine() {
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-d.regKick:
		}
		delay := time.Second
		for {
			err := d.Register(d.ctx)
			if err == nil {
				d.log.Debug(fmt.Sprintf("registered with the controller as %s", d.config().NodeName))
				break
			}
			if d.ctx.Err() != nil {
				return
			}
			d.log.Debug(fmt.Sprintf("Unable to register with slurm controller (retry in %ds): %v", int(delay/time.Second), err))
			select {
			case <-d.ctx.Done():
				return
			case <-time.After(delay):
			}
			delay = min(delay*2, maxRegDelay)
		}
	}
}

func (d *Daemon) encode(t msgtype.Type, body any) ([]byte, error) {
	bc, ok := d.cd.Bodies.Lookup(t)
	if !ok {
		return nil, fmt.Errorf("no codec for %v", t)
	}
	w := pack.NewWriter(nil)
	if err := bc.Encode(w, codec.Current, body); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

func (d *Daemon) decode(t msgtype.Type, v codec.Version, body []byte) (any, error) {
	bc, ok := d.cd.Bodies.Lookup(t)
	if !ok {
		return nil, fmt.Errorf("no codec for %v", t)
	}
	r := pack.NewReader(body)
	b, err := bc.Decode(r, v)
	if err == nil {
		err = r.Done()
	}
	return b, err
}

// sendOnly sends a one-way message to the controller
// (slurm_send_only_controller_msg: MESSAGE_EPILOG_COMPLETE), trying the
// controllers in order.
func (d *Daemon) sendOnly(ctx context.Context, t msgtype.Type, body any) error {
	data, err := d.encode(t, body)
	if err != nil {
		return err
	}
	f := codec.NewFrame(t, codec.AuthBlob{}, data)
	if err := d.opts.Auth.Sign(ctx, &f, auth.UIDAny); err != nil {
		return err
	}
	cfg := d.config()
	var last error
	for _, addr := range cfg.Controllers {
		// A controller host that is down costs TCPTimeout, as
		// _slurm_connect, before the next one is tried.
		dl := net.Dialer{Timeout: cfg.TCPTimeout}
		conn, err := dl.DialContext(ctx, "tcp", addr)
		if err != nil {
			last = err
			continue
		}
		_ = conn.SetDeadline(time.Now().Add(cfg.MessageTimeout))
		err = wire.WriteFrame(conn, d.cd, &f)
		conn.Close()
		if err == nil {
			return nil
		}
		last = err
	}
	return fmt.Errorf("%v to the controller: %w", t, last)
}
