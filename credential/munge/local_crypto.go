package munge

import (
	"bytes"
	"compress/bzip2"
	"compress/zlib"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"
)

// The algorithms of the credential format, as munged 0.5.15 built with
// libgcrypt (Debian 12) maps them: every cipher in CBC mode with PKCS #5
// padding, every MAC an HMAC.
//
// The in-process codec implements what the Go standard library provides.
// Blowfish, CAST5 and RIPEMD-160 are valid in munged but need
// golang.org/x/crypto, which this module does not carry; the codec refuses
// them with EMUNGE_BAD_CIPHER / EMUNGE_BAD_MAC and says why. munged never
// picks them by itself (its defaults are AES-128 and SHA-256) and Slurm
// never asks for them.

// cipherInfo is a cipher's key and block sizes in bytes (libgcrypt's).
type cipherInfo struct {
	keyLen, blockLen int
	supported        bool
}

// cipherTable is indexed by Cipher; keyLen 0 means not a valid cipher for a
// credential (none and default are handled before the lookup).
var cipherTable = [...]cipherInfo{
	CipherBlowfish: {keyLen: 16, blockLen: 8},
	CipherCAST5:    {keyLen: 16, blockLen: 8},
	CipherAES128:   {keyLen: 16, blockLen: 16, supported: true},
	CipherAES256:   {keyLen: 32, blockLen: 16, supported: true},
}

func lookupCipher(c Cipher) (cipherInfo, bool) {
	if int(c) >= len(cipherTable) || cipherTable[c].keyLen == 0 {
		return cipherInfo{}, false
	}
	return cipherTable[c], true
}

// macInfo is a MAC's digest size and, when supported, its hash.
type macInfo struct {
	size int
	hash func() hash.Hash
}

var macTable = [...]macInfo{
	MACMD5:       {size: md5.Size, hash: md5.New},
	MACSHA1:      {size: sha1.Size, hash: sha1.New},
	MACRIPEMD160: {size: 20},
	MACSHA256:    {size: sha256.Size, hash: sha256.New},
	MACSHA512:    {size: sha512.Size, hash: sha512.New},
}

func lookupMAC(m MAC) (macInfo, bool) {
	if int(m) >= len(macTable) || macTable[m].size == 0 {
		return macInfo{}, false
	}
	return macTable[m], true
}

// maxMACLen is the longest digest (SHA-512).
const maxMACLen = sha512.Size

// hmacPool hands out HMACs keyed with one subkey for one hash; an HMAC
// returned to the pool is Reset, which restores its keyed state cheaply.
type hmacPool struct {
	pools [len(macTable)]sync.Pool
}

func newHMACPool(key []byte) *hmacPool {
	p := &hmacPool{}
	for i, m := range macTable {
		if m.hash == nil {
			continue
		}
		k := append([]byte(nil), key...)
		h := m.hash
		p.pools[i].New = func() any { return hmac.New(h, k) }
	}
	return p
}

// sum appends HMAC(key, parts...) to dst. m must be a supported MAC.
func (p *hmacPool) sum(dst []byte, m MAC, parts ...[]byte) []byte {
	h := p.pools[m].Get().(hash.Hash)
	for _, b := range parts {
		h.Write(b)
	}
	dst = h.Sum(dst)
	h.Reset()
	p.pools[m].Put(h)
	return dst
}

// newBlock returns the block cipher c keyed with the first bytes of dek.
func newBlock(c Cipher, dek []byte) (cipher.Block, error) {
	switch c {
	case CipherAES128:
		return aes.NewCipher(dek[:16])
	case CipherAES256:
		return aes.NewCipher(dek[:32])
	}
	return nil, fmt.Errorf("cipher %v not supported by the in-process codec", c)
}

// pkcs5Unpad returns b without its padding, or false when the padding is
// not what PKCS #5 produces for this block size.
func pkcs5Unpad(b []byte, blockLen int) ([]byte, bool) {
	if len(b) == 0 || len(b)%blockLen != 0 {
		return b, false
	}
	pad := int(b[len(b)-1])
	if pad == 0 || pad > blockLen {
		return b, false
	}
	ok := 1
	for _, v := range b[len(b)-pad:] {
		ok &= subtle.ConstantTimeByteEq(v, byte(pad))
	}
	if ok != 1 {
		return b, false
	}
	return b[:len(b)-pad], true
}

