package munge

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// munged's unix-socket protocol (MUNGE 0.5.x, message format version 4).
//
// Every message is an 11-byte header followed by a body; all integers are
// big-endian:
//
//	u32 magic (0x00606D4B)  u8 version (4)  u8 type  u8 retry  u32 body length
//
// Bodies (strings carry their trailing NUL inside the counted length):
//
//	ENC_REQ (2): u8 cipher, u8 mac, u8 zip, u8 realm_len, realm,
//	             u32 ttl, u32 uid_restriction, u32 gid_restriction,
//	             u32 data_len, data
//	ENC_RSP (3): u8 status, u8 err_len, err, u32 data_len, data (the
//	             credential text with a NUL)
//	DEC_REQ (4): u32 data_len, data (the credential text with a NUL)
//	DEC_RSP (5): u8 status, u8 err_len, err, u8 cipher, u8 mac, u8 zip,
//	             u8 realm_len, realm, u32 ttl, u8 addr_len, addr,
//	             u32 encode_time, u32 decode_time, u32 uid, u32 gid,
//	             u32 uid_restriction, u32 gid_restriction, u32 data_len, data
//
// On Linux munged identifies the client with SO_PEERCRED, so the client sends
// nothing beyond the request. (Builds that authenticate by passing a file
// descriptor send an AUTH_FD_REQ (6) first; Linux builds never do.)
const (
	msgMagic   = 0x00606D4B
	msgVersion = 4
	hdrLen     = 11

	msgEncReq    = 2
	msgEncRsp    = 3
	msgDecReq    = 4
	msgDecRsp    = 5
	msgAuthFDReq = 6
)

// MaxRequestLen is the largest request body munged accepts
// (MUNGE_MAXIMUM_REQ_LEN); libmunge refuses to send anything longer.
const MaxRequestLen = 1 << 20

// DefaultMaxReplyLen bounds the reply body we are willing to read. The
// largest legitimate reply is an encode of a payload that just fits in
// MaxRequestLen: base64 makes it 4/3 as long, plus a few hundred bytes.
const DefaultMaxReplyLen = 2 << 20

// Cipher, MAC and Zip are munged's algorithm numbers. The zero options mean
// "munged's default" when encoding (see EncodeOptions); decoding reports the
// algorithms actually used.
type (
	Cipher uint8
	MAC    uint8
	Zip    uint8
)

// Algorithm numbers (munge.h).
const (
	CipherNone     Cipher = 0
	CipherDefault  Cipher = 1
	CipherBlowfish Cipher = 2
	CipherCAST5    Cipher = 3
	CipherAES128   Cipher = 4
	CipherAES256   Cipher = 5

	MACNone      MAC = 0 // invalid for encoding: munged requires a MAC
	MACDefault   MAC = 1
	MACMD5       MAC = 2
	MACSHA1      MAC = 3
	MACRIPEMD160 MAC = 4
	MACSHA256    MAC = 5
	MACSHA512    MAC = 6

	ZipNone    Zip = 0
	ZipDefault Zip = 1
	ZipBzlib   Zip = 2
	ZipZlib    Zip = 3
)

func (c Cipher) String() string {
	return enumName(uint8(c), "cipher", "none", "default", "blowfish", "cast5", "aes128", "aes256")
}

func (m MAC) String() string {
	return enumName(uint8(m), "mac", "none", "default", "md5", "sha1", "ripemd160", "sha256", "sha512")
}

func (z Zip) String() string {
	return enumName(uint8(z), "zip", "none", "default", "bzlib", "zlib")
}

func enumName(v uint8, kind string, names ...string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", kind, v)
}

// UIDAny and GIDAny lift the decode restriction (MUNGE_UID_ANY /
// MUNGE_GID_ANY, also Slurm's SLURM_AUTH_UID_ANY).
const (
	UIDAny uint32 = 0xFFFFFFFF
	GIDAny uint32 = 0xFFFFFFFF
)

// ttlMaximum asks munged for its configured maximum TTL (MUNGE_TTL_MAXIMUM,
// -1 as an unsigned 32-bit value).
const ttlMaximum uint32 = 0xFFFFFFFF

// encReq holds the fields of an encode request.
type encReq struct {
	cipher Cipher
	mac    MAC
	zip    Zip
	ttl    uint32
	uid    uint32
	gid    uint32
}

func appendHeader(b []byte, typ, retry uint8, bodyLen int) []byte {
	b = binary.BigEndian.AppendUint32(b, msgMagic)
	b = append(b, msgVersion, typ, retry)
	return binary.BigEndian.AppendUint32(b, uint32(bodyLen))
}

