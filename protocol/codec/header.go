package codec

import (
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// Flags is the header's u16 flags field.
type Flags uint16

// Header flag bits. 22.05 defines the first six; SLURM_NO_AUTH_CRED and
// SLURM_PACK_ADDRS are 23.02+/23.11+ and mean nothing to a 22.05 peer (in
// particular no flag can remove the auth section at 22.05).
const (
	FlagGlobalAuthKey       Flags = 0x0001
	FlagSlurmdbdConnection  Flags = 0x0002 // slurmdbd framing; not supported here
	FlagKeepBuffer          Flags = 0x0004
	FlagDropPriv            Flags = 0x0008
	FlagUseBcastNetwork     Flags = 0x0010
	FlagCtldQueueProcessing Flags = 0x0020
	FlagNoAuthCred          Flags = 0x0040
	FlagPackAddrs           Flags = 0x0080
)

// Header is a Slurm message header (pack_header).
type Header struct {
	Version Version
	Flags   Flags
	// Reserved is the extra u16 that 20.11 and 21.08 headers carry between
	// flags and msg_type (always 0 from Slurm). Kept so such a header
	// re-encodes byte for byte; must be 0 at 22.05.
	Reserved   uint16
	MsgType    msgtype.Type
	BodyLength uint32
	Forward    Forward
	RetList    []RetItem
	// OrigAddr is the original sender's address, set by a forwarding slurmd
	// (and by slurmd on its replies); zero (AF_UNSPEC) on client traffic.
	OrigAddr Addr
}

// Forward asks the receiver to relay the message to more nodes.
type Forward struct {
	// Count is the number of nodes in Nodes; 0 means no forwarding, and then
	// the other fields must be zero.
	Count uint16
	// Nodes is the ranged hostlist ("n[2-9]").
	Nodes string
	// Timeout in milliseconds.
	Timeout   uint32
	TreeWidth uint16
}

// RetItem is one entry of a header's ret_list: the reply of one node of a
// forwarding tree.
type RetItem struct {
	// Err is the node's error code (a failed forward carries e.g.
	// SLURM_COMMUNICATIONS_CONNECTION_ERROR with RESPONSE_FORWARD_FAILED).
	Err          int32
	MsgType      msgtype.Type
	NodeName     string
	NodeNameNull bool // the name was packed as NULL
	// Body is the decoded body of MsgType, as the Registry's codec returns it
	// (ReturnCode for RESPONSE_SLURM_RC).
	Body any
}

// minRetItem is the smallest ret_list entry: u32 err, u16 type, NULL name.
const minRetItem = 4 + 2 + 4

// DecodeHeader decodes the header at the start of msg (the bytes after the
// length prefix) and returns it with its length in bytes.
func (c *Codec) DecodeHeader(msg []byte) (Header, int, error) {
	r := pack.NewReader(msg)
	h, err := c.readHeader(r)
	if err != nil {
		return Header{}, 0, err
	}
	return h, r.Offset(), nil
}

func (c *Codec) readHeader(r *pack.Reader) (Header, error) {
	var h Header
	h.Version = Version(r.U16())
	if err := r.Err(); err != nil {
		return Header{}, newErr(ErrHeader, slurmerr.SLURM_COMMUNICATIONS_RECEIVE_ERROR, err, "version")
	}
	lay, ok := layoutFor(h.Version)
	if !ok {
		// A 22.05 receiver fails versions below its minimum while unpacking
		// the header (a receive error) and newer ones in its version check.
		code := slurmerr.SLURM_PROTOCOL_VERSION_ERROR
		if h.Version < Version2011 {
			code = slurmerr.SLURM_COMMUNICATIONS_RECEIVE_ERROR
		}
		return Header{}, newErr(ErrVersion, code, nil,
			"protocol version %s (%d) not supported", h.Version, uint16(h.Version))
	}
	h.Flags = Flags(r.U16())
	if lay.reservedU16 {
		h.Reserved = r.U16()
	}
	h.MsgType = msgtype.Type(r.U16())
	h.BodyLength = r.U32()
	h.Forward.Count = r.U16()
	if h.Forward.Count > 0 {
		nodes, ok := r.OptStr()
		if r.Err() == nil && !ok {
			r.Fail(errorString("forward count without a node list"))
		}
		h.Forward.Nodes = nodes
		h.Forward.Timeout = r.U32()
		h.Forward.TreeWidth = r.U16()
	}
	retCnt := int(r.U16())
	if r.Err() == nil && retCnt > 0 {
		if retCnt > r.Remaining()/minRetItem {
			r.Fail(errorString("ret_list count exceeds the bytes left"))
		} else {
			h.RetList = make([]RetItem, retCnt)
			for i := range h.RetList {
				if err := c.readRetItem(r, h.Version, &h.RetList[i]); err != nil {
					return Header{}, err
				}
			}
		}
	}
	h.OrigAddr = readAddr(r)
	if err := r.Err(); err != nil {
		return Header{}, newErr(ErrHeader, slurmerr.SLURM_COMMUNICATIONS_RECEIVE_ERROR, err, "%v header", h.MsgType)
	}
	return h, nil
}

func (c *Codec) readRetItem(r *pack.Reader, v Version, it *RetItem) error {
	it.Err = int32(r.U32())
	it.MsgType = msgtype.Type(r.U16())
	var ok bool
	it.NodeName, ok = r.OptStr()
	it.NodeNameNull = !ok
	if r.Err() != nil {
		return nil // reported by the caller with the header context
	}
	bc, found := c.bodies().Lookup(it.MsgType)
	if !found {
		return newErr(ErrRetBody, slurmerr.SLURM_COMMUNICATIONS_RECEIVE_ERROR, nil,
			"ret_list entry of type %v", it.MsgType)
	}
	body, err := bc.Decode(r, v)
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		return newErr(ErrHeader, slurmerr.SLURM_COMMUNICATIONS_RECEIVE_ERROR, err,
			"ret_list entry of type %v", it.MsgType)
	}
	it.Body = body
	return nil
}

