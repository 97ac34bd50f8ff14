package run

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"remessa/pipeline/results"
)

// fillRow sets every field of v (a struct) by reflection, each value
// chosen with next; slices get n elements.
func fillRow(v reflect.Value, n int, next func() string) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(next())
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(len(next())) - 3)
		case reflect.Bool:
			f.SetBool(len(next())%2 == 0)
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), n, n)
			for k := range n {
				if e := s.Index(k); e.Kind() == reflect.Struct {
					fillRow(e, n, next)
				} else {
					e.SetInt(int64(k*1000 - 7))
				}
			}
			f.Set(s)
		default:
			panic("fillRow: " + f.Type().String())
		}
	}
}

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
// decoder fails here) as json.Unmarshal does, in its one pass when it can.
func TestUnmarshalRow(t *testing.T) {
	words := []string{"", "a", "José da Silva", `aspas "e" \barra`, "<b>&</b>", "linha\nnova", "2026-01-31", "00020101021226…6304ABCD"}
	rng := rand.New(rand.NewPCG(3, 4))
	fast := 0
	for n := range 4 {
		for k := range 200 {
			var r results.Row
			pool := words
			if k%2 == 1 { // no escapes: read in one pass
				pool = []string{"", "a", "José da Silva", "2026-01-31", "00020101021226…6304ABCD"}
			}
			next := func() string { return pool[rng.IntN(len(pool))] }
			if k == 0 {
				next = func() string { return "xyzw" }
			}
			fillRow(reflect.ValueOf(&r).Elem(), n, next)
			b, err := json.Marshal(&r)
			if err != nil {
				t.Fatal(err)
			}
			checkUnmarshalRow(t, b)
			d := rowDecoder{b: b}
			var back results.Row
			var want results.Row
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if d.row(&back) && d.i == len(b) {
				fast++
				if !reflect.DeepEqual(back, want) {
					t.Fatalf("one pass: got %+v\nwant %+v", back, want)
				}
			}
			if k == 0 && n > 0 && (d.i != len(b) || !reflect.DeepEqual(back, r)) {
				t.Fatalf("a row with every field set and no escape was not read in one pass: %s", b)
			}
		}
	}
	if fast < 100 {
		t.Errorf("only %d rows read in one pass", fast)
	}
	for _, s := range []string{`{}`, `{"index":1,"index":2}`, `{"parcels":[{"number":1}],"parcels":[{"charge_id":2}]}`,
		`{"split":[],"key":"k"}`, `{"Key":"k"}`, `{"key":null}`, `{"key":"a\u00e9"}`, `{"index":1.0}`, `{"index":01}`,
		`{"index":-0}`, `{"index":99999999999999999999}`, `{"key":"a"} `, `{"key":"a"}x`, `{"key":"\xff"}`, `{"other":1}`,
		`{"split":[{"own":true},{"own":false},{"own":tru}]}`, `{"charge_ids":[1,-2,3]}`, `[]`, ``, `{"key":"a"`} {
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