// Compressed inner data starts with this 8-byte header, all big-endian:
// u32 magic, u32 length of the uncompressed data.
const (
	zipMagic   = 0xCACACACA
	zipMetaLen = 8
)

// zipInner compresses inner with zlib behind munged's header. It returns
// nil when compression would not make the data shorter, which munged
// answers by sending the credential uncompressed.
func zipInner(inner []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(zipMetaLen + len(inner))
	var meta [zipMetaLen]byte
	binary.BigEndian.PutUint32(meta[0:], zipMagic)
	binary.BigEndian.PutUint32(meta[4:], uint32(len(inner)))
	buf.Write(meta[:])
	w := zlib.NewWriter(&buf)
	if _, err := w.Write(inner); err != nil {
		return nil
	}
	if err := w.Close(); err != nil {
		return nil
	}
	if buf.Len() >= len(inner) {
		return nil
	}
	return buf.Bytes()
}

// errZipMeta is a compressed block whose header munged would not accept.
var errZipMeta = errors.New("bad compression header")

// unzipInner reverses zipInner (or bzip2 from a real munged), refusing to
// produce more than limit bytes or anything but the length the header
// announces.
func unzipInner(z Zip, b []byte, limit int) ([]byte, error) {
	if len(b) < zipMetaLen || binary.BigEndian.Uint32(b) != zipMagic {
		return nil, errZipMeta
	}
	n := binary.BigEndian.Uint32(b[4:])
	if n == 0 || uint64(n) > uint64(limit) {
		return nil, errZipMeta
	}
	var r io.Reader
	src := bytes.NewReader(b[zipMetaLen:])
	switch z {
	case ZipZlib:
		zr, err := zlib.NewReader(src)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	case ZipBzlib:
		r = bzip2.NewReader(src)
	default:
		return nil, fmt.Errorf("compression %v", z)
	}
	out := make([]byte, n)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, err
	}
	// The stream must end exactly there.
	var one [1]byte
	if k, err := r.Read(one[:]); k != 0 || (err != nil && err != io.EOF) {
		return nil, errors.New("decompressed data longer than announced")
	}
	return out, nil
}

// The armor around the base64 body (munge_defs.h).
const (
	credPrefix = "MUNGE:"
	credSuffix = ":"
)

// armor returns "MUNGE:" + base64(raw) + ":".
func armor(raw []byte) string {
	n := base64.StdEncoding.EncodedLen(len(raw))
	out := make([]byte, len(credPrefix)+n+len(credSuffix))
	copy(out, credPrefix)
	base64.StdEncoding.Encode(out[len(credPrefix):], raw)
	copy(out[len(credPrefix)+n:], credSuffix)
	return string(out)
}

// isCSpace is C's isspace in the C locale.
func isCSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// unarmor strips the armor as munged does: leading white space, the prefix,
// and everything from the last ':' on; white space inside the base64 text
// is ignored.
func unarmor(cred string) ([]byte, error) {
	i := 0
	for i < len(cred) && isCSpace(cred[i]) {
		i++
	}
	s := cred[i:]
	if s == "" || s[0] == 0 {
		return nil, &Error{Code: CodeBadArg, Message: "No credential specified"}
	}
	body, ok := strings.CutPrefix(s, credPrefix)
	if !ok {
		return nil, &Error{Code: CodeBadCred, Message: "Failed to match armor prefix"}
	}
	end := strings.LastIndex(body, credSuffix)
	if end < 0 {
		return nil, &Error{Code: CodeBadCred, Message: "Failed to match armor suffix"}
	}
	body = body[:end]
	if strings.IndexFunc(body, func(r rune) bool { return r < 0x80 && isCSpace(byte(r)) }) >= 0 {
		body = strings.Map(func(r rune) rune {
			if r < 0x80 && isCSpace(byte(r)) {
				return -1
			}
			return r
		}, body)
	}
	raw, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		return nil, &Error{Code: CodeBadCred, Message: "Failed to base64-decode credential"}
	}
	return raw, nil
}
