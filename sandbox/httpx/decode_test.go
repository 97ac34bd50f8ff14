package httpx

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type item struct {
	Name   string `json:"name"`
	Value  int64  `json:"value"`
	Amount int8   `json:"amount,omitempty"`
	Count  uint16 `json:"count,omitempty"`
}

type Embedded struct {
	Extra string `json:"extra,omitempty"`
}

type payload struct {
	Embedded
	Items      []item            `json:"items"`
	Customer   *customer         `json:"customer,omitempty"`
	Tags       map[string]string `json:"tags,omitempty"`
	Ratio      float64           `json:"ratio,omitempty"`
	Flag       bool              `json:"flag,omitempty"`
	Raw        json.RawMessage   `json:"raw,omitempty"`
	Any        any               `json:"any,omitempty"`
	When       *time.Time        `json:"when,omitempty"`
	Quoted     int64             `json:"quoted,omitempty,string"`
	Ignored    string            `json:"-"`
	NoTag      string
	Bytes      []byte      `json:"bytes,omitempty"`
	Fixed      [2]int      `json:"fixed,omitempty"`
	Number     json.Number `json:"number,omitempty"`
	unexported string
}

type customer struct {
	Name    string   `json:"name"`
	Phones  []string `json:"phones"`
	Address *struct {
		Street string `json:"street"`
	} `json:"address,omitempty"`
}

func TestDecodeBytesTable(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		kind       DecodeErrorKind
		pointer    string
		msg        string // substring
	}{
		{"ok", `{"items":[{"name":"a","value":1}],"customer":{"name":"b","phones":["1"]},"tags":{"k":"v"},"ratio":1.5,"flag":true,"raw":{"x":[1]},"any":[1,"a"],"when":"2026-01-01T00:00:00Z","quoted":"12","NoTag":"x","extra":"e","bytes":"AAE=","fixed":[1,2],"number":3.25}`, 0, "", ""},
		{"nulls are ok", `{"items":null,"customer":null,"tags":null}`, 0, "", ""},
		{"unknown top", `{"itens":[]}`, ErrUnknownProperty, "/itens", "itens"},
		{"unknown nested", `{"items":[{"name":"a","value":1},{"name":"b","nome":"x"}]}`, ErrUnknownProperty, "/items/1/nome", "nome"},
		{"unknown deep", `{"customer":{"name":"a","address":{"rua":"x"}}}`, ErrUnknownProperty, "/customer/address/rua", "rua"},
		{"ignored field is unknown", `{"Ignored":"x"}`, ErrUnknownProperty, "/Ignored", ""},
		{"unexported field is unknown", `{"unexported":"x"}`, ErrUnknownProperty, "/unexported", ""},
		{"case matters", `{"Items":[]}`, ErrUnknownProperty, "/Items", ""},
		{"pointer escaping", `{"tags":{"a/b":1}}`, ErrWrongType, "/tags/a~1b", "string"},
		{"tilde escaping", `{"x~y":1}`, ErrUnknownProperty, "/x~0y", ""},
		{"string for int", `{"items":[{"name":"a","value":"1"}]}`, ErrWrongType, "/items/0/value", "esperado integer, recebido string"},
		{"float for int", `{"items":[{"name":"a","value":1.5}]}`, ErrWrongType, "/items/0/value", "integer"},
		{"int for string", `{"items":[{"name":1}]}`, ErrWrongType, "/items/0/name", "esperado string, recebido integer"},
		{"object for array", `{"items":{}}`, ErrWrongType, "/items", "esperado array, recebido object"},
		{"array for object", `{"customer":[]}`, ErrWrongType, "/customer", "esperado object"},
		{"string for bool", `{"flag":"true"}`, ErrWrongType, "/flag", "boolean"},
		{"bool for float", `{"ratio":true}`, ErrWrongType, "/ratio", "number"},
		{"int8 overflow", `{"items":[{"name":"a","amount":200}]}`, ErrWrongType, "/items/0/amount", "intervalo"},
		{"int64 overflow", `{"items":[{"name":"a","value":99999999999999999999}]}`, ErrWrongType, "/items/0/value", "intervalo"},
		{"negative uint", `{"items":[{"count":-1}]}`, ErrWrongType, "/items/0/count", ""},
		{"uint16 overflow", `{"items":[{"count":70000}]}`, ErrWrongType, "/items/0/count", "intervalo"},
		{"time not string", `{"when":5}`, ErrWrongType, "/when", "string"},
		{"bad time string", `{"when":"ontem"}`, ErrWrongType, "/when", "Valor inválido"},
		{"fixed array too long", `{"fixed":[1,2,3]}`, ErrWrongType, "/fixed", "máximo 2"},
		{"number for json.Number wrong", `{"number":"x"}`, ErrWrongType, "/number", "number"},
		{"top-level array", `[1]`, ErrWrongType, "", "object"},
		{"top-level string", `"x"`, ErrWrongType, "", "object"},
		{"invalid json", `{"items":[}`, ErrSyntax, "", "JSON inválido"},
		{"truncated", `{"items":[`, ErrSyntax, "", "JSON inválido"},
		{"trailing", `{} {}`, ErrSyntax, "", "após o fim"},
		{"trailing garbage", `{}x`, ErrSyntax, "", ""},
		{"empty", ``, ErrEmptyBody, "", "vazio"},
		{"blank", " \n\t", ErrEmptyBody, "", "vazio"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p payload
			de := DecodeBytes([]byte(tc.body), &p)
			if p.unexported != "" {
				t.Fatalf("unexported field set to %q", p.unexported)
			}
			if tc.kind == 0 {
				if de != nil {
					t.Fatalf("unexpected error %v", de)
				}
				return
			}
			if de == nil {
				t.Fatalf("no error for %s", tc.body)
			}
			if de.Kind != tc.kind || de.Pointer != tc.pointer || !strings.Contains(de.Message, tc.msg) {
				t.Fatalf("got kind %d pointer %q message %q; want kind %d pointer %q message with %q", de.Kind, de.Pointer, de.Message, tc.kind, tc.pointer, tc.msg)
			}
			if de.Status() != 400 {
				t.Fatalf("status %d", de.Status())
			}
		})
	}
}

