package run

import (
	"bytes"
	"encoding/json"
	"testing"

	"remessa/pipeline"
	"remessa/pipeline/journal"
)

// reqByUnmarshal is what decodeRow did before cobvReq: decode the request.
func reqByUnmarshal(b []byte) (json.RawMessage, string, error) {
	var req struct {
		Cobv     json.RawMessage `json:"cobv"`
		SplitKey string          `json:"split_key"`
	}
	err := json.Unmarshal(b, &req)
	return req.Cobv, req.SplitKey, err
}

// cobvReq reads a journaled cobv request as decoding it would, whatever
// its texts hold, and declines any other shape.
func TestCobvReq(t *testing.T) {
	texts := []string{"", "Mensalidade", `aspas " e \ barra`, `}}"{`, `,"split_key":"x"}`, "acentuação ü \u2028 <>&", "\x01\t\n"}
	for _, text := range texts {
		for _, key := range []string{"", "k1", text, `a"}`} {
			c := &pipeline.CobvRequest{Txid: "abc", Chave: "chave", SolicitacaoPagador: text}
			c.Devedor.Nome = text
			b, err := json.Marshal(rowReq{Cobv: c, SplitKey: key})
			if err != nil {
				t.Fatal(err)
			}
			cobv, sk, ok := cobvReq(b)
			wantCobv, wantKey, err := reqByUnmarshal(b)
			if !ok || err != nil || !bytes.Equal(cobv, wantCobv) || sk != wantKey {
				t.Fatalf("%s: cobvReq %s %q %v, want %s %q", b, cobv, sk, ok, wantCobv, wantKey)
			}
			jr, err := decodeRow(testRow(b), decodeCobv)
			if err != nil || !bytes.Equal(jr.cobv, wantCobv) || jr.req.SplitKey != wantKey {
				t.Fatalf("%s: decodeRow %s %q %v", b, jr.cobv, jr.req.SplitKey, err)
			}
		}
	}
	for _, b := range []string{
		`{"carnet":{"items":[]}}`,
		`{"cobv":{"a":1}`,
		`{"cobv":{"a":1},"other":2}`,
		`{"cobv":{"a":"}"}`,
		`{"cobv":[1]}`,
		`{"cobv":{"a":1},"split_key":1}`,
		`{"cobv":{"a":1},"split_key":"x}`,
		` {"cobv":{}}`,
	} {
		if cobv, sk, ok := cobvReq([]byte(b)); ok {
			t.Errorf("%s: cobvReq %s %q, want declined", b, cobv, sk)
		}
	}
}

func testRow(req []byte) journal.Row {
	return journal.Row{Index: 3, Key: "k", State: journal.RowPending, Info: []byte(`{"index":3}`), Req: req}
}

// FuzzCobvReq: whenever cobvReq reads valid JSON, it reads what decoding
// it reads.
func FuzzCobvReq(f *testing.F) {
	f.Add([]byte(`{"cobv":{"txid":"a\"}"},"split_key":"k\\"}`))
	f.Add([]byte(`{"cobv":{"a":[{"b":"}"}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cobv, sk, ok := cobvReq(b)
		if !ok || !json.Valid(b) {
			return
		}
		wantCobv, wantKey, err := reqByUnmarshal(b)
		if err != nil || !bytes.Equal(cobv, wantCobv) || sk != wantKey {
			t.Fatalf("%s: cobvReq %s %q, want %s %q (%v)", b, cobv, sk, wantCobv, wantKey, err)
		}
	})
}
