package reports

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"remessa/internal/structfill"
	"remessa/pipeline/results"
)

// encodeRow is a row as encoding/json writes it in results.json.
func encodeRow(t testing.TB, r *results.Row) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func marshal(t testing.TB, r *results.Row) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A row written by appendRow has the bytes encoding/json gives it, with
// every field of results.Row (and of its parcels, shares and problems)
// set, none, or some; a field added to results.Row and not to appendRow
// makes this fail.
func TestAppendRowMatchesEncoder(t *testing.T) {
	words := []string{"", "a", "José da Silva", `aspas "e" \barra`, "<b>&</b>", "2026-01-31", "00020101021226…6304ABCD", "ação"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 4 {
		for k := range 200 {
			var r results.Row
			next := func() string { return words[rng.IntN(len(words))] }
			if k == 0 {
				next = func() string { return "x" } // every field set, no omitempty left out
			}
			structfill.Fill(reflect.ValueOf(&r).Elem(), n, next)
			if got, want := MarshalRow(&r), marshal(t, &r); !bytes.Equal(got, want) {
				t.Fatalf("MarshalRow differs from json.Marshal (%d elements)\n got %s\nwant %s", n, got, want)
			}
			if k == 0 {
				if b, ok := writeRow(rowWriter{ok: true, compact: true}, &r); !ok || !bytes.Equal(b, marshal(t, &r)) {
					t.Fatalf("a row with every field set and no escape was not written compact: %s", b)
				}
			}
			got, ok := appendRow(nil, &r)
			if !ok {
				t.Fatalf("appendRow refused %+v", r)
			}
			if want := encodeRow(t, &r); !bytes.Equal(got, want) {
				t.Fatalf("appendRow differs from encoding/json (%d elements)\n got %s\nwant %s", n, got, want)
			}
		}
	}
	if got, want := MarshalRow(&results.Row{}), []byte(`{"index":0,"source_row":0,"key":"","payer_name":"","payer_document":"","outcome":"","amount_cents":0}`); !bytes.Equal(got, want) {
		t.Errorf("MarshalRow of a zero row: %s", got)
	}
	if got, _ := appendRow(nil, &results.Row{}); !bytes.Equal(got, encodeRow(t, &results.Row{})) {
		t.Errorf("zero row: got %s", got)
	}
	full := cobvFixture()
	for _, r := range append(append(full.Rows, carnetFixture().Rows...), boletoFixture().Rows...) {
		if got, ok := appendRow(nil, &r); !ok || !bytes.Equal(got, encodeRow(t, &r)) {
			t.Errorf("fixture row %d: ok %v\n got %s\nwant %s", r.Index, ok, got, encodeRow(t, &r))
		}
	}
}

// Strings encoding/json escapes or replaces beyond '"' and '\\' make
// appendRow say so, and jsonSink then writes the row with encoding/json.
func TestAppendRowRefusesEscapes(t *testing.T) {
	for _, s := range []string{"a\nb", "\x01", "tab\t", "bad \xff utf-8", "sep \u2028", "sep \u2029", "\x7f ok"} {
		r := results.Row{Key: "k", PayerName: s}
		if got, want := MarshalRow(&r), marshal(t, &r); !bytes.Equal(got, want) {
			t.Errorf("%q: MarshalRow %s, json.Marshal %s", s, got, want)
		}
		_, ok := appendRow(nil, &r)
		if want := s == "\x7f ok"; ok != want {
			t.Errorf("%q: ok %v, want %v", s, ok, want)
		}
		var got bytes.Buffer
		if err := WriteJSON(&got, &results.Results{Version: results.FileVersion, Rows: []results.Row{r, {Key: "z"}}}); err != nil {
			t.Fatal(err)
		}
		var back results.Results
		if err := json.Unmarshal(got.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		if len(back.Rows) != 2 || back.Rows[0].PayerName != strings.ToValidUTF8(s, "\uFFFD") {
			t.Errorf("%q: read back %+v", s, back.Rows)
		}
		if want := encodeRow(t, &r); !bytes.Contains(got.Bytes(), want) {
			t.Errorf("%q: results.json lacks the encoder's bytes %s", s, want)
		}
	}
}
