package hwinfo

import "fmt"

// LayoutFromConfig is the layout a slurm.conf node line gives.
func LayoutFromConfig(cpus, boards, sockets, coresPerSocket, threadsPerCore int) Layout {
	return Layout{CPUs: cpus, Boards: boards, Sockets: sockets, CoresPerSocket: coresPerSocket, ThreadsPerCore: threadsPerCore}
}

// ReportedLayout is the layout slurmd registers with (its _read_config, for
// a node defined in slurm.conf): the hardware's when it has fewer CPUs
// than configured (unless SlurmdParameters=config_overrides), the
// hardware's sockets and cores when only their split differs and the
// select plugin is cons_res/cons_tres or gang scheduling is on
// (crOrGang), otherwise slurm.conf's. The messages are what slurmd logs;
// Level "error" becomes "info" under config_overrides, and "debug" marks
// what slurmd logs at debug level.
func ReportedLayout(hw, cfg Layout, configOverrides, crOrGang bool) (Layout, []Message) {
	var out Layout
	var msgs []Message
	switch {
	case !configOverrides && hw.CPUs < cfg.CPUs:
		out = hw
	case !configOverrides && crOrGang && hw.Sockets != cfg.Sockets && hw.CoresPerSocket != cfg.CoresPerSocket &&
		hw.Sockets*hw.CoresPerSocket == cfg.Sockets*cfg.CoresPerSocket:
		msgs = append(msgs, Message{Level: "info", Text: fmt.Sprintf(
			"Node reconfigured socket/core boundaries SocketsPerBoard=%d:%d(hw) CoresPerSocket=%d:%d(hw)",
			cfg.Sockets, hw.Sockets, cfg.CoresPerSocket, hw.CoresPerSocket)})
		out = Layout{CPUs: cfg.CPUs, Boards: cfg.Boards, Sockets: hw.Sockets, CoresPerSocket: hw.CoresPerSocket,
			ThreadsPerCore: cfg.ThreadsPerCore}
	default:
		out = cfg
	}
	// slurmd compares CPUs with the per-socket core count here.
	if out.CPUs != hw.CPUs && (out.CPUs == hw.CoresPerSocket || out.CPUs == hw.Sockets) {
		level, what := "debug", "sockets"
		if configOverrides {
			level = "info"
		}
		if out.CPUs == hw.CoresPerSocket {
			what = "cores"
		}
		msgs = append(msgs, Message{Level: level, Text: fmt.Sprintf(
			"CPUs has been set to match %s per node instead of threads CPUs=%d:%d(hw)", what, out.CPUs, hw.CPUs)})
	}
	if (out.CPUs != hw.CPUs && out.CPUs != hw.CoresPerSocket && out.CPUs != hw.Sockets) ||
		out.Sockets != hw.Sockets || out.CoresPerSocket != hw.CoresPerSocket || out.ThreadsPerCore != hw.ThreadsPerCore {
		level := "error"
		if configOverrides {
			level = "info"
		}
		msgs = append(msgs, Message{Level: level, Text: fmt.Sprintf(
			"Node configuration differs from hardware: CPUs=%d:%d(hw) Boards=%d:%d(hw) SocketsPerBoard=%d:%d(hw) CoresPerSocket=%d:%d(hw) ThreadsPerCore=%d:%d(hw)",
			out.CPUs, hw.CPUs, out.Boards, hw.Boards, out.Sockets, hw.Sockets, out.CoresPerSocket, hw.CoresPerSocket,
			out.ThreadsPerCore, hw.ThreadsPerCore)})
	}
	return out, msgs
}
