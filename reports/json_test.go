package reports

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"remessa/pipeline/results"
)

func TestJSONRoundTrip(t *testing.T) {
	for _, r := range []*results.Results{carnetFixture(), cobvFixture(), boletoFixture()} {
		var a, b bytes.Buffer
		if err := WriteJSON(&a, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Error("two writes of the same results differ")
		}
		if !bytes.Contains(a.Bytes(), []byte("\n  \"run\": {")) {
			t.Error("results.json is not indented")
		}
		var back results.Results
		if err := json.Unmarshal(a.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&back, r) {
			t.Errorf("round trip differs for %s", r.Run.Kind)
		}
	}
}

func TestJSONStreamingMatchesWholeEncoding(t *testing.T) {
	empty := boletoFixture()
	empty.Rows = []results.Row{}
	empty.Compute()
	none := boletoFixture()
	none.Rows = nil
	for _, r := range []*results.Results{carnetFixture(), cobvFixture(), boletoFixture(), empty, none} {
		var got, want bytes.Buffer
		if err := WriteJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("streamed JSON differs from the whole encoding (%d rows)\n got %s\nwant %s", len(r.Rows), got.Bytes(), want.Bytes())
		}
	}
}
