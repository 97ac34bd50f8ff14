package results

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"remessa/internal/structfill"
)

// TestDecode: Decode reads what json.Marshal writes of a Results (rows
// with every field set by reflection, the run's header, the totals) as
// json.Unmarshal does, the rows in ScanRow's one pass; and text ScanRow
// leaves (an unknown member, a member given twice, rows null, a row's
// name in another case, a syntax error) gives json.Unmarshal's result or
// error too.
func TestDecode(t *testing.T) {
	words := []string{"", "a", "José da Silva", `aspas "e" \barra`, "linha\nnova", "2026-01-31", "\u2028 \x01"}
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(b []byte) {
		t.Helper()
		var got, want Results
		gerr, werr := Decode(b, &got), json.Unmarshal(b, &want)
		if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%.300s:\n got %+v (%v)\nwant %+v (%v)", b, got, gerr, want, werr)
		}
	}
	for n := range 3 {
		r := Results{Version: FileVersion, Run: RunInfo{ID: "r1", Kind: Cobv, StartedAt: "2026-11-01T10:00:00Z", Complete: true}}
		for range 50 {
			var row Row
			structfill.Fill(reflect.ValueOf(&row).Elem(), n, func() string { return words[rng.IntN(len(words))] })
			r.Rows = append(r.Rows, row)
		}
		r.Compute()
		b, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		check(b)
		var fast Results
		s := b
		if err := Decode(s, &fast); err != nil || len(fast.Rows) != 50 || fast.Rows[7].Key != r.Rows[7].Key {
			t.Fatalf("Decode: %v, %d rows", err, len(fast.Rows))
		}
	}
	base := `{"version":1,"run":{"id":"r"},"rows":[{"index":0,"key":"A","outcome":"issued"}],"totals":{"in":{"rows":1,"amount_cents":0}}}`
	for _, b := range []string{
		base,
		strings.Replace(base, `"totals"`, `"extra":3,"totals"`, 1),
		strings.Replace(base, `"version":1`, `"version":1,"version":2`, 1),
		strings.Replace(base, `"rows":[{"index":0,"key":"A","outcome":"issued"}]`, `"rows":null`, 1),
		strings.Replace(base, `"key":"A"`, `"KEY":"A"`, 1),
		strings.Replace(base, `"key":"A"`, `"key":"A",`, 1),
		strings.Replace(base, `"index":0`, `"index":0.5`, 1),
		`[]`,
	} {
		check([]byte(b))
	}
}
