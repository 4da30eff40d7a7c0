// Package hwinfo detects what a real slurmd 22.05 (built with hwloc, as
// Debian's is) reports about its node: the CPU layout and Slurm's abstract
// <-> machine CPU maps, RealMemory, TmpDisk, UpTime, the GRES devices of
// gres.conf, and the text of `slurmd -C`.
//
// Everything is read from a root file system (os.DirFS("/") on a real
// node) so tests can use fake sysfs/procfs trees; see package hwtest.
package hwinfo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Node is one node's detected hardware.
type Node struct {
	// Name is the short host name (up to the first dot), what slurmd -C
	// prints as NodeName.
	Name string
	*Topology
	// RealMemory is in MB, computed as slurmd does.
	RealMemory uint64
	// TmpDisk is the size of TmpFS in MB (0 if TmpFS does not exist).
	TmpDisk uint32
	// UpTime is in seconds, as sysinfo(2) reports it.
	UpTime uint32
}

// Options says where Detect reads.
type Options struct {
	// Root holds sys/ and proc/; nil is this machine (os.DirFS("/")),
	// and then memory and uptime come from sysinfo(2) as slurmd's do.
	Root fs.FS
	// Hostname overrides the host name; "" asks the kernel.
	Hostname string
	// TmpFS is the (already %n/%h-expanded) TmpFS path, on the real file
	// system whatever Root is; "" is /tmp, Slurm's default. SkipTmpDisk
	// leaves TmpDisk 0 (slurmd -C does not look at it).
	TmpFS       string
	SkipTmpDisk bool
	// PageSize overrides the page size; 0 is the system's.
	PageSize int
}

// Detect reads the node's hardware.
func Detect(opts Options) (*Node, error) {
	root := opts.Root
	live := root == nil
	if live {
		root = os.DirFS("/")
	}
	n := &Node{Name: opts.Hostname, Topology: ReadTopology(root)}
	if n.Name == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("gethostname: %w", err)
		}
		n.Name = h
	}
	n.Name = ShortHostname(n.Name)
	page := opts.PageSize
	if page <= 0 {
		page = os.Getpagesize()
	}
	var err error
	if live {
		var si unix.Sysinfo_t
		if err := unix.Sysinfo(&si); err != nil {
			return nil, fmt.Errorf("sysinfo: %w", err)
		}
		n.RealMemory = RealMemoryMB(uint64(si.Totalram)*uint64(si.Unit)/uint64(page), page)
		n.UpTime = uint32(si.Uptime)
	} else {
		if n.RealMemory, err = memoryFromMeminfo(root, page); err != nil {
			return nil, err
		}
		if n.UpTime, err = uptimeFromProc(root); err != nil {
			return nil, err
		}
	}
	if !opts.SkipTmpDisk {
		if n.TmpDisk, err = TmpDiskMB(opts.TmpFS); err != nil {
			return n, err
		}
	}
	return n, nil
}

// ShortHostname cuts a host name at its first dot (gethostname_short).
func ShortHostname(h string) string {
	if i := strings.IndexByte(h, '.'); i >= 0 {
		return h[:i]
	}
	return h
}

// RealMemoryMB is slurmd's get_memory: the page count, converted to a C
// float (single precision, so large counts round), times the page size in
// MB, truncated.
func RealMemoryMB(pages uint64, pageSize int) uint64 {
	mb := float64(float32(pages)) * (float64(pageSize) / 1048576.0)
	return uint64(math.Trunc(mb))
}

// memoryFromMeminfo reads MemTotal, the same kernel figure as sysinfo's
// totalram.
func memoryFromMeminfo(root fs.FS, page int) (uint64, error) {
	b, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("get_memory: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("get_memory: MemTotal %q: %w", f[1], err)
			}
			return RealMemoryMB(kb*1024/uint64(page), page), nil
		}
	}
	return 0, errors.New("get_memory: no MemTotal in /proc/meminfo")
}

// uptimeFromProc reads /proc/uptime; sysinfo rounds a partial second up,
// so a fractional part counts as one more second.
func uptimeFromProc(root fs.FS) (uint32, error) {
	b, err := fs.ReadFile(root, "proc/uptime")
	if err != nil {
		return 0, fmt.Errorf("get_up_time: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("get_up_time: empty /proc/uptime")
	}
	whole, frac, _ := strings.Cut(f[0], ".")
	secs, err := strconv.ParseUint(whole, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("get_up_time: %q: %w", f[0], err)
	}
	if strings.Trim(frac, "0") != "" {
		secs++
	}
	return uint32(secs), nil
}

// TmpDiskMB is slurmd's get_tmp_disk: statvfs of path ("" is /tmp), blocks
// times fragment size in MB. A missing path is 0 without error; another
// failure is 0 with Slurm's message.
func TmpDiskMB(path string) (uint32, error) {
	if path == "" {
		path = "/tmp"
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return 0, nil
		}
		code := -1
		var errno unix.Errno
		if errors.As(err, &errno) {
			code = int(errno)
		}
		return 0, fmt.Errorf("get_tmp_disk: error %d executing statvfs on %s: %w", code, path, err)
	}
	frsize := uint64(st.Frsize)
	if frsize == 0 {
		frsize = uint64(st.Bsize)
	}
	return uint32(st.Blocks * frsize / (1024 * 1024)), nil
}
