package msg

import (
	"fmt"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
)

func FuzzNodeInfo(f *testing.F) {
	seedGenerated(f, msgtype.RESPONSE_NODE_INFO, 8, nil)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzBody(t, msgtype.RESPONSE_NODE_INFO, data) })
}

// benchNodes returns a RESPONSE_NODE_INFO of n nodes shaped like a real
// cluster's (names, addresses, cons_tres data, energy all set).
func benchNodes(n int) NodeInfoResponse {
	b := NodeInfoResponse{LastUpdate: 1763700000, Nodes: make([]Node, n)}
	for i := range b.Nodes {
		name := fmt.Sprintf("n%05d", i)
		b.Nodes[i] = Node{
			Name: Str(name), NodeHostname: Str(name), NodeAddr: Str(fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255)),
			Port: 6818, NextState: pack.NoVal, NodeState: NodeStateIdle, Version: Str("22.05.8"),
			CPUs: 64, Boards: 1, Sockets: 2, Cores: 16, Threads: 2, RealMemory: 257000, TmpDisk: 0,
			Owner: pack.NoVal, CPUsEfctv: 64, CPULoad: 12, FreeMem: 200000, Weight: 1,
			BootTime: 1763600000, SlurmdStartTime: 1763600100, LastBusy: 1763690000,
			SelectNodeInfo: SelectNodeInfo{PluginID: SelectConsTres, AllocCPUs: 32, AllocMemory: 64000,
				TresAllocFmtStr: Str("cpu=32,mem=62.50G"), TresAllocWeighted: PackDouble(32)},
			Arch: Str("x86_64"), Features: Str("avx2,ib"), FeaturesAct: Str("avx2,ib"), Gres: Str("gpu:a100:4"),
			OS:            Str("Linux 6.1.0-13-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)"),
			PowerCapWatts: pack.NoVal, TresFmtStr: Str("cpu=64,mem=257000M,billing=64,gres/gpu=4"),
		}
	}
	return b
}

func BenchmarkNodeInfo10k(b *testing.B) {
	body := benchNodes(10000)
	c, _ := testRegistry().Lookup(msgtype.RESPONSE_NODE_INFO)
	var w pack.Writer
	if err := c.Encode(&w, codec.Version2205, body); err != nil {
		b.Fatal(err)
	}
	wire := w.Bytes()
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Decode(pack.NewReader(wire), codec.Version2205); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		b.ReportAllocs()
		buf := make([]byte, 0, len(wire))
		for b.Loop() {
			w := pack.NewWriter(buf[:0])
			if err := c.Encode(w, codec.Version2205, &body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// scontrol update NodeName=x State=DRAIN Reason=y (reference §6.6).
func TestUpdateNodeDrainBody(t *testing.T) {
	u := NewUpdateNodeRequest()
	u.NodeNames, u.NodeState, u.Reason = Str("x"), NodeStateDrain, Str("y")
	got := encodeBody(t, msgtype.REQUEST_UPDATE_NODE, u)
	var w pack.Writer
	w.NullStr()   // comment
	w.U32(0)      // cpu_bind
	for range 6 { // extra features features_act gres node_addr node_hostname
		w.NullStr()
	}
	w.Str("x")
	w.U32(0x200)
	w.Str("y")
	w.U32(0)
	w.U32(pack.NoVal)
	if string(got) != string(w.Bytes()) {
		t.Errorf("got %x\nwant %x", got, w.Bytes())
	}
}
