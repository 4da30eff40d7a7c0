package cli

import (
	"context"
	"fmt"
	"os/user"
	"strconv"
	"time"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
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
	c.Flush = func() { s.stdout.Flush() }
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

// encode packs body as mt with protocol/msg's codecs.
func (s *state) encode(mt msgtype.Type, body any) ([]byte, error) { return s.ctl().Encode(mt, body) }

// rpcRC sends a request answered by a return code; nil for success.
func (s *state) rpcRC(mt msgtype.Type, body any) error { return s.ctl().RPCRC(s.ctx(), mt, body) }

// rpc sends a request and decodes the reply if it is of type want (a
// return code reply becomes its error, nil for 0).
func (s *state) rpc(mt msgtype.Type, body any, want msgtype.Type) (any, error) {
	return s.ctl().RPC(s.ctx(), mt, body, want)
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
