package userstore_test

import (
	"testing"
	"time"

	"github.com/shellgate/shellgate/adapters/userstore"
	"github.com/shellgate/shellgate/app/gate"
)

// BenchmarkReadCheckPerOutputBatch is what each output batch to a viewer
// costs the users file, measured both ways in one run: asking the gate
// whether the caller may still read the channel (as every batch did), and
// checking only that the store's generation has not moved (as a batch does
// now, asking the gate again only when it has). It reports both and their
// ratio.
//
//	go test -run '^$' -bench ReadCheckPerOutputBatch ./adapters/userstore/
func BenchmarkReadCheckPerOutputBatch(b *testing.B) {
	path := b.TempDir() + "/users.yaml"
	s, err := userstore.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Bootstrap("ana"); err != nil {
		b.Fatal(err)
	}
	tok, err := s.Add("sam", "member")
	if err != nil {
		b.Fatal(err)
	}
	g := gate.New(s)
	caller, ok := g.SignIn(tok)
	if !ok {
		b.Fatal("no sign-in")
	}
	const channel = "ahp-terminal:/bench"
	const rounds = 1000
	var every, onChange time.Duration
	for b.Loop() {
		start := time.Now()
		for range rounds {
			if g.Read(caller, channel) != nil {
				b.Fatal("refused")
			}
		}
		every += time.Since(start)
		seen := g.Generation()
		start = time.Now()
		for range rounds {
			if g.Generation() != seen {
				b.Fatal("the generation moved with nothing changed")
			}
		}
		onChange += time.Since(start)
	}
	n := float64(b.N * rounds)
	b.ReportMetric(float64(every.Nanoseconds())/n, "every-batch-ns")
	b.ReportMetric(float64(onChange.Nanoseconds())/n, "generation-ns")
	b.ReportMetric(every.Seconds()/onChange.Seconds(), "every/generation")
	b.ReportMetric(0, "ns/op")
}
