package ctld

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// confHash is the hash 22.05 computes over slurm.conf while parsing it
// (parse_config.c): a CRC-16-style fold of every byte read, included files
// in place. scontrol show config prints HASH_VAL = Match when its own
// reading gives the same value, and slurmctld warns about nodes whose
// slurm.conf differs.
func confHash(path string) (uint32, error) {
	var h uint32
	err := hashFile(&h, path, filepath.Dir(path), 0)
	return h, err
}

func hashFile(h *uint32, path, dir string, depth int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	sc.Split(scanLinesKeepNL)
	for sc.Scan() {
		line := sc.Bytes()
		hashBytes(h, line)
		f := strings.Fields(string(line))
		if depth < 10 && len(f) >= 2 && strings.EqualFold(f[0], "include") {
			inc := f[1]
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(dir, inc)
			}
			if err := hashFile(h, inc, dir, depth+1); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// hashBytes folds bytes in as _compute_hash_val does, char being signed.
func hashBytes(h *uint32, b []byte) {
	for _, c := range b {
		*h ^= uint32(int32(int8(c)) << 8)
		for i := 0; i < 8; i++ {
			if *h&0x8000 != 0 {
				*h = (*h << 1) ^ 4129
			} else {
				*h <<= 1
			}
		}
	}
}

// scanLinesKeepNL splits after each newline, keeping it (fgets does).
func scanLinesKeepNL(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i+1], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
