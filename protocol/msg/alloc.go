package msg

import (
	"fmt"

	"github.com/goslurm/goslurm/protocol/codec"
)

// Allocation is a resource_allocation_response_msg_t, the body of
// RESPONSE_RESOURCE_ALLOCATION and RESPONSE_JOB_ALLOCATION_INFO (reference
// §5.10), and one record of RESPONSE_HET_JOB_ALLOCATION. NodeCnt 0 means the
// job is pending.
//
// NodeAddrs is nil when the node address array is absent (a 22.05
// controller never sends one); when present Slurm insists on NodeCnt
// entries. CPUsPerNode and CPUCountReps are the cpu groups; the wire's
// num_cpu_groups is their common length. A working_cluster_rec (federation)
// is not supported: such a message fails to decode.
type Allocation struct {
	Account          NullString   // 1
	AliasList        NullString   // 2
	BatchHost        NullString   // 3
	Environment      []NullString // 4
	ErrorCode        uint32       // 5
	JobSubmitUserMsg NullString   // 6
	JobID            uint32       // 7
	NodeCnt          uint32       // 8
	NodeAddrs        []codec.Addr // 9
	NodeList         NullString   // 10
	NtasksPerBoard   uint16       // 11
	NtasksPerCore    uint16       // 12
	NtasksPerTres    uint16       // 13
	NtasksPerSocket  uint16       // 14
	CPUsPerNode      []uint16     // 15
	CPUCountReps     []uint32     // 15
	Partition        NullString   // 16
	PnMinMemory      uint64       // 17
	QOS              NullString   // 18
	ResvName         NullString   // 19
	SelectJobinfo    SelectPlugin // 20
}

// walkSlurmAddr walks one slurm_addr as slurm_pack_addr packs it on a
// little-endian host: u16 family; AF_INET: the address and port each
// byte-reversed (pack32/pack16 of network-order values); AF_INET6: packmem
// of the 16 address bytes and the reversed port; any other family alone.
func walkSlurmAddr(w fieldWalker, a *codec.Addr) {
	w.u16(&a.Family)
	switch a.Family {
	case codec.AFInet:
		v := uint32(a.IP[0]) | uint32(a.IP[1])<<8 | uint32(a.IP[2])<<16 | uint32(a.IP[3])<<24
		port := a.Port<<8 | a.Port>>8
		if !w.decoding() && [12]byte(a.IP[4:]) != ([12]byte{}) {
			w.fail(fmt.Errorf("%w: AF_INET address with more than 4 bytes", codec.ErrEncode))
		}
		w.u32(&v)
		w.u16(&port)
		if w.decoding() {
			a.IP = [16]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
			a.Port = port<<8 | port>>8
		}
	case codec.AFInet6:
		n := w.count(16, 1)
		if w.decoding() && n != 16 && w.err() == nil {
			w.fail(fmt.Errorf("msg: AF_INET6 address of %d bytes, want 16", n))
			return
		}
		for i := range a.IP {
			w.u8(&a.IP[i])
		}
		port := a.Port<<8 | a.Port>>8
		w.u16(&port)
		if w.decoding() {
			a.Port = port<<8 | port>>8
		}
	default:
		if !w.decoding() && (a.IP != [16]byte{} || a.Port != 0) {
			w.fail(fmt.Errorf("%w: address family %d carries no address on the wire", codec.ErrEncode, a.Family))
		}
	}
}

func walkAllocation(w fieldWalker, _ codec.Version, b *Allocation) {
	w.str(&b.Account)
	w.str(&b.AliasList)
	w.str(&b.BatchHost)
	walkStrArray(w, &b.Environment)
	w.u32(&b.ErrorCode)
	w.str(&b.JobSubmitUserMsg)
	w.u32(&b.JobID)
	w.u32(&b.NodeCnt)

	var present uint8
	if !w.decoding() && b.NodeAddrs != nil {
		present = 1
	}
	present = valU8(w, present)
	if w.decoding() {
		b.NodeAddrs = nil
		if present > 1 && w.err() == nil {
			w.fail(fmt.Errorf("msg: node_addr flag %d, want 0 or 1", present))
			return
		}
	}
	if present == 1 {
		if !w.decoding() && uint64(len(b.NodeAddrs)) != uint64(b.NodeCnt) {
			w.fail(fmt.Errorf("%w: %d node addresses for node_cnt %d", codec.ErrEncode, len(b.NodeAddrs), b.NodeCnt))
			return
		}
		n := w.count(len(b.NodeAddrs), 2)
		if w.decoding() {
			if w.err() != nil {
				return
			}
			if uint32(n) != b.NodeCnt {
				w.fail(fmt.Errorf("msg: %d node addresses for node_cnt %d", n, b.NodeCnt))
				return
			}
			b.NodeAddrs = make([]codec.Addr, n)
		}
		for i := range b.NodeAddrs {
			walkSlurmAddr(w, &b.NodeAddrs[i])
			if w.err() != nil {
				return
			}
		}
	}

	w.str(&b.NodeList)
	w.u16(&b.NtasksPerBoard)
	w.u16(&b.NtasksPerCore)
	w.u16(&b.NtasksPerTres)
	w.u16(&b.NtasksPerSocket)

	groups := uint32(len(b.CPUsPerNode))
	if !w.decoding() && len(b.CPUCountReps) != len(b.CPUsPerNode) {
		w.fail(fmt.Errorf("%w: %d cpus_per_node for %d cpu_count_reps", codec.ErrEncode, len(b.CPUsPerNode), len(b.CPUCountReps)))
		return
	}
	groups = valU32(w, groups)
	if groups > 0 {
		walkU16s(w, &b.CPUsPerNode)
		if uint64(len(b.CPUsPerNode)) != uint64(groups) && w.err() == nil {
			w.fail(fmt.Errorf("msg: %d cpus_per_node for %d cpu groups", len(b.CPUsPerNode), groups))
			return
		}
		walkU32s(w, &b.CPUCountReps)
		if uint64(len(b.CPUCountReps)) != uint64(groups) && w.err() == nil {
			w.fail(fmt.Errorf("msg: %d cpu_count_reps for %d cpu groups", len(b.CPUCountReps), groups))
			return
		}
	} else if w.decoding() {
		b.CPUsPerNode, b.CPUCountReps = nil, nil
	}

	w.str(&b.Partition)
	w.u64(&b.PnMinMemory)
	w.str(&b.QOS)
	w.str(&b.ResvName)
	walkSelectJobinfo(w, &b.SelectJobinfo)

	cluster := valU8(w, 0)
	if w.decoding() && cluster != 0 && w.err() == nil {
		w.fail(fmt.Errorf("%w: working_cluster_rec (federation) is not supported", ErrPlugin))
	}
}

// HetAllocation is RESPONSE_HET_JOB_ALLOCATION: u16 count, then that many
// allocation records (a non-het job comes back as a list of one).
type HetAllocation struct {
	Jobs []Allocation
}

// minAllocationSize: the smallest allocation record (all strings NULL, no
// arrays) is 13 x u32-or-string + 4 x u16 + u64 + 2 x u8 = 70 bytes.
const minAllocationSize = 70

func walkHetAllocation(w fieldWalker, v codec.Version, b *HetAllocation) {
	n := walkHetCount(w, len(b.Jobs), minAllocationSize, "allocation")
	if w.decoding() {
		b.Jobs = nil
		if w.err() != nil || n == 0 {
			return
		}
		b.Jobs = make([]Allocation, n)
	}
	for i := range b.Jobs {
		walkAllocation(w, v, &b.Jobs[i])
		if w.err() != nil {
			return
		}
	}
}
