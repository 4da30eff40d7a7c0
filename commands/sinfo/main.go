// Command sinfo is goslurm's drop-in for Slurm 22.05's sinfo: it asks
// slurmctld for partitions and nodes, groups nodes into lines as sinfo
// does and prints them in the same formats, order, messages and exit codes.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	sc "github.com/goslurm/goslurm/commands/internal/slurmcli"
	"github.com/goslurm/goslurm/protocol/msg"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr, os.LookupEnv))
}

// exitCode ends run early, where sinfo calls exit().
type exitCode = sc.Exit

// matchFlags are the attributes that split nodes into separate lines.
type matchFlags struct {
	allocMem, avail, comment, cpus, cpuLoad, defaultTime, disk, extra, features,
	featuresAct, freeMem, gres, gresUsed, groups, hostnames, jobSize, maxCPUsPerNode,
	maxTime, memory, nodeAddr, oversubscribe, partition, port, preemptMode,
	priorityJobFactor, priorityTier, reason, reasonTimestamp, reasonUser, root,
	sct, sockets, cores, threads, state, stateComplete, version, weight bool
}

// sinfo is one run's state (Slurm's params).
type sinfo struct {
	prog   string
	out    sc.Out
	stderr io.Writer
	getenv func(string) (string, bool)
	conn   *sc.Conn
	ctx    context.Context
	now    time.Time
	tf     *sc.TimeFormatter

	allFlag, deadNodes, exact, noHeader, longOutput, nodeFlag bool
	respondingNodes, listReasons, summarize, reservationFlag  bool
	local, federation                                         bool
	iterate, verbose                                          int
	convert                                                   uint32
	nodes                                                     string
	hasNodes, nodeNameSingle                                  bool
	partition                                                 string
	partList                                                  []string
	hasParts                                                  bool
	sortSpec                                                  string
	sortSet                                                   bool
	states                                                    string
	stateList                                                 []uint32
	hasStates, stateListAnd                                   bool
	format                                                    string
	formatSet, defFormat                                      bool
	filtering                                                 bool
	nodeFieldFlag, partFieldFlag                              bool
	nodeFieldSize, partFieldSize                              int

	match  matchFlags
	fields []field

	// mimetype is "json" or "yaml" for --json and --yaml: every other
	// option but -v is then ignored (see json.go).
	mimetype string
}

func (s *sinfo) errorf(format string, a ...any) {
	s.out.Flush()
	fmt.Fprintf(s.stderr, "%s: error: "+format+"\n", append([]any{s.prog}, a...)...)
}

func (s *sinfo) fatalf(format string, a ...any) {
	s.out.Flush()
	fmt.Fprintf(s.stderr, "%s: fatal: "+format+"\n", append([]any{s.prog}, a...)...)
	panic(exitCode(1))
}

func (s *sinfo) exit(code int) { panic(exitCode(code)) }

func run(args []string, stdout, stderr io.Writer, getenv func(string) (string, bool)) (code int) {
	w := bufio.NewWriter(stdout)
	s := &sinfo{out: sc.Out{Writer: w}, stderr: stderr, getenv: getenv, ctx: context.Background(),
		convert: sc.ConvertExact}
	if len(args) == 0 {
		args = []string{"sinfo"}
	}
	s.prog = filepath.Base(args[0])
	defer sc.RecoverExit(&code, w)
	conn, err := sc.Dial(getenv)
	if err != nil {
		s.fatalf("%v", err)
	}
	s.conn = conn
	s.parseCommandLine(args)
	conn.Verbose, conn.Log, conn.Prog = s.verbose, stderr, s.prog
	if s.mimetype != "" {
		return s.dumpNodes()
	}
	v, ok := getenv("SLURM_TIME_FORMAT")
	s.tf = sc.NewTimeFormatter(v, ok, s.errorf)

	var cache queryCache
	dated := !s.noHeader && (s.iterate != 0 || s.verbose != 0 || s.longOutput)
	return sc.Repeat(w, s.iterate, dated, func(now time.Time) error {
		s.now = now
		return s.getInfo(&cache)
	})
}

// queryCache keeps the last replies for -i (SLURM_NO_CHANGE_IN_DATA).
type queryCache struct {
	parts *msg.PartitionInfoResponse
	nodes *msg.NodeInfoResponse
	resv  *msg.ReservationInfoResponse
}

func (s *sinfo) getInfo(cache *queryCache) error {
	if s.reservationFlag {
		return s.reservationReport(cache)
	}
	var show uint16
	if s.allFlag {
		show |= sc.ShowAll
	}
	var last int64
	if cache.parts != nil {
		last = cache.parts.LastUpdate
	}
	parts, err := s.conn.LoadPartitions(s.ctx, last, show)
	if errors.Is(err, sc.ErrNoChange) && cache.parts != nil {
		parts, err = cache.parts, nil
	}
	if err != nil {
		s.out.Flush()
		fmt.Fprintf(s.stderr, "slurm_load_partitions: %s\n", sc.Strerror(err))
		return err
	}
	cache.parts = parts
	if s.match.gresUsed {
		show |= sc.ShowDetail
	}
	var nodes *msg.NodeInfoResponse
	if s.nodeNameSingle {
		nodes, err = s.conn.LoadNodeSingle(s.ctx, s.nodes, show)
	} else {
		last = 0
		if cache.nodes != nil {
			last = cache.nodes.LastUpdate
		}
		nodes, err = s.conn.LoadNodes(s.ctx, last, show)
		if errors.Is(err, sc.ErrNoChange) && cache.nodes != nil {
			nodes, err = cache.nodes, nil
		}
	}
	if err != nil {
		s.out.Flush()
		fmt.Fprintf(s.stderr, "slurm_load_node: %s\n", sc.Strerror(err))
		return err
	}
	cache.nodes = nodes
	// Work on copies: sinfo rewrites node states (MIXED) and names.
	nodeCopy := make([]msg.Node, len(nodes.Nodes))
	copy(nodeCopy, nodes.Nodes)
	for i := range nodeCopy {
		n := &nodeCopy[i]
		if n.NodeState&sc.NodeStateDrain != 0 {
			continue
		}
		alloc := n.SelectNodeInfo.AllocCPUs
		idle := n.CPUsEfctv - alloc
		if idle != 0 && idle != n.CPUsEfctv {
			n.NodeState = n.NodeState&sc.NodeStateFlags | sc.NodeStateMixed
		}
	}
	recs := s.buildSinfoData(parts.Partitions, nodeCopy)
	s.sortRecs(recs)
	s.printList(recs)
	return nil
}
