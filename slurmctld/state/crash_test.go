package state

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const crashChildEnv = "GOSLURM_STATE_CRASH_CHILD"

// crashState is the child's in-memory state and the parent's recovered view:
// seq -> data. A snapshot is its lines "seq data".
type crashState struct {
	m map[uint64]string
}

func (c *crashState) LoadSnapshot(seq uint64, r io.Reader) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			return fmt.Errorf("bad snapshot line %q", sc.Text())
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return err
		}
		c.m[n] = f[1]
	}
	return sc.Err()
}

func (c *crashState) ApplyRecord(seq uint64, rec Record) error {
	if _, dup := c.m[seq]; dup {
		return fmt.Errorf("seq %d replayed twice", seq)
	}
	c.m[seq] = string(rec.Data)
	return nil
}

// TestCrashChild is the child side of TestCrashAcknowledged; it does nothing
// unless started by it. It appends from 8 goroutines, snapshots now and then,
// and reports every acknowledged record on fd 3 until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("child of TestCrashAcknowledged only")
	}
	st := &crashState{m: map[uint64]string{}}
	s, err := Open(dir, Options{SegmentSize: 4096}, st)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(3)
	}
	pipe := os.NewFile(3, "acks")
	var mu sync.Mutex // the "controller lock" over st.m
	var pipeMu sync.Mutex
	deadline := time.After(30 * time.Second) // in case the parent is gone
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; ; i++ {
				data := fmt.Sprintf("p%d-g%d-%d", os.Getpid(), g, i)
				mu.Lock()
				tk, err := s.Submit(Record{Type: 1, Data: []byte(data)})
				if err == nil {
					st.m[tk.Seq()] = data
				}
				mu.Unlock()
				if err == nil {
					err = tk.Wait(context.Background())
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "child append:", err)
					os.Exit(4)
				}
				pipeMu.Lock()
				fmt.Fprintf(pipe, "%d %s\n", tk.Seq(), data) // one write, under PIPE_BUF
				pipeMu.Unlock()
			}
		}()
	}
	tick := time.NewTicker(20 * time.Millisecond)
	for {
		select {
		case <-deadline:
			os.Exit(0)
		case <-tick.C:
		}
		mu.Lock()
		seq := s.LastSeq()
		var sb strings.Builder
		for k, v := range st.m {
			fmt.Fprintf(&sb, "%d %s\n", k, v)
		}
		mu.Unlock()
		if err := s.Snapshot(context.Background(), seq, snapWriter(sb.String())); err != nil {
			fmt.Fprintln(os.Stderr, "child snapshot:", err)
			os.Exit(5)
		}
	}
}

// TestCrashAcknowledged SIGKILLs an appending child at random moments, over
// several rounds on one directory, and checks after each that every record
// the child saw acknowledged is recovered intact.
func TestCrashAcknowledged(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := stateDir(t)
	acked := map[uint64]string{}
	const rounds = 8
	for round := 0; round < rounds; round++ {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		cmd.ExtraFiles = []*os.File{pw}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		lines := make(chan []string, 1)
		go func() {
			var got []string
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				got = append(got, sc.Text())
			}
			lines <- got
		}()
		// Early kills land in start-up and recovery, later ones mid-append.
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		werr := cmd.Wait()
		got := <-lines
		pr.Close()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: child ended on its own (%v): %s", round, werr, stderr.String())
		}
		n := 0
		for _, ln := range got {
			f := strings.Fields(ln)
			if len(f) != 2 {
				continue // a line cut by the kill is not an acknowledgement seen
			}
			seq, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil {
				t.Fatalf("bad ack line %q", ln)
			}
			acked[seq] = f[1]
			n++
		}
		st := &crashState{m: map[uint64]string{}}
		s, err := Open(dir, quietOpts(t), st)
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		rc := s.Recovered()
		s.Close()
		for seq, data := range acked {
			if st.m[seq] != data {
				t.Fatalf("round %d: acknowledged seq %d %q recovered as %q", round, seq, data, st.m[seq])
			}
		}
		t.Logf("round %d: %d new acks, %d acked in all, recovered %d (snapshot@%d + %d records, %d torn bytes)",
			round, n, len(acked), len(st.m), rc.SnapshotSeq, rc.Records, rc.TruncatedBytes)
	}
	if len(acked) == 0 {
		t.Fatal("no acknowledgement in any round")
	}
}
