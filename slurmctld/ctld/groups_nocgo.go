//go:build !cgo

package ctld

// systemGroupDB without cgo: NSS cannot be called, so the files are read
// (groups served by LDAP or sssd are not seen).
func systemGroupDB() groupDB {
	return filesGroupDB{groupPath: "/etc/group", passwdPath: "/etc/passwd"}
}

// LoginShell is the user's login shell from /etc/passwd.
func LoginShell(name string) string { return filesShell("/etc/passwd", name) }
