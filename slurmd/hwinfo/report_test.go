package hwinfo

import "testing"

func TestReportedLayout(t *testing.T) {
	hw := Layout{CPUs: 8, Boards: 1, Sockets: 2, CoresPerSocket: 2, ThreadsPerCore: 2}
	tests := []struct {
		name      string
		cfg       Layout
		overrides bool
		crOrGang  bool
		want      Layout
		msgs      string
	}{
		{name: "matches", cfg: hw, want: hw},
		{name: "CPUs only in slurm.conf: kept, logged as error",
			cfg: LayoutFromConfig(8, 1, 8, 1, 1), want: LayoutFromConfig(8, 1, 8, 1, 1),
			msgs: "error: Node configuration differs from hardware: CPUs=8:8(hw) Boards=1:1(hw) SocketsPerBoard=8:2(hw) CoresPerSocket=1:2(hw) ThreadsPerCore=1:2(hw)"},
		{name: "same under config_overrides is info",
			cfg: LayoutFromConfig(8, 1, 8, 1, 1), overrides: true, want: LayoutFromConfig(8, 1, 8, 1, 1),
			msgs: "info: Node configuration differs from hardware: CPUs=8:8(hw) Boards=1:1(hw) SocketsPerBoard=8:2(hw) CoresPerSocket=1:2(hw) ThreadsPerCore=1:2(hw)"},
		{name: "more CPUs configured than present: the hardware's",
			cfg: LayoutFromConfig(16, 1, 2, 4, 2), want: hw},
		{name: "more CPUs configured, config_overrides: slurm.conf's",
			cfg: LayoutFromConfig(16, 1, 2, 4, 2), overrides: true, want: LayoutFromConfig(16, 1, 2, 4, 2),
			msgs: "info: Node configuration differs from hardware: CPUs=16:8(hw) Boards=1:1(hw) SocketsPerBoard=2:2(hw) CoresPerSocket=4:2(hw) ThreadsPerCore=2:2(hw)"},
		{name: "KNL-style socket/core split change with cons_tres",
			cfg: LayoutFromConfig(8, 1, 4, 1, 2), crOrGang: true, want: Layout{8, 1, 2, 2, 2},
			msgs: "info: Node reconfigured socket/core boundaries SocketsPerBoard=4:2(hw) CoresPerSocket=1:2(hw)"},
		{name: "CPUs counted as cores",
			cfg: LayoutFromConfig(2, 1, 1, 2, 1), overrides: true, want: LayoutFromConfig(2, 1, 1, 2, 1),
			msgs: "info: CPUs has been set to match cores per node instead of threads CPUs=2:8(hw)|" +
				"info: Node configuration differs from hardware: CPUs=2:8(hw) Boards=1:1(hw) SocketsPerBoard=1:2(hw) CoresPerSocket=2:2(hw) ThreadsPerCore=1:2(hw)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, msgs := ReportedLayout(hw, tc.cfg, tc.overrides, tc.crOrGang)
			if got != tc.want {
				t.Errorf("layout %+v, want %+v", got, tc.want)
			}
			if s := msgSummary(msgs); s != tc.msgs {
				t.Errorf("messages\n got %s\nwant %s", s, tc.msgs)
			}
		})
	}
}
