package munge_test

import (
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/munge"
)

// Benchmarks of the in-process codec, shaped like BenchmarkClientDecodeEncode
// (bench_test.go) so the cpu-us/transaction figures compare directly:
//
//	go test -run '^$' -bench 'ClientDecodeEncode|Local' -benchtime 10000x ./credential/munge

func benchLocal(b *testing.B) *munge.Local {
	key, err := munge.NewKey([]byte("a benchmark key of at least thirty-two bytes"))
	if err != nil {
		b.Fatal(err)
	}
	l, err := munge.NewLocal(key, munge.LocalConfig{ReplayLimit: 1 << 24})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

var benchPayload = []byte("0123456789abcdef0123456789abcdef")

// BenchmarkLocalDecodeEncode: 64 callers at once, each op one Encode and one
// Decode, as a server verifying a request and signing its reply does.
func BenchmarkLocalDecodeEncode(b *testing.B) {
	benchDecodeEncode(b, benchLocal(b))
}

// BenchmarkLocalEncode and BenchmarkLocalDecode: one caller, one operation.
func BenchmarkLocalEncode(b *testing.B) {
	l := benchLocal(b)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.EncodeAt(benchPayload, 0, 0, 0, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLocalDecode(b *testing.B) {
	l := benchLocal(b)
	now := time.Now()
	creds := make([]string, b.N)
	for i := range creds {
		var err error
		if creds[i], err = l.EncodeAt(benchPayload, 0, 0, 0, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := l.DecodeAt(creds[i], now); err != nil {
			b.Fatal(err)
		}
	}
}
