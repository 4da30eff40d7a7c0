// Package codec frames Slurm RPC messages: the length prefix, the message
// header, the auth section and the body, for protocol 22.05 (0x2600) and the
// two older versions a 22.05 daemon still accepts (21.08 and 20.11).
//
// A frame on the wire is
//
//	u32 length | header | auth section | body
//
// where length counts the three parts and header.body_length counts the body
// alone. Decoding is strict: the length must not exceed MaxMsgSize, the
// header must parse, the auth section must belong to a known plugin and parse
// exactly, and body_length must equal the bytes that follow it. A failed
// decode returns an error and a zero Frame. Encoding a decoded Frame
// reproduces the bytes it came from.
//
// Message bodies stay opaque here, except inside the header's ret_list, whose
// entries carry no length and can only be split by decoding them: a Registry
// maps message types to body codecs for that.
//
// The package is pure: no network, process or clock access (the layering
// test enforces it). Stream I/O lives in protocol/wire.
package codec
