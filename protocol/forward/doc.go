// Package forward implements Slurm 22.05's message forwarding trees: one
// message sent to many slurmd nodes through TreeWidth-wide fan-out, with the
// replies of each sub-tree aggregated into the header ret_list of the one
// reply its head sends back.
//
// Three parts, each following what 22.05 does (src/common/forward.c,
// slurm_route.c, slurm_protocol_api.c, read at tag slurm-22-05-8-1):
//
//   - Split / SpanSizes: route/default's split of a node list into at most
//     TreeWidth spans (set_span + route_split_hostlist_treewidth). Pure.
//   - Sender: the root of a tree (slurmctld's agent, srun; start_msg_tree and
//     slurm_send_recv_msgs). One goroutine per span connects to the span's
//     head, sends the message with header.forward = the rest of the span and
//     reads one reply whose ret_list carries the whole span.
//   - Forwarder: what a slurmd does on receiving a frame with forward.cnt > 0
//     (slurm_receive_msg_and_forward + forward_msg + forward_wait): re-send
//     the untouched auth and body bytes to its own sub-tree, before checking
//     the credential, and collect one ret_list entry per forwarded node.
//
// Failure handling follows the C code, which differs between the root and an
// interior node:
//
//   - A node whose address cannot be resolved is reported as
//     RESPONSE_FORWARD_FAILED with SLURM_UNKNOWN_FORWARD_ADDR (1012), and the
//     next node of the span becomes its head (both sides).
//   - A head that refuses the connection (or cannot be sent to) is reported
//     with SLURM_COMMUNICATIONS_CONNECTION_ERROR (1001) and the rest of its
//     span is "abandoned": every remaining node gets the message directly,
//     without forwarding, so a dead branch costs one timeout, not one per
//     node (both sides). The root first retries, within min(MessageTimeout,
//     10) s (slurm_send_addr_recv_msgs): a refused connection a second
//     later, a connect that timed out at once, counting the TCPTimeout it
//     waited against that budget; an interior node does not retry.
//   - A head that accepts but does not answer in time (or closes): the root
//     reports it with the receive error (SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT
//     5004, SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT 5005, ...) and abandons the
//     rest of the span as above; an interior node reports it the same way
//     but then makes the next node of the span the new head and tries again.
//   - A head whose reply lists fewer nodes than it was given: the root sends
//     directly to the nodes missing from the reply; an interior node reports
//     them as failed (1001).
//
// Timeouts: a connect waits TCPTimeout (_slurm_connect; default 2 s). In
// the header (milliseconds), the forward timeout T is the sender's timeout
// (default MessageTimeout). The time to wait for a head
// that forwards to cnt nodes with width w is
// MessageTimeout*((cnt+1)/w) + T*((cnt+1)/w + 1) (integer division), and T
// for a head with no forward list. An interior node takes T from the header
// (MessageTimeout when 0), and a real 22.05 slurmd sends its sub-heads
// forward.timeout = 0 and forward.tree_width = 0 (its header is packed
// before those fields are filled in), so below the first hop every node
// splits by its own TreeWidth and waits by its own MessageTimeout. Forwarder
// does the same.
package forward
