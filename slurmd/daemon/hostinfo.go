package daemon

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Hardware is the node's detected layout, what `slurmd -C` prints and
// registration reports (before config_overrides picks the configured
// values).
type Hardware struct {
	CPUs, Boards, Sockets, Cores, Threads uint16 // Sockets in total, Cores per socket, Threads per core
	RealMemory                            uint64 // MB
	TmpDisk                               uint32 // MB of TmpFS
}

// HardwareFunc detects the hardware; tmpFS is the expanded TmpFS path.
// slurmd/hwinfo provides the full detection; BasicHardware is the
// fallback.
type HardwareFunc func(tmpFS string) (Hardware, error)

// BasicHardware counts online CPUs as one-core sockets (no topology),
// MemTotal and TmpFS's size: enough to register, not a substitute for
// slurmd/hwinfo.
func BasicHardware(tmpFS string) (Hardware, error) {
	n := runtime.NumCPU()
	if n > 0xffff {
		n = 0xffff
	}
	hw := Hardware{CPUs: uint16(n), Boards: 1, Sockets: uint16(n), Cores: 1, Threads: 1}
	mem, err := meminfo("MemTotal")
	if err != nil {
		return hw, err
	}
	hw.RealMemory = mem
	tmp, err := diskMB(tmpFS)
	if err != nil {
		return hw, err
	}
	hw.TmpDisk = tmp
	return hw, nil
}

// diskMB is get_tmp_disk: the size of the file system holding path in MB.
func diskMB(path string) (uint32, error) {
	if path == "" {
		path = "/tmp"
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	mb := uint64(st.Blocks) * uint64(st.Bsize) / (1 << 20)
	if mb > 0xffffffff {
		mb = 0xffffffff
	}
	return uint32(mb), nil
}

// meminfo returns a /proc/meminfo field in MB.
func meminfo(field string) (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		fs := strings.Fields(rest)
		if len(fs) == 0 {
			break
		}
		kb, err := strconv.ParseUint(fs[0], 10, 64)
		if err != nil {
			return 0, err
		}
		return kb / 1024, nil
	}
	return 0, fmt.Errorf("/proc/meminfo has no %s", field)
}

// Stats are the moving figures registration and pings report.
type Stats struct {
	UpTime  uint32 // seconds since boot
	CPULoad uint32 // 5-minute load average x 100
	FreeMem uint64 // MB
}

// HostStats reads them as slurmd does (sysinfo for uptime and load,
// MemAvailable for free memory).
func HostStats() Stats {
	var si unix.Sysinfo_t
	var st Stats
	if err := unix.Sysinfo(&si); err == nil {
		st.UpTime = uint32(si.Uptime)
		// loads are fixed point with 16 fractional bits.
		st.CPULoad = uint32(uint64(si.Loads[1]) * 100 / (1 << 16))
	}
	if mb, err := meminfo("MemAvailable"); err == nil {
		st.FreeMem = mb
	}
	return st
}

// Arch and OS are what registration reports (uname; $SLURM_ARCH and
// $SLURM_OS override them, as in slurmd).
func archOS() (arch, osName string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		arch = unix.ByteSliceToString(u.Machine[:])
		osName = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
	}
	if v := os.Getenv("SLURM_ARCH"); v != "" {
		arch = v
	}
	if v := os.Getenv("SLURM_OS"); v != "" {
		osName = v
	}
	return arch, osName
}
