package priority

import (
	"math"
	"reflect"
	"testing"

	"github.com/goslurm/goslurm/conf"
)

// TestDetailSumsToPriority: the weighted factors of Detail add up (as
// sprio adds them) to the weighted sum Priority truncates, for the
// baseline and with TRES weights.
func TestDetailSumsToPriority(t *testing.T) {
	names := []string{"cpu", "mem", "energy", "node", "billing"}
	for _, tc := range []struct {
		name string
		mod  func(m *Multifactor, j *Job, p *Partition)
	}{
		{"baseline", func(*Multifactor, *Job, *Partition) {}},
		{"nice and site", func(_ *Multifactor, j *Job, _ *Partition) { j.Nice, j.SiteFactor = 30, 7 }},
		{"tres", func(m *Multifactor, j *Job, p *Partition) {
			m.Config.WeightTRES = map[string]float64{"cpu": 3000, "mem": 2000, "billing": 10}
			j.TRES = map[string]uint64{"cpu": 320, "mem": 1000, "node": 10, "billing": 320}
			p.TRES = map[string]uint64{"cpu": 3200, "mem": 8000, "node": 100, "billing": 3200}
		}},
		{"tres no normal", func(m *Multifactor, j *Job, p *Partition) {
			m.Config.WeightTRES = map[string]float64{"cpu": 3, "node": 2}
			m.Config.Flags |= conf.PriorityNoNormalTRES
			j.TRES = map[string]uint64{"cpu": 320, "node": 10}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, j, p := baseline()
			tc.mod(m, &j, &p)
			d := m.Detail(&j, &p, now, names)
			sum := d.Age + d.Assoc + d.FairShare + d.JobSize + d.Partition + d.QOS + float64(d.Site) - float64(d.Nice)
			for _, v := range d.TRES {
				sum += v
			}
			if want := m.Weighted(m.Factors(&j, &p, now)); math.Abs(sum-want) > 1e-9 {
				t.Errorf("factors sum to %v, Weighted %v (%+v)", sum, want, d)
			}
			if (len(m.Config.WeightTRES) != 0) != (d.TRES != nil) || d.TRES != nil && len(d.TRES) != len(names) {
				t.Errorf("TRES %v for weights %v", d.TRES, m.Config.WeightTRES)
			}
		})
	}
}

// TestPartitionDetail: a job's record in another partition has that
// partition's factor and TRES factors over its totals; a TRES the other
// partition has none of keeps the job's own value, weighted again
// (Slurm's _filter_job).
func TestPartitionDetail(t *testing.T) {
	m, j, p := baseline()
	m.Config.WeightTRES = map[string]float64{"cpu": 100, "gres/gpu": 10}
	j.TRES = map[string]uint64{"cpu": 320, "gres/gpu": 4}
	p.TRES = map[string]uint64{"cpu": 3200, "gres/gpu": 8}
	other := Partition{JobFactor: 10, MaxTime: Infinite, TRES: map[string]uint64{"cpu": 640}}
	names := []string{"cpu", "gres/gpu"}
	own := m.Detail(&j, &p, now, names)
	if own.TRES[0] != 10 || own.TRES[1] != 5 || own.Partition != 1000 {
		t.Fatalf("own detail %+v", own)
	}
	d := m.PartitionDetail(own, &j, &other, names)
	if d.Partition != 2000 {
		t.Errorf("partition factor %v, want 2000", d.Partition)
	}
	if d.TRES[0] != 50 || d.TRES[1] != 50 {
		t.Errorf("TRES %v, want [50 50]", d.TRES)
	}
	if own.TRES[0] != 10 {
		t.Errorf("own record changed: %v", own.TRES)
	}
	if d.JobSize != own.JobSize || d.Age != own.Age || d.Nice != own.Nice {
		t.Errorf("job factors changed: %+v vs %+v", d, own)
	}
	// The zeroed record of an operator-set priority: only the partition.
	z := m.PartitionDetail(Detail{}, &Job{}, &other, names)
	if !reflect.DeepEqual(z, Detail{Partition: 2000}) {
		t.Errorf("zeroed record %+v", z)
	}
}
