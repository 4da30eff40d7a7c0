package launch

import (
	"bytes"
	"errors"
	"testing"

	"github.com/goslurm/goslurm/commands/internal/jobopt"
)

func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		name   string
		code   int
		err    error
		want   int
		stderr string
	}{
		{"success", 3, nil, 3, ""},
		{"exit error", 0, &jobopt.ExitError{Code: 255}, 255, ""},
		{"wrapped exit error", 0, errors.Join(errors.New("x"), &jobopt.ExitError{Code: 0}), 0, ""},
		{"other error", 0, errors.New("boom"), 7, "srun: error: boom\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			got := ExitStatus(c.code, c.err, &jobopt.Log{Prog: "srun", W: &b}, 7)
			if got != c.want || b.String() != c.stderr {
				t.Errorf("ExitStatus = %d, stderr %q; want %d, %q", got, b.String(), c.want, c.stderr)
			}
		})
	}
}
