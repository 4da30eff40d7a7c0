package hwinfo

import (
	"errors"
	"os"
	"testing"

	"github.com/goslurm/goslurm/slurmd/hwinfo/hwtest"
)

func TestRealMemoryMB(t *testing.T) {
	tests := []struct {
		pages uint64
		page  int
		want  uint64
	}{
		{6171021, 4096, 24105}, // this test machine: 24684084 kB
		{0, 4096, 0},
		{256, 4096, 1},
		{255, 4096, 0},
		// Above 2^24 pages (64 GiB) the C float rounds the page count:
		// 16777217 pages become 16777216, and 64 GiB + 4 KiB is 65536 MB.
		{16777217, 4096, 65536},
		// 512 GiB - 4 KiB: exact would be 524287.99 -> 524287, but the
		// float rounds the count up to 2^27 pages.
		{134217727, 4096, 524288},
		{1 << 20, 65536, 65536}, // 64 KiB pages (arm64, ppc64le)
	}
	for _, tc := range tests {
		if got := RealMemoryMB(tc.pages, tc.page); got != tc.want {
			t.Errorf("RealMemoryMB(%d, %d) = %d, want %d", tc.pages, tc.page, got, tc.want)
		}
	}
}

func TestDetectFakeRoot(t *testing.T) {
	m := hwtest.Regular(2, 4, 2, 1)
	m.MemTotalKB = 24684084
	m.Uptime = "10277.95 3807.12\n"
	n, err := Detect(Options{Root: m.MapFS(), Hostname: "node17.cluster.example", SkipTmpDisk: true, PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	want := "NodeName=node17 CPUs=16 Boards=1 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=24105\n" +
		"UpTime=0-02:51:18\n"
	if got := FormatNodeLine(n); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestDetectFakeRootErrors(t *testing.T) {
	m := hwtest.Regular(1, 1, 1, 1)
	if _, err := Detect(Options{Root: m.MapFS(), Hostname: "x", SkipTmpDisk: true}); err == nil {
		t.Error("no meminfo: want an error")
	}
	m.MemTotalKB = 1024
	if _, err := Detect(Options{Root: m.MapFS(), Hostname: "x", SkipTmpDisk: true}); err == nil {
		t.Error("no uptime: want an error")
	}
	m.Uptime = "5.00 1.00\n"
	n, err := Detect(Options{Root: m.MapFS(), Hostname: "x", SkipTmpDisk: true, PageSize: 4096})
	if err != nil || n.UpTime != 5 || n.RealMemory != 1 {
		t.Errorf("got %+v, %v", n, err)
	}
}

func TestUptimeFromProc(t *testing.T) {
	// sysinfo rounds a partial second up.
	for in, want := range map[string]uint32{"10.00 1.0\n": 10, "10.01 1.0": 11, "0.5 0": 1, "86399 0": 86399} {
		m := hwtest.Machine{Uptime: in}
		got, err := uptimeFromProc(m.MapFS())
		if err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestFormatUpTime(t *testing.T) {
	tests := map[uint32]string{
		0:          "UpTime=0-00:00:00",
		59:         "UpTime=0-00:00:59",
		3661:       "UpTime=0-01:01:01",
		86399:      "UpTime=0-23:59:59",
		86400:      "UpTime=1-00:00:00",
		1234567:    "UpTime=14-06:56:07",
		4294967295: "UpTime=49710-06:28:15",
	}
	for secs, want := range tests {
		if got := FormatUpTime(secs); got != want {
			t.Errorf("FormatUpTime(%d) = %q, want %q", secs, got, want)
		}
	}
}

func TestFormatNodeLineBoards(t *testing.T) {
	n := &Node{Name: "b", Topology: &Topology{Layout: Layout{CPUs: 32, Boards: 2, Sockets: 4, CoresPerSocket: 4, ThreadsPerCore: 2}}, RealMemory: 1}
	want := "NodeName=b CPUs=32 Boards=2 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=1\nUpTime=0-00:00:00\n"
	if got := FormatNodeLine(n); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestShortHostname(t *testing.T) {
	for in, want := range map[string]string{"a.b.c": "a", "abc": "abc", ".x": "", "": ""} {
		if got := ShortHostname(in); got != want {
			t.Errorf("ShortHostname(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTmpDiskMB(t *testing.T) {
	dir := t.TempDir()
	mb, err := TmpDiskMB(dir)
	if err != nil || mb == 0 {
		t.Errorf("TmpDiskMB(%s) = %d, %v", dir, mb, err)
	}
	// A missing TmpFS is 0 without error, as in slurmd.
	if mb, err := TmpDiskMB(dir + "/missing"); mb != 0 || err != nil {
		t.Errorf("missing: %d, %v", mb, err)
	}
	// Another failure is reported.
	file := dir + "/file"
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if mb, err := TmpDiskMB(file + "/below"); mb != 0 || err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("ENOTDIR: %d, %v", mb, err)
	}
}
