package run

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"remessa/rules"
)

// TestRunTxidMatchesRules: runTxid gives rules.RunTxid's txid for row
// numbers at every base-62 digit's edges, past 62^7, negative and at
// random, for run ids taken in turn (its kept prefix changes with them).
func TestRunTxidMatchesRules(t *testing.T) {
	ns := []int{0, 1, 61, 62, 63, -1, -62, 3_521_614_606_207, 3_521_614_606_208, 1 << 50}
	for p, k := 62, 1; k < 7; p, k = p*62, k+1 {
		ns = append(ns, p-1, p, p+1)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 20000 {
		ns = append(ns, rng.IntN(3_000_000))
	}
	for i, n := range ns {
		for _, id := range []string{"20261126-120000-abc123", fmt.Sprintf("20261126-1200%02d-xyz%03d", i%60, i%7)} {
			if got, want := runTxid(id, n), rules.RunTxid(id, n); got != want {
				t.Fatalf("runTxid(%q, %d) = %q, want %q", id, n, got, want)
			}
		}
	}
}
