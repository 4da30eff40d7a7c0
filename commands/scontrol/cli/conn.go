package cli

import (
	"context"
	"fmt"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// ctl returns the connection to slurmctld, set up on first use from
// slurm.conf. A configuration that cannot be loaded ends scontrol, as
// slurm_conf_init's fatal does.
func (s *state) ctl() *slurmcli.Conn {
	if s.conn != nil {
		return s.conn
	}
	c, err := slurmcli.Dial(s.getenv)
	if err != nil {
		s.stdout.Flush()
		panic(exitError{s.fatalf("%v", err)})
	}
	if u, err := user.Lookup(c.Conf.SlurmUser); err == nil {
		if id, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			c.Client.SlurmUserUID = uint32(id)
		}
	} else if id, err := strconv.ParseUint(c.Conf.SlurmUser, 10, 32); err == nil {
		c.Client.SlurmUserUID = uint32(id)
	}
	c.Verbose = s.verbosity
	c.Log = s.io.Stderr
	c.Prog = "scontrol"
	s.conn = c
	v, ok := s.getenv("SLURM_TIME_FORMAT")
	s.tf = slurmcli.NewTimeFormatter(v, ok, s.errorf)
	return c
}

func (s *state) ctx() context.Context { return context.Background() }

// now is the clock used for run times and "EndTime=Unknown".
func (s *state) now() time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now()
}

func encode(mt msgtype.Type, body any) ([]byte, error) {
	bc, ok := msg.Registry().Lookup(mt)
	if !ok {
		return nil, fmt.Errorf("%v: no codec", mt)
	}
	var w pack.Writer
	if err := bc.Encode(&w, codec.Version2205, body); err != nil {
		return nil, fmt.Errorf("%v: encode: %w", mt, err)
	}
	return w.Bytes(), nil
}

// rpcRC sends a request answered by a return code; nil for success.
func (s *state) rpcRC(mt msgtype.Type, body any) error {
	b, err := encode(mt, body)
	if err != nil {
		return err
	}
	c := s.ctl()
	s.logAuth()
	r, err := c.Client.Call(s.ctx(), mt, b)
	if err != nil {
		return err
	}
	f := r.Frame
	if f.Header.MsgType == msgtype.RESPONSE_SLURM_RC_MSG {
		return s.rcMsg(&f)
	}
	return client.ReturnCode(&f)
}

// rcMsg handles RESPONSE_SLURM_RC_MSG as Slurm's unpacker does: the
// message is logged as errors, line by line, and the code is the result.
func (s *state) rcMsg(f *codec.Frame) error {
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
		s.stdout.Flush()
		for _, line := range strings.Split(m.Msg, "\n") {
			if line != "" {
				s.errorf("%s", line)
			}
		}
	}
	return slurmerr.FromRC(m.RC)
}

// logAuth prints, once and from -vv on, the auth plugin lines Slurm logs
// at its first RPC (slurmcli does the same for the loads it sends).
func (s *state) logAuth() {
	if s.authLogged {
		return
	}
	s.authLogged = true
	if s.verbosity >= 2 {
		s.stdout.Flush()
		s.eprintf("scontrol: debug:  auth/munge: init: Munge authentication plugin loaded\n")
		s.eprintf("scontrol: debug:  hash/k12: init: init: KangarooTwelve hash plugin loaded\n")
	}
}

// rpc sends a request and decodes the reply if it is of type want (a
// return code reply becomes its error). It returns the reply type too.
func (s *state) rpc(mt msgtype.Type, body any, want msgtype.Type) (any, error) {
	b, err := encode(mt, body)
	if err != nil {
		return nil, err
	}
	c := s.ctl()
	s.logAuth()
	r, err := c.Client.Call(s.ctx(), mt, b)
	if err != nil {
		return nil, err
	}
	f := r.Frame
	if f.Header.MsgType != want {
		if f.Header.MsgType == msgtype.RESPONSE_SLURM_RC_MSG {
			return nil, s.rcMsg(&f)
		}
		if f.Header.MsgType != msgtype.RESPONSE_SLURM_RC {
			return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
		}
		if err := client.ReturnCode(&f); err != nil {
			return nil, err
		}
		return nil, nil
	}
	dc, ok := msg.Registry().Lookup(want)
	if !ok {
		return nil, fmt.Errorf("%v: no codec", want)
	}
	rd := pack.NewReader(f.Body)
	v, err := dc.Decode(rd, f.Header.Version)
	if err == nil {
		err = rd.Done()
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w: %w", want, client.ErrReceive, err)
	}
	return v, nil
}

// perror is slurm_perror: "<msg>: <error text>" on stderr.
func (s *state) perror(prefix string, err error) {
	s.stdout.Flush()
	s.eprintf("%s: %s\n", prefix, strerror(err))
}

func strerror(err error) string {
	if _, ok := err.(noError); ok {
		return err.Error()
	}
	return slurmcli.Strerror(err)
}

func errCode(err error) int {
	if c := slurmerr.Code(err); c != 0 {
		return c
	}
	return slurmerr.SLURM_ERROR
}

// Users and groups as uid_to_string/gid_to_string name them.
func (s *state) userName(uid uint32) string {
	if uid == 0 {
		return "root"
	}
	if n, ok := s.users[uid]; ok {
		return n
	}
	n := "nobody"
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		n = u.Username
	}
	if s.users == nil {
		s.users = map[uint32]string{}
	}
	s.users[uid] = n
	return n
}

func (s *state) groupName(gid uint32) string {
	if gid == 0 {
		return "root"
	}
	if n, ok := s.groups[gid]; ok {
		return n
	}
	n := "nobody"
	if g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10)); err == nil {
		n = g.Name
	}
	if s.groups == nil {
		s.groups = map[uint32]string{}
	}
	s.groups[gid] = n
	return n
}

// cs prints a packed string as printf("%s") does: NULL is "(null)".
func cs(v msg.NullString) string {
	if !v.Valid {
		return "(null)"
	}
	return v.Value
}

// timeStr is slurm_make_time_str.
func (s *state) timeStr(t int64) string {
	if s.tf == nil {
		v, ok := s.getenv("SLURM_TIME_FORMAT")
		s.tf = slurmcli.NewTimeFormatter(v, ok, s.errorf)
	}
	return s.tf.Format(t, s.now())
}

// secs2time is secs2time_str.
func secs2time(t int64) string {
	if t == slurmcli.Infinite {
		return "UNLIMITED"
	}
	sec, min, hr, days := t%60, (t/60)%60, (t/3600)%24, t/86400
	switch {
	case days < 0 || hr < 0 || min < 0 || sec < 0:
		return "INVALID"
	case days != 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, hr, min, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", hr, min, sec)
}

// mins2time is mins2time_str.
func mins2time(m uint32) string {
	if m == slurmcli.Infinite {
		return "UNLIMITED"
	}
	return secs2time(int64(m) * 60)
}

func clientReturnCode(f *codec.Frame) error { return client.ReturnCode(f) }
