package priority

import "github.com/goslurm/goslurm/conf"

// Detail is a job's factors as Slurm keeps them for sprio
// (priority_factors_object_t): each factor already multiplied by its
// weight, the TRES factors one by one, and the signed site and nice
// values.
type Detail struct {
	Age, Assoc, FairShare, JobSize, Partition, QOS float64
	// TRES holds weight * factor for each name of the names given to
	// Detail (TRES keys, see TRESKey), in that order; nil when
	// PriorityWeightTRES is not set.
	TRES []float64
	Site int64
	Nice int32
}

// Detail computes j's weighted factors in partition p at now, as
// set_priority_factors and _get_priority_internal leave them in the job
// record. names is the controller's TRES table (keys), the order of
// Detail.TRES.
func (m *Multifactor) Detail(j *Job, p *Partition, now int64, names []string) Detail {
	c := &m.Config
	f := m.Factors(j, p, now)
	d := Detail{
		Age:       f.Age * float64(c.WeightAge),
		Assoc:     f.Assoc * float64(c.WeightAssoc),
		FairShare: f.FairShare * float64(c.WeightFairshare),
		JobSize:   f.JobSize * float64(c.WeightJobSize),
		Partition: f.Partition * float64(c.WeightPartition),
		QOS:       f.QOS * float64(c.WeightQOS),
		Site:      f.Site,
		Nice:      f.Nice,
	}
	if len(c.WeightTRES) != 0 {
		d.TRES = make([]float64, len(names))
		for i, k := range names {
			v, _ := m.tresFactor(j, p, k)
			d.TRES[i] = v * c.WeightTRES[k]
		}
	}
	return d
}

// PartitionDetail is the record of a job submitted to several partitions
// for one of them, own being its Detail in its own partition: the
// partition factor is p's, and each TRES factor whose denominator p has
// is recomputed over p's totals. Slurm weighs the TRES array of the
// copied record again, so a TRES factor that is not recomputed (the job
// does not ask for that TRES, or p has none of it) is the job's own
// weighted value weighted once more; that is reproduced.
func (m *Multifactor) PartitionDetail(own Detail, j *Job, p *Partition, names []string) Detail {
	c := &m.Config
	d := own
	d.Partition = m.partitionFactor(p) * float64(c.WeightPartition)
	if own.TRES != nil {
		d.TRES = make([]float64, len(own.TRES))
		for i, k := range names {
			if i >= len(own.TRES) {
				break
			}
			v, ok := m.tresFactor(j, p, k)
			if !ok {
				v = own.TRES[i]
			}
			d.TRES[i] = v * c.WeightTRES[k]
		}
	}
	return d
}

// tresFactor is _get_tres_factors for one TRES: the job's count over
// partition p's total (the count itself with NO_NORMAL_TRES). ok is
// false when Slurm leaves the element as it was: no count, or no total.
func (m *Multifactor) tresFactor(j *Job, p *Partition, key string) (float64, bool) {
	v := j.TRES[key]
	if m.Config.Flags&conf.PriorityNoNormalTRES != 0 {
		return float64(v), true
	}
	if v == 0 || p == nil || p.TRES[key] == 0 {
		return 0, false
	}
	return float64(v) / float64(p.TRES[key]), true
}
