// Package wire moves Slurm frames over byte streams: read one length-prefixed
// frame, write one. It holds no timeouts of its own; give it a connection
// with a deadline set (net.Conn.SetDeadline) and the deadline bounds the call.
// The codec it uses (protocol/codec) stays pure.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/goslurm/goslurm/protocol/codec"
)

// DefaultMaxSize is the largest frame ReadFrame accepts when max is 0:
// Slurm's MAX_MSG_SIZE.
const DefaultMaxSize = codec.MaxMsgSize

// chunk bounds how much is allocated ahead of data actually received, so a
// peer that announces a huge frame and sends nothing costs little memory.
const chunk = 1 << 20

// ReadRaw reads one frame's bytes, length prefix included. max bounds the
// length prefix (0 = DefaultMaxSize). A stream that ends cleanly before the
// prefix gives io.EOF; one that ends inside a frame gives
// io.ErrUnexpectedEOF.
func ReadRaw(r io.Reader, max int) ([]byte, error) {
	if max <= 0 || max > DefaultMaxSize {
		max = DefaultMaxSize
	}
	var pfx [4]byte
	if _, err := io.ReadFull(r, pfx[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(pfx[:])
	if err := (&codec.Codec{MaxMsgSize: max}).CheckLength(n); err != nil {
		return nil, err
	}
	buf := make([]byte, 4, 4+min(int(n), chunk))
	copy(buf, pfx[:])
	for remaining := int(n); remaining > 0; {
		step := min(remaining, chunk)
		if cap(buf)-len(buf) < step {
			buf = append(buf, make([]byte, step)...)[:len(buf)]
		}
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+m]
		remaining -= m
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("wire: frame of %d bytes cut short after %d: %w", n, int(n)-remaining, err)
		}
	}
	return buf, nil
}

// ReadFrame reads and decodes one frame with c (nil = codec.Default).
func ReadFrame(r io.Reader, c *codec.Codec, max int) (codec.Frame, error) {
	if c == nil {
		c = codec.Default
	}
	if max <= 0 && c.MaxMsgSize > 0 {
		max = c.MaxMsgSize
	}
	raw, err := ReadRaw(r, max)
	if err != nil {
		return codec.Frame{}, err
	}
	return c.DecodeFrame(raw)
}

// copyBelow is the body size under which WriteFrame copies the body behind
// the head and makes one Write call: the copy is cheap, and a writer that is
// not a socket (a pipe, net.Pipe) then sees one write per frame.
const copyBelow = 64 << 10

// WriteFrame encodes f with c (nil = codec.Default) and writes it. A body of
// copyBelow bytes or more is not copied: head and body go out as
// net.Buffers, one writev on a TCP or Unix socket and two Write calls on
// any other writer.
func WriteFrame(w io.Writer, c *codec.Codec, f *codec.Frame) error {
	if c == nil {
		c = codec.Default
	}
	if len(f.Body) < copyBelow {
		buf, err := c.AppendFrame(nil, f)
		if err != nil {
			return err
		}
		_, err = w.Write(buf)
		return err
	}
	head, err := c.AppendHead(nil, f)
	if err != nil {
		return err
	}
	bufs := net.Buffers{head, f.Body}
	_, err = bufs.WriteTo(w)
	return err
}
