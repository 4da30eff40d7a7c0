package msg

import (
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Bodies of sprio's RPC, REQUEST_PRIORITY_FACTORS and
// RESPONSE_PRIORITY_FACTORS (22.05 layouts of
// _pack_priority_factors_request_msg, _pack_priority_factors_response_msg
// and _pack_priority_factors_object).

// PriorityFactorsRequest is REQUEST_PRIORITY_FACTORS: the jobs, users and
// partitions to report. A nil list (NO_VAL on the wire) does not filter;
// a non-nil empty one matches nothing, as in Slurm. Partitions is a
// comma-separated list of names, NULL for every partition.
type PriorityFactorsRequest struct {
	JobIDs     []uint32
	UIDs       []uint32
	Partitions NullString
}

func walkU32List(w fieldWalker, l *[]uint32) {
	walkList(w, l, 4, func(w fieldWalker, v *uint32) { w.u32(v) })
}

func walkPriorityFactorsRequest(w fieldWalker, _ codec.Version, b *PriorityFactorsRequest) {
	walkU32List(w, &b.JobIDs)
	walkU32List(w, &b.UIDs)
	w.str(&b.Partitions)
}

// PriorityFactors is one priority_factors_object_t: a pending job's
// factors in one partition. The factors are weighted (factor times its
// PriorityWeight*), as sprio prints them without -n. Site and Nice are
// NICE_OFFSET encoded. TRES holds the weighted TRES factors, TRESWeights
// their weights and TRESNames their names (the controller's TRES table);
// all three are empty without PriorityWeightTRES. TRESCount is the
// tres_cnt sent between them (Slurm's unpacker takes the names' count).
// A job whose priority an operator set has DirectPrio set and, in one
// partition, every other factor zero.
type PriorityFactors struct {
	JobID  uint32
	UserID uint32

	Age        PackedDouble
	Assoc      PackedDouble
	FairShare  PackedDouble
	JobSize    PackedDouble
	Partition  PackedDouble
	QOS        PackedDouble
	DirectPrio PackedDouble
	Site       uint32

	TRES        []PackedDouble
	TRESCount   uint32
	TRESNames   []NullString
	TRESWeights []PackedDouble

	Nice          uint32
	PartitionName NullString
}

// priorityFactorsMinSize is the smallest object: two u32, seven doubles,
// u32 site, four empty counts (tres, tres_cnt, names, weights), u32 nice
// and a NULL partition.
const priorityFactorsMinSize = 8 + 7*8 + 4 + 4*4 + 4 + 4

func walkDoubleArray(w fieldWalker, a *[]PackedDouble) {
	walkArray(w, a, 8, func(w fieldWalker, d *PackedDouble) { w.dbl(d) })
}

func walkPriorityFactors(w fieldWalker, f *PriorityFactors) {
	w.u32(&f.JobID)
	w.u32(&f.UserID)
	w.dbl(&f.Age)
	w.dbl(&f.Assoc)
	w.dbl(&f.FairShare)
	w.dbl(&f.JobSize)
	w.dbl(&f.Partition)
	w.dbl(&f.QOS)
	w.dbl(&f.DirectPrio)
	w.u32(&f.Site)
	walkDoubleArray(w, &f.TRES)
	w.u32(&f.TRESCount)
	walkStrArray(w, &f.TRESNames)
	walkDoubleArray(w, &f.TRESWeights)
	w.u32(&f.Nice)
	w.str(&f.PartitionName)
}

// PriorityFactorsResponse is RESPONSE_PRIORITY_FACTORS: a NO_VAL-able
// list of objects. Slurm sends no list (nil) when no job matched.
type PriorityFactorsResponse struct {
	Factors []PriorityFactors
}

func walkPriorityFactorsResponse(w fieldWalker, _ codec.Version, b *PriorityFactorsResponse) {
	walkList(w, &b.Factors, priorityFactorsMinSize, walkPriorityFactors)
}

func init() { registrars = append(registrars, registerPriorityFactors) }

func registerPriorityFactors(g *codec.Registry) {
	g.Register(msgtype.REQUEST_PRIORITY_FACTORS, bodyCodec("REQUEST_PRIORITY_FACTORS", walkPriorityFactorsRequest))
	g.Register(msgtype.RESPONSE_PRIORITY_FACTORS, bodyCodec("RESPONSE_PRIORITY_FACTORS", walkPriorityFactorsResponse))
}
