package ctld

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/protocol/client"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
	"github.com/goslurm/goslurm/slurmctld/jobs"
)

// Backup controllers, as 22.05 runs them (backup.c, controller.c): the
// controller whose host is SlurmctldHost[i], i > 0, starts in standby. It
// answers pings, REQUEST_CONTROL_STATUS, SlurmUser's REQUEST_SHUTDOWN,
// REQUEST_TAKEOVER and REQUEST_CONTROL, and refuses everything else with
// ESLURM_IN_STANDBY_MODE, so the commands move on to another controller.
// It asks the controllers before it for their status every
// SlurmctldTimeout/3 and takes over when none answered for
// SlurmctldTimeout, or at once after REQUEST_TAKEOVER once they stop
// answering; a heartbeat file a controller before it wrote in
// StateSaveLocation since counts as an answer (heartbeat.go). The
// controller in control runs SlurmctldPrimaryOnProg and writes that file;
// SlurmctldPrimaryOffProg runs when the primary stops and when a backup
// enters standby (backup_primaryprog.go). A controller coming back sends REQUEST_CONTROL to the
// backups; one in control saves its state and returns to standby before
// it answers.
//
// goslurm adds one guard: StateSaveLocation's lock (held by the controller
// whose store is open) must be free before a backup takes over, so a
// primary that is alive but unreachable cannot have its state written by
// two controllers.

// ControlTimeout is CONTROL_TIMEOUT: how long a REQUEST_CONTROL may take
// (the controller in control saves its state before answering).
const ControlTimeout = 30 * time.Second

// shutdownCtld is SLURMCTLD_SHUTDOWN_CTLD, the REQUEST_SHUTDOWN option
// that stops slurmctld alone.
const shutdownCtld = 2

// takeoverWait is SHUTDOWN_WAIT: after REQUEST_TAKEOVER asked the
// controllers before it to stop, the backup gives them this long.
const takeoverWait = 2 * time.Second

// ControlStatus is RESPONSE_CONTROL_STATUS: the answering controller's
// SlurmctldHost index and when it took control (0 in standby).
type ControlStatus struct {
	BackupInx   uint16
	ControlTime int64
}

// RegisterBackupBodies adds the bodies of the backup protocol that
// protocol/msg does not have: REQUEST_CONTROL (empty) and
// RESPONSE_CONTROL_STATUS (u16 backup_inx, time control_time). It also
// installs the packed REQUEST_JOB_INFO reply New needs: a daemon calls
// it before serving, so a backup taking over (New while the standby
// server reads the registry) does not write to it.
func RegisterBackupBodies(g *codec.Registry) {
	if !jobs.AcceptsPackedJobInfo(g) {
		// An error (no RESPONSE_JOB_INFO codec) is New's to report.
		_ = jobs.RegisterPackedJobInfo(g)
	}
	g.Register(msgtype.REQUEST_CONTROL, codec.BodyCodec{
		Decode: func(*pack.Reader, codec.Version) (any, error) { return codec.Empty{}, nil },
		Encode: func(*pack.Writer, codec.Version, any) error { return nil },
	})
	g.Register(msgtype.RESPONSE_CONTROL_STATUS, codec.BodyCodec{
		Decode: func(r *pack.Reader, _ codec.Version) (any, error) {
			s := ControlStatus{BackupInx: r.U16(), ControlTime: int64(r.U64())}
			return s, r.Err()
		},
		Encode: func(w *pack.Writer, _ codec.Version, body any) error {
			s, ok := body.(ControlStatus)
			if !ok {
				return fmt.Errorf("RESPONSE_CONTROL_STATUS body is %T", body)
			}
			w.U16(s.BackupInx)
			w.U64(uint64(s.ControlTime))
			return nil
		},
	})
}

// ParseControlStatus decodes a RESPONSE_CONTROL_STATUS body.
func ParseControlStatus(body []byte) (ControlStatus, error) {
	r := pack.NewReader(body)
	s := ControlStatus{BackupInx: r.U16(), ControlTime: int64(r.U64())}
	return s, r.Done()
}

// Peers is how a controller reaches the other controllers.
type Peers struct {
	// Index is this controller's place in SlurmctldHost (0 = primary).
	Index int
	// Names are the SlurmctldHost names, for messages.
	Names []string
	// Client holds every controller's address, in SlurmctldHost order.
	Client *client.Client
	// SlurmUID restricts the REQUEST_CONTROL and REQUEST_SHUTDOWN
	// credentials, as Slurm does.
	SlurmUID uint32
	Log      *slog.Logger
}