// AppendHeader packs h at its version.
func (c *Codec) AppendHeader(w *pack.Writer, h *Header) error {
	lay, ok := layoutFor(h.Version)
	if !ok {
		return newErr(ErrVersion, slurmerr.SLURM_PROTOCOL_VERSION_ERROR, nil,
			"protocol version %s (%d) not supported", h.Version, uint16(h.Version))
	}
	if !lay.reservedU16 && h.Reserved != 0 {
		return encErr("reserved u16 set in a %s header", h.Version)
	}
	if h.Forward.Count == 0 && (h.Forward.Nodes != "" || h.Forward.Timeout != 0 || h.Forward.TreeWidth != 0) {
		return encErr("forward fields set with a zero forward count")
	}
	if len(h.RetList) > 0xffff {
		return encErr("ret_list of %d entries", len(h.RetList))
	}
	w.U16(uint16(h.Version))
	w.U16(uint16(h.Flags))
	if lay.reservedU16 {
		w.U16(h.Reserved)
	}
	w.U16(uint16(h.MsgType))
	w.U32(h.BodyLength)
	w.U16(h.Forward.Count)
	if h.Forward.Count > 0 {
		w.Str(h.Forward.Nodes)
		w.U32(h.Forward.Timeout)
		w.U16(h.Forward.TreeWidth)
	}
	w.U16(uint16(len(h.RetList)))
	for i := range h.RetList {
		it := &h.RetList[i]
		bc, found := c.bodies().Lookup(it.MsgType)
		if !found {
			return encErr("no body codec for ret_list entry of type %v", it.MsgType)
		}
		w.U32(uint32(it.Err))
		w.U16(uint16(it.MsgType))
		w.OptStr(it.NodeName, !it.NodeNameNull)
		if err := bc.Encode(w, h.Version, it.Body); err != nil {
			return err
		}
	}
	return appendAddr(w, h.OrigAddr)
}

type errorString string

func (e errorString) Error() string { return string(e) }
