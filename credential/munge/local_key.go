package munge

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// Key sizes munged enforces or uses (munge_defs.h, MUNGE 0.5.15).
const (
	// MinKeyLen is the shortest key file munged starts with
	// (MUNGE_KEY_LEN_MIN_BYTES).
	MinKeyLen = 32
	// MaxKeyFileLen bounds what LoadKey reads. munged hashes a key file of
	// any size; mungekey writes at most 1024 bytes, so a file this large is
	// not a key.
	MaxKeyFileLen = 1 << 20
)

// ErrKeyFile is wrapped by every LoadKey and NewKey failure.
var ErrKeyFile = errors.New("munge: unusable key file")

// Key is a MUNGE key as munged holds it: not the key file itself but the two
// subkeys munged derives from it at start-up. Both are SHA-1 digests of the
// whole file content followed by one ASCII character, "1" for the cipher
// (DEK) subkey and "2" for the MAC subkey, whatever MAC or cipher a
// credential later uses. A Key is immutable and safe for concurrent use.
type Key struct {
	dek [sha1.Size]byte // keys the HMAC that yields each credential's cipher key
	mac [sha1.Size]byte // keys the HMAC over each credential
}

// NewKey derives a Key from the content of a key file, which must be at
// least MinKeyLen bytes (trailing newlines included: munged hashes every
// byte).
func NewKey(secret []byte) (*Key, error) {
	if len(secret) < MinKeyLen {
		return nil, fmt.Errorf("%w: key of %d bytes, munged needs at least %d", ErrKeyFile, len(secret), MinKeyLen)
	}
	if len(secret) > MaxKeyFileLen {
		return nil, fmt.Errorf("%w: key of %d bytes, at most %d", ErrKeyFile, len(secret), MaxKeyFileLen)
	}
	var k Key
	h := sha1.New()
	h.Write(secret)
	h.Write([]byte("1"))
	h.Sum(k.dek[:0])
	h.Reset()
	h.Write(secret)
	h.Write([]byte("2"))
	h.Sum(k.mac[:0])
	return &k, nil
}

// LoadKey reads a munged key file (normally /etc/munge/munge.key) and derives
// its Key. Like munged without --force it refuses: a symbolic link or
// anything but a regular file; a file readable or writable by group or
// other; a file owned by anyone but this process's effective uid, root or
// one of trustedOwners; a directory on the way to it owned by anyone else or
// writable by group or other without the sticky bit; and a key shorter than
// MinKeyLen.
//
// munged itself accepts only its own uid as owner. A daemon that shares the
// site's key with munged reads it as root before dropping privileges, and
// passes the munge user's uid as a trusted owner (the Debian key and its
// directory belong to that user).
func LoadKey(path string, trustedOwners ...uint32) (*Key, error) {
	fail := func(cause error, format string, args ...any) (*Key, error) {
		msg := fmt.Sprintf("%q: ", path) + fmt.Sprintf(format, args...)
		if cause != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrKeyFile, msg, cause)
		}
		return nil, fmt.Errorf("%w: %s", ErrKeyFile, msg)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return fail(nil, "key file is insecure: it is a symbolic link")
		}
		return fail(err, "cannot open key file (did you run mungekey?)")
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fail(err, "cannot stat key file")
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fail(nil, "key file is insecure: not a regular file (type=%07o)", st.Mode&unix.S_IFMT)
	}
	owners := append([]uint32{0, uint32(os.Geteuid())}, trustedOwners...)
	if !slices.Contains(owners, st.Uid) {
		return fail(nil, "key file is insecure: owned by uid %d, not by uid %d or root", st.Uid, owners[1])
	}
	if perm := st.Mode & 0o7777; perm&0o066 != 0 {
		return fail(nil, "key file is insecure: readable or writable by group or other (perms=%04o)", perm)
	}
	if err := checkKeyDirs(filepath.Dir(path), owners); err != nil {
		return fail(nil, "key file is insecure: %v", err)
	}
	if st.Size > MaxKeyFileLen {
		return fail(nil, "key file of %d bytes, at most %d", st.Size, MaxKeyFileLen)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxKeyFileLen+1))
	if err != nil {
		return fail(err, "cannot read key file")
	}
	defer clear(b)
	k, err := NewKey(b)
	if err != nil {
		return fail(err, "cannot use key file")
	}
	return k, nil
}

// checkKeyDirs walks from dir up to / as munged does for the key's
// directory: anyone who can replace a directory on the path can replace the
// key.
func checkKeyDirs(dir string, owners []uint32) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	for d := real; ; d = filepath.Dir(d) {
		var st unix.Stat_t
		if err := unix.Lstat(d, &st); err != nil {
			return fmt.Errorf("cannot stat %q: %w", d, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return fmt.Errorf("%q is not a directory", d)
		}
		if !slices.Contains(owners, st.Uid) {
			return fmt.Errorf("directory %q is owned by uid %d", d, st.Uid)
		}
		sticky := st.Mode&unix.S_ISVTX != 0
		if st.Mode&unix.S_IWGRP != 0 && !sticky {
			return fmt.Errorf("directory %q is group-writable without the sticky bit", d)
		}
		if st.Mode&unix.S_IWOTH != 0 && !sticky {
			return fmt.Errorf("directory %q is world-writable without the sticky bit", d)
		}
		if d == "/" || d == filepath.Dir(d) {
			return nil
		}
	}
}
