package cli

import (
	"fmt"
	"strings"

	"github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/hostlist"
	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
)

// Special step ids (slurm.h).
const (
	stepBatch       = 0xfffffffb
	stepExtern      = 0xfffffffc
	stepInteractive = 0xfffffffa
	stepPending     = 0xfffffffd
)

// stepIDString is log_build_step_id_str; noJob drops the "StepId=J."
// prefix.
func stepIDString(id msg.StepID, noJob bool) string {
	var b strings.Builder
	if !noJob {
		if id.StepID != noVal {
			b.WriteString("StepId=")
		} else {
			b.WriteString("JobId=")
		}
	}
	if id.JobID == 0 {
		b.WriteString("Invalid")
		return b.String()
	}
	if !noJob {
		fmt.Fprintf(&b, "%d", id.JobID)
		if id.StepID != noVal {
			b.WriteString(".")
		}
	}
	if id.StepID == noVal {
		return b.String()
	}
	switch id.StepID {
	case stepBatch:
		b.WriteString("batch")
	case stepExtern:
		b.WriteString("extern")
	case stepInteractive:
		b.WriteString("interactive")
	case stepPending:
		b.WriteString("TDB")
	default:
		fmt.Fprintf(&b, "%d", id.StepID)
	}
	if id.StepHetComp != noVal {
		fmt.Fprintf(&b, "+%d", id.StepHetComp)
	}
	return b.String()
}

// showSteps is scontrol_print_step: "show step [J[.S]|J_T]".
func showSteps(s *state, _ []string, val *string) {
	id := msg.StepID{StepID: noVal, StepHetComp: noVal}
	arrayID := uint32(noVal)
	if val != nil {
		n, rest := strtolInt(*val)
		id.JobID = uint32(n)
		if strings.HasPrefix(rest, "_") {
			t, _ := strtolInt(rest[1:])
			arrayID = uint32(t)
		} else if strings.HasPrefix(rest, ".") {
			t, _ := strtolInt(rest[1:])
			id.StepID = uint32(t)
		}
	}
	var flags uint16
	if s.allFlag {
		flags |= slurmcli.ShowAll
	}
	v, err := s.rpc(msgtype.REQUEST_JOB_STEP_INFO,
		msg.JobStepInfoRequest{StepID: id, ShowFlags: flags | slurmcli.ShowLocal}, msgtype.RESPONSE_JOB_STEP_INFO)
	if err != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			s.perror("slurm_get_job_steps error", err)
		}
		return
	}
	m, _ := v.(msg.StepInfoMsg)
	if s.quietFlag == -1 {
		fmt.Fprintf(s.stdout, "last_update_time=%s, records=%d\n", s.timeStr(m.LastUpdate), len(m.Steps))
	}
	printed := 0
	for i := range m.Steps {
		st := &m.Steps[i]
		if arrayID != noVal && arrayID != st.ArrayTaskID {
			continue
		}
		s.stdout.WriteString(s.sprintStep(st, s.oneLiner))
		printed++
	}
	if printed > 0 {
		return
	}
	if val != nil {
		s.exitCode = 1
		if s.quietFlag != 1 {
			if arrayID == noVal {
				fmt.Fprintf(s.stdout, "Job step %d.%s not found\n", id.JobID, stepIDString(id, true))
			} else {
				fmt.Fprintf(s.stdout, "Job step %d_%d.%s not found\n", id.JobID, arrayID, stepIDString(id, true))
			}
		}
	} else if s.quietFlag != 1 {
		s.stdout.WriteString("No job steps in the system\n")
	}
}

