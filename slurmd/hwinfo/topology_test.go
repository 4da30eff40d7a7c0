package hwinfo

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/goslurm/goslurm/slurmd/hwinfo/hwtest"
	"pgregory.net/rapid"
)

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// topoWant is what the real slurmd 22.05 (hwloc 2.9) reported for each
// hwtest case (see testsuite/interop TestSlurmdCFakeTopologies, which
// checks these machines against it), plus our complete AbsToOS map.
type topoWant struct {
	layout  Layout
	bm, inv []int
	absToOS []int // nil: same as bm
	errs    []string
}

var caseWants = map[string]topoWant{
	"this-shape-1x2x1":    {layout: Layout{2, 1, 1, 2, 1}, bm: seq(2)},
	"two-socket-ht-2x4x2": {layout: Layout{16, 1, 2, 4, 2}, bm: []int{0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15}},
	"offline-sibling": {layout: Layout{7, 1, 2, 2, 1}, bm: seq(7), absToOS: []int{0, 1, 2, 3, 4, 6, 7},
		errs: []string{"Thread count (7) not multiple of core count (4)"}},
	"offline-hole":             {layout: Layout{3, 1, 1, 3, 1}, bm: []int{0, 2, 2}, inv: []int{0, 1, 1}, absToOS: []int{0, 2, 3}},
	"odd-core-and-package-ids": {layout: Layout{12, 1, 2, 3, 2}, bm: []int{0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11}},
	"adjacent-threads":         {layout: Layout{8, 1, 2, 2, 2}, bm: seq(8)},
	"old-file-names":           {layout: Layout{8, 1, 2, 2, 2}, bm: []int{0, 4, 1, 5, 2, 6, 3, 7}},
	"no-online-list": {layout: Layout{3, 1, 1, 2, 1}, bm: seq(3),
		errs: []string{"Thread count (3) not multiple of core count (2)"}},
	"64-cpus":               {layout: Layout{64, 1, 2, 16, 2}, bm: interleave(32)},
	"cpu0-offline":          {layout: Layout{3, 1, 1, 3, 1}, bm: []int{1, 2, 2}, inv: []int{0, 0, 1}, absToOS: []int{1, 2, 3}},
	"swapped-packages":      {layout: Layout{4, 1, 2, 2, 1}, bm: seq(4)},
	"amd-compute-units":     {layout: Layout{4, 1, 1, 4, 1}, bm: seq(4)},
	"intel-shared-siblings": {layout: Layout{4, 1, 1, 2, 2}, bm: seq(4)},
}

// interleave is the block map of x86 numbering with two threads: thread 0
// of every core first, then thread 1.
func interleave(half int) []int {
	var out []int
	for i := 0; i < half; i++ {
		out = append(out, i, i+half)
	}
	return out
}

func inverseOf(bm []int) []int {
	inv := seq(len(bm))
	for a, m := range bm {
		inv[m] = a
	}
	return inv
}

func TestReadTopologyCases(t *testing.T) {
	cases := hwtest.Cases()
	if len(cases) != len(caseWants) {
		t.Fatalf("%d cases, %d expectations", len(cases), len(caseWants))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			w, ok := caseWants[tc.Name]
			if !ok {
				t.Fatalf("no expectation for %s", tc.Name)
			}
			top := ReadTopology(tc.Machine.MapFS())
			if top.Source != "sysfs" {
				t.Errorf("source %q", top.Source)
			}
			if top.Layout != w.layout {
				t.Errorf("layout %+v, want %+v", top.Layout, w.layout)
			}
			if !slices.Equal(top.BlockMap, w.bm) {
				t.Errorf("block map %v, want %v", top.BlockMap, w.bm)
			}
			inv := w.inv
			if inv == nil {
				inv = inverseOf(w.bm)
			}
			if !slices.Equal(top.BlockMapInv, inv) {
				t.Errorf("inverse block map %v, want %v", top.BlockMapInv, inv)
			}
			abs := w.absToOS
			if abs == nil {
				abs = w.bm
			}
			if got := top.AbsToOS(); !slices.Equal(got, abs) {
				t.Errorf("AbsToOS %v, want %v", got, abs)
			}
			if fmt.Sprint(top.Errors) != fmt.Sprint(w.errs) {
				t.Errorf("errors %q, want %q", top.Errors, w.errs)
			}
			checkMaps(t, top, tc.Machine)
		})
	}
}

