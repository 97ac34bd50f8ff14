package run

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"remessa/internal/jsonscan"
	"remessa/internal/structfill"
	"remessa/pipeline/results"
)

// checkUnmarshalRow fails when unmarshalRow and json.Unmarshal disagree
// on b (the row, or whether it is an error).
func checkUnmarshalRow(t *testing.T, b []byte) {
	t.Helper()
	var got, want results.Row
	gerr, werr := unmarshalRow(b, &got), json.Unmarshal(b, &want)
	if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v (%v)\nwant %+v (%v)", b, got, gerr, want, werr)
	}
}

// unmarshalRow decodes what json.Marshal writes of any results.Row (every
// field set by reflection: a field added to results.Row and not to the
// decoder fails here) as json.Unmarshal does, all of it in its one pass,
// strings with escapes too; other text too, in one pass or not.
func TestUnmarshalRow(t *testing.T) {
	words := []string{"", "a", "José da Silva", `aspas "e" \barra`, "<b>&</b>", "linha\nnova", "2026-01-31", "00020101021226…6304ABCD", "\u2028 \x01"}
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 4 {
		for k := range 200 {
			var r results.Row
			next := func() string { return words[rng.IntN(len(words))] }
			if k == 0 {
				next = func() string { return "xyzw" }
			}
			structfill.Fill(reflect.ValueOf(&r).Elem(), n, next)
			b, err := json.Marshal(&r)
			if err != nil {
				t.Fatal(err)
			}
			checkUnmarshalRow(t, b)
			var want results.Row
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			var back results.Row
			s := jsonscan.New(b)
			if err := readRow(&s, &back); err != nil || s.End() != nil {
				t.Fatalf("not read in one pass (%v, %v): %s", err, s.End(), b)
			}
			if !reflect.DeepEqual(back, want) {
				t.Fatalf("one pass: got %+v\nwant %+v", back, want)
			}
			if n > 0 && !reflect.DeepEqual(back, r) {
				t.Fatalf("one pass: got %+v\nmarshalled %+v", back, r)
			}
		}
	}
	for _, s := range []string{`{}`, `{"index":1,"index":2}`, `{"parcels":[{"number":1}],"parcels":[{"charge_id":2}]}`,
		`{"split":[],"key":"k"}`, `{"Key":"k"}`, `{"key":null}`, `{"key":"a\u00e9"}`, `{"index":1.0}`, `{"index":01}`,
		`{"index":-0}`, `{"index":99999999999999999999}`, `{"key":"a"} `, `{"key":"a"}x`, `{"key":"\xff"}`, `{"other":1}`,
		`{"split":[{"own":true},{"own":false},{"own":tru}]}`, `{"charge_ids":[1,-2,3]}`, `[]`, ``, `{"key":"a"`,
		` { "key" : "\ud83d\ude00" , "index" : 3 } `, `{"key":"\ud800"}`, `{"split":[{"own":null}]}`, `{"parcels":null}`, `{"key":"a\u0000"}`} {
		checkUnmarshalRow(t, []byte(s))
	}
}

func FuzzUnmarshalRow(f *testing.F) {
	for _, s := range []string{`{"index":1,"key":"k","parcels":[{"number":1,"split":[{"recipient":"r","own":true,"amount_cents":3}]}]}`,
		`{"problems":[{"code":"c","message":"m"}],"charge_ids":[1,2]}`, `{"index":1,"index":2}`, `{"key":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkUnmarshalRow(t, b) })
}

// A result is journaled with json.Marshal's bytes (the journal's bytes
// per row and what older versions read stay the same).
func TestMarshalResIsJSONMarshal(t *testing.T) {
	r := &results.Row{Index: 3, Key: "k<&>", PayerName: "Ana", Outcome: results.Issued, Txid: "abc", Problems: []results.Problem{{Code: "c", Message: "m"}}}
	for _, r := range []*results.Row{nil, r, {Key: "x"}} {
		want, _ := json.Marshal(r)
		if got := marshalRes(r); string(got) != string(want) {
			t.Errorf("marshalRes %s, json.Marshal %s", got, want)
		}
	}
}

// benchRows are journaled rows as the run writes them: a cobv's
// description and result, and a carnet of 12 parcels' result.
func benchRows() map[string][]byte {
	cobv := results.Row{Index: 41234, SourceRow: 41236, Key: "a3f9c2d1e0b8a7f6", PayerName: "José da Silva Pereira", PayerDoc: "12345678909",
		Outcome: results.Issued, AmountCents: 12345, DueDate: "2026-12-10", Txid: "rmab12cd34ef56ab78cd90ef12ab341234",
		PixCopiaECola: "00020101021226830014BR.GOV.BCB.PIX2561127.0.0.1:8080/qr/v2/cobv/0000000000000000000000000000a1b25204000053039865802BR5913Escola Modelo6009SAO PAULO62070503***6304ABCD",
		Location:      "127.0.0.1:8080/v2/cobv/0000000000000000000000000000a1b2", BatchID: "b-000412"}
	desc := results.Row{Index: 41234, SourceRow: 41236, Key: "a3f9c2d1e0b8a7f6", PayerName: "José da Silva Pereira", PayerDoc: "12345678909", AmountCents: 12345, DueDate: "2026-12-10"}
	carnet := results.Row{Index: 7, SourceRow: 9, Key: "k7", PayerName: "Maria Souza", PayerDoc: "98765432100", Outcome: results.Issued,
		AmountCents: 120000, DueDate: "2027-01-10", CustomID: "mensalidade-7", CarnetID: 9001, Link: "https://sandbox.local/carnet/9001", PDF: "https://sandbox.local/carnet/9001.pdf", Cover: "https://sandbox.local/carnet/9001/cover.pdf"}
	for i := range 12 {
		carnet.ChargeIDs = append(carnet.ChargeIDs, int64(50000+i))
		carnet.Parcels = append(carnet.Parcels, results.Parcel{Number: i + 1, ChargeID: int64(50000 + i), DueDate: "2027-01-10", ValueCents: 10000, Status: "waiting",
			Barcode: "03399000000000000000000000000000000000000000", Link: "https://sandbox.local/slip/50000", PDF: "https://sandbox.local/slip/50000.pdf"})
	}
	out := map[string][]byte{}
	for name, r := range map[string]*results.Row{"cobv-result": &cobv, "cobv-description": &desc, "carnet-result": &carnet} {
		b, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		out[name] = b
	}
	return out
}

func BenchmarkUnmarshalRow(b *testing.B) {
	for _, name := range []string{"cobv-description", "cobv-result", "carnet-result"} {
		body := benchRows()[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var r results.Row
				if err := unmarshalRow(body, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