func TestDecodeValuesLand(t *testing.T) {
	var p payload
	if de := DecodeBytes([]byte(`{"items":[{"name":"a","value":9007199254740993}],"quoted":"12","extra":"e"}`), &p); de != nil {
		t.Fatal(de)
	}
	if p.Items[0].Value != 9007199254740993 || p.Quoted != 12 || p.Extra != "e" {
		t.Fatalf("%+v", p)
	}
}

func TestDecodeStrictLimits(t *testing.T) {
	var p payload
	r := httptest.NewRequest("POST", "/", bytes.NewReader(nil))
	r.Body = http.NoBody
	if de := DecodeStrict(r, &p); de == nil || de.Kind != ErrEmptyBody {
		t.Fatalf("no body: %v", de)
	}
	body := `{"extra":"` + strings.Repeat("a", 100) + `"}`
	r = httptest.NewRequest("POST", "/", strings.NewReader(body))
	if de := DecodeStrictLimit(r, &p, 50); de == nil || de.Kind != ErrTooLarge || de.Status() != 413 {
		t.Fatalf("over limit: %v", de)
	}
	// Unknown length (chunked): the limit still holds.
	r = httptest.NewRequest("POST", "/", strings.NewReader(body))
	r.ContentLength = -1
	if de := DecodeStrictLimit(r, &p, 50); de == nil || de.Kind != ErrTooLarge {
		t.Fatalf("chunked over limit: %v", de)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader(body))
	if de := DecodeStrictLimit(r, &p, int64(len(body))); de != nil {
		t.Fatalf("exactly at limit: %v", de)
	}
}