func (p *Peers) name(i int) string {
	if i < len(p.Names) {
		return p.Names[i]
	}
	return fmt.Sprint(i)
}

// status asks controller i for its status (_ping_ctld_thread).
func (p *Peers) status(ctx context.Context, i int) (ControlStatus, bool) {
	r, err := p.Client.CallTo(ctx, i, msgtype.REQUEST_CONTROL_STATUS, nil, auth.UIDAny)
	if err != nil {
		return ControlStatus{}, false
	}
	if r.Frame.Header.MsgType != msgtype.RESPONSE_CONTROL_STATUS {
		p.Log.Error(fmt.Sprintf("_ping_ctld_thread:, Unknown response message %d from host %s",
			uint16(r.Frame.Header.MsgType), p.name(i)))
		return ControlStatus{}, false
	}
	s, err := ParseControlStatus(r.Frame.Body)
	if err != nil {
		p.Log.Error(fmt.Sprintf("_ping_ctld_thread: RESPONSE_CONTROL_STATUS from host %s: %v", p.name(i), err))
		return ControlStatus{}, false
	}
	if int(s.BackupInx) != i {
		p.Log.Error(fmt.Sprintf("_ping_ctld_thread: BackupController# index mismatch (%d != %d) from host %s",
			i, s.BackupInx, p.name(i)))
	}
	return s, true
}

// PingHigher is ping_controllers(false): whether any controller before
// this one in SlurmctldHost answers REQUEST_CONTROL_STATUS.
func (p *Peers) PingHigher(ctx context.Context) bool {
	var wg sync.WaitGroup
	ok := make([]bool, p.Index)
	for i := 0; i < p.Index; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok[i] = p.status(ctx, i)
		}()
	}
	wg.Wait()
	for _, b := range ok {
		if b {
			return true
		}
	}
	return false
}

// Silent is ping_controllers(true) from the controller in control: the
// indexes of the other controllers that do not answer
// REQUEST_CONTROL_STATUS.
func (p *Peers) Silent(ctx context.Context) []int {
	n := len(p.Client.Controllers)
	ok := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		if i == p.Index {
			ok[i] = true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok[i] = p.status(ctx, i)
		}()
	}
	wg.Wait()
	var out []int
	for i, b := range ok {
		if !b {
			out = append(out, i)
		}
	}
	return out
}

// Relinquish asks the other controllers to give up control, in parallel,
// each within timeout: those before this one get REQUEST_SHUTDOWN
// (slurmctld only), those after it REQUEST_CONTROL (they save their state
// and return to standby). fromPrimary is _shutdown_backup_controller,
// which leaves the controllers before this one alone and skips index 0;
// otherwise (_shutdown_primary_controller, for REQUEST_TAKEOVER) every
// other controller is asked. It returns the first failure.
func (p *Peers) Relinquish(ctx context.Context, timeout time.Duration, fromPrimary bool) error {
	n := len(p.Client.Controllers)
	if n < 2 {
		return nil
	}
	first := 0
	if fromPrimary {
		first = 1
		p.Log.Debug(fmt.Sprintf("shutting down backup controllers (my index: %d)", p.Index))
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for i := first; i < n; i++ {
		if i == p.Index {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.relinquishOne(ctx, i, i < p.Index, timeout); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

func (p *Peers) relinquishOne(ctx context.Context, i int, shutdown bool, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	mt, body := msgtype.REQUEST_CONTROL, []byte(nil)
	if shutdown {
		var w pack.Writer
		w.U16(shutdownCtld)
		mt, body = msgtype.REQUEST_SHUTDOWN, w.Bytes()
	} else {
		p.Log.Debug("Requesting control from backup controller " + p.name(i))
	}
	r, err := p.Client.CallTo(ctx, i, mt, body, p.SlurmUID)
	if err == nil {
		err = client.ReturnCode(&r.Frame)
	}
	switch {
	case err == nil:
		p.Log.Debug(fmt.Sprintf("controller %s has relinquished control", p.name(i)))
		return nil
	case slurmerr.Code(err) == slurmerr.ESLURM_DISABLED:
		p.Log.Debug(fmt.Sprintf("controller %s responding", p.name(i)))
		return nil
	}
	p.Log.Error(fmt.Sprintf("%v to %s: %v", mt, p.name(i), err))
	return fmt.Errorf("%v to %s: %w", mt, p.name(i), err)
}
