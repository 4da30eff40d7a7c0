package msg

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/goslurm/goslurm/protocol/codec"
	"github.com/goslurm/goslurm/protocol/msgtype"
	"github.com/goslurm/goslurm/protocol/pcap"
)

// Fuzz targets for every job body decoder. fuzzBody (small_test.go) checks
// that a body that decodes re-encodes to the bytes it used and decodes again
// to the same value, and that a failed decode returns no body. Seeds: random
// well-formed bodies and the real bodies of the captures.

// captureBodies returns the bodies of the frames of type mt in the capture
// pcaps of testsuite/captures.
func captureBodies(tb testing.TB, mt msgtype.Type) [][]byte {
	files, _ := filepath.Glob("../../testsuite/captures/testdata/*.pcap")
	var out [][]byte
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		conns, err := pcap.ReadConns(f)
		f.Close()
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		for _, c := range conns {
			for _, u := range pcap.SlurmUnits(c, codec.Default) {
				if u.Kind == pcap.UnitRPC && u.Frame.Header.MsgType == mt {
					out = append(out, u.Frame.Body)
				}
			}
		}
	}
	return out
}

func seedJob(f *testing.F, mt msgtype.Type, n int) {
	r := rand.New(rand.NewPCG(uint64(mt), 9))
	for i := 0; i < n; i++ {
		f.Add(encodeBody(f, mt, genJobBody(r, jobBodyTypes[mt])))
	}
	for _, b := range captureBodies(f, mt) {
		f.Add(b)
	}
}

func fuzzJob(f *testing.F, mt msgtype.Type, seeds int) {
	seedJob(f, mt, seeds)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzBody(t, mt, data) })
}

func FuzzJobDesc(f *testing.F)     { fuzzJob(f, msgtype.REQUEST_SUBMIT_BATCH_JOB, 8) }
func FuzzJobDescList(f *testing.F) { fuzzJob(f, msgtype.REQUEST_HET_JOB_ALLOCATION, 4) }
func FuzzSubmitResponse(f *testing.F) {
	fuzzJob(f, msgtype.RESPONSE_SUBMIT_BATCH_JOB, 4)
}
func FuzzJobInfo(f *testing.F)       { fuzzJob(f, msgtype.RESPONSE_JOB_INFO, 8) }
func FuzzStepInfo(f *testing.F)      { fuzzJob(f, msgtype.RESPONSE_JOB_STEP_INFO, 8) }
func FuzzAllocation(f *testing.F)    { fuzzJob(f, msgtype.RESPONSE_RESOURCE_ALLOCATION, 8) }
func FuzzHetAllocation(f *testing.F) { fuzzJob(f, msgtype.RESPONSE_HET_JOB_ALLOCATION, 4) }
