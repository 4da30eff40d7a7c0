// Package capturecreds finds the job credentials inside the real Slurm 22.05
// traffic in testsuite/captures, for tests. It parses just enough of each
// carrying message (by the documented field layouts) to reach the
// credential; it is not a message codec.
package capturecreds

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pack"
	"github.com/goslurm/goslurm/protocol/pcap"
)

// Found is one credential inside one captured message.
type Found struct {
	File    string
	ConnID  int
	MsgType msgtype.Type
	Time    time.Time // capture time of the message
	Version uint16    // protocol version the credential is packed at
	Bytes   []byte    // the credential: body then packmem(signature)
	// Launch fields (REQUEST_LAUNCH_TASKS only).
	LaunchStep           [3]uint32
	LaunchUID, LaunchGID uint32
}

// IOKey is the key of one captured I/O init message.
type IOKey struct {
	File   string
	ConnID int
	NodeID uint32
	Key    []byte
	Raw    []byte // the whole init message, length prefix included
}

// Dir returns testsuite/captures/testdata.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "../../../../testsuite/captures/testdata")
}

// Read returns the credentials and I/O keys of one capture.
func Read(name string) ([]Found, []IOKey, error) {
	path := filepath.Join(Dir(), name)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	conns, err := pcap.ReadConns(f)
	if err != nil {
		return nil, nil, err
	}
	var out []Found
	var keys []IOKey
	for _, c := range conns {
		for _, u := range pcap.SlurmUnits(c, codec.Default) {
			switch u.Kind {
			case pcap.UnitIOInit:
				keys = append(keys, IOKey{File: name, ConnID: c.ID, NodeID: u.IOInit.NodeID, Key: u.IOInit.IOKey, Raw: u.Raw})
				continue
			case pcap.UnitRPC:
			default:
				continue
			}
			fd := Found{File: name, ConnID: c.ID, MsgType: u.Frame.Header.MsgType, Time: u.Time}
			off, ver, ok, err := locate(&fd, u.Frame.Body, uint16(u.Frame.Header.Version))
			if err != nil {
				return nil, nil, fmt.Errorf("%s conn %d %v: %w", name, c.ID, fd.MsgType, err)
			}
			if !ok {
				continue
			}
			fd.Version = ver
			fd.Bytes = u.Frame.Body[off:]
			out = append(out, fd)
		}
	}
	return out, keys, nil
}

// locate returns the offset of the credential in body; the credential runs
// to a point the caller finds by unpacking it (the trailing fields are left
// in Bytes).
func locate(fd *Found, body []byte, hdrVersion uint16) (int, uint16, bool, error) {
	r := pack.NewReader(body)
	switch fd.MsgType {
	case msgtype.RESPONSE_JOB_STEP_CREATE:
		r.U32()           // def_cpu_bind_type
		r.Str()           // resv_ports
		r.U32()           // job_step_id
		if r.U16() != 0 { // step layout present
			r.Str() // front_end
			r.Str() // node_list
			n := r.U32()
			r.U16() // start_protocol_ver
			r.U32() // task_cnt
			r.U32() // task_dist
			for i := uint32(0); i < n && r.Err() == nil; i++ {
				r.U32Array()
			}
		}
		return r.Offset(), hdrVersion, true, r.Err()
	case msgtype.REQUEST_LAUNCH_TASKS:
		fd.LaunchStep = [3]uint32{r.U32(), r.U32(), r.U32()}
		fd.LaunchUID = r.U32()
		fd.LaunchGID = r.U32()
		r.Str()      // user_name
		r.U32Array() // gids
		r.U32()      // het_job_node_offset
		r.U32()      // het_job_id
		if n := r.U32(); n != pack.NoVal {
			for i := uint32(0); i < n && r.Err() == nil; i++ {
				r.U32Array()
			}
		}
		if n := r.U32(); n != pack.NoVal {
			for i := uint32(0); i < n && r.Err() == nil; i++ {
				r.U32()
			}
		}
		r.U32() // het_job_offset
		r.U32() // het_job_step_cnt
		r.U32() // het_job_task_offset
		r.Str() // het_job_node_list
		r.U32() // mpi_plugin_id
		r.U32() // ntasks
		r.U16()
		r.U16()
		r.U16()
		r.U16() // ntasks_per_board/core/tres/socket
		r.U64()
		r.U64() // job_mem_lim, step_mem_lim
		r.U32() // nnodes
		r.U16() // cpus_per_task
		r.Str() // tres_per_task
		r.U16() // threads_per_core
		r.U32() // task_dist
		r.U16()
		r.U16()
		r.U16()      // node_cpus, job_core_spec, accel_bind_type
		v := r.U16() // cred_version
		return r.Offset(), v, true, r.Err()
	case msgtype.REQUEST_BATCH_JOB_LAUNCH:
		r.U32()
		r.U32() // job_id, het_job_id
		r.U32()
		r.U32() // uid, gid
		r.Str()
		r.U32Array()
		r.Str() // partition
		r.U32() // ntasks
		r.U64() // pn_min_memory
		r.U8()
		r.U8()
		r.U32()
		r.U32() // array ids
		r.Str()
		r.Str() // acctg_freq, container
		r.U16()
		r.U16()
		r.U16()
		r.U16()
		if n := r.U32(); n > 0 {
			r.U16Array()
			r.U32Array()
		}
		for range 8 { // alias_list cpu_bind nodes script work_dir std_err std_in std_out
			r.Str()
		}
		r.U32()
		r.StrArray() // argc, argv
		r.StrArray() // spank_job_env
		r.U32()
		r.StrArray() // envc, environment
		r.U64()      // job_mem
		v := r.U16()
		return r.Offset(), v, true, r.Err()
	case msgtype.REQUEST_TERMINATE_JOB, msgtype.REQUEST_KILL_TIMELIMIT, msgtype.REQUEST_ABORT_JOB, msgtype.REQUEST_KILL_PREEMPTED:
		if r.U8() == 0 {
			return 0, 0, false, r.Err()
		}
		return r.Offset(), hdrVersion, true, r.Err()
	}
	return 0, 0, false, nil
}
