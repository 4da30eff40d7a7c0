package cgroup

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Detect picks the cgroup version for CgroupPlugin plugin ("cgroup/v1",
// "cgroup/v2", or "autodetect"/"" to look at the system). Autodetection
// follows Slurm 22.05: a cgroup2 mount at root is v2; a tmpfs there is v1
// when root/systemd is a v1 hierarchy and v2 when it is cgroup2 (hybrid).
// Slurm always looks at /sys/fs/cgroup; root lets tests look elsewhere.
func Detect(plugin, root string) (Version, error) {
	switch plugin {
	case "cgroup/v1":
		return V1, nil
	case "cgroup/v2":
		return V2, nil
	case "", "autodetect":
	default:
		return 0, fmt.Errorf("%w: unknown CgroupPlugin %q", ErrLayout, plugin)
	}
	if root == "" {
		root = "/sys/fs/cgroup"
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(root, &fs); err != nil {
		return 0, fmt.Errorf("cgroup filesystem not mounted in %s: %w", root, err)
	}
	switch fs.Type {
	case unix.CGROUP2_SUPER_MAGIC:
		return V2, nil
	case unix.TMPFS_MAGIC:
		if err := unix.Statfs(root+"/systemd", &fs); err != nil {
			return 0, fmt.Errorf("can't stat %s/systemd/: %w", root, err)
		}
		switch fs.Type {
		case unix.CGROUP2_SUPER_MAGIC:
			return V2, nil
		case unix.CGROUP_SUPER_MAGIC:
			return V1, nil
		}
		return 0, fmt.Errorf("unexpected fs type on %s/systemd", root)
	case unix.SYSFS_MAGIC:
		return 0, fmt.Errorf("no filesystem mounted on %s", root)
	}
	return 0, fmt.Errorf("unknown filesystem type mounted on %s", root)
}
