package slurmcli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/auth"
	"github.com/goslurm/goslurm/credential/slurmauth"
)

func TestDial(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := "ClusterName=c1\nSlurmctldHost=ctl1(10.0.0.1)\nSlurmctldHost=ctl2\nSlurmctldPort=7000\n" +
		"NodeName=n[1-2] CPUs=2\nPartitionName=p Nodes=ALL Default=YES\n"
	tests := []struct {
		name, extra string
		check       func(t *testing.T, c *Conn)
	}{
		{"munge", "AuthType=auth/munge\nAuthInfo=socket=/tmp/m.sock,ttl=30\n", func(t *testing.T, c *Conn) {
			m, ok := c.Client.Auth.(*auth.Munge)
			if !ok || m.Client.Socket != "/tmp/m.sock" || m.TTL.Seconds() != 30 {
				t.Errorf("auth = %#v", c.Client.Auth)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := write(tc.name+".conf", base+tc.extra)
			c, err := Dial(func(k string) (string, bool) {
				if k == "SLURM_CONF" {
					return p, true
				}
				return "", false
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"10.0.0.1:7000", "ctl2:7000"}
			if len(c.Client.Controllers) != 2 || c.Client.Controllers[0] != want[0] || c.Client.Controllers[1] != want[1] {
				t.Errorf("controllers = %q, want %q", c.Client.Controllers, want)
			}
			tc.check(t, c)
		})
	}
	p := write("bad.conf", base+"AuthType=auth/jwt\n")
	if _, err := Dial(func(k string) (string, bool) { return p, k == "SLURM_CONF" }); err == nil {
		t.Errorf("auth/jwt accepted")
	}
}

// TestDialSlurmAuth checks goslurm's built-in auth (which 22.05's
// slurm.conf parser, and so conf.Load, does not know yet).
func TestDialSlurmAuth(t *testing.T) {
	cfg, err := conf.Parse("slurm.conf", []byte("ClusterName=c1\nSlurmctldHost=ctl1\nNodeName=n1\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AuthType = "auth/slurm"
	cfg.AuthInfo = conf.ParseOptions("sack_socket=/tmp/s.sock")
	c, err := newConn(cfg, "slurm.conf", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	s, ok := c.Client.Auth.(*slurmauth.Slurm)
	if !ok || s.Cluster != "c1" || len(s.Sack.Paths) != 1 || s.Sack.Paths[0] != "/tmp/s.sock" {
		t.Errorf("auth = %#v", c.Client.Auth)
	}
	if c.Client.Controllers[0] != "ctl1:6817" {
		t.Errorf("controllers = %q", c.Client.Controllers)
	}
}
