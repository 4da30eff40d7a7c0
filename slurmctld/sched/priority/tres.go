package priority

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
)

// TRESKey is how this package names a TRES in weight and count maps:
// the type in lower case, then "/" and the name in lower case when the TRES
// has one ("cpu", "mem", "node", "billing", "gres/gpu", "license/foo").
// Slurm compares both parts case-insensitively.
func TRESKey(typ, name string) string {
	if name == "" {
		return strings.ToLower(typ)
	}
	return strings.ToLower(typ) + "/" + strings.ToLower(name)
}

// ParseTRESWeights reads a PriorityWeightTRES value such as
// "CPU=1000,Mem=2000G,GRES/gpu=3000" the way Slurm's
// slurm_get_tres_weight_array does: comma separated items (empty ones
// skipped), TYPE[/NAME]=VALUE, VALUE a C floating point number optionally
// followed by a unit letter K, M, G, T or P. A unit above the TRES's base
// unit (megabytes for mem and bb, none otherwise) divides the weight by
// 1024 per step, so Mem=2G means 2 per GB, i.e. 2/1024 per MB.
//
// Whether a TRES is configured (AccountingStorageTRES) is checked by
// package conf; here every well-formed name is accepted. Unlike Slurm,
// hexadecimal numbers, NaN and infinities are rejected.
func ParseTRESWeights(s string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			continue
		}
		if err := parseTRESWeightItem(item, out); err != nil {
			return nil, fmt.Errorf("%w: failed to parse tres weights str '%s': %w", ErrConfig, s, err)
		}
	}
	return out, nil
}

func parseTRESWeightItem(item string, out map[string]float64) error {
	// strtok skips leading delimiters, so "=x" has no type.
	typ, val, _ := strings.Cut(strings.TrimLeft(item, "="), "=")
	if typ == "" || val == "" {
		return fmt.Errorf("\"%s\" is an invalid TRES weight entry", item)
	}
	typ, name, _ := strings.Cut(typ, "/")
	n := conf.FloatPrefix(val)
	w := 0.0
	if n > 0 {
		var err error
		w, err = strconv.ParseFloat(strings.TrimLeft(val[:n], " \t\n\v\f\r"), 64)
		if err != nil || math.IsNaN(w) || math.IsInf(w, 0) {
			//lint:ignore ST1005 Slurm's wording
			return fmt.Errorf("Unable to convert value to double in %s", val)
		}
	}
	if rest := val[n:]; rest != "" {
		unit := strings.IndexByte("KMGTP", upper(rest[0])) + 1
		if unit == 0 {
			//lint:ignore ST1005 Slurm's wording
			return fmt.Errorf("Invalid unit type '%c'. Possible options are 'KMGTP'", rest[0])
		}
		base := 0
		if strings.EqualFold(typ, "mem") || strings.EqualFold(typ, "bb") {
			base = 2 // megabytes
		}
		for ; base < unit; base++ {
			w /= 1024
		}
	}
	out[TRESKey(typ, name)] = w
	return nil
}

func upper(b byte) byte {
	if b >= 'a' && b <= 'z' {
		return b - 'a' + 'A'
	}
	return b
}
