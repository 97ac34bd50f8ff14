package pix

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"remessa/internal/jsonscan"
)

// decodeAnyJSON is decodeAny by encoding/json alone (what it was before
// decodeAnyFast).
func decodeAnyJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errTrailing
	}
	if _, err := dec.Token(); err == nil {
		return nil, errTrailing
	}
	return v, nil
}

var errTrailing = errors.New("dados após o fim do JSON")

// sameAsDecodeAny checks decodeAnyFast(body) against encoding/json: when
// it decodes body, encoding/json decodes it too, to the same values.
func sameAsDecodeAny(t *testing.T, body []byte, wantFast bool) {
	t.Helper()
	got, ok := decodeAnyFast(body)
	if wantFast && !ok {
		t.Fatalf("decodeAnyFast gave up on %q", body)
	}
	want, err := decodeAnyJSON(body)
	if !ok {
		return
	}
	if err != nil {
		t.Fatalf("decodeAnyFast decoded %q, which encoding/json refuses: %v", body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decodeAnyFast %#v, encoding/json %#v", body, got, want)
	}
	// And decodeAny, whichever way it goes, gives encoding/json's answer.
	if v, err := decodeAny(body); err != nil || !reflect.DeepEqual(v, want) {
		t.Fatalf("%q: decodeAny %#v, %v", body, v, err)
	}
}

func TestDecodeAnyFast(t *testing.T) {
	for _, body := range []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1.5e+3`, `-12.25E-2`, `true`, `false`, `null`, ` {"a" : [ 1 , "x" , null , true , {} ] } `,
		`{"a":1,"a":2}`, `{"ção":"São Paulo","日本":"😀"}`, "\t\r\n[1]\n",
		`"a\"b"`, `"a\u00e7\ud83d\ude00\/"`, "\"\xff\"", "\"\xed\xa0\x80\"", `{"k":"\ud800"}`,
		`{"cobsv":[{"calendario":{"dataDeVencimento":"2026-12-31","validadeAposVencimento":30},"txid":"abcdefabcdefabcdefabcdefab01","devedor":{"cpf":"12345678909","nome":"Fulano"},"valor":{"original":"10.00"},"chave":"k"}]}`,
	} {
		sameAsDecodeAny(t, []byte(body), true)
	}
	deep := strings.Repeat("[", jsonscan.MaxDepth+5) + strings.Repeat("]", jsonscan.MaxDepth+5)
	for _, body := range []string{
		``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":1}x`, `{} ]`, `{} {}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`,
		`tru`, `nul`, `truex`, "\"a\x01\"", `{"a\n":1}`, `{"a\u0041":1}`, "{\"\xff\":1}", "\xef\xbb\xbf{}", deep, `NaN`, `[1e999]`,
	} {
		sameAsDecodeAny(t, []byte(body), false)
	}
	// Left to encoding/json: a key with an escape or not valid UTF-8.
	for _, body := range []string{`{"a\u0041":1}`, "{\"\xff\":1}"} {
		if _, ok := decodeAnyFast([]byte(body)); ok {
			t.Errorf("decodeAnyFast read %q", body)
		}
	}
}

// FuzzDecodeAnyFast compares decodeAnyFast with encoding/json on bodies
// made by the fuzzer.
func FuzzDecodeAnyFast(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,"x",null,true,false,{}]}`, `{"calendario":{"dataDeVencimento":"2026-12-31"},"valor":{"original":"1.00"}}`, `[1,2`, `"\u00e7"`, "\"\xc3\xa7\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAsDecodeAny(t, body, false)
	})
}

func BenchmarkDecodeAny(b *testing.B) {
	raw, _ := json.Marshal(sampleCharge().Body)
	body := []byte(`{"cobsv":[` + strings.TrimSuffix(strings.Repeat(string(raw)+",", 100), ",") + `]}`)
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeAnyJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if _, ok := decodeAnyFast(body); !ok {
				b.Fatal("gave up")
			}
		}
	})
}
