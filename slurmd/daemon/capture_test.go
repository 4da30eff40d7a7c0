package daemon

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pcap"
)

// realRegistration is the MESSAGE_NODE_REGISTRATION_STATUS a real 22.05.8
// slurmd sent in the captures.
func realRegistration(t *testing.T) msg.NodeRegistration {
	t.Helper()
	f, err := os.Open("../../testsuite/captures/testdata/slurmd-registration.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	conns, err := pcap.ReadConns(f)
	if err != nil {
		t.Fatal(err)
	}
	cd := &codec.Codec{Bodies: msg.Registry()}
	for _, c := range conns {
		for _, u := range pcap.SlurmUnits(c, cd) {
			if u.Kind != pcap.UnitRPC || u.Frame.Header.MsgType != msgtype.MESSAGE_NODE_REGISTRATION_STATUS {
				continue
			}
			d := &Daemon{cd: cd}
			b, err := d.decode(u.Frame.Header.MsgType, u.Frame.Header.Version, u.Frame.Body)
			if err != nil {
				t.Fatal(err)
			}
			return b.(msg.NodeRegistration)
		}
	}
	t.Fatal("no registration in the capture")
	return msg.NodeRegistration{}
}

// TestRegistrationMatchesRealSlurmd builds our registration on the captured
// node's hardware and figures, and compares it field by field with what
// the real slurmd sent: only HashVal may differ (we send NO_VAL rather than
// a hash of slurm.conf we do not reproduce).
func TestRegistrationMatchesRealSlurmd(t *testing.T) {
	real := realRegistration(t)
	text := `ClusterName=c
SlurmctldHost=localhost
SlurmdParameters=config_overrides
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=6818 CPUs=16 RealMemory=4096 State=UNKNOWN
PartitionName=p Nodes=ALL
`
	c, err := conf.Parse("slurm.conf", []byte(text), conf.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := NewConfig(c, "slurm.conf", "n1", real.Hostname.Value)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_ARCH", real.Arch.Value)
	t.Setenv("SLURM_OS", real.OS.Value)
	v, _ := jobcred.NewHMACVerifier(credKey)
	d, err := New(Options{
		Config: cfg, Auth: fakeAuth{}, CredVerifier: v, Log: quiet(),
		Clock: func() time.Time { return time.Unix(real.Timestamp, 0) },
		Hardware: func(string) (Hardware, error) {
			// The VM's detected layout: 16 one-core sockets.
			return Hardware{CPUs: 16, Boards: 1, Sockets: 16, Cores: 1, Threads: 1,
				RealMemory: real.RealMemory, TmpDisk: real.TmpDisk}, nil
		},
		Stats: func() Stats { return Stats{UpTime: real.UpTime, CPULoad: real.CPULoad, FreeMem: real.FreeMem} },
	})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := d.NodeRegistration(0)
	if err != nil {
		t.Fatal(err)
	}
	if ours.HashVal != NoVal {
		t.Errorf("HashVal %#x, want NO_VAL", ours.HashVal)
	}
	ours.HashVal = real.HashVal
	if diff := cmp.Diff(real, *ours); diff != "" {
		t.Errorf("registration differs from the real slurmd's (-real +ours):\n%s", diff)
	}
	// Same bytes, too.
	a, _ := d.encode(msgtype.MESSAGE_NODE_REGISTRATION_STATUS, real)
	b, _ := d.encode(msgtype.MESSAGE_NODE_REGISTRATION_STATUS, *ours)
	if string(a) != string(b) {
		t.Errorf("encodings differ: %d vs %d bytes", len(a), len(b))
	}
}
