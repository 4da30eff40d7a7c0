package bcast

import (
	"errors"
	"fmt"
)

// MaxLZ4Ratio is the most an LZ4 block can expand: one input byte of a
// length extension adds at most 255 output bytes.
const MaxLZ4Ratio = 255

// lz4FirstAlloc is the output capacity allocated before decoding, beyond
// four times the input; append grows it from there.
const lz4FirstAlloc = 1 << 20

// ErrLZ4 reports a block that is not valid LZ4 data of the announced size.
var ErrLZ4 = errors.New("lz4 decompression error")

// DecompressLZ4 decodes one raw LZ4 block (the block format sbcast -C
// makes with LZ4_compress_destSize, no frame around it) whose decoded
// length must be exactly n, as LZ4_decompress_safe with an n-byte
// destination and the uncomp_len check after it.
//
// Every length is checked against the input left and the output room
// before it is used. An announced length no LZ4 block of len(src) bytes
// can decode to (MaxLZ4Ratio) is refused before anything is allocated,
// and the output grows with what the input really decodes to rather than
// being allocated at the announced length: a short or invalid block
// announcing a large size costs little memory.
func DecompressLZ4(src []byte, n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: negative length", ErrLZ4)
	}
	if n > MaxLZ4Ratio*len(src)+16 {
		return nil, fmt.Errorf("%w: %d bytes announced from %d compressed", ErrLZ4, n, len(src))
	}
	dst := make([]byte, 0, min(n, lz4FirstAlloc+4*len(src)))
	i := 0
	for {
		if i >= len(src) {
			return nil, fmt.Errorf("%w: truncated block", ErrLZ4)
		}
		token := src[i]
		i++
		lit := int(token >> 4)
		if lit == 15 {
			l, next, err := lz4Length(src, i)
			if err != nil {
				return nil, err
			}
			lit += l
			i = next
		}
		if lit > len(src)-i || lit > n-len(dst) {
			return nil, fmt.Errorf("%w: literal run past the end", ErrLZ4)
		}
		dst = append(dst, src[i:i+lit]...)
		i += lit
		if i == len(src) {
			// The last sequence is literals only.
			break
		}
		if len(src)-i < 2 {
			return nil, fmt.Errorf("%w: truncated match offset", ErrLZ4)
		}
		off := int(src[i]) | int(src[i+1])<<8
		i += 2
		if off == 0 || off > len(dst) {
			return nil, fmt.Errorf("%w: match offset %d outside the output", ErrLZ4, off)
		}
		ml := int(token & 15)
		if ml == 15 {
			l, next, err := lz4Length(src, i)
			if err != nil {
				return nil, err
			}
			ml += l
			i = next
		}
		ml += 4
		if ml > n-len(dst) {
			return nil, fmt.Errorf("%w: match past the end", ErrLZ4)
		}
		start := len(dst) - off
		if off >= ml {
			dst = append(dst, dst[start:start+ml]...)
			continue
		}
		// The match overlaps its own output: the last off bytes repeat.
		for k := 0; k < ml; k++ {
			dst = append(dst, dst[start+k])
		}
	}
	if len(dst) != n {
		return nil, fmt.Errorf("%w: %d bytes decoded, %d announced", ErrLZ4, len(dst), n)
	}
	return dst, nil
}

// lz4Length reads the 255-continued extension of a length field.
func lz4Length(src []byte, i int) (int, int, error) {
	total := 0
	for {
		if i >= len(src) {
			return 0, 0, fmt.Errorf("%w: truncated length", ErrLZ4)
		}
		b := src[i]
		i++
		total += int(b)
		if total > 1<<31 {
			return 0, 0, fmt.Errorf("%w: length overflow", ErrLZ4)
		}
		if b != 255 {
			return total, i, nil
		}
	}
}
