package msg

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msgtype"
)

func FuzzBuildInfo(f *testing.F) {
	seedGenerated(f, msgtype.RESPONSE_BUILD_INFO, 4, nil)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzBody(t, msgtype.RESPONSE_BUILD_INFO, data) })
}
