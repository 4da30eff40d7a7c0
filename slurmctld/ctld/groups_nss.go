//go:build cgo && linux

package ctld

/*
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/types.h>
*/
import "C"

import (
	"sync"
	"syscall"
	"unsafe"
)

// nssGroupDB asks the C library, so every NSS source of nsswitch.conf
// (files, LDAP, sssd, ...) answers, as in slurmctld.
type nssGroupDB struct{}

func systemGroupDB() groupDB { return nssGroupDB{} }

// nssWalk serializes the enumerations: setgrent/getgrent_r keep one
// position per process.
var nssWalk sync.Mutex

const nssBufStart = 16 * 1024

// nssBufMax bounds the buffer growth on ERANGE (a group of many
// thousand members still fits).
const nssBufMax = 64 << 20

// cbuf is a C buffer that grows on ERANGE: the records the C library
// fills point into it, so it may not be Go memory.
type cbuf struct {
	p *C.char
	n C.size_t
}

func newCbuf() *cbuf {
	return &cbuf{p: (*C.char)(C.malloc(nssBufStart)), n: nssBufStart}
}

func (b *cbuf) grow() bool {
	if b.n >= nssBufMax {
		return false
	}
	C.free(unsafe.Pointer(b.p))
	b.n *= 2
	b.p = (*C.char)(C.malloc(b.n))
	return true
}

func (b *cbuf) free() { C.free(unsafe.Pointer(b.p)) }

func grMembers(g *C.struct_group) []string {
	var out []string
	if g.gr_mem == nil {
		return nil
	}
	for p := g.gr_mem; *p != nil; p = (**C.char)(unsafe.Add(unsafe.Pointer(p), unsafe.Sizeof(*p))) {
		out = append(out, C.GoString(*p))
	}
	return out
}

func (nssGroupDB) group(name string) (uint32, []string, bool) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	buf := newCbuf()
	defer buf.free()
	var g C.struct_group
	var res *C.struct_group
	for {
		rc := C.getgrnam_r(cname, &g, buf.p, buf.n, &res)
		if syscall.Errno(rc) == syscall.ERANGE && buf.grow() {
			continue
		}
		if rc != 0 || res == nil {
			return 0, nil, false
		}
		return uint32(g.gr_gid), grMembers(&g), true
	}
}

func (nssGroupDB) eachGroup(fn func(uint32, []string)) {
	nssWalk.Lock()
	defer nssWalk.Unlock()
	buf := newCbuf()
	defer buf.free()
	C.setgrent()
	defer C.endgrent()
	for {
		var g C.struct_group
		var res *C.struct_group
		rc := C.getgrent_r(&g, buf.p, buf.n, &res)
		if syscall.Errno(rc) == syscall.ERANGE && buf.grow() {
			// glibc hands the same entry again to the bigger buffer.
			continue
		}
		if rc != 0 || res == nil {
			return
		}
		fn(uint32(g.gr_gid), grMembers(&g))
	}
}

func (nssGroupDB) eachUser(fn func(uid, gid uint32)) {
	nssWalk.Lock()
	defer nssWalk.Unlock()
	buf := newCbuf()
	defer buf.free()
	C.setpwent()
	defer C.endpwent()
	for {
		var p C.struct_passwd
		var res *C.struct_passwd
		rc := C.getpwent_r(&p, buf.p, buf.n, &res)
		if syscall.Errno(rc) == syscall.ERANGE && buf.grow() {
			continue
		}
		if rc != 0 || res == nil {
			return
		}
		fn(uint32(p.pw_uid), uint32(p.pw_gid))
	}
}

// uid goes through os/user, which asks NSS too (getpwnam_r, getpwuid_r).
func (nssGroupDB) uid(name string) (uint32, bool) { return resvUID(name) }

// LoginShell is the user's login shell from the passwd database through
// NSS (getpwnam_r; os/user does not expose it), "" when there is none.
func LoginShell(name string) string {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	buf := newCbuf()
	defer buf.free()
	var p C.struct_passwd
	var res *C.struct_passwd
	for {
		rc := C.getpwnam_r(cname, &p, buf.p, buf.n, &res)
		if syscall.Errno(rc) == syscall.ERANGE && buf.grow() {
			continue
		}
		if rc != 0 || res == nil || p.pw_shell == nil {
			return ""
		}
		return C.GoString(p.pw_shell)
	}
}
