package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/munge"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/testsuite/ctldharness"
)

// TestSlurmctldLocalMunge runs our controller with the in-process MUNGE
// codec (GOSLURM_MUNGE_KEY) beside Debian's real slurmd, commands and
// munged: the real commands accept its replies, real slurmd its job and
// step credentials, and it refuses a replayed credential and one made
// with another key.
func TestSlurmctldLocalMunge(t *testing.T) {
	c, _ := ctldJobsStart(t, ctldharness.Options{Nodes: 2, LocalMunge: true})
	out := filepath.Join(c.Dir, "out-%j.txt")
	id := ctldSbatch(t, c, "-o", out, "--wrap", "echo batch on $SLURMD_NODENAME; srun -N1 hostname")
	ctldWaitJob(t, c, id, 60*time.Second, "COMPLETED")
	host, _ := os.Hostname()
	ctldWaitFile(t, c, filepath.Join(c.Dir, fmt.Sprintf("out-%d.txt", id)), "batch on n1\n"+host+"\n", 10*time.Second)
	o, e, err := c.Run("srun", "-N2", "hostname")
	if err != nil || strings.Fields(o) == nil || len(strings.Fields(o)) != 2 {
		t.Fatalf("srun -N2 hostname: %v\n%s%s", err, o, e)
	}
	if o, e, err := c.Run("scontrol", "ping"); err != nil || !strings.Contains(o, "is UP") {
		t.Fatalf("scontrol ping: %v\n%s%s", err, o, e)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := fmt.Sprintf("127.0.0.1:%d", c.CtldPort)
	signed := func(a auth.Authenticator) codec.Frame {
		f := codec.NewFrame(msgtype.REQUEST_PING, codec.AuthBlob{}, nil)
		if err := a.Sign(ctx, &f, 0); err != nil {
			t.Fatal(err)
		}
		return f
	}
	// munged's own credential, decoded in process: accepted once.
	f := signed(&auth.Munge{Client: c.Munge.Client()})
	if got := sendRaw(t, addr, &f); got != "reply RESPONSE_SLURM_RC rc=0" {
		t.Fatalf("ping: %s", got)
	}
	const refused = "reply RESPONSE_SLURM_RC rc=ESLURM_AUTH_CRED_INVALID"
	if got := sendRaw(t, addr, &f); got != refused {
		t.Errorf("replayed ping: %s, want %s", got, refused)
	}
	// A credential under another key.
	other, err := munge.NewKey([]byte(strings.Repeat("not the cluster's key ", 4)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := munge.NewLocal(other, munge.LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	f = signed(&auth.Munge{Codec: l})
	if got := sendRaw(t, addr, &f); got != refused {
		t.Errorf("ping under another key: %s, want %s", got, refused)
	}
	log, _ := os.ReadFile(filepath.Join(c.Dir, "log", "slurmctld.stdout"))
	for _, want := range []string{"(EMUNGE_CRED_REPLAYED)", "(EMUNGE_CRED_INVALID)"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("controller log: no %s\n%s", want, log)
		}
	}
}
