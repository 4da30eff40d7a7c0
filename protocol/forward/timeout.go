package forward

import "time"

// DefaultMessageTimeout is slurm.conf's MessageTimeout default.
const DefaultMessageTimeout = 10 * time.Second

// DefaultTCPTimeout is slurm.conf's TCPTimeout default: how long 22.05
// waits for a connect to complete (_slurm_connect polls for TCPTimeout
// seconds, on the root and on a forwarding slurmd alike).
const DefaultTCPTimeout = 2 * time.Second

// ReplyTimeout is how long 22.05 waits for the reply of a head it sent the
// message to with a forward list of cnt nodes, forward timeout fwd and tree
// width width (0 = DefaultTreeWidth): with steps = (cnt+1)/width (integer
// division), msgTimeout*steps + fwd*(steps+1); for cnt == 0 just fwd
// (_send_and_recv_msgs on the root, _forward_thread on a slurmd).
func ReplyTimeout(msgTimeout, fwd time.Duration, cnt, width int) time.Duration {
	if cnt <= 0 {
		return fwd
	}
	if width <= 0 {
		width = DefaultTreeWidth
	}
	steps := (cnt + 1) / width
	return msgTimeout*time.Duration(steps) + fwd*time.Duration(steps+1)
}

// connectRetries is slurm_send_addr_recv_msgs' retry count for a refused
// connection: MIN(MessageTimeout in seconds, 10), one second apart.
func connectRetries(msgTimeout time.Duration) int {
	return min(int(msgTimeout/time.Second), 10)
}
