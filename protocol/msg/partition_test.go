package msg

import (
	"testing"

	"github.com/goslurm/goslurm/protocol/msgtype"
)

func FuzzPartitionInfo(f *testing.F) {
	seedGenerated(f, msgtype.RESPONSE_PARTITION_INFO, 8, nil)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzBody(t, msgtype.RESPONSE_PARTITION_INFO, data) })
}
