package daemon

import (
	"strconv"
	"strings"

	"github.com/goslurm/goslurm/conf"
	"github.com/goslurm/goslurm/credential/jobcred"
	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/pack"
)

// GRES config_flags bits (gres.h GRES_CONF_*).
const (
	gresHasMult    uint32 = 1 << 0
	gresHasFile    uint32 = 1 << 1
	gresHasType    uint32 = 1 << 2
	gresCountOnly  uint32 = 1 << 3
	gresEnvNVML    uint32 = 1 << 5
	gresEnvRSMI    uint32 = 1 << 6
	gresEnvOpenCL  uint32 = 1 << 7
	gresEnvDef     uint32 = 1 << 8
	gresOneSharing uint32 = 1 << 10
	gresEnvOneAPI  uint32 = 1 << 11
	gresEnvSet            = gresEnvNVML | gresEnvRSMI | gresEnvOpenCL | gresEnvOneAPI

	gresMagic uint32 = 0x438a34d4
)

// gresPlugins are the GRES names a 22.05 slurmd has a plugin for; any other
// name is tracked as counts only.
var gresPlugins = map[string]bool{"gpu": true, "mps": true, "nic": true, "shard": true}

// PackGresInfo is gres_node_config_pack: the registration's GRES blob for
// the node's merged GRES records (conf.GresConfig.ResolveNode, or
// slurmd/hwinfo.LoadGres with device files checked). nil packs no record.
//
// config_flags follow slurmd 22.05's gres.conf parser: Type, File and
// MultipleFiles bits; the Flags= keywords (CountOnly, *_gpu_env,
// opencl_env, one_sharing, no_gpu_env), inherited by later lines of the
// same name; every GPU environment variable by default for gpu; a record
// made from slurm.conf alone for a GRES without a plugin is counts-only.
// The cpus and links strings are Cores=/CPUs= and Links= as written.
func PackGresInfo(recs []*conf.NodeGresRecord) []byte {
	w := pack.NewWriter(nil)
	w.U16(uint16(codec.Current))
	w.U16(uint16(len(recs)))
	prev := map[string]gresEnv{}
	for _, r := range recs {
		var flags uint32
		if r.Type != "" {
			flags |= gresHasType
		}
		if r.File != "" {
			flags |= gresHasFile
			if r.MultipleFiles {
				flags |= gresHasMult
			}
		}
		if r.Source == nil {
			if !gresPlugins[r.Name] {
				flags |= gresCountOnly
			}
		} else {
			flags |= gresLineFlags(r, prev)
		}
		w.U32(gresMagic)
		w.U64(r.Count)
		w.U32(uint32(r.CPUs))
		w.U32(flags)
		w.U32(jobcred.GresPluginID(r.Name))
		optStr(w, r.Cores)
		optStr(w, joinInts(r.Links))
		optStr(w, r.Name)
		optStr(w, r.Type)
		optStr(w, "") // unique_id: set by AutoDetect only
	}
	return w.Bytes()
}

// gresEnv is the env flags a gres.conf line left for the next lines of the
// same name.
type gresEnv struct {
	flags    uint32
	noGPUEnv bool
}

// gresLineFlags is the Flags= handling of _parse_gres_config for a
// gres.conf line, prev remembering each name's env flags.
func gresLineFlags(r *conf.NodeGresRecord, prev map[string]gresEnv) uint32 {
	var flags uint32
	setDefaultEnvs := true
	if len(r.Flags) > 0 {
		in := strings.ToLower(strings.Join(r.Flags, ","))
		var f uint32
		for kw, bit := range map[string]uint32{
			"countonly": gresCountOnly, "nvidia_gpu_env": gresEnvNVML, "amd_gpu_env": gresEnvRSMI,
			"intel_gpu_env": gresEnvOneAPI, "opencl_env": gresEnvOpenCL, "one_sharing": gresOneSharing,
		} {
			if strings.Contains(in, kw) {
				f |= bit
			}
		}
		noGPUEnv := strings.Contains(in, "no_gpu_env")
		sharing := f&gresOneSharing != 0 || strings.Contains(in, "all_sharing")
		if !sharing && r.Name == "mps" {
			f |= gresOneSharing
		}
		env := f & gresEnvSet
		flags |= f &^ gresEnvSet
		if env != 0 || noGPUEnv {
			setDefaultEnvs = false
			flags |= env
			prev[r.Name] = gresEnv{env, noGPUEnv}
		}
	} else if p, ok := prev[r.Name]; ok && (p.flags != 0 || p.noGPUEnv) {
		setDefaultEnvs = false
		if !p.noGPUEnv {
			flags |= p.flags
		}
	} else if r.Name == "mps" {
		flags |= gresOneSharing
	}
	if setDefaultEnvs && r.Name == "gpu" {
		flags |= gresEnvSet | gresEnvDef
		prev[r.Name] = gresEnv{gresEnvSet | gresEnvDef, false}
	}
	return flags
}

func optStr(w *pack.Writer, s string) {
	if s == "" {
		w.OptStr("", false)
		return
	}
	w.OptStr(s, true)
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