// checkMaps checks what must hold on any machine: AbsToOS is a
// permutation of the online CPUs and OSToAbs its inverse.
func checkMaps(t interface {
	Helper()
	Errorf(string, ...any)
}, top *Topology, m hwtest.Machine) {
	t.Helper()
	var online []int
	for _, c := range m.CPUs {
		if !c.Offline {
			online = append(online, c.ID)
		}
	}
	got := top.AbsToOS()
	sorted := slices.Clone(got)
	sort.Ints(sorted)
	if !slices.Equal(sorted, online) {
		t.Errorf("AbsToOS %v is not a permutation of the online CPUs %v", got, online)
	}
	inv := top.OSToAbs()
	for a, os := range got {
		if inv[os] != a || top.PUs[a].Abstract != a || top.PUs[a].OS != os {
			t.Errorf("abstract %d -> OS %d -> abstract %d (PU %+v)", a, os, inv[os], top.PUs[a])
		}
	}
}

func TestReadTopologyPUPositions(t *testing.T) {
	m := hwtest.Regular(2, 4, 2, 1)
	top := ReadTopology(m.MapFS())
	for _, p := range top.PUs {
		// x86 numbering: thread t of core c of socket s is CPU t*8+s*4+c.
		if want := p.Thread*8 + p.Socket*4 + p.Core; p.OS != want || p.PackageID != p.Socket || p.CoreID != p.Core {
			t.Errorf("PU %+v: want OS %d", p, want)
		}
		if want := (p.Socket*4+p.Core)*2 + p.Thread; p.Abstract != want {
			t.Errorf("PU %+v: want abstract %d", p, want)
		}
	}
}

func TestReadTopologyFallbacks(t *testing.T) {
	cpuinfo := ""
	// Two packages, two cores, two threads, listed as the kernel does.
	for id := 0; id < 8; id++ {
		cpuinfo += fmt.Sprintf("processor\t: %d\nvendor_id\t: GenuineIntel\nphysical id\t: %d\ncore id\t\t: %d\n\n", id, (id%4)/2, id%2)
	}
	withInfo := hwtest.NoTopology(8)
	withInfo.CPUInfo = cpuinfo
	armInfo := hwtest.NoTopology(3)
	armInfo.CPUInfo = "processor\t: 0\nBogoMIPS\t: 50.00\n\nprocessor\t: 1\n\nprocessor\t: 2\n"
	noList := hwtest.NoTopology(5)
	noList.NoOnlineList = true
	tests := []struct {
		name   string
		m      hwtest.Machine
		source string
		layout Layout
		bm     []int
	}{
		// On x86 hwloc reads the ids from the processor (cpuid); the
		// kernel's cpuinfo ids are the same.
		{"cpuinfo ids", withInfo, "cpuinfo", Layout{8, 1, 2, 2, 2}, []int{0, 4, 1, 5, 2, 6, 3, 7}},
		// Elsewhere: PUs only, one socket, one core, every CPU a thread.
		{"no ids", armInfo, "fallback", Layout{3, 1, 1, 1, 3}, seq(3)},
		{"nothing", hwtest.NoTopology(4), "fallback", Layout{4, 1, 1, 1, 4}, seq(4)},
		{"cpu dirs only", noList, "fallback", Layout{5, 1, 1, 1, 5}, seq(5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top := ReadTopology(tc.m.MapFS())
			if top.Source != tc.source || top.Layout != tc.layout || !slices.Equal(top.BlockMap, tc.bm) || !slices.Equal(top.AbsToOS(), tc.bm) {
				t.Errorf("got %s %+v %v %v, want %s %+v %v", top.Source, top.Layout, top.BlockMap, top.AbsToOS(), tc.source, tc.layout, tc.bm)
			}
			checkMaps(t, top, tc.m)
		})
	}
}

