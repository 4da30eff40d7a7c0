package cli

// After a successful NumNodes= or ReqNodeList= update, scontrol run from
// inside a job allocation (SLURM_JOBID set, whatever its value) writes two
// scripts that bring the shell's Slurm variables up to the job's new size,
// as 22.05's _update_job_size does.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/goslurm/goslurm/protocol/msg"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/slurmerr"
)

// writeResizeScripts is _update_job_size for the job named by idStr (its
// leading number, as slurm_atoul reads "123_4").
func (s *state) writeResizeScripts(idStr string) {
	if _, ok := s.getenv("SLURM_JOBID"); !ok {
		return
	}
	id := leadingJobID(idStr)
	alloc, err := s.allocationLookup(id)
	switch {
	case slurmerr.Code(err) == slurmerr.ESLURM_ALREADY_DONE:
		// The job shrank to nothing: the scripts say so.
		alloc = &msg.Allocation{NodeList: msg.Str("")}
	case err != nil:
		s.perror("slurm_allocation_lookup", err)
		return
	}
	s.saveResizeScripts(id, alloc)
}

// saveResizeScripts writes the two scripts for job id's allocation alloc
// in the working directory and tells the user about them.
func (s *state) saveResizeScripts(id uint32, alloc *msg.Allocation) {
	sh, csh := resizeScripts(alloc, s.getenv)
	nameCsh := fmt.Sprintf("slurm_job_%d_resize.csh", id)
	nameSh := fmt.Sprintf("slurm_job_%d_resize.sh", id)
	pathCsh, pathSh := s.workPath(nameCsh), s.workPath(nameSh)
	// A script left by an earlier resize goes first, so a file another
	// user planted there is not written through.
	// unlink, not os.Remove: an empty directory of that name stays and
	// the creation below fails on it, as Slurm's does.
	_ = syscall.Unlink(pathCsh)
	_ = syscall.Unlink(pathSh)
	fCsh, err := createScript(pathCsh)
	if err != nil {
		s.eprintf("Could not create file %s: %s\n", nameCsh, errnoText(err))
		return
	}
	defer fCsh.Close()
	fSh, err := createScript(pathSh)
	if err != nil {
		s.eprintf("Could not create file %s: %s\n", nameSh, errnoText(err))
		return
	}
	defer fSh.Close()
	// Executable by the owner alone, whatever the umask.
	if err := fCsh.Chmod(0o700); err != nil {
		s.errorf("_update_job_size: chmod(%s): %s", nameCsh, errnoText(err))
	}
	if err := fSh.Chmod(0o700); err != nil {
		s.errorf("_update_job_size: chmod(%s): %s", nameSh, errnoText(err))
	}
	// Slurm ignores write errors here (fprintf, fclose); so do we, the
	// message below being all the user is told either way.
	_, _ = fSh.WriteString(sh)
	_, _ = fCsh.WriteString(csh)
	fmt.Fprintf(s.stdout, "To reset Slurm environment variables, execute\n")
	fmt.Fprintf(s.stdout, "  For bash or sh shells:  . ./%s\n", nameSh)
	fmt.Fprintf(s.stdout, "  For csh shells:         source ./%s\n", nameCsh)
}

// allocationLookup is slurm_allocation_lookup (REQUEST_JOB_ALLOCATION_INFO).
func (s *state) allocationLookup(id uint32) (*msg.Allocation, error) {
	req := msg.JobAllocInfoRequest{JobID: id}
	if c := s.ctl().Conf.ClusterName; c != "" {
		req.ReqCluster = msg.Str(c)
	}
	v, err := s.rpc(msgtype.REQUEST_JOB_ALLOCATION_INFO, req, msgtype.RESPONSE_JOB_ALLOCATION_INFO)
	if err != nil {
		return nil, err
	}
	a, ok := v.(msg.Allocation)
	if !ok {
		// A zero return code instead of the allocation: Slurm's API
		// would hand back no allocation at all (and scontrol then
		// crash); report it rather than write empty scripts.
		return nil, slurmerr.Error{Code: slurmerr.SLURM_UNEXPECTED_MSG_ERROR}
	}
	return &a, nil
}

// resizeScripts renders the sh and csh scripts for alloc: one line per
// variable of the allocation's environment that getenv finds set (empty
// counts as set).
func resizeScripts(alloc *msg.Allocation, getenv func(string) (string, bool)) (sh, csh string) {
	var bsh, bcsh strings.Builder
	set := func(name, shVal, cshVal string) {
		if _, ok := getenv(name); ok {
			fmt.Fprintf(&bsh, "export %s=%s\n", name, shVal)
			fmt.Fprintf(&bcsh, "setenv %s %s\n", name, cshVal)
		}
	}
	nodes := `"` + cs(alloc.NodeList) + `"`
	set("SLURM_NODELIST", nodes, nodes)
	set("SLURM_JOB_NODELIST", nodes, nodes)
	count := strconv.FormatUint(uint64(alloc.NodeCnt), 10)
	set("SLURM_NNODES", count, count)
	set("SLURM_JOB_NUM_NODES", count, count)
	cpus := `"` + compressedCounts(alloc.CPUsPerNode, alloc.CPUCountReps) + `"`
	set("SLURM_JOB_CPUS_PER_NODE", cpus, cpus)
	if _, ok := getenv("SLURM_TASKS_PER_NODE"); ok {
		// The task layout of the shrunk job is not known here: the
		// variables that describe it are dropped instead.
		for _, v := range []string{"SLURM_NPROCS", "SLURM_NTASKS", "SLURM_TASKS_PER_NODE"} {
			fmt.Fprintf(&bsh, "unset %s\n", v)
			fmt.Fprintf(&bcsh, "unsetenv %s\n", v)
		}
	}
	return bsh.String(), bcsh.String()
}

// compressedCounts is uint32_compressed_to_str: "4(x2),2".
func compressedCounts(counts []uint16, reps []uint32) string {
	n := min(len(counts), len(reps))
	parts := make([]string, 0, n)
	for i := range n {
		if reps[i] > 1 {
			parts = append(parts, fmt.Sprintf("%d(x%d)", counts[i], reps[i]))
		} else {
			parts = append(parts, strconv.Itoa(int(counts[i])))
		}
	}
	return strings.Join(parts, ",")
}

// leadingJobID reads a job id string's leading decimal number as
// strtoul does, truncated to 32 bits as Slurm's uint32_t job_id is.
func leadingJobID(str string) uint32 {
	var n uint64
	for _, c := range strings.TrimLeft(str, " \t\n\v\f\r") {
		if c < '0' || c > '9' {
			break
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			n = math.MaxUint64 // strtoul's ERANGE result
			break
		}
		n = n*10 + d
	}
	return uint32(n)
}

func (s *state) workPath(name string) string {
	if s.io.WorkDir == "" {
		return name
	}
	return filepath.Join(s.io.WorkDir, name)
}

// createScript opens name as fopen(name, "w") would, except that a
// symbolic link put there after the removal is refused, not followed.
func createScript(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o666)
}

// errnoText is strerror's text for a system call failure.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return slurmerr.Message(int(errno))
	}
	return err.Error()
}