// marshalEncReq returns header and body of an encode request. The realm is
// always empty (realm_len 0), as with every libmunge caller.
func marshalEncReq(r encReq, payload []byte, retry uint8) []byte {
	n := 4 + 4 + 4 + 4 + 4 + len(payload)
	b := make([]byte, 0, hdrLen+n)
	b = appendHeader(b, msgEncReq, retry, n)
	b = append(b, uint8(r.cipher), uint8(r.mac), uint8(r.zip), 0)
	b = binary.BigEndian.AppendUint32(b, r.ttl)
	b = binary.BigEndian.AppendUint32(b, r.uid)
	b = binary.BigEndian.AppendUint32(b, r.gid)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// marshalDecReq returns header and body of a decode request; the credential
// travels with a trailing NUL, which the data length counts.
func marshalDecReq(cred string, retry uint8) []byte {
	n := 4 + len(cred) + 1
	b := make([]byte, 0, hdrLen+n)
	b = appendHeader(b, msgDecReq, retry, n)
	b = binary.BigEndian.AppendUint32(b, uint32(len(cred)+1))
	b = append(b, cred...)
	return append(b, 0)
}

// parseHeader checks magic and version and returns type and body length.
func parseHeader(h []byte) (typ uint8, bodyLen uint32, err error) {
	if len(h) != hdrLen {
		return 0, 0, fmt.Errorf("%w: header is %d bytes", ErrMalformedReply, len(h))
	}
	if m := binary.BigEndian.Uint32(h); m != msgMagic {
		return 0, 0, fmt.Errorf("%w: bad magic %#08x", ErrMalformedReply, m)
	}
	if v := h[4]; v != msgVersion {
		return 0, 0, fmt.Errorf("%w: message version %d, want %d", ErrMalformedReply, v, msgVersion)
	}
	return h[5], binary.BigEndian.Uint32(h[7:]), nil
}

// reader walks a reply body; every length is checked against what remains
// before anything is sliced, and slices alias the body (no allocation).
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated at %s", ErrMalformedReply, what)
	}
	r.b = nil
}

func (r *reader) u8(what string) uint8 {
	if len(r.b) < 1 {
		r.fail(what)
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) u32(what string) uint32 {
	if len(r.b) < 4 {
		r.fail(what)
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) bytes(n uint32, what string) []byte {
	if uint64(n) > uint64(len(r.b)) {
		r.fail(what)
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) end() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", ErrMalformedReply, len(r.b))
	}
	return r.err
}

// cstr turns a NUL-terminated wire string into a Go string, dropping the
// terminator and anything after an embedded NUL (as C would).
func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// encRsp is a parsed encode reply.
type encRsp struct {
	status Code
	errStr string
	cred   string
}

func parseEncRsp(body []byte) (encRsp, error) {
	r := reader{b: body}
	var p encRsp
	p.status = Code(r.u8("status"))
	p.errStr = cstr(r.bytes(uint32(r.u8("error length")), "error string"))
	p.cred = cstr(r.bytes(r.u32("data length"), "credential"))
	return p, r.end()
}

// decRsp is a parsed decode reply.
type decRsp struct {
	status     Code
	errStr     string
	cipher     Cipher
	mac        MAC
	zip        Zip
	realm      string
	ttl        uint32
	addr       netip.Addr
	encodeTime uint32
	decodeTime uint32
	uid, gid   uint32
	ruid, rgid uint32
	data       []byte // aliases the reply body
}

func parseDecRsp(body []byte) (decRsp, error) {
	r := reader{b: body}
	var p decRsp
	p.status = Code(r.u8("status"))
	p.errStr = cstr(r.bytes(uint32(r.u8("error length")), "error string"))
	p.cipher = Cipher(r.u8("cipher"))
	p.mac = MAC(r.u8("mac"))
	p.zip = Zip(r.u8("zip"))
	p.realm = cstr(r.bytes(uint32(r.u8("realm length")), "realm"))
	p.ttl = r.u32("ttl")
	alen := r.u8("address length")
	a := r.bytes(uint32(alen), "address")
	if r.err == nil {
		switch alen {
		case 0:
		case 4:
			p.addr = netip.AddrFrom4([4]byte(a))
		case 16:
			p.addr = netip.AddrFrom16([16]byte(a))
		default:
			// libmunge copies it into a 4-byte in_addr; anything but
			// 0 or 4 (or a future IPv6 16) is not a reply we trust.
			r.err = fmt.Errorf("%w: origin address length %d", ErrMalformedReply, alen)
		}
	}
	p.encodeTime = r.u32("encode time")
	p.decodeTime = r.u32("decode time")
	p.uid = r.u32("uid")
	p.gid = r.u32("gid")
	p.ruid = r.u32("uid restriction")
	p.rgid = r.u32("gid restriction")
	p.data = r.bytes(r.u32("data length"), "data")
	return p, r.end()
}
