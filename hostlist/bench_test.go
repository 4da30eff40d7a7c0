package hostlist

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// big100k is 100,000 hosts (Slurm caps one range at 65,536).
const big100k = "n[000001-060000],m[1-40000]"

func hosts100k() []string {
	hosts := make([]string, 0, 100000)
	for i := 1; i <= 60000; i++ {
		hosts = append(hosts, fmt.Sprintf("n%06d", i))
	}
	for i := 1; i <= 40000; i++ {
		hosts = append(hosts, fmt.Sprintf("m%d", i))
	}
	return hosts
}

func BenchmarkExpand100k(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		hosts, err := Expand(big100k)
		if err != nil || len(hosts) != 100000 {
			b.Fatal(len(hosts), err)
		}
	}
}

// BenchmarkParsePlainList100k parses 100,000 comma-separated plain names,
// what "scontrol show hostlist FILE" does with a file of host names.
func BenchmarkParsePlainList100k(b *testing.B) {
	list := strings.Join(hosts100k(), ",")
	b.ReportAllocs()
	for b.Loop() {
		hl, err := Parse(list)
		if err != nil || hl.Count() != 100000 {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse100k(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		hl, err := Parse(big100k)
		if err != nil || hl.Count() != 100000 {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompress100k(b *testing.B) {
	hosts := hosts100k()
	b.ReportAllocs()
	for b.Loop() {
		if s := Compress(hosts); s != "n[000001-060000],m[1-40000]" {
			b.Fatal(s)
		}
	}
}

func BenchmarkCompressSortedShuffled100k(b *testing.B) {
	hosts := hosts100k()
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
	b.ReportAllocs()
	for b.Loop() {
		if s := CompressSorted(hosts); s != "m[1-40000],n[000001-060000]" {
			b.Fatal(s)
		}
	}
}
