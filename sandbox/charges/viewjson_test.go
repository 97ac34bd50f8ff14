package charges

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"remessa/sandbox/httpx"
)

// viewStrings are the strings fillView draws: empty (omitempty), plain,
// non-ASCII, and every kind encoding/json escapes (quotes, backslash, HTML
// characters, control characters, U+2028/9, invalid UTF-8).
var viewStrings = []string{"", "", "abc", "Carnê de teste", "São Paulo – ção", `a"b`, `back\slash`, "<b>&amp;</b>",
	"tab\there", "nl\n", "\x01\x1f", "line\u2028sep\u2029", "bad\xffutf8", "\xe2\x82", "https://x.example/v1/documents/charge/ab/link?x=1&y=2",
	"data:image/png;base64,iVBORw0KGgo+/=", "2026-03-10 12:00:00", "0", "\u007f"}

// fillView sets every field of v at random by reflection: strings from
// viewStrings, integers (zero among them, for omitempty), bools,
// pointers (nil or filled), slices (nil, empty or 1-3 elements),
// interfaces (nil, a string or an int). A kind it does not know fails
// the test, so that a view growing a new kind of field is noticed.
func fillView(t *testing.T, rng *rand.Rand, v reflect.Value, depth int) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(randomTime(rng)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(viewStrings[rng.IntN(len(viewStrings))])
	case reflect.Int, reflect.Int64:
		switch rng.IntN(4) {
		case 0:
			v.SetInt(0)
		case 1:
			v.SetInt(-rng.Int64N(1e12))
		default:
			v.SetInt(rng.Int64N(1e12))
		}
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Pointer:
		if rng.IntN(3) == 0 || depth > 6 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fillView(t, rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		switch n := rng.IntN(5); {
		case n == 0 || depth > 6:
			v.SetZero()
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := 0; i < n-1; i++ {
				fillView(t, rng, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fillView(t, rng, v.Field(i), depth+1)
		}
	case reflect.Interface:
		switch rng.IntN(3) {
		case 0:
			v.Set(reflect.ValueOf(viewStrings[rng.IntN(len(viewStrings))]))
		case 1:
			v.Set(reflect.ValueOf(rng.IntN(400)))
		default:
			v.SetZero()
		}
	default:
		t.Fatalf("fillView: a %s field (%s): teach fillView and viewjson.go", v.Kind(), v.Type())
	}
}

// randomTime is a time of any kind a document may hold: zero, UTC, São
// Paulo, odd offsets, nanoseconds, and rarely one encoding/json refuses
// (a year past 9999).
func randomTime(rng *rand.Rand) time.Time {
	switch rng.IntN(9) {
	case 0:
		return time.Time{}
	case 8:
		return time.Unix(rng.Int64N(4e9), 0).In(time.FixedZone("far", 24*3600+60*rng.IntN(100)))
	case 1:
		return time.Date(10000+rng.IntN(5), 1, 2, 3, 4, 5, 0, time.UTC)
	case 2:
		return time.Date(2026, 3, 10, 15, 0, 0, rng.IntN(1e9), saoPaulo)
	case 3:
		return time.Unix(rng.Int64N(4e9), 0).In(time.FixedZone("", (rng.IntN(48)-24)*1800+rng.IntN(2)*59))
	default:
		return time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).UTC()
	}
}

// TestViewJSONMatchesEncodingJSON: the hand-written answers are
// encoding/json's, byte for byte, over random values of every field.
func TestViewJSONMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	fallbacks := 0
	for i := 0; i < 3000; i++ {
		var c chargeOut
		fillView(t, rng, reflect.ValueOf(&c).Elem(), 0)
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendChargeOut(nil, &c); !bytes.Equal(got, want) {
			t.Fatalf("chargeOut %d:\n got %s\nwant %s", i, got, want)
		}
		var cn carnetOut
		fillView(t, rng, reflect.ValueOf(&cn).Elem(), 0)
		want, err = json.Marshal(cn)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendCarnetOut(nil, &cn)
		if !ok {
			fallbacks++
			continue
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("carnetOut %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if fallbacks == 0 || fallbacks > 2900 {
		t.Fatalf("%d of 3000 carnets fell back to encoding/json", fallbacks)
	}
}

// TestWriteViewSameAnswer: the whole answer (headers, body, newline) is
// httpx.V1Data's, also when a carnet falls back to encoding/json.
func TestWriteViewSameAnswer(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 200; i++ {
		var c chargeOut
		fillView(t, rng, reflect.ValueOf(&c).Elem(), 0)
		var cn carnetOut
		fillView(t, rng, reflect.ValueOf(&cn).Elem(), 0)
		if i%2 == 0 && len(cn.Charges) > 0 {
			cn.Charges[0].Parcel = int64(7) // neither string nor int: the fallback
		}
		for _, pair := range []struct {
			mine func(*httptest.ResponseRecorder)
			v    any
		}{
			{func(w *httptest.ResponseRecorder) { writeCharge(w, &c) }, c},
			{func(w *httptest.ResponseRecorder) { writeCarnet(w, &cn) }, cn},
		} {
			got, want := httptest.NewRecorder(), httptest.NewRecorder()
			pair.mine(got)
			httpx.V1Data(want, pair.v)
			if got.Code != want.Code || !reflect.DeepEqual(got.Header(), want.Header()) || got.Body.String() != want.Body.String() {
				t.Fatalf("%d: got %d %v %s\nwant %d %v %s", i, got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
			}
		}
	}
}

// TestDocJSONMatchesEncodingJSON: the stored documents are encoding/json's,
// byte for byte, over random values of every field (and the documents
// with a time encoding/json refuses get its error).
func TestDocJSONMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 17))
	refused := 0
	for i := 0; i < 2000; i++ {
		var c Charge
		fillView(t, rng, reflect.ValueOf(&c).Elem(), 0)
		want, werr := json.Marshal(&c)
		got, err := marshalChargeDoc(&c)
		if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("charge %d: got %s (%v)\nwant %s (%v)", i, got, err, want, werr)
		}
		var cn Carnet
		fillView(t, rng, reflect.ValueOf(&cn).Elem(), 0)
		want, werr = json.Marshal(&cn)
		got, err = marshalCarnet(&cn)
		if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("carnet %d: got %s (%v)\nwant %s (%v)", i, got, err, want, werr)
		}
		if werr != nil {
			refused++
		}
	}
	if refused == 0 || refused > 1900 {
		t.Fatalf("%d of 2000 carnets refused by encoding/json", refused)
	}
}
