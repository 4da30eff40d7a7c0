package gres

import (
	"reflect"
	"testing"
)

// Job GRES strings read as _get_next_gres reads them.
func TestParseJobRequest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Req
		bad  bool
	}{
		{in: "gres:gpu:2", want: []Req{{Name: "gpu", Count: 2}}},
		{in: "gres:gpu", want: []Req{{Name: "gpu", Count: 1}}},
		{in: "gres:gpu:tesla", want: []Req{{Name: "gpu", Type: "tesla", Count: 1}}},
		{in: "gres:gpu:tesla:3,gres:foo:1k", want: []Req{{Name: "gpu", Type: "tesla", Count: 3}, {Name: "foo", Count: 1024}}},
		{in: "gres:foo:1kb", want: []Req{{Name: "foo", Count: 1000}}},
		{in: "gres:foo:2KiB", want: []Req{{Name: "foo", Count: 2048}}},
		{in: "gres:foo:1t", want: []Req{{Name: "foo", Count: 1 << 40}}},
		{in: "gres:foo:1pb", want: []Req{{Name: "foo", Count: 1e15}}},
		// A suffix it does not know makes a type of the whole.
		{in: "gres:foo:1x", want: []Req{{Name: "foo", Type: "1x", Count: 1}}},
		// Zero counts are left out, whatever their name.
		{in: "gres:bogus:0", want: nil},
		{in: "gres:bogus:t:0,gres:gpu:1", want: []Req{{Name: "gpu", Count: 1}}},
		// Not GRES: passed over up to the next "gres:".
		{in: "license/x:1,gres:gpu:1", want: []Req{{Name: "gpu", Count: 1}}},
		{in: "gres/gpu:1", want: nil},
		{in: "gres:gpu:1,,", want: []Req{{Name: "gpu", Count: 1}}},
		{in: "gres:gpu:", bad: true},
		{in: "gres:gpu::1", bad: true},
		{in: "gres:gpu:tesla:", bad: true},
		{in: "gres:gpu:tesla:x", bad: true},
		{in: "gres:gpu:tesla:1kbb", bad: true},
		{in: "gres:gpu:a:1:2", bad: true},
		{in: "gres:gpu:a:18446744073709551615", bad: true},
	} {
		got, err := ParseJobRequest(tc.in)
		if (err != nil) != tc.bad || !tc.bad && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v, %v; want %+v (refused %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
