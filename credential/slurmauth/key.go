package slurmauth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Key sizes. HS256 wants a key at least as long as its 32-byte output
// (RFC 7518 3.2); Slurm refuses JWKS keys under 16 bytes and its
// documentation makes 1024 random bytes, which GenerateKey follows.
const (
	MinKeySize     = 32
	MaxKeySize     = 1 << 20
	DefaultKeySize = 1024
)

// KeyFileName is the key's name next to slurm.conf.
const KeyFileName = "slurm.key"

// Key is the shared HS256 secret. The zero value is not usable.
type Key struct {
	secret []byte
}

// NewKey returns a key holding a copy of secret, which must be at least
// MinKeySize bytes.
func NewKey(secret []byte) (*Key, error) {
	if len(secret) < MinKeySize {
		return nil, newErr(ErrKey, slurmerr.ESLURM_AUTH_FOPEN_ERROR, nil,
			"key of %d bytes, need at least %d", len(secret), MinKeySize)
	}
	if len(secret) > MaxKeySize {
		return nil, newErr(ErrKey, slurmerr.ESLURM_AUTH_FOPEN_ERROR, nil,
			"key of %d bytes, at most %d", len(secret), MaxKeySize)
	}
	return &Key{secret: append([]byte(nil), secret...)}, nil
}

// Size returns the key length in bytes.
func (k *Key) Size() int { return len(k.secret) }

func keyErr(path string, cause error, format string, args ...any) error {
	return newErr(ErrKey, slurmerr.ESLURM_AUTH_FOPEN_ERROR, cause,
		"%s: "+format, append([]any{path}, args...)...)
}

// LoadKey reads the key file at path. It refuses (checklist item 6):
// a symbolic link or anything but a regular file; a file with any group or
// other permission bit (Slurm refuses only other bits; we are stricter); a
// file owned by anyone but this process's effective uid or root; a key
// shorter than MinKeySize or longer than MaxKeySize. The whole content is
// the secret, as in Slurm (a trailing newline is part of it).
func LoadKey(path string) (*Key, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, keyErr(path, nil, "key file is a symbolic link")
		}
		return nil, keyErr(path, err, "cannot open key file")
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, keyErr(path, err, "cannot stat key file")
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, keyErr(path, nil, "key file is not a regular file")
	}
	if perm := st.Mode & 0o7777; perm&0o077 != 0 {
		return nil, keyErr(path, nil, "key file is insecure: mode=0%o (group/other bits set; chmod 0600)", perm)
	}
	if euid := uint32(os.Geteuid()); st.Uid != euid && st.Uid != 0 {
		return nil, keyErr(path, nil, "key file is owned by uid %d, not by this daemon's uid %d or root", st.Uid, euid)
	}
	if st.Size > MaxKeySize {
		return nil, keyErr(path, nil, "key file of %d bytes, at most %d", st.Size, MaxKeySize)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxKeySize+1))
	if err != nil {
		return nil, keyErr(path, err, "cannot read key file")
	}
	if len(b) < MinKeySize {
		return nil, keyErr(path, nil, "key of %d bytes, need at least %d", len(b), MinKeySize)
	}
	if len(b) > MaxKeySize {
		return nil, keyErr(path, nil, "key file of more than %d bytes", MaxKeySize)
	}
	return &Key{secret: b}, nil
}

// GenerateKey writes a new key of DefaultKeySize random bytes to path, mode
// 0600, owned by the caller. It never overwrites: an existing path (or a
// symbolic link there) is an error. The file is synced before it returns.
func GenerateKey(path string) (*Key, error) {
	secret := make([]byte, DefaultKeySize)
	if _, err := rand.Read(secret); err != nil {
		return nil, keyErr(path, err, "no randomness")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, keyErr(path, err, "cannot create key file")
	}
	fail := func(err error, what string) (*Key, error) {
		f.Close()
		os.Remove(path)
		return nil, keyErr(path, err, "%s", what)
	}
	if err := f.Chmod(0o600); err != nil { // umask could only have narrowed it
		return fail(err, "chmod")
	}
	if _, err := f.Write(secret); err != nil {
		return fail(err, "write")
	}
	if err := f.Sync(); err != nil {
		return fail(err, "fsync")
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return nil, keyErr(path, err, "close")
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return &Key{secret: secret}, nil
}

// String never shows the secret.
func (k *Key) String() string { return fmt.Sprintf("slurmauth.Key(%d bytes)", len(k.secret)) }
