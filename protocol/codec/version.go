package codec

import "fmt"

// Version is a Slurm protocol version, the u16 that starts every header:
// (release number << 8).
type Version uint16

// Protocol versions of the Slurm releases of interest.
const (
	Version2011 Version = 0x2400 // 20.11, oldest a 22.05 daemon accepts
	Version2108 Version = 0x2500 // 21.08
	Version2205 Version = 0x2600 // 22.05, goslurm's wire version
	Version2302 Version = 0x2700
	Version2311 Version = 0x2800
	Version2405 Version = 0x2900
	Version2411 Version = 0x2A00
	Version2505 Version = 0x2B00
	Version2511 Version = 0x2C00
)

// Current is the version goslurm sends.
const Current = Version2205

var releaseNames = map[Version]string{
	Version2011: "20.11", Version2108: "21.08", Version2205: "22.05",
	Version2302: "23.02", Version2311: "23.11", Version2405: "24.05",
	Version2411: "24.11", Version2505: "25.05", Version2511: "25.11",
}

// String returns the release name ("22.05") or the number in hex.
func (v Version) String() string {
	if n, ok := releaseNames[v]; ok {
		return n
	}
	return fmt.Sprintf("0x%04x", uint16(v))
}

// Supported reports whether a 22.05 daemon accepts v: 22.05 itself and the
// two releases before it.
func (v Version) Supported() bool {
	switch v {
	case Version2205, Version2108, Version2011:
		return true
	}
	return false
}

// layout describes how a header of one protocol version is laid out. New
// versions (24.05's net_cred, 25.11's tree_depth) add fields here.
type layout struct {
	// reservedU16: 20.11 and 21.08 carry an extra u16 between flags and
	// msg_type; 22.05 removed it.
	reservedU16 bool
}

func layoutFor(v Version) (layout, bool) {
	switch v {
	case Version2205:
		return layout{}, true
	case Version2108, Version2011:
		return layout{reservedU16: true}, true
	}
	return layout{}, false
}
