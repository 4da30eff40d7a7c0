//go:build cgo && !linux

package ctld

// systemGroupDB where the reentrant enumerations are not the glibc ones:
// the files are read.
func systemGroupDB() groupDB {
	return filesGroupDB{groupPath: "/etc/group", passwdPath: "/etc/passwd"}
}
