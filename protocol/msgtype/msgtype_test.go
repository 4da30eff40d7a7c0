package msgtype

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	cases := map[Type]string{
		REQUEST_PING:            "REQUEST_PING",
		RESPONSE_SLURM_RC:       "RESPONSE_SLURM_RC",
		REQUEST_KILL_JOB:        "REQUEST_KILL_JOB",
		REQUEST_LAUNCH_TASKS:    "REQUEST_LAUNCH_TASKS",
		RESPONSE_FORWARD_FAILED: "RESPONSE_FORWARD_FAILED",
		6013:                    "REQUEST_ABORT_JOB",
		6014:                    "REQUEST_FILE_BCAST",
		1006:                    "1006",
		0:                       "0",
	}
	for ty, want := range cases {
		if got := ty.String(); got != want {
			t.Errorf("%d: %q want %q", uint16(ty), got, want)
		}
	}
	if n := len(All()); n != 185 {
		t.Errorf("%d types, want the 185 of msgtypes_22.txt", n)
	}
	if ty, ok := Lookup("REQUEST_JOB_STEP_CREATE"); !ok || ty != 5001 {
		t.Errorf("Lookup = %d %v", ty, ok)
	}
	if Type(1006).Known() || !REQUEST_PING.Known() {
		t.Error("Known")
	}
}

func TestLogName(t *testing.T) {
	for ty, want := range map[Type]string{
		REQUEST_PING:                    "REQUEST_PING",
		RESPONSE_NODE_REGISTRATION:      "1024",
		REQUEST_SET_FS_DAMPENING_FACTOR: "REQUEST_SET_FS_DAMPENING_FACTOR,",
		4242:                            "4242",
	} {
		if got := ty.LogName(); got != want {
			t.Errorf("%d: %q want %q", uint16(ty), got, want)
		}
	}
}

// Generated tables must be current: regenerate with go generate.
func TestAllSorted(t *testing.T) {
	all := All()
	for i := 1; i < len(all); i++ {
		if all[i] <= all[i-1] {
			t.Fatal("All not sorted")
		}
	}
}

// The generated table must match msgtypes_22.txt (run go generate after
// editing it).
func TestTableMatchesSource(t *testing.T) {
	data, err := os.ReadFile("msgtypes_22.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	for _, l := range lines {
		name, num, _ := strings.Cut(l, "=")
		n, _ := strconv.Atoi(num)
		if ty, ok := Lookup(name); !ok || int(ty) != n {
			t.Errorf("%s=%d: table has %d %v", name, n, ty, ok)
		}
	}
	if len(lines) != len(names) {
		t.Errorf("%d lines, %d table entries", len(lines), len(names))
	}
}

// String and Known search names by binary search: it must be sorted by
// number, with every number once, and every name must find its number back.
func TestTableSorted(t *testing.T) {
	for i, e := range names {
		if i > 0 && names[i-1].t >= e.t {
			t.Errorf("names[%d] %s=%d is not after %s=%d", i, e.name, e.t, names[i-1].name, names[i-1].t)
		}
		if e.t.String() != e.name || !e.t.Known() {
			t.Errorf("%d: String %q Known %v, want %q", e.t, e.t.String(), e.t.Known(), e.name)
		}
	}
}
