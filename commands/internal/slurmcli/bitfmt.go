package slurmcli

import (
	"strconv"
	"strings"
)

// BitFmt is bit_fmt: set bits as "a-b,c" ranges, cut to fit a buffer of
// size bytes (size <= 0: no limit).
func BitFmt(bits []bool, size int) string {
	var b strings.Builder
	comma := ""
	for i := 0; i < len(bits); i++ {
		if !bits[i] {
			continue
		}
		start := i
		for i+1 < len(bits) && bits[i+1] {
			i++
		}
		b.WriteString(comma)
		b.WriteString(strconv.Itoa(start))
		if i != start {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(i))
		}
		comma = ","
	}
	s := b.String()
	if size > 0 && len(s) > size-1 {
		s = s[:size-1]
	}
	return s
}

// HexMaskBits decodes Slurm's "0x..." hex bitmap text (bit 0 is the low
// bit of the last digit); ok false if s is not one.
func HexMaskBits(s string) ([]bool, bool) {
	if len(s) < 3 || s[1] != 'x' {
		return nil, false
	}
	digits := s[2:]
	bits := make([]bool, len(s)*4)
	for i := 0; i < len(digits); i++ {
		d := digits[len(digits)-1-i]
		v, err := strconv.ParseUint(string(d), 16, 8)
		if err != nil {
			return bits, false
		}
		for k := 0; k < 4; k++ {
			if v&(1<<k) != 0 {
				bits[i*4+k] = true
			}
		}
	}
	return bits, true
}

// XlateArrayTaskStr is xlate_array_task_str: the controller's hex task
// bitmap made human-readable ("1-3,7", "0-20:4", with "%N" for a
// throttle), with the bitmap. bitstrLen is SLURM_BITSTR_LEN's value (-1
// unset).
func XlateArrayTaskStr(hex string, maxTasks uint32, bitstrLen int) (string, []bool) {
	bits, ok := HexMaskBits(hex)
	if !ok && bits == nil {
		return hex, nil
	}
	first, last, count := -1, -1, 0
	for i, b := range bits {
		if b {
			if first < 0 {
				first = i
			}
			last = i
			count++
		}
	}
	out := ""
	stepDone := false
	if first >= 0 && last-first > 10 && count > 5 && !bits[first+1] {
		step, prev, isStep := 0, first, true
		for i := first + 1; i <= last; i++ {
			if !bits[i] {
				continue
			}
			if step == 0 {
				step = i - prev
			} else if i-prev != step {
				isStep = false
				break
			}
			prev = i
		}
		if isStep {
			out = strconv.Itoa(first) + "-" + strconv.Itoa(last) + ":" + strconv.Itoa(step)
			stepDone = true
		}
	}
	if !stepDone {
		if bitstrLen < 0 {
			bitstrLen = 64
		} else if bitstrLen > 4096 {
			bitstrLen = 4096
		}
		if bitstrLen > 0 {
			out = BitFmt(bits, bitstrLen)
			if len(out) > bitstrLen-3 {
				buf := []byte(out)
				for len(buf) < bitstrLen-1 {
					buf = append(buf, 0)
				}
				for i := 0; i < 3; i++ {
					buf[bitstrLen-2-i] = '.'
				}
				out = strings.TrimRight(string(buf), "\x00")
			}
		} else {
			out = BitFmt(bits, 0)
		}
	}
	if maxTasks != 0 {
		out += "%" + strconv.FormatUint(uint64(maxTasks), 10)
	}
	return out, bits
}
