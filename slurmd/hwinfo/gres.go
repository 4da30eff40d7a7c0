package hwinfo

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/hostlist"
	"golang.org/x/sys/unix"
)

// ErrAutoDetect is returned for gres.conf AutoDetect= modes other than
// "off": goslurm does not query NVML, RSMI or oneAPI.
var ErrAutoDetect = errors.New("gres.conf AutoDetect is not supported by goslurm")

// ErrGres wraps the conditions that make slurmd exit while loading GRES.
var ErrGres = errors.New("fatal GRES configuration error")

// Device is one GRES device file, as slurmd's gres plugins (gres/gpu,
// gres/nic) record it for device confinement and the job environment.
type Device struct {
	Name string // GRES name
	// Index is the device's bit in the node's GRES bitmap (file order
	// across the records of Name; one bit per MultipleFiles record).
	Index int
	// DevNum is the number the file name ends with; files without one
	// get numbers after the highest.
	DevNum int
	Path   string
	Type   byte // 'c' (character) or 'b' (block)
	Major  uint32
	Minor  uint32
}

// String is Slurm's device description ("c 195:0 rwm"), as used in a
// cgroup v1 devices.allow line.
func (d Device) String() string {
	return fmt.Sprintf("%c %d:%d rwm", d.Type, d.Major, d.Minor)
}

// Message is a line slurmd logs while loading GRES.
type Message struct {
	Level string // "error" or "info"
	Text  string
}

// Gres is the node's GRES as slurmd loads it: the merged records
// (conf.ResolveNode) and the device files that exist.
type Gres struct {
	*conf.NodeGres
	Devices  []Device
	Messages []Message
}

// GresOptions are the hooks LoadGres uses.
type GresOptions struct {
	// Stat stats a path, following symlinks; nil is unix.Stat.
	Stat func(path string, st *unix.Stat_t) error
	// Sleep waits between slurmd's 20 looks for a missing device file,
	// one second apart; nil does not wait.
	Sleep func(time.Duration)
}

// NodeCPUs is the CPU layout slurmd checks gres.conf Cores= against:
// the larger of slurm.conf's CPUs and the hardware count, the
// socket/core/thread layout slurmd reports (reported, usually slurm.conf's)
// and the hardware block map.
func (t *Topology) NodeCPUs(reported Layout, confCPUs int) conf.NodeCPUs {
	cpus := confCPUs
	if t.CPUs > cpus {
		cpus = t.CPUs
	}
	return conf.NodeCPUs{CPUs: cpus, Sockets: reported.Sockets, CoresPerSocket: reported.CoresPerSocket,
		ThreadsPerCore: reported.ThreadsPerCore, MachineCPUs: t.CPUs, BlockMap: t.BlockMap}
}

// deviceGres are the GRES names whose plugin records device files.
var deviceGres = map[string]bool{"gpu": true, "nic": true}

