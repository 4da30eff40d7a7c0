package conf

import (
	"go/build"
	"strings"
	"testing"
)

func TestGres(t *testing.T) {
	fsys := MapFS{"/g/gres.conf": "AutoDetect=off\n" +
		"NodeName=dgx[01-02] Name=gpu Type=a100 File=/dev/nvidia[0-7] Cores=0-31,64-95 Links=-1,2,2,2,2,2,2,2\n" +
		"NodeName=dgx[01-02] AutoDetect=nvml\n" +
		"Name=mps Count=2K\n" +
		"NodeName=inf[1-4] Name=gpu File=/dev/nvidia[0-1] Flags=nvidia_gpu_env,CountOnly\n" +
		"Name=bogus Count=1\n"}
	g, err := LoadGres(fsys, "/g/gres.conf", List{"gpu", "mps"})
	if err != nil {
		t.Fatal(err)
	}
	if g.AutoDetect != "off" || len(g.Records) != 4 || len(g.Warnings) != 1 {
		t.Fatalf("%+v %v", g, g.Warnings)
	}
	r := g.Records[0]
	if r.Count != 8 || len(r.Files) != 8 || r.Files[7] != "/dev/nvidia7" || len(r.Links) != 8 {
		t.Errorf("%+v", r)
	}
	recs, auto := g.ForNode("dgx02")
	if auto != "nvml" || len(recs) != 2 || recs[1].Count != 2048 {
		t.Errorf("dgx02: %s %+v", auto, recs)
	}
	recs, auto = g.ForNode("inf3")
	if auto != "off" || len(recs) != 2 || recs[1].Flags.Has("CountOnly") == false || recs[1].Name != "gpu" {
		t.Errorf("inf3: %s %+v", auto, recs)
	}
	tests := map[string]string{
		"Name=gpu File=/dev/nvidia[0-1] Count=3":         "count does not match File value",
		"Name=gpu Count=lots":                            "Invalid GRES record for gpu, invalid count lots",
		"Name=gpu File=/dev/a MultipleFiles=/dev/b[0-1]": "File and MultipleFiles options are mutually exclusive",
		"Name=gpu MultipleFiles=/dev/b0":                 "MultipleFiles does not contain multiple files",
		"Name=gpu Colour=red":                            "Parsing error at unrecognized key: Colour",
		"Name=gpu Flags=no_gpu_env,nvidia_gpu_env":       "no_gpu_env",
		"Frob=1": "unrecognized key: Frob",
	}
	for line, want := range tests {
		_, err := LoadGres(MapFS{"/g": line + "\n"}, "/g", nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", line, err)
		}
	}
	// Shared GRES may count more than its files.
	if _, err := LoadGres(MapFS{"/g": "Name=mps File=/dev/nvidia0 Count=100\n"}, "/g", nil); err != nil {
		t.Error(err)
	}
}

func TestCgroup(t *testing.T) {
	c, err := LoadCgroup(MapFS{"/c": "CgroupPlugin=cgroup/v2\nConstrainCores=yes\nConstrainRAMSpace=yes\n" +
		"AllowedRAMSpace=95.5\nCgroupMountpoint=/sys/fs/cgroup/\nMemorySwappiness=150\nIgnoreSystemd=yes\n"}, "/c")
	if err != nil {
		t.Fatal(err)
	}
	if c.CgroupPlugin != "cgroup/v2" || !c.ConstrainCores || c.AllowedRAMSpace != 95.5 || c.CgroupMountpoint != "/sys/fs/cgroup" ||
		c.MemorySwappiness != 100 || !c.IgnoreSystemdOnFailure || c.MaxRAMPercent != 100 || c.MinRAMSpace != 30 ||
		c.AllowedSwapSpace != 0 || len(c.Warnings) != 1 {
		t.Errorf("%+v", c)
	}
	d, err := LoadCgroup(MapFS{"/c": ""}, "/c")
	if err != nil || d.CgroupPlugin != "autodetect" || d.ConstrainDevices {
		t.Errorf("defaults: %+v %v", d, err)
	}
	for line, want := range map[string]string{
		"CgroupReleaseAgentDir=/x": "Support for CgroupReleaseAgentDir option has been removed.",
		"ConstrainCores=perhaps":   `"perhaps" is not a valid option for "ConstrainCores"`,
		"AllowedRAMSpace=lots":     "AllowedRAMSpace value (lots) is not a valid number",
		"Bogus=1":                  "Parsing error at unrecognized key: Bogus",
		"ConstrainCores=yes Foo=1": "Parse error in file /c line 1",
	} {
		_, err := LoadCgroup(MapFS{"/c": line + "\n"}, "/c")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", line, err)
		}
	}
}

// TestPurePackage enforces the layering rule: conf imports no network,
// process or database packages.
func TestPurePackage(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		switch {
		case imp == "net", strings.HasPrefix(imp, "net/"), imp == "os/exec", imp == "database/sql", imp == "time":
			t.Errorf("conf imports %s", imp)
		}
	}
}
