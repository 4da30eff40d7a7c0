package stepd

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// Config is what a supervisor needs to know about its node. slurmd fills it
// from slurm.conf and hands it to every supervisor it starts (over the init
// pipe, never in argv).
type Config struct {
	NodeName       string // NodeName this slurmd serves
	Hostname       string // host name for %N; "" means NodeName
	SpoolDir       string // SlurmdSpoolDir with %n/%h expanded
	ClusterName    string
	ConfPath       string   // slurm.conf in use (SLURM_CONF of the job)
	Controllers    []string // "host:port" in SlurmctldHost order
	SelectPluginID uint32   // for SLURM_WORKING_CLUSTER: 109 cons_tres
	SlurmUserUID   uint32
	NodeCPUs       int // CPUs of this node, to turn a step's cores into CPUs

	// SlurmctldTimeout bounds the retries while a backup controller in
	// standby takes over; TCPTimeout bounds each connect (slurm.conf).
	SlurmctldTimeout, TCPTimeout time.Duration

	// Prolog and Epilog are run as root with a clean environment when
	// RunProlog / RunEpilog are set (see the package comment on who runs
	// them).
	Prolog, Epilog       string
	RunProlog, RunEpilog bool
	PrologEpilogTimeout  time.Duration // 0: none

	// ProctrackType=proctrack/cgroup tracks and confines steps with
	// cgroups (CgroupConf: cgroup.conf path; RealMemoryMB, NodeCPUs and
	// ThreadsPerCore feed task/cgroup's limits; MultipleSlurmd selects
	// Slurm's per-node cgroup names). Anything else: process groups.
	ProctrackType  string
	CgroupConf     string
	RealMemoryMB   uint64
	ThreadsPerCore int
	MultipleSlurmd bool

	KillWait      time.Duration // between SIGTERM and SIGKILL; 0 means 30 s
	JobFileAppend bool          // JobFileAppend=1: default --open-mode append

	// AuthType is auth/munge (MungeSocket, "" = munged's default) or
	// auth/slurm (AuthKeyFile).
	AuthType    string
	MungeSocket string
	AuthKeyFile string

	// CompleteRetries and CompleteRetryDelay bound the completion report:
	// Slurm's 240 tries 15 s apart when zero.
	CompleteRetries    int
	CompleteRetryDelay time.Duration

	// LogFile is where the supervisor logs ("" discards).
	LogFile string
}

func (c *Config) killWait() time.Duration {
	if c.KillWait <= 0 {
		return 30 * time.Second
	}
	return c.KillWait
}

func (c *Config) hostname() string {
	if c.Hostname != "" {
		return c.Hostname
	}
	return c.NodeName
}

// ctldHostPort splits the primary controller's address for
// SLURM_WORKING_CLUSTER.
func (c *Config) ctldHostPort() (string, int) {
	if len(c.Controllers) == 0 {
		return "", 0
	}
	h, p, ok := strings.Cut(c.Controllers[0], ":")
	if !ok {
		return h, 0
	}
	var port int
	fmt.Sscan(p, &port)
	return h, port
}

// initMagic starts the init message so a slurmstepd started by hand (or by
// something else) fails clearly instead of misreading its stdin.
const initMagic = "goslurm-stepd-init-1\n"

// maxInit bounds each part of the init message.
const maxInit = 64 << 20

// writeInit sends a supervisor its configuration and launch request:
// magic, u32 length + JSON config, u16 message type, u16 protocol version,
// u32 length + the request body packed exactly as the wire carries it.
func writeInit(w io.Writer, cfg *Config, mt msgtype.Type, body any) error {
	cj, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	bc, ok := msg.Registry().Lookup(mt)
	if !ok {
		return fmt.Errorf("stepd: no codec for %v", mt)
	}
	var bw pack.Writer
	if err := bc.Encode(&bw, codec.Current, body); err != nil {
		return fmt.Errorf("stepd: encode %v: %w", mt, err)
	}
	var hdr []byte
	hdr = append(hdr, initMagic...)
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(len(cj)))
	hdr = append(hdr, cj...)
	hdr = binary.BigEndian.AppendUint16(hdr, uint16(mt))
	hdr = binary.BigEndian.AppendUint16(hdr, uint16(codec.Current))
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(len(bw.Bytes())))
	hdr = append(hdr, bw.Bytes()...)
	_, err = w.Write(hdr)
	return err
}

// readInit is writeInit's mirror.
func readInit(r io.Reader) (*Config, msgtype.Type, any, error) {
	br := bufio.NewReader(r)
	magic := make([]byte, len(initMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != initMagic {
		return nil, 0, nil, errors.New("stepd: no init message on stdin (slurmstepd is started by slurmd)")
	}
	cj, err := readChunk(br)
	if err != nil {
		return nil, 0, nil, err
	}
	var cfg Config
	if err := json.Unmarshal(cj, &cfg); err != nil {
		return nil, 0, nil, fmt.Errorf("stepd: init config: %w", err)
	}
	var tv [4]byte
	if _, err := io.ReadFull(br, tv[:]); err != nil {
		return nil, 0, nil, fmt.Errorf("stepd: init: %w", err)
	}
	mt := msgtype.Type(binary.BigEndian.Uint16(tv[:2]))
	ver := codec.Version(binary.BigEndian.Uint16(tv[2:]))
	body, err := readChunk(br)
	if err != nil {
		return nil, 0, nil, err
	}
	bc, ok := msg.Registry().Lookup(mt)
	if !ok {
		return nil, 0, nil, fmt.Errorf("stepd: no codec for %v", mt)
	}
	pr := pack.NewReader(body)
	v, err := bc.Decode(pr, ver)
	if err == nil {
		err = pr.Done()
	}
	if err != nil {
		return nil, 0, nil, fmt.Errorf("stepd: decode %v: %w", mt, err)
	}
	return &cfg, mt, v, nil
}

func readChunk(r io.Reader) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, fmt.Errorf("stepd: init: %w", err)
	}
	n := binary.BigEndian.Uint32(lb[:])
	if n > maxInit {
		return nil, fmt.Errorf("stepd: init chunk of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("stepd: init: %w", err)
	}
	return b, nil
}
