package interop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/slurmd/hwinfo"
	"github.com/goslurm/goslurm/slurmd/hwinfo/hwtest"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// realSlurmd finds Debian's slurmd (it lives in sbin, which oracle.Find
// does not search).
func realSlurmd(t *testing.T) string {
	t.Helper()
	dirs := []string{"/usr/sbin", "/usr/local/sbin"}
	if d := os.Getenv(oracle.DirEnv); d != "" {
		dirs = append([]string{d}, dirs...)
	}
	for _, d := range dirs {
		p := filepath.Join(d, "slurmd")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	oracle.Unavailable(t, fmt.Sprintf("real slurmd not found in %v", dirs))
	return ""
}

// runSlurmd runs the real slurmd with args in a private working
// directory (slurmd -C may try to write hwloc's XML cache relative to it)
// and returns stdout and stderr.
func runSlurmd(t *testing.T, bin string, env []string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", bin, args, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

var upTimeRE = regexp.MustCompile(`(?m)^UpTime=\d+-\d\d:\d\d:\d\d$`)

func maskUpTime(s string) string { return upTimeRE.ReplaceAllString(s, "UpTime=MASKED") }

// TestSlurmdCThisMachine compares `slurmd -C` with hwinfo on this host.
// UpTime may tick between the two runs, so it is masked after its format
// is checked.
func TestSlurmdCThisMachine(t *testing.T) {
	bin := realSlurmd(t)
	real, _ := runSlurmd(t, bin, []string{"SLURM_CONF=" + oracle.SlurmConf(t)}, "-C")
	n, err := hwinfo.Detect(hwinfo.Options{SkipTmpDisk: true})
	if err != nil {
		t.Fatal(err)
	}
	ours := hwinfo.FormatNodeLine(n)
	for _, s := range []string{real, ours} {
		if !upTimeRE.MatchString(s) {
			t.Errorf("no UpTime line in %q", s)
		}
	}
	if maskUpTime(real) != maskUpTime(ours) {
		t.Errorf("slurmd -C differs\nreal: %q\nours: %q", real, ours)
	}
}

// slurmdGConf writes a slurm.conf naming node vm (and gres.conf when
// given) for `slurmd -D -G`, which loads the topology, logs slurmd's
// block map at -vvvvv and exits.
func slurmdGConf(t *testing.T, slurmConfExtra, gresConf string) (dir string) {
	dir = t.TempDir()
	text := "ClusterName=hw\nSlurmctldHost=localhost\n" +
		"SlurmdSpoolDir=" + filepath.Join(dir, "spool") + "\n" +
		"SlurmdPidFile=" + filepath.Join(dir, "slurmd.pid") + "\n" +
		"SlurmdLogFile=" + filepath.Join(dir, "slurmd.log") + "\n" +
		slurmConfExtra +
		"PartitionName=p Nodes=vm\n"
	if err := os.Mkdir(filepath.Join(dir, "spool"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if gresConf != "" {
		if err := os.WriteFile(filepath.Join(dir, "gres.conf"), []byte(gresConf), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var (
	cpuMapRE  = regexp.MustCompile(`debug4: CPU map\[(\d+)\]=>(\d+) S:C:T`)
	hwErrorRE = regexp.MustCompile(`error: ((?:Thread|Core) count \(\d+\) not multiple of (?:core|socket) count \(\d+\))`)
)

// realBlockMap reads the block maps (abstract to machine and back) and
// the layout errors the real slurmd logs for the topology under fsroot.
// Both maps start as the identity; slurmd logs each pair it sets.
func realBlockMap(t *testing.T, bin, fsroot string, cpus int) (bm, inv []int, errs []string, stderr string) {
	dir := slurmdGConf(t, fmt.Sprintf("NodeName=vm CPUs=%d\n", cpus), "")
	_, stderr = runSlurmd(t, bin, []string{"HWLOC_FSROOT=" + fsroot, "HWLOC_COMPONENTS=-x86"},
		"-D", "-G", "-vvvvv", "-f", filepath.Join(dir, "slurm.conf"), "-N", "vm")
	bm, inv = make([]int, cpus), make([]int, cpus)
	for i := range bm {
		bm[i], inv[i] = i, i
	}
	for _, m := range cpuMapRE.FindAllStringSubmatch(stderr, -1) {
		a, _ := strconv.Atoi(m[1])
		mac, _ := strconv.Atoi(m[2])
		if a >= cpus {
			t.Fatalf("real slurmd mapped abstract CPU %d of %d", a, cpus)
		}
		if mac >= cpus {
			t.Fatalf("real slurmd mapped machine CPU %d of %d", mac, cpus)
		}
		bm[a], inv[mac] = mac, a
	}
	for _, m := range hwErrorRE.FindAllStringSubmatch(stderr, -1) {
		errs = append(errs, m[1])
	}
	return bm, inv, errs, stderr
}

// TestSlurmdCFakeTopologies points the real slurmd's hwloc at fake sysfs
// trees (HWLOC_FSROOT, with the x86 cpuid backend off so only the files
// count) and compares its -C line and logged block map with hwinfo
// reading the same trees.
func TestSlurmdCFakeTopologies(t *testing.T) {
	bin := realSlurmd(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	live, err := hwinfo.Detect(hwinfo.Options{SkipTmpDisk: true})
	if err != nil {
		t.Fatal(err)
	}
	cases := hwtest.Cases()
	// Without topology files hwloc gives up on the tree before reading
	// anything else and has PUs only, as many as sysconf says this host
	// has online, so that case gets the host's count.
	cases = append(cases, hwtest.Case{Name: "no-topology", Machine: hwtest.NoTopology(live.CPUs)})
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			root := t.TempDir()
			if err := tc.Machine.WriteDir(root); err != nil {
				t.Fatal(err)
			}
			real, _ := runSlurmd(t, bin, []string{"SLURM_CONF=" + oracle.SlurmConf(t), "HWLOC_FSROOT=" + root, "HWLOC_COMPONENTS=-x86"}, "-C")
			top := hwinfo.ReadTopology(os.DirFS(root))
			n := &hwinfo.Node{Name: hwinfo.ShortHostname(host), Topology: top, RealMemory: live.RealMemory}
			ours := hwinfo.FormatNodeLine(n)
			if maskUpTime(real) != maskUpTime(ours) {
				t.Errorf("slurmd -C differs\nreal: %q\nours: %q", real, ours)
			}
			t.Logf("real: %q", real)
			bm, inv, errs, stderr := realBlockMap(t, bin, root, top.CPUs)
			t.Logf("block map %v, inverse %v, errors %q", bm, inv, errs)
			if fmt.Sprint(bm) != fmt.Sprint(top.BlockMap) {
				t.Errorf("block map: real %v, ours %v", bm, top.BlockMap)
			}
			if fmt.Sprint(inv) != fmt.Sprint(top.BlockMapInv) {
				t.Errorf("inverse block map: real %v, ours %v", inv, top.BlockMapInv)
			}
			if fmt.Sprint(errs) != fmt.Sprint(top.Errors) {
				t.Errorf("layout errors: real %q, ours %q", errs, top.Errors)
			}
			// slurm.conf said CPUs=N only (so N sockets of one core):
			// slurmd keeps that and logs how the hardware differs.
			_, msgs := hwinfo.ReportedLayout(top.Layout, hwinfo.LayoutFromConfig(top.CPUs, 1, top.CPUs, 1, 1), false, false)
			differs := 0
			for _, m := range msgs {
				if strings.HasPrefix(m.Text, "Node configuration differs") {
					differs++
				}
				if !strings.Contains(stderr, m.Level+": "+m.Text+"\n") {
					t.Errorf("real slurmd did not log %s: %s\n%s", m.Level, m.Text, stderr)
				}
			}
			if real := strings.Count(stderr, "Node configuration differs from hardware"); real != differs {
				t.Errorf("real slurmd logged %d layout differences, we have %+v", real, msgs)
			}
		})
	}
}

// TestSlurmdGresDeviceFiles compares how the real slurmd and hwinfo treat
// gres.conf device files: a symlink to a character device is a GPU, a
// regular file is refused with slurmd's error and left out. (slurmd -C in
// 22.05 prints no Gres=, so `slurmd -G` is the observable.) A missing file
// is not run here: slurmd waits 20 seconds before giving up.
func TestSlurmdGresDeviceFiles(t *testing.T) {
	bin := realSlurmd(t)
	devDir := t.TempDir()
	gpu0 := filepath.Join(devDir, "nvidia0")
	gpu1 := filepath.Join(devDir, "nvidia1")
	if err := os.Symlink("/dev/null", gpu0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gpu1, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	gresText := "Name=gpu Type=tesla File=" + filepath.Join(devDir, "nvidia[0-1]") + "\n"
	extra := "GresTypes=gpu\nNodeName=vm CPUs=2 Gres=gpu:tesla:2\n"
	dir := slurmdGConf(t, extra, gresText)
	_, stderr := runSlurmd(t, bin, nil, "-D", "-G", "-f", filepath.Join(dir, "slurm.conf"), "-N", "vm")

	fsys := conf.OSFS{}
	c, err := conf.Load(fsys, filepath.ToSlash(filepath.Join(dir, "slurm.conf")))
	if err != nil {
		t.Fatal(err)
	}
	g, err := conf.LoadGres(fsys, filepath.ToSlash(filepath.Join(dir, "gres.conf")), c.GresTypes)
	if err != nil {
		t.Fatal(err)
	}
	top := hwinfo.ReadTopology(os.DirFS("/"))
	cpus := top.NodeCPUs(hwinfo.Layout{CPUs: 2, Boards: 1, Sockets: 2, CoresPerSocket: 1, ThreadsPerCore: 1}, 2)
	gres, err := hwinfo.LoadGres(c, g, "vm", &cpus, hwinfo.GresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range gres.Messages {
		if m.Level != "error" {
			continue
		}
		if !strings.Contains(stderr, "error: "+m.Text+"\n") {
			t.Errorf("our message %q not logged by the real slurmd:\n%s", m.Text, stderr)
		}
	}
	want := "error: " + gpu1 + " is not a valid character or block device, fix your gres.conf"
	if !strings.Contains(stderr, want) {
		t.Errorf("real slurmd did not log %q:\n%s", want, stderr)
	}
	// "Gres Name=gpu Type=tesla Count=2 Index=0 ID=... File=..." is
	// slurmd's record after the merge.
	line := regexp.MustCompile(`Gres Name=(\S+) Type=(\S+) Count=(\d+) Index=\d+ ID=\d+ File=(\S+)`).FindStringSubmatch(stderr)
	if line == nil {
		t.Fatalf("no Gres line from the real slurmd:\n%s", stderr)
	}
	if len(gres.Records) != 1 {
		t.Fatalf("our records: %+v", gres.Records)
	}
	r := gres.Records[0]
	if got := []string{r.Name, r.Type, strconv.FormatUint(r.Count, 10), r.File}; fmt.Sprint(got) != fmt.Sprint(line[1:]) {
		t.Errorf("record: real %q, ours %q", line[1:], got)
	}
	if len(gres.Devices) != 1 || gres.Devices[0].Path != gpu0 || gres.Devices[0].String() != "c 1:3 rwm" || gres.Devices[0].DevNum != 0 {
		t.Errorf("devices %+v, want only %s as c 1:3 (/dev/null)", gres.Devices, gpu0)
	}
}
