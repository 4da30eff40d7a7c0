package realslurm

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// errNoPorts is returned when no free port could be reserved.
var errNoPorts = errors.New("realslurm: no free TCP ports")

// FreePorts reserves n distinct TCP ports that nothing listens on, and
// returns them with the reservations, to be closed when the cluster is gone.
// testsuite/ctldharness uses it too, so its clusters and these never pick
// the same ports.
//
// The daemons need port numbers in their configuration before they bind, so
// a port cannot be handed over already bound. To keep the window small and
// safe:
//   - candidates come from below the kernel's ephemeral range, so outgoing
//     connections (whose local ports the kernel picks from that range) never
//     occupy them;
//   - a candidate is reserved across processes by binding an abstract unix
//     socket named after it (released by the kernel when this process exits,
//     so a crashed test leaves nothing behind), so parallel test binaries
//     using this package never pick the same port;
//   - it is then checked free by binding it on the wildcard address.
//
// A clash with some unrelated program is still possible; Start retries with
// fresh ports when a daemon reports "Address already in use".
func FreePorts(n int) ([]int, []io.Closer, error) {
	lo, hi := 20000, ephemeralLow()
	if hi-lo < 1000 {
		lo, hi = 10000, 65000
	}
	var ports []int
	var locks []io.Closer
	seen := map[int]bool{}
	for tries := 0; len(ports) < n; tries++ {
		if tries > 2000 {
			return ports, locks, fmt.Errorf("%w in [%d,%d) after %d tries", errNoPorts, lo, hi, tries)
		}
		p := lo + rand.IntN(hi-lo)
		if seen[p] {
			continue
		}
		seen[p] = true
		lock, err := net.Listen("unix", "@goslurm-realslurm-port-"+strconv.Itoa(p))
		if err != nil {
			continue // another test holds it
		}
		l, err := net.Listen("tcp4", "0.0.0.0:"+strconv.Itoa(p))
		if err != nil {
			lock.Close()
			continue
		}
		l.Close()
		ports = append(ports, p)
		locks = append(locks, lock)
	}
	return ports, locks, nil
}

// freePorts is FreePorts under the name the package's tests use.
var freePorts = FreePorts

// ephemeralLow returns the start of the kernel's ephemeral port range.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				return v
			}
		}
	}
	return 32768
}
