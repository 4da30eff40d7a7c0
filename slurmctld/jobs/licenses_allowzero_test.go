package jobs

import (
	"errors"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// TestValidLicensesOverTotal: allow_zero_lic lets counts above the total
// through at submit, never unknown names.
func TestValidLicensesOverTotal(t *testing.T) {
	configured := []conf.License{{Name: "foo", Count: 2}}
	for _, tc := range []struct {
		spec      string
		overTotal bool
		ok        bool
	}{
		{"foo:2", false, true},
		{"foo:3", false, false},
		{"foo:3", true, true},
		{"foo:2,foo:1", true, true},
		{"nope:1", true, false},
		{"foo:-1", true, false},
	} {
		err := validLicenses(tc.spec, configured, tc.overTotal)
		if (err == nil) != tc.ok {
			t.Errorf("%q overTotal=%v: %v", tc.spec, tc.overTotal, err)
		}
		var se slurmerr.Error
		if err != nil && (!errors.As(err, &se) || se.Code != slurmerr.ESLURM_INVALID_LICENSES) {
			t.Errorf("%q: error %v, want ESLURM_INVALID_LICENSES", tc.spec, err)
		}
	}
}
