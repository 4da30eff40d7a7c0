package hwinfo

import "fmt"

// FormatNodeLine is the output of `slurmd -C` in 22.05: the NodeName line
// (CPU layout and RealMemory; 22.05 prints neither TmpDisk nor Gres) and
// the UpTime line, each ending in a newline.
func FormatNodeLine(n *Node) string {
	boards := n.Boards
	if boards <= 0 {
		boards = 1
	}
	// slurmd keeps these counts in uint16.
	u16 := func(v int) uint16 { return uint16(v) }
	return fmt.Sprintf("NodeName=%s CPUs=%d Boards=%d SocketsPerBoard=%d CoresPerSocket=%d ThreadsPerCore=%d RealMemory=%d\n",
		n.Name, u16(n.CPUs), u16(boards), u16(n.Sockets)/u16(boards), u16(n.CoresPerSocket), u16(n.ThreadsPerCore), n.RealMemory) +
		FormatUpTime(n.UpTime) + "\n"
}

// FormatUpTime is slurmd -C's "UpTime=D-HH:MM:SS" (days unpadded).
func FormatUpTime(secs uint32) string {
	return fmt.Sprintf("UpTime=%d-%02d:%02d:%02d", secs/86400, (secs/3600)%24, (secs/60)%60, secs%60)
}
