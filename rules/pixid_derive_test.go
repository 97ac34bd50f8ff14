package rules

import (
	"crypto/sha256"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestDeriveTxidStable: the txids runs already journaled and sent must not
// change; these were written by the first (math/big) implementation.
func TestDeriveTxidStable(t *testing.T) {
	for _, c := range []struct {
		parts []string
		want  string
	}{
		{[]string{"run-1", "row-7"}, "Rt91JZPM1cEkc14IrgE4Jn6IbXw0e0xQk1M"},
		{[]string{"20261126-101500-abc123", "cobv", "00042", "2027-01-10"}, "RzSIpelHGJPpjk244uHRoOpY5RZXWPVsfRn"},
		{nil, "elxEeMmeB0EiiEGkAYggupnSUjWEepHLxI5"},
		{[]string{"ab", "c"}, "w8TVekfDPfLIZTLy30gwZWrLM7Nu55d0ltr"},
		{[]string{"a", "bc"}, "EtoUazboWZ4XRbQWf8gtNUatUi1YZ5ZIFni"},
	} {
		if got := DeriveTxid(c.parts...); got != c.want {
			t.Errorf("DeriveTxid(%q) = %s, want %s", c.parts, got, c.want)
		}
	}
}

// bigTxid is the first implementation of DeriveTxid (math/big), kept as
// the oracle of the word-by-word one.
func bigTxid(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	n := new(big.Int).SetBytes(h.Sum(nil))
	out := make([]byte, 35)
	mod := new(big.Int)
	for i := 34; i >= 0; i-- {
		n.DivMod(n, big.NewInt(62), mod)
		out[i] = base62[mod.Int64()]
	}
	return string(out)
}

func TestDeriveTxidMatchesBigInt(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 62))
	for i := 0; i < 20000; i++ {
		parts := make([]string, r.IntN(4))
		for k := range parts {
			b := make([]byte, r.IntN(40))
			for j := range b {
				b[j] = byte(r.IntN(256))
			}
			parts[k] = string(b)
		}
		if got, want := DeriveTxid(parts...), bigTxid(parts...); got != want {
			t.Fatalf("DeriveTxid(%q) = %s, want %s", parts, got, want)
		}
	}
}

func BenchmarkDeriveTxid(b *testing.B) {
	for b.Loop() {
		DeriveTxid("20261126-101500-abc123", "cobv", "00042", "2027-01-10")
	}
}

func BenchmarkDeriveTxidBigInt(b *testing.B) {
	for b.Loop() {
		bigTxid("20261126-101500-abc123", "cobv", "00042", "2027-01-10")
	}
}
