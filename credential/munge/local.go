package munge

import (
	"context"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"
)

// Codec is what a daemon needs from MUNGE: *Client asks munged, *Local does
// the work in process with the site's key. Both return the same *Error codes
// and the same Decode contract (see Client.Decode).
type Codec interface {
	Encode(ctx context.Context, payload []byte, opts ...EncodeOption) (string, error)
	Decode(ctx context.Context, cred string) (*Credential, error)
}

var (
	_ Codec = (*Client)(nil)
	_ Codec = (*Local)(nil)
)

// The credential format (MUNGE 0.5.x, credential version 3). All integers
// are big-endian. The armored text is "MUNGE:" + base64(outer, mac, inner)
// + ":".
//
//	outer: u8 version (3), u8 cipher, u8 mac, u8 zip, u8 realm_len, realm,
//	       iv (the cipher's block size; none without a cipher)
//	mac:   HMAC(mac subkey, outer || inner before encryption), the MAC's
//	       full digest
//	inner: salt (8 random bytes), u8 addr_len (4), origin IPv4 address,
//	       u32 encode time, u32 ttl, u32 uid, u32 gid, u32 uid restriction,
//	       u32 gid restriction, u32 data_len, data
//
// With compression, inner is replaced by an 8-byte header (u32 0xCACACACA,
// u32 uncompressed length) and the zlib or bzip2 stream, before the MAC.
// With a cipher, inner is then encrypted in CBC mode with PKCS #5 padding,
// under the first key-length bytes of HMAC(cipher subkey, mac) computed with
// the credential's MAC algorithm, and the random IV carried in outer.
const (
	credVersion = 3
	saltLen     = 8
	// innerFixedLen is inner without data: salt, addr_len, IPv4 address and
	// seven u32 fields.
	innerFixedLen = saltLen + 1 + 4 + 7*4
)

// Defaults of munged 0.5.15 as Debian builds it (libgcrypt, zlib and bzlib):
// AES-128, HMAC-SHA-256, no compression, TTL 300 s, maximum TTL 3600 s.
const (
	LocalDefaultCipher = CipherAES128
	LocalDefaultMAC    = MACSHA256
	LocalDefaultZip    = ZipNone
	DefaultTTL         = 300 * time.Second
	DefaultMaxTTL      = 3600 * time.Second
)

// LocalIdentity is who the in-process codec acts as. munged learns it from
// the client's socket (SO_PEERCRED): the encoder's uid and gid go into the
// credential, and the decoder's are checked against its restrictions.
type LocalIdentity struct {
	UID, GID uint32
	// Groups are further groups the decoder is a member of, for a gid
	// restriction (munged consults the group database; a daemon passes
	// os.Getgroups()).
	Groups []uint32
}

// LocalConfig configures a Local. The zero value is munged's defaults acting
// as this process.
type LocalConfig struct {
	// Identity is who encodes and decodes; nil means this process's
	// effective uid and gid and its supplementary groups.
	Identity *LocalIdentity
	// Origin is the IPv4 address stamped into credentials (munged's
	// --origin, by default the address of its host name); the zero Addr
	// stamps 0.0.0.0.
	Origin netip.Addr
	// DefaultTTL is used when a request asks for none (0 = 300 s); MaxTTL
	// caps requested and decoded TTLs like munged's --max-ttl (0 = 3600 s).
	DefaultTTL, MaxTTL time.Duration
	// ReplayLimit bounds the replay cache (0 = DefaultReplayLimit entries).
	ReplayLimit int
	// NotBefore: credentials encoded before it (whole seconds) count as
	// replayed. The replay cache starts empty, so a process that takes
	// over from another (a restarted controller) cannot know which of the
	// credentials still valid were decoded before; munged's cache, which
	// survives the controller's restarts, never had that gap.
	NotBefore time.Time
	// Now is the clock for Encode and Decode; nil means time.Now.
	// EncodeAt and DecodeAt take the time as an argument instead.
	Now func() time.Time
}

