package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
)

// verifyMultiProg is srun's verify_multi_name: every line of a
// --multi-prog file names task ranks and a program, and every task of the
// step has a line. Ranks beyond a task count srun chose itself raise it.
// The error is returned as srun logs it.
func verifyMultiProg(path string, data []byte, o *jobopt.Opts) error {
	if o.Ntasks <= 0 {
		return logErr("Invalid task count %d", o.Ntasks)
	}
	covered := map[int]bool{}
	raised, asterisk := false, false
	mark := func(lo, hi int, dupOK bool) error {
		if lo > hi {
			return logErr("Invalid task range, %d-%d", lo, hi)
		}
		if hi >= o.Ntasks {
			if o.NtasksSet && !raised {
				return logErr("Invalid task id, %d >= ntasks", hi)
			}
			o.Ntasks, o.NtasksSet, raised = hi+1, true, true
		}
		for i := lo; i <= hi; i++ {
			if covered[i] && !dupOK {
				return logErr("Duplicate record for task %d", i)
			}
			covered[i] = true
		}
		return nil
	}
	ranks := func(spec string) error {
		if spec == "*" {
			o.NtasksSet, asterisk = true, true
			return mark(0, o.Ntasks-1, true)
		}
		for _, r := range strings.Split(spec, ",") {
			if r == "" {
				continue
			}
			if asterisk {
				return logErr("Task range specification with asterisk must be last")
			}
			lo, hi, isRange := strings.Cut(r, "-")
			if !allDigits(lo) || (isRange && !allDigits(hi)) {
				if isRange && allDigits(lo) {
					return logErr("Invalid task range specification")
				}
				return logErr("Invalid task range specification (%s)", r)
			}
			l := atoiC(lo)
			h := l
			if isRange {
				h = atoiC(hi)
			}
			if err := mark(l, h, false); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	lineNum := 0
	lastBreak := false
	var logErrs []string
	for sc.Scan() {
		lineNum++
		line := sc.Text()
		brk := strings.HasSuffix(line, `\`)
		if lastBreak {
			lastBreak = brk
			continue
		}
		lastBreak = brk
		p := strings.TrimLeft(line, " \t\r\v\f")
		if p == "" || p[0] == '#' {
			continue
		}
		fields := strings.FieldsFunc(p, func(r rune) bool { return r == ' ' || r == '\t' })
		if len(fields) < 2 {
			return logErr("Line %d of configuration file %s invalid", lineNum, path)
		}
		if err := ranks(fields[0]); err != nil {
			logErrs = append(logErrs, err.Error())
			return &multiProgError{lines: append(logErrs, fmt.Sprintf("Line %d of configuration file %s invalid", lineNum, path))}
		}
	}
	for i := 0; i < o.Ntasks; i++ {
		if !covered[i] {
			return logErr("Configuration file %s invalid, no record for task id %d", path, i)
		}
	}
	return nil
}

// multiProgError is a rank error followed by the line it is on, logged
// as two errors.
type multiProgError struct{ lines []string }

func (e *multiProgError) Error() string { return strings.Join(e.lines, "\n") }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// atoiC is atoi: the leading digits, 0 for none.
func atoiC(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// readMultiProg reads the file as srun's _load_multi does.
func readMultiProg(path string) ([]byte, error) { return os.ReadFile(path) }

// logLine is an error whose text is a line srun logs as it is (Slurm's
// capitalised wording).
type logLine string

func (l logLine) Error() string { return string(l) }

func logErr(format string, a ...any) error { return logLine(fmt.Sprintf(format, a...)) }
