package cgroup

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// DeviceFromPath stats a device file (a gres.conf File=) and returns its
// rule, the way Slurm fills a gres_device dev_desc. allowed says whether
// the job was allocated it.
func DeviceFromPath(path string, allowed bool) (Device, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return Device{}, fmt.Errorf("cgroup: stat %s: %w", path, err)
	}
	d := Device{Major: int64(unix.Major(st.Rdev)), Minor: int64(unix.Minor(st.Rdev)), Allowed: allowed}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		d.Type = 'c'
	case unix.S_IFBLK:
		d.Type = 'b'
	default:
		return Device{}, fmt.Errorf("cgroup: %s is not a device file", path)
	}
	return d, nil
}