// Local encodes and decodes MUNGE credentials in process with the site's
// key, as munged does, with munged's checks: MAC, TTL and clock skew, uid
// and gid restrictions, and a replay cache of its own. It is safe for
// concurrent use.
//
// Credentials it encodes decode in any munged holding the same key, and it
// decodes what such a munged encodes (with the algorithms it implements:
// AES-128/256 or no cipher; HMAC-MD5/SHA-1/SHA-256/SHA-512; zlib, or bzip2
// for decoding only). Its replay cache is its own: a credential decoded by
// munged can still be decoded once here, and the other way round.
//
// Differences from munged 0.5.15, all on the side of refusing: Blowfish,
// CAST5 and RIPEMD-160 are EMUNGE_BAD_CIPHER / EMUNGE_BAD_MAC, and encoding
// with bzip2 EMUNGE_BAD_ZIP (see local_crypto.go); a credential with a
// security realm is EMUNGE_BAD_REALM (munged 0.5.15 ignores realms; Slurm
// never sets one); trailing bytes after the data are EMUNGE_BAD_CRED; a full
// replay cache forgets the credentials that expire first and refuses as
// replayed every credential expiring no later (see replayCache.insert),
// and credentials encoded before LocalConfig.NotBefore count as replayed.
// munged's allowance for a replay on a retried request has no counterpart:
// there is no request to retry. Use NewLocal; the zero Local is not usable.
type Local struct {
	key       *hmacPool // MAC subkey
	dek       *hmacPool // cipher subkey
	ident     LocalIdentity
	origin    [4]byte
	defTTL    uint32
	maxTTL    uint32
	now       func() time.Time
	replay    *replayCache
	notBefore int64 // Unix seconds; 0: none
	maxInner  int
}

// NewLocal returns an in-process codec for key.
func NewLocal(key *Key, cfg LocalConfig) (*Local, error) {
	if key == nil {
		return nil, fmt.Errorf("%w: no key", ErrKeyFile)
	}
	l := &Local{
		key:    newHMACPool(key.mac[:]),
		dek:    newHMACPool(key.dek[:]),
		defTTL: uint32(DefaultTTL / time.Second),
		maxTTL: uint32(DefaultMaxTTL / time.Second),
		now:    cfg.Now,
		replay: newReplayCache(cfg.ReplayLimit),
		notBefore: func() int64 {
			if cfg.NotBefore.IsZero() {
				return 0
			}
			return cfg.NotBefore.Unix()
		}(),
		// The largest payload munged accepts, plus the fixed fields.
		maxInner: MaxRequestLen + innerFixedLen,
	}
	if l.now == nil {
		l.now = time.Now
	}
	if cfg.Identity != nil {
		l.ident = *cfg.Identity
		l.ident.Groups = slices.Clone(cfg.Identity.Groups)
	} else {
		l.ident = LocalIdentity{UID: uint32(os.Geteuid()), GID: uint32(os.Getegid())}
		groups, err := os.Getgroups()
		if err != nil {
			return nil, fmt.Errorf("munge: supplementary groups: %w", err)
		}
		for _, g := range groups {
			l.ident.Groups = append(l.ident.Groups, uint32(g))
		}
	}
	if cfg.Origin.IsValid() {
		if !cfg.Origin.Unmap().Is4() {
			return nil, fmt.Errorf("munge: origin %v is not an IPv4 address", cfg.Origin)
		}
		l.origin = cfg.Origin.Unmap().As4()
	}
	ttl := func(d time.Duration, what string) (uint32, error) {
		s := (d + time.Second - 1) / time.Second
		if d < 0 || s > time.Duration(ttlMaximum-1) {
			return 0, fmt.Errorf("munge: %s %v out of range", what, d)
		}
		return uint32(s), nil
	}
	var err error
	if cfg.MaxTTL != 0 {
		if l.maxTTL, err = ttl(cfg.MaxTTL, "maximum TTL"); err != nil {
			return nil, err
		}
	}
	if cfg.DefaultTTL != 0 {
		if l.defTTL, err = ttl(cfg.DefaultTTL, "default TTL"); err != nil {
			return nil, err
		}
	}
	// munged does not clamp its default TTL, only requested ones; keeping
	// the default under the maximum keeps decodes of our own credentials
	// consistent.
	l.defTTL = min(l.defTTL, l.maxTTL)
	return l, nil
}