func TestV1DecodeErrorBody(t *testing.T) {
	w := httptest.NewRecorder()
	V1DecodeError(w, &DecodeError{Kind: ErrUnknownProperty, Pointer: "/items/0/nome", Message: "Propriedade não permitida: nome"})
	want := `{"code":3500034,"error":"validation_error","error_description":{"property":"/items/0/nome","message":"Propriedade não permitida: nome"}}` + "\n"
	if w.Code != 400 || w.Body.String() != want {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	V1DecodeError(w, &DecodeError{Kind: ErrSyntax, Message: "JSON inválido"})
	if !strings.Contains(w.Body.String(), `"property":"/"`) {
		t.Fatalf("whole-body error: %s", w.Body)
	}
	w = httptest.NewRecorder()
	ProblemDecodeError(w, &DecodeError{Kind: ErrWrongType, Pointer: "/calendario/expiracao", Message: "Tipo inválido"}, "CobOperacaoInvalida")
	var pb ProblemBody
	if err := json.Unmarshal(w.Body.Bytes(), &pb); err != nil {
		t.Fatal(err)
	}
	if w.Code != 400 || pb.Type != "https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida" || pb.Status != 400 ||
		len(pb.Violacoes) != 1 || pb.Violacoes[0].Propriedade != "calendario.expiracao" {
		t.Fatalf("%d %+v", w.Code, pb)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("content type %q", ct)
	}
}

func TestResponseWriters(t *testing.T) {
	for _, tc := range []struct {
		write func(w http.ResponseWriter)
		code  int
		body  string
	}{
		{func(w http.ResponseWriter) { V1Data(w, map[string]int{"charge_id": 1}) }, 200, `{"code":200,"data":{"charge_id":1}}`},
		{func(w http.ResponseWriter) { V1Code(w) }, 200, `{"code":200}`},
		{func(w http.ResponseWriter) { V1Error(w, 400, 3500101, "update_parcels", "Parcela 2") }, 400, `{"code":3500101,"error":"update_parcels","error_description":"Parcela 2"}`},
		{func(w http.ResponseWriter) { EfiError(w, 400, "valor_invalido", "Valor") }, 400, `{"nome":"valor_invalido","mensagem":"Valor"}`},
		{func(w http.ResponseWriter) { Problem(w, 404, "NaoEncontrado", "Não Encontrado", "x", nil) }, 404, `{"type":"https://pix.bcb.gov.br/api/v2/error/NaoEncontrado","title":"Não Encontrado","status":404,"detail":"x"}`},
	} {
		w := httptest.NewRecorder()
		tc.write(w)
		if w.Code != tc.code || strings.TrimSpace(w.Body.String()) != tc.body {
			t.Errorf("got %d %s, want %d %s", w.Code, w.Body, tc.code, tc.body)
		}
	}
}

func TestDialectOf(t *testing.T) {
	for p, want := range map[string]Dialect{"/v1/charge": DialectV1, "/v2/cob": DialectPix, "/v3/gn/pix/x": DialectPix,
		"/oauth/token": DialectPix, "/": DialectV1, "/v2": DialectPix, "/v20": DialectV1, "/sandbox/faults": DialectV1} {
		if got := DialectOf(p); got != want {
			t.Errorf("DialectOf(%q) = %v, want %v", p, got, want)
		}
	}
}

// FuzzDecodeStrict: no input makes DecodeBytes panic, and whatever it
// accepts encoding/json accepts too.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{`{}`, `{"items":[{"name":"a","value":1}]}`, `{"customer":{"address":{"street":"x"}}}`,
		`{"tags":{"a":"b"}}`, `{"items":[{"amount":300}]}`, `[`, `{"when":"2026-01-01T00:00:00Z"}`, `{"fixed":[1,2,3]}`, `{"quoted":"x"}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p payload
		de := DecodeBytes(data, &p)
		if de == nil {
			var q payload
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&q); err != nil {
				t.Fatalf("accepted %q but encoding/json refuses: %v", data, err)
			}
			return
		}
		if de.Message == "" || de.Kind == 0 {
			t.Fatalf("empty error for %q: %+v", data, de)
		}
		if de.Pointer != "" && de.Pointer[0] != '/' {
			t.Fatalf("pointer %q", de.Pointer)
		}
	})
}
