package interop

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goslurm/goslurm/testsuite/ctldharness"
	"github.com/goslurm/goslurm/testsuite/oracle"
)

// Our commands with a backup controller: squeue, sbatch, scontrol ping
// and scontrol takeover against a pair of controllers (real slurmctld,
// then ours), each compared with the real 22.05 command. The primary is
// killed with SIGKILL and our commands, started right after, must get
// through to the backup once it has taken over, as the real ones do:
// they retry a backup in standby for SlurmctldTimeout (6 s here), where
// the 120 s default would outlast RunBin's 30 s bound.

// cbRun runs the command at bin and returns what it printed, like
// ctldRun, and how long it took.
func cbRun(c *ctldharness.Cluster, bin string, args ...string) (string, time.Duration) {
	start := time.Now()
	out, errOut, err := c.RunBin(bin, args...)
	took := time.Since(start)
	var b strings.Builder
	b.WriteString(out)
	if errOut != "" {
		b.WriteString("--- stderr\n" + errOut)
	}
	if err != nil {
		b.WriteString("--- exit: " + err.Error() + "\n")
	}
	return b.String(), took
}

func TestCommandsBackup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts clusters")
	}
	if !ctldharness.HAAvailable() {
		oracle.Unavailable(t, "unshare --uts --mount is not available")
	}
	for _, name := range []string{"squeue", "sbatch", "scontrol"} {
		if _, err := oracle.Find(name); err != nil {
			oracle.Unavailable(t, name+": "+err.Error())
		}
	}
	ours := goslurmBuildCommands(t, false)
	for _, impl := range []struct {
		name string
		bin  func() string
	}{
		{"real-slurmctld", func() string { return ctldharness.RealSbin(t, "slurmctld") }},
		{"our-slurmctld", func() string { return ctldBuildOurs(t) }},
	} {
		t.Run(impl.name, func(t *testing.T) {
			bin := impl.bin()
			c := ctldharness.New(t, ctldharness.Options{Nodes: 1, ExtraConf: []string{"SlurmctldTimeout=6"}})
			c.SetControllers(backupCtls)
			c.StartHA(backupCtls, []string{bin, bin}, "-c")
			defer c.Stop()
			defer c.CheckRaces()
			d := &goslurmDiff{c: c, dir: t.TempDir(), ours: ours}
			our := func(name string) string { return filepath.Join(ours, name) }
			diff := func(args ...string) {
				t.Helper()
				if f := d.diff(t, args[0], args[1:], nil, false); f != "" {
					t.Error(f)
				}
			}
			sbatch := func(bin string) string {
				t.Helper()
				out, _ := cbRun(c, bin, "--parsable", "-H", "-o", "/dev/null", "--wrap", "true")
				id := strings.TrimSpace(out)
				if id == "" || strings.ContainsAny(id, " \n") {
					t.Fatalf("%s: %s", bin, out)
				}
				return id
			}

			backupWaitPing(t, c, backupPing(true, true))
			diff("scontrol", "ping")
			for _, a := range [][]string{{"5"}, {"0"}, {"-1"}, {"x"}, {"2"}, {"1", "2"}} {
				diff(append([]string{"scontrol", "takeover"}, a...)...)
			}
			ids := []string{sbatch(oracle.Binary(t, "sbatch")), sbatch(our("sbatch"))}
			query := []string{"-h", "-o", "%i %j %T %r", "-j", strings.Join(ids, ",")}
			diff(append([]string{"squeue"}, query...)...)

			// The crash: every command started at once, right after it.
			c.KillProc("slurmctld-ctld1")
			type result struct {
				out  string
				took time.Duration
			}
			runs := map[string][]string{
				"real squeue": append([]string{oracle.Binary(t, "squeue")}, query...),
				"our squeue":  append([]string{our("squeue")}, query...),
				"our sbatch":  {our("sbatch"), "--parsable", "-H", "-o", "/dev/null", "--wrap", "true"},
			}
			res := map[string]result{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for name, argv := range runs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, took := cbRun(c, argv[0], argv[1:]...)
					mu.Lock()
					res[name] = result{out, took}
					mu.Unlock()
				}()
			}
			wg.Wait()
			for _, name := range []string{"real squeue", "our squeue", "our sbatch"} {
				t.Logf("%s after the primary's SIGKILL: %v", name, res[name].took.Round(time.Millisecond))
				if strings.Contains(res[name].out, "---") {
					t.Errorf("%s after the primary's SIGKILL failed:\n%s", name, res[name].out)
				}
			}
			if r, o := res["real squeue"].out, res["our squeue"].out; r != o {
				t.Errorf("squeue after the primary's SIGKILL: real\n%s\nours\n%s", r, o)
			}
			backupWaitControl(t, c)
			backupWaitPing(t, c, backupPing(false, true))
			diff("scontrol", "ping")
			ids = append(ids, sbatch(our("sbatch")))
			query[len(query)-1] = strings.Join(ids, ",")
			diff(append([]string{"squeue"}, query...)...)

			// The primary comes back and takes control back.
			c.StartController(backupCtls[0], bin)
			backupWaitPing(t, c, backupPing(true, true))
			backupWaitControl(t, c)
			diff("scontrol", "ping")

			// Our scontrol takeover: the primary stops, the backup
			// takes over.
			if out, _ := cbRun(c, our("scontrol"), "takeover"); out != "" {
				t.Errorf("our scontrol takeover printed %q", out)
			}
			if !c.ForgetExited("slurmctld-ctld1", 60*time.Second) {
				t.Fatalf("primary still running after our scontrol takeover\n%s", c.Logs())
			}
			backupWaitControl(t, c)
			backupWaitPing(t, c, backupPing(false, true))
			diff("scontrol", "ping")
			diff(append([]string{"squeue"}, query...)...)
			// The controller in control skips a takeover.
			diff("scontrol", "takeover")
		})
	}
}