// HostOrigin returns the address munged stamps into credentials when run
// without --origin: the first IPv4 address the host's name resolves to.
// munged falls back to 0.0.0.0 (the zero LocalConfig.Origin) when that
// fails.
func HostOrigin(ctx context.Context) (netip.Addr, error) {
	host, err := os.Hostname()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("munge: origin: %w", err)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("munge: origin %q: %w", host, err)
	}
	for _, a := range addrs {
		if a = a.Unmap(); a.Is4() {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("munge: origin %q: no IPv4 address", host)
}

// Identity returns who l encodes and decodes as.
func (l *Local) Identity() LocalIdentity {
	id := l.ident
	id.Groups = slices.Clone(id.Groups)
	return id
}

// Encode returns a credential carrying payload, encoded by l's identity at
// l's clock's time; opts as for Client.Encode. ctx is not used: there is no
// I/O to bound.
func (l *Local) Encode(_ context.Context, payload []byte, opts ...EncodeOption) (string, error) {
	return l.EncodeAt(payload, l.ident.UID, l.ident.GID, 0, l.now(), opts...)
}

// Decode validates cred at l's clock's time, as l's identity, with the same
// results as Client.Decode: on an expired, rewound or replayed credential
// both the *Credential and the error are returned. ctx is not used.
func (l *Local) Decode(_ context.Context, cred string) (*Credential, error) {
	return l.DecodeAt(cred, l.now())
}

func localErr(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// EncodeAt returns a credential carrying payload, stamped with uid and gid
// as its encoder's identity and now as its encode time (whole seconds).
// ttl follows WithTTL's rules (0 = the default TTL, negative = the maximum)
// and is capped at the maximum TTL; opts (uid/gid restriction, algorithms,
// or a WithTTL that overrides ttl) are applied after it. Invalid requests
// fail with munged's codes: EMUNGE_BAD_CIPHER, EMUNGE_BAD_MAC,
// EMUNGE_BAD_ZIP, EMUNGE_BAD_LENGTH.
func (l *Local) EncodeAt(payload []byte, uid, gid uint32, ttl time.Duration, now time.Time, opts ...EncodeOption) (string, error) {
	req := encReq{cipher: CipherDefault, mac: MACDefault, zip: ZipDefault, uid: UIDAny, gid: GIDAny}
	WithTTL(ttl)(&req)
	for _, o := range opts {
		o(&req)
	}
	if 20+len(payload) > MaxRequestLen {
		return "", localErr(CodeBadLength, "payload of %d bytes exceeds munged's request limit", len(payload))
	}

	// Resolve and validate the algorithms in munged's order.
	var ci cipherInfo
	if req.cipher == CipherDefault {
		req.cipher = LocalDefaultCipher
	}
	if req.cipher != CipherNone {
		var ok bool
		if ci, ok = lookupCipher(req.cipher); !ok {
			return "", localErr(CodeBadCipher, "Invalid cipher type %d", req.cipher)
		}
	}
	if req.mac == MACDefault {
		req.mac = LocalDefaultMAC
	}
	mi, ok := lookupMAC(req.mac)
	if !ok {
		return "", localErr(CodeBadMAC, "Invalid MAC type %d", req.mac)
	}
	if mi.size < ci.keyLen {
		return "", localErr(CodeBadMAC, "Invalid MAC type %d with cipher type %d", req.mac, req.cipher)
	}
	switch req.zip {
	case ZipDefault:
		req.zip = LocalDefaultZip
	case ZipNone, ZipZlib:
	case ZipBzlib:
		return "", localErr(CodeBadZip, "compression %v is not supported by the in-process codec (Go has no bzip2 compressor)", req.zip)
	default:
		return "", localErr(CodeBadZip, "Invalid compression type %d", req.zip)
	}
	if req.cipher != CipherNone && !ci.supported {
		return "", localErr(CodeBadCipher, "cipher %v is not supported by the in-process codec", req.cipher)
	}
	if mi.hash == nil {
		return "", localErr(CodeBadMAC, "MAC %v is not supported by the in-process codec", req.mac)
	}
	if len(payload) == 0 {
		req.zip = ZipNone
	}
	switch {
	case req.ttl == 0:
		req.ttl = l.defTTL
	case req.ttl > l.maxTTL:
		req.ttl = l.maxTTL
	}

	var rnd [saltLen + 16]byte
	ivLen := ci.blockLen
	if _, err := rand.Read(rnd[:saltLen+ivLen]); err != nil {
		return "", localErr(CodeSnafu, "no randomness: %v", err)
	}

	// One buffer: outer, room for the MAC, inner (padded in place).
	outerLen, macLen := 5+ivLen, mi.size
	raw := make([]byte, outerLen+macLen, outerLen+macLen+innerFixedLen+len(payload)+ivLen)
	outer := raw[:outerLen]
	outer[0], outer[1], outer[2], outer[3], outer[4] = credVersion, byte(req.cipher), byte(req.mac), byte(req.zip), 0
	copy(outer[5:], rnd[saltLen:saltLen+ivLen])

	raw = append(raw, rnd[:saltLen]...)
	raw = append(raw, 4)
	raw = append(raw, l.origin[:]...)
	raw = binary.BigEndian.AppendUint32(raw, uint32(now.Unix()))
	raw = binary.BigEndian.AppendUint32(raw, req.ttl)
	raw = binary.BigEndian.AppendUint32(raw, uid)
	raw = binary.BigEndian.AppendUint32(raw, gid)
	raw = binary.BigEndian.AppendUint32(raw, req.uid)
	raw = binary.BigEndian.AppendUint32(raw, req.gid)
	raw = binary.BigEndian.AppendUint32(raw, uint32(len(payload)))
	raw = append(raw, payload...)

	if req.zip != ZipNone {
		if z := zipInner(raw[outerLen+macLen:]); z != nil {
			raw = append(raw[:outerLen+macLen], z...)
		} else {
			// Not worth it: munged then sends it uncompressed, and the
			// zip byte (covered by the MAC) says so.
			req.zip = ZipNone
			outer[3] = byte(ZipNone)
		}
	}

	// The digest is exactly macLen bytes, so appending it to mac[:0]
	// fills the reserved room and nothing past it.
	mac := raw[outerLen : outerLen+macLen]
	l.key.sum(mac[:0], req.mac, outer, raw[outerLen+macLen:])

	if req.cipher != CipherNone {
		dek := l.dek.sum(make([]byte, 0, maxMACLen), req.mac, mac)
		block, err := newBlock(req.cipher, dek)
		clear(dek)
		if err != nil {
			return "", localErr(CodeSnafu, "Failed to encrypt credential: %v", err)
		}
		pad := ivLen - (len(raw)-outerLen-macLen)%ivLen
		for range pad {
			raw = append(raw, byte(pad))
		}
		inner := raw[outerLen+macLen:]
		cipher.NewCBCEncrypter(block, outer[5:]).CryptBlocks(inner, inner)
	}
	return armor(raw), nil
}

// DecodeAt validates cred at time now, as l's identity, the way munged
// does, and returns what it carries: payload, encoder uid and gid, encode
// time, TTL (capped at the maximum TTL), origin, algorithms, restrictions.
//
// The checks and their codes, in munged's order: armor and base64
// (EMUNGE_BAD_ARG, EMUNGE_BAD_CRED), version (EMUNGE_BAD_VERSION), cipher,
// MAC and compression types (EMUNGE_BAD_CIPHER, EMUNGE_BAD_MAC,
// EMUNGE_BAD_ZIP), realm (EMUNGE_BAD_REALM), decryption and MAC
// (EMUNGE_CRED_INVALID: wrong key or tampered), inner fields
// (EMUNGE_BAD_CRED), uid/gid restriction (EMUNGE_CRED_UNAUTHORIZED; root
// gets no override), time: now before encode time - TTL is
// EMUNGE_CRED_REWOUND, after encode time + TTL EMUNGE_CRED_EXPIRED (whole
// seconds), and last the replay cache (EMUNGE_CRED_REPLAYED). For the
// last three the *Credential is returned beside the error.
func (l *Local) DecodeAt(cred string, now time.Time) (*Credential, error) {
	if cred == "" {
		return nil, &Error{Code: CodeBadArg, Message: "no credential specified"}
	}
	if strings.IndexByte(cred, 0) >= 0 {
		return nil, &Error{Code: CodeBadArg, Message: "credential contains a NUL byte"}
	}
	if 4+len(cred)+1 > MaxRequestLen {
		return nil, localErr(CodeBadLength, "credential of %d bytes exceeds munged's request limit", len(cred))
	}
	raw, err := unarmor(cred)
	if err != nil {
		return nil, err
	}

	// Outer.
	p := raw
	take := func(n int) []byte {
		v := p[:n:n]
		p = p[n:]
		return v
	}
	if len(p) < 1 {
		return nil, localErr(CodeBadCred, "Truncated credential version")
	}
	if v := take(1)[0]; v != credVersion {
		return nil, localErr(CodeBadVersion, "Invalid credential version %d", v)
	}
	if len(p) < 1 {
		return nil, localErr(CodeBadCred, "Truncated cipher type")
	}
	c := &Credential{Cipher: Cipher(take(1)[0])}
	var ci cipherInfo
	if c.Cipher != CipherNone {
		var ok bool
		if ci, ok = lookupCipher(c.Cipher); !ok {
			return nil, localErr(CodeBadCipher, "Invalid cipher type %d", c.Cipher)
		}
		if !ci.supported {
			return nil, localErr(CodeBadCipher, "cipher %v is not supported by the in-process codec", c.Cipher)
		}
	}
	if len(p) < 1 {
		return nil, localErr(CodeBadCred, "Truncated MAC type")
	}
	c.MAC = MAC(take(1)[0])
	mi, ok := lookupMAC(c.MAC)
	if !ok {
		return nil, localErr(CodeBadMAC, "Invalid MAC type %d", c.MAC)
	}
	if mi.hash == nil {
		return nil, localErr(CodeBadMAC, "MAC %v is not supported by the in-process codec", c.MAC)
	}
	if mi.size < ci.keyLen {
		return nil, localErr(CodeBadMAC, "Invalid MAC type %d with cipher type %d", c.MAC, c.Cipher)
	}
	if len(p) < 1 {
		return nil, localErr(CodeBadCred, "Truncated compression type")
	}
	c.Zip = Zip(take(1)[0])
	if c.Zip != ZipNone && c.Zip != ZipZlib && c.Zip != ZipBzlib {
		return nil, localErr(CodeBadZip, "Invalid compression type %d", c.Zip)
	}
	if len(p) < 1 {
		return nil, localErr(CodeBadCred, "Truncated security realm length")
	}
	realmLen := int(take(1)[0])
	if realmLen > len(p) {
		return nil, localErr(CodeBadCred, "Truncated security realm string")
	}
	if realmLen > 0 {
		return nil, localErr(CodeBadRealm, "security realm %q is not served by the in-process codec", cstr(take(realmLen)))
	}
	if ci.blockLen > len(p) {
		return nil, localErr(CodeBadCred, "Truncated cipher IV")
	}
	iv := take(ci.blockLen)
	outer := raw[:len(raw)-len(p)]
	if mi.size > len(p) {
		return nil, localErr(CodeBadCred, "Truncated MAC")
	}
	mac := take(mi.size)
	inner := p

	// Decrypt. A bad padding is reported only after the MAC check, as
	// munged does, so both failures look alike.
	badPad := false
	if c.Cipher != CipherNone {
		dek := l.dek.sum(make([]byte, 0, maxMACLen), c.MAC, mac)
		block, err := newBlock(c.Cipher, dek)
		clear(dek)
		if err != nil {
			return nil, localErr(CodeSnafu, "Failed to decrypt credential: %v", err)
		}
		n := len(inner) - len(inner)%ci.blockLen
		plain := make([]byte, n)
		cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, inner[:n])
		var good bool
		inner, good = pkcs5Unpad(plain, ci.blockLen)
		badPad = !good || n != len(p)
	}
	want := l.key.sum(make([]byte, 0, maxMACLen), c.MAC, outer, inner)
	if !hmac.Equal(want, mac) || badPad {
		return nil, &Error{Code: CodeCredInvalid, Message: "Invalid credential"}
	}

	if c.Zip != ZipNone {
		z, err := unzipInner(c.Zip, inner, l.maxInner)
		if err == errZipMeta {
			return nil, localErr(CodeSnafu, "Failed to decompress credential")
		}
		if err != nil {
			return nil, localErr(CodeCredInvalid, "Failed to decompress credential: %v", err)
		}
		inner = z
	}

	// Inner.
	p = inner
	if len(p) < saltLen {
		return nil, localErr(CodeBadCred, "Truncated salt")
	}
	take(saltLen)
	if len(p) < 1 {
		return nil, localErr(CodeBadCred, "Truncated origin IP addr length")
	}
	switch alen := int(take(1)[0]); {
	case alen > len(p):
		return nil, localErr(CodeBadCred, "Truncated origin IP addr")
	case alen == 4:
		c.Origin = netip.AddrFrom4([4]byte(take(4)))
	case alen != 0:
		return nil, localErr(CodeBadCred, "Invalid origin IP addr length")
	}
	u32 := func(what string) (uint32, error) {
		if len(p) < 4 {
			return 0, localErr(CodeBadCred, "Truncated %s", what)
		}
		return binary.BigEndian.Uint32(take(4)), nil
	}
	var f [7]uint32
	for i, what := range [...]string{"encode time", "time-to-live", "UID", "GID", "UID restriction", "GID restriction", "data length"} {
		if f[i], err = u32(what); err != nil {
			return nil, err
		}
	}
	time0, ttl := f[0], f[1]
	c.UID, c.GID, c.UIDRestrict, c.GIDRestrict = f[2], f[3], f[4], f[5]
	if uint64(f[6]) > uint64(len(p)) {
		return nil, localErr(CodeBadCred, "Truncated data")
	}
	if f[6] > 0 {
		c.Payload = take(int(f[6]))
	}
	if len(p) != 0 {
		return nil, localErr(CodeBadCred, "%d bytes of trailing data", len(p))
	}

	// Authorization: who may see it.
	if (c.UIDRestrict != UIDAny && c.UIDRestrict != l.ident.UID) ||
		(c.GIDRestrict != GIDAny && c.GIDRestrict != l.ident.GID && !slices.Contains(l.ident.Groups, c.GIDRestrict)) {
		return nil, localErr(CodeCredUnauthorized, "Unauthorized credential for client UID=%d GID=%d", l.ident.UID, l.ident.GID)
	}

	// Time: munged allows a clock skew of up to the TTL either way.
	ttl = min(ttl, l.maxTTL)
	t := now.Unix()
	c.Encoded = time.Unix(int64(time0), 0)
	c.Decoded = time.Unix(t, 0)
	c.TTL = time.Duration(ttl) * time.Second
	if t < int64(time0)-int64(ttl) {
		return c, &Error{Code: CodeCredRewound}
	}
	exp := int64(time0) + int64(ttl)
	if t > exp {
		return c, &Error{Code: CodeCredExpired}
	}
	if int64(time0) < l.notBefore {
		return c, &Error{Code: CodeCredReplayed}
	}
	fresh, err := l.replay.insert(mac, exp, t)
	if err != nil {
		return nil, err
	}
	if !fresh {
		return c, &Error{Code: CodeCredReplayed}
	}
	return c, nil
}