// TestReadTopologyRegularProperty: on any regular machine, whatever the
// numbering, the layout is the machine's and abstract ids go socket by
// socket, core by core, thread by thread, in OS order within each level.
func TestReadTopologyRegularProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		sockets := rapid.IntRange(1, 4).Draw(rt, "sockets")
		cores := rapid.IntRange(1, 6).Draw(rt, "cores")
		threads := rapid.IntRange(1, 4).Draw(rt, "threads")
		n := sockets * cores * threads
		// A random OS numbering of the (socket, core, thread) slots.
		perm := rapid.Permutation(seq(n)).Draw(rt, "numbering")
		var m hwtest.Machine
		for slot, id := range perm {
			s, c := slot/(cores*threads), (slot/threads)%cores
			m.CPUs = append(m.CPUs, hwtest.CPU{ID: id, Package: s * 10, Core: c * 3})
		}
		sort.Slice(m.CPUs, func(i, j int) bool { return m.CPUs[i].ID < m.CPUs[j].ID })
		top := ReadTopology(m.MapFS())
		if want := (Layout{n, 1, sockets, cores, threads}); top.Layout != want {
			rt.Fatalf("layout %+v, want %+v", top.Layout, want)
		}
		if !slices.Equal(top.BlockMap, top.AbsToOS()) || !slices.Equal(top.BlockMapInv, inverseOf(top.BlockMap)) {
			rt.Fatalf("block map %v / %v, AbsToOS %v", top.BlockMap, top.BlockMapInv, top.AbsToOS())
		}
		if len(top.Errors) != 0 {
			rt.Fatalf("errors %q", top.Errors)
		}
		// Order: sockets by their lowest CPU, cores by theirs, threads
		// ascending.
		type key struct{ s, c, th int }
		prev := key{-1, -1, -1}
		firstOfSocket, firstOfCore := map[int]int{}, map[[2]int]int{}
		for _, p := range top.PUs {
			if p.Abstract != (p.Socket*cores+p.Core)*threads+p.Thread {
				rt.Fatalf("PU %+v: abstract id not socket-major", p)
			}
			k := key{p.Socket, p.Core, p.Thread}
			if k.s < prev.s || (k.s == prev.s && (k.c < prev.c || (k.c == prev.c && k.th <= prev.th))) {
				rt.Fatalf("PU order %+v after %+v", k, prev)
			}
			prev = k
			if _, ok := firstOfSocket[p.Socket]; !ok {
				firstOfSocket[p.Socket] = p.OS
			}
			ck := [2]int{p.Socket, p.Core}
			if f, ok := firstOfCore[ck]; !ok {
				firstOfCore[ck] = p.OS
			} else if p.OS < f {
				rt.Fatalf("threads of core %v not ascending", ck)
			}
		}
		for s := 1; s < sockets; s++ {
			if firstOfSocket[s] < firstOfSocket[s-1] {
				rt.Fatalf("socket %d starts at CPU %d before socket %d at %d", s, firstOfSocket[s], s-1, firstOfSocket[s-1])
			}
		}
		checkMaps(rt, top, m)
	})
}

// BenchmarkReadTopology reads a 2 x 64 x 2 (256 CPU) sysfs tree.
func BenchmarkReadTopology(b *testing.B) {
	fsys := hwtest.Regular(2, 64, 2, 1).MapFS()
	b.ResetTimer()
	for b.Loop() {
		if top := ReadTopology(fsys); top.CPUs != 256 {
			b.Fatal(top.Layout)
		}
	}
}
