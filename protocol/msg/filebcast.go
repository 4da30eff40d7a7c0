package msg

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

// REQUEST_FILE_BCAST, one block of a file sbcast (or srun --bcast) sends
// to every node of a job (22.05 layout, protocol 21.08 and later:
// _pack_file_bcast in slurm_protocol_pack.c).

// FileBcast flags (FILE_BCAST_* in slurm_protocol_defs.h).
const (
	FileBcastForce     uint16 = 1 << 0 // replace an existing file
	FileBcastLastBlock uint16 = 1 << 1 // the file's last block
	FileBcastSO        uint16 = 1 << 2 // a shared object, into the executable's _libs directory
	FileBcastExe       uint16 = 1 << 3 // an executable whose shared objects follow
)

// FileBcast compression types (COMPRESS_* in slurm_protocol_defs.h).
const (
	CompressOff  uint16 = 0
	CompressZlib uint16 = 1 // defined, but no 22.05 sbcast sends it
	CompressLZ4  uint16 = 2
)

// FileBcast is REQUEST_FILE_BCAST. UID, UserName and GID describe the
// source file's owner on the sending host: a slurmd takes the identity it
// writes with from the message's authentication and the credential, never
// from them.
type FileBcast struct {
	BlockNo  uint32 // 1 for the first block
	Compress uint16
	Flags    uint16
	Modes    uint16 // the source file's st_mode
	UID      uint32
	UserName NullString
	GID      uint32
	// Atime and Mtime are the source file's times with sbcast -p, else 0.
	Atime int64
	Mtime int64
	Fname NullString
	// Block's length travels twice (block_len, then packmem's own
	// length); a decoder refuses a body where they differ.
	UncompLen   uint32 // Block's length once decompressed
	BlockOffset uint64 // offset of the block's uncompressed data in the file
	FileSize    uint64
	Block       []byte
	Cred        SbcastCred
}

func decodeFileBcast(r *pack.Reader, v codec.Version) (any, error) {
	if err := checkVersion("REQUEST_FILE_BCAST", v); err != nil {
		return nil, err
	}
	var b FileBcast
	b.BlockNo = r.U32()
	b.Compress = r.U16()
	b.Flags = r.U16()
	b.Modes = r.U16()
	b.UID = r.U32()
	b.UserName.Value, b.UserName.Valid = r.OptStr()
	b.GID = r.U32()
	b.Atime = r.Time()
	b.Mtime = r.Time()
	b.Fname.Value, b.Fname.Valid = r.OptStr()
	blockLen := r.U32()
	b.UncompLen = r.U32()
	b.BlockOffset = r.U64()
	b.FileSize = r.U64()
	b.Block = r.Mem()
	if r.Err() == nil && uint32(len(b.Block)) != blockLen {
		r.Fail(fmt.Errorf("%w: block_len %d, block of %d bytes", ErrDaemonBody, blockLen, len(b.Block)))
	}
	walkSbcastCred(&decoder{r: r}, &b.Cred)
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("msg: decode REQUEST_FILE_BCAST: %w", err)
	}
	return b, nil
}

func encodeFileBcast(w *pack.Writer, v codec.Version, body any) error {
	if err := checkVersion("REQUEST_FILE_BCAST", v); err != nil {
		return err
	}
	var b *FileBcast
	switch x := body.(type) {
	case FileBcast:
		b = &x
	case *FileBcast:
		b = x
	}
	if b == nil {
		return fmt.Errorf("%w: REQUEST_FILE_BCAST body is %T", codec.ErrEncode, body)
	}
	w.U32(b.BlockNo)
	w.U16(b.Compress)
	w.U16(b.Flags)
	w.U16(b.Modes)
	w.U32(b.UID)
	w.OptStr(b.UserName.Value, b.UserName.Valid)
	w.U32(b.GID)
	w.Time(b.Atime)
	w.Time(b.Mtime)
	w.OptStr(b.Fname.Value, b.Fname.Valid)
	w.U32(uint32(len(b.Block)))
	w.U32(b.UncompLen)
	w.U64(b.BlockOffset)
	w.U64(b.FileSize)
	w.Mem(b.Block)
	e := &encoder{w: w}
	walkSbcastCred(e, &b.Cred)
	return e.e
}

func init() {
	registrars = append(registrars, func(g *codec.Registry) {
		g.Register(msgtype.REQUEST_FILE_BCAST, codec.BodyCodec{Decode: decodeFileBcast, Encode: encodeFileBcast})
	})
}
