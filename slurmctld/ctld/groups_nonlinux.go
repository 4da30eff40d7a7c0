//go:build cgo && !linux

package ctld

// systemGroupDB where the reentrant enumerations are not the glibc ones:
// the files are read.
func systemGroupDB() groupDB {
	return filesGroupDB{groupPath: "/etc/group", passwdPath: "/etc/passwd"}
}

// LoginShell is the user's login shell from /etc/passwd.
func LoginShell(name string) string { return filesShell("/etc/passwd", name) }
