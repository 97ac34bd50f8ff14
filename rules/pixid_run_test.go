package rules

import (
	"strings"
	"testing"
)

// TestRunTxid: a run's txids share its 28-character prefix, carry the
// row in 7 base-62 digits, sort in row order and are valid txids.
func TestRunTxid(t *testing.T) {
	const run = "20261126-165200-abc"
	prefix := DeriveTxid(run)[:28]
	cases := []struct {
		n    int
		tail string
	}{
		{0, "0000000"},
		{9, "0000009"},
		{10, "000000A"},
		{61, "000000z"},
		{62, "0000010"},
		{999_999, "0004C91"},
		{3_521_614_606_207, "zzzzzzz"},
	}
	for _, c := range cases {
		got := RunTxid(run, c.n)
		if got != prefix+c.tail {
			t.Errorf("RunTxid(%q, %d) = %s, want %s", run, c.n, got, prefix+c.tail)
		}
		if !ValidTxid(got) {
			t.Errorf("RunTxid(%q, %d) = %s is not a valid txid", run, c.n, got)
		}
	}
	if a, b := RunTxid(run, 1), RunTxid("20261126-165200-abd", 1); a[:28] == b[:28] {
		t.Errorf("two runs share the prefix %s", a[:28])
	}
	prev := ""
	for n := 0; n < 5000; n += 7 {
		got := RunTxid(run, n)
		if got <= prev {
			t.Fatalf("RunTxid(%d) = %s does not sort after %s", n, got, prev)
		}
		prev = got
	}
	// past 62^7 rows: the hash of the run and the row, never a cut
	// number that would repeat a smaller row's txid
	big := RunTxid(run, 3_521_614_606_208)
	if strings.HasPrefix(big, prefix) || !ValidTxid(big) || big != DeriveTxid(run, "row", "3521614606208") {
		t.Errorf("RunTxid past 62^7 = %s", big)
	}
	if neg := RunTxid(run, -1); neg != DeriveTxid(run, "row", "-1") || !ValidTxid(neg) {
		t.Errorf("RunTxid(-1) = %s", neg)
	}
	// one maker serves the whole run: the same txids as RunTxid
	mk := NewRunTxids(run)
	for _, n := range []int{0, 61, 62, 238_327, 238_328, 999_999} {
		if got, want := mk.Txid(n), RunTxid(run, n); got != want {
			t.Errorf("NewRunTxids(%q).Txid(%d) = %s, want %s", run, n, got, want)
		}
	}
}
