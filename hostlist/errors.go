package hostlist

import "errors"

// Sentinel errors; every *Error wraps one of them.
var (
	// ErrInvalidRange: a bracket entry is not a number or a lo-hi range.
	ErrInvalidRange = errors.New("invalid range")
	// ErrTooManyHosts: a single range covers more than MaxRange hosts.
	ErrTooManyHosts = errors.New("too many hosts in range")
	// ErrTooManyPrefixes: a prefix bracket group expands to more than
	// MaxPrefixCount names.
	ErrTooManyPrefixes = errors.New("too many hosts in prefix range")
	// ErrMalformed: text follows the closing bracket of the last group.
	ErrMalformed = errors.New("malformed hostlist")
	// ErrTooManyRanges: more than MaxRanges entries inside one pair of
	// brackets. Slurm treats this as fatal (the process exits).
	ErrTooManyRanges = errors.New("too many ranges")
	// ErrTooLarge: the expression would create more than the package's
	// safety limit of ranges (Slurm would exhaust memory instead).
	ErrTooLarge = errors.New("hostlist too large")
)

// Error reports an expression Slurm would reject. Error() is Slurm's final
// wording ("Invalid hostlist: EXPR"); Detail, when set, is the line Slurm
// logs first (e.g. "_parse_single_range: Invalid range: `1-x'").
type Error struct {
	Expr   string
	Detail string
	Err    error
}

func (e *Error) Error() string {
	if e.Err == ErrTooManyRanges {
		return e.Detail
	}
	return "Invalid hostlist: " + e.Expr
}

func (e *Error) Unwrap() error { return e.Err }