// LoadGres loads node's GRES: it waits for every device file named by
// the node's gres.conf lines as slurmd does (a file still missing after
// 20 looks is fatal), merges gres.conf with slurm.conf (conf.ResolveNode),
// then stats the device files of the merged gpu and nic records; a file
// that is not a character or block device is logged and left out, as
// slurmd does. AutoDetect other than "off" gives ErrAutoDetect.
func LoadGres(c *conf.Config, g *conf.GresConfig, node string, cpus *conf.NodeCPUs, opts GresOptions) (*Gres, error) {
	stat := opts.Stat
	if stat == nil {
		stat = unix.Stat
	}
	out := &Gres{}
	logf := func(level, format string, args ...any) {
		out.Messages = append(out.Messages, Message{Level: level, Text: fmt.Sprintf(format, args...)})
	}
	if g != nil {
		recs, auto := g.ForNode(node)
		if auto != "" && !strings.EqualFold(auto, "off") {
			return nil, fmt.Errorf("%w (AutoDetect=%s)", ErrAutoDetect, auto)
		}
		for _, r := range recs {
			for _, f := range r.Files {
				if err := waitForFile(f, stat, opts.Sleep, logf); err != nil {
					return out, err
				}
			}
		}
	}
	ng, err := g.ResolveNode(c, node, cpus)
	if err != nil {
		return out, fmt.Errorf("%w: %w", ErrGres, err)
	}
	out.NodeGres = ng
	for _, name := range gresNames(ng) {
		if !deviceGres[name] {
			continue
		}
		devs, err := loadDevices(ng, name, stat, logf)
		out.Devices = append(out.Devices, devs...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func gresNames(ng *conf.NodeGres) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range ng.Records {
		if !seen[r.Name] {
			seen[r.Name] = true
			names = append(names, r.Name)
		}
	}
	return names
}

// waitForFile is slurmd's wait for a gres.conf File= entry (_my_stat).
func waitForFile(path string, stat func(string, *unix.Stat_t) error, sleep func(time.Duration), logf func(string, string, ...any)) error {
	waited := false
	var err error
	for i := 0; i < 20; i++ {
		if i > 0 && sleep != nil {
			sleep(time.Second)
		}
		var st unix.Stat_t
		if err = stat(path, &st); err == nil {
			if waited {
				logf("info", "gres.conf file %s now exists", path)
			}
			return nil
		}
		if !errors.Is(err, unix.ENOENT) {
			break
		}
		if !waited {
			logf("error", "Waiting for gres.conf file %s", path)
			waited = true
		}
	}
	return fmt.Errorf("%w: can't stat gres.conf file %s: %s", ErrGres, path, errText(err))
}

// errText is strerror's wording (%m).
func errText(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}

// loadDevices is common_node_config_load for one GRES name.
func loadDevices(ng *conf.NodeGres, name string, stat func(string, *unix.Stat_t) error, logf func(string, string, ...any)) ([]Device, error) {
	var devs []Device
	index, maxNum := 0, -1
	seen := map[string]bool{}
	dup := false
	for _, r := range ng.Records {
		if r.Name != name || r.File == "" {
			continue
		}
		files, err := hostlist.Expand(r.File)
		if err != nil {
			logf("error", "can't parse gres.conf file record (%s)", r.File)
			continue
		}
		for _, f := range files {
			var st unix.Stat_t
			switch err := stat(f, &st); {
			case err != nil:
				logf("error", "_set_gres_device_desc: stat(%s): %s", f, errText(err))
			case st.Mode&unix.S_IFMT != unix.S_IFCHR && st.Mode&unix.S_IFMT != unix.S_IFBLK:
				logf("error", "%s is not a valid character or block device, fix your gres.conf", f)
			default:
				d := Device{Name: name, Index: index, DevNum: fileNumber(f), Path: f,
					Type: 'c', Major: unix.Major(st.Rdev), Minor: unix.Minor(st.Rdev)}
				if st.Mode&unix.S_IFMT == unix.S_IFBLK {
					d.Type = 'b'
				}
				if d.DevNum > maxNum {
					maxNum = d.DevNum
				}
				devs = append(devs, d)
			}
			if r.MultipleFiles {
				continue
			}
			if seen[f] && !dup {
				logf("error", "%s duplicate device file name (%s)", name, f)
				dup = true
			}
			seen[f] = true
			index++
		}
		if r.MultipleFiles {
			index++
		}
	}
	for i := range devs {
		if devs[i].DevNum == -1 {
			maxNum++
			devs[i].DevNum = maxNum
		}
	}
	if dup {
		return devs, fmt.Errorf("%w: gres/%s failed to load configuration", ErrGres, name)
	}
	return devs, nil
}

// fileNumber is the number a device path ends with, -1 if none.
func fileNumber(path string) int {
	i := len(path)
	for i > 0 && path[i-1] >= '0' && path[i-1] <= '9' {
		i--
	}
	if i == len(path) {
		return -1
	}
	n := 0
	for _, c := range path[i:] {
		n = n*10 + int(c-'0')
		if n > 1<<30 {
			return -1
		}
	}
	return n
}