var distNames = map[uint32]string{
	0x1: "Cyclic", 0x2: "Block", 0x3: "arbitrary task distribution", 0x4: "Plane",
	0x11: "CCyclic", 0x21: "CBlock", 0x12: "BCyclic", 0x22: "BBlock", 0x31: "CFCyclic", 0x32: "BFCyclic",
	0x111: "CCyclicCyclic", 0x211: "CCyclicBlock", 0x311: "CCyclicFCyclic", 0x121: "CBlockCyclic",
	0x221: "CBlockBlock", 0x321: "CCyclicFCyclic", 0x131: "CFCyclicCyclic", 0x231: "CFCyclicBlock",
	0x331: "CFCyclicFCyclic", 0x112: "BCyclicCyclic", 0x212: "BCyclicBlock", 0x312: "BCyclicFCyclic",
	0x122: "BBlockCyclic", 0x222: "BBlockBlock", 0x322: "BBlockFCyclic", 0x132: "BFCyclicCyclic",
	0x232: "BFCyclicBlock", 0x332: "BFCyclicFCyclic",
}

// layoutTypeName is slurm_step_layout_type_name.
func layoutTypeName(d uint32) string {
	name, ok := distNames[d&0xffff]
	if !ok {
		name = "Unknown"
	}
	if d&0x800000 != 0 {
		name += ",Pack"
	}
	if d&0x400000 != 0 {
		name += ",NoPack"
	}
	return name
}

// sprintStep is slurm_sprint_job_step_info.
func (s *state) sprintStep(st *msg.StepInfo, oneLiner bool) string {
	nl := "\n   "
	if oneLiner {
		nl = " "
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	limit := "UNLIMITED"
	if st.TimeLimit != infinite {
		limit = secs2time(int64(st.TimeLimit) * 60)
	}
	noJob := false
	if st.ArrayJobID != 0 {
		p("StepId=%d_%d.", st.ArrayJobID, st.ArrayTaskID)
		noJob = true
	}
	p("%s ", stepIDString(st.StepID, noJob))
	p("UserId=%d StartTime=%s TimeLimit=%s", st.UserID, s.timeStr(st.StartTime), limit)
	p("%sState=%s Partition=%s NodeList=%s", nl, slurmcli.JobStateString(st.State), cs(st.Partition),
		slurmcli.SortHostlist(st.Nodes.Value))
	count := 0
	if hl, err := hostlist.Parse(st.Nodes.Value); err == nil {
		seen := map[string]bool{}
		for _, h := range hl.Hosts() {
			seen[h] = true
		}
		count = len(seen)
	}
	p("%sNodes=%s CPUs=%d Tasks=%d Name=%s Network=%s", nl,
		slurmcli.ConvertNumUnit(float64(count), slurmcli.UnitNone, slurmcli.ConvertExact),
		st.NumCPUs, st.NumTasks, cs(st.Name), cs(st.Network))
	p("%sTRES=%s", nl, cs(st.TresAllocStr))
	p("%sResvPorts=%s", nl, cs(st.ResvPorts))
	b.WriteString(nl)
	if f, ok := cpuFreqDebug(st.CPUFreqGov, st.CPUFreqMin, st.CPUFreqMax); ok {
		b.WriteString(f)
	} else {
		b.WriteString("CPUFreqReq=Default")
	}
	if st.TaskDist != 0 {
		p(" Dist=%s", layoutTypeName(st.TaskDist))
	}
	p("%sSrunHost:Pid=%s:%d", nl, cs(st.SrunHost), st.SrunPID)
	for _, kv := range []struct {
		k string
		v msg.NullString
	}{{"CpusPerTres", st.CPUsPerTres}, {"MemPerTres", st.MemPerTres}, {"TresBind", st.TresBind},
		{"TresFreq", st.TresFreq}, {"TresPerStep", st.TresPerStep}, {"TresPerNode", st.TresPerNode},
		{"TresPerSocket", st.TresPerSocket}, {"TresPerTask", st.TresPerTask}, {"Container", st.Container}} {
		if kv.v.Valid {
			p("%s%s=%s", nl, kv.k, kv.v.Value)
		}
	}
	if oneLiner {
		b.WriteString("\n")
	} else {
		b.WriteString("\n\n")
	}
	return b.String()
}
