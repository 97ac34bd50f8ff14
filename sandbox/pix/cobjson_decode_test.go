package pix

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// requestMap is c's request members as checkCobRaw gets them (decodeAny,
// without the members a request never has: requestView drops them too).
func requestMap(t testing.TB, c Cob) (map[string]any, []byte) {
	t.Helper()
	c.Loc, c.Location, c.Recebedor, c.PixCopiaECola, c.Pix = nil, "", nil, "", nil
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	v, err := decodeAny(raw)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	delete(m, "revisao")
	delete(m, "status")
	return m, raw
}

// sameAsDecoded checks cobFromMap(m) against encoding/json: remarshal(m)
// always, json.Unmarshal(raw) when raw has no key twice (checkCobRaw's
// direct path). want says whether cobFromMap must decode m itself.
func sameAsDecoded(t *testing.T, m map[string]any, raw []byte, want bool) {
	t.Helper()
	got, ok := cobFromMap(m)
	if want && !ok {
		t.Fatalf("cobFromMap gave up on %v", m)
	}
	if !ok {
		if !reflect.DeepEqual(got, Cob{}) {
			t.Fatalf("cobFromMap gave up but returned %+v, not the zero Cob", got)
		}
		return
	}
	noTxid := make(map[string]any, len(m)) // checkCobRaw deletes txid first
	for k, v := range m {
		if k != "txid" {
			noTxid[k] = v
		}
	}
	var viaJSON Cob
	if err := remarshal(noTxid, &viaJSON); err != nil {
		t.Fatalf("cobFromMap decoded what encoding/json refuses (%v): %v", err, m)
	}
	viaJSON.Txid = ""
	if !reflect.DeepEqual(got, viaJSON) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(viaJSON)
		t.Fatalf("cobFromMap differs from encoding/json:\nours %s\njson %s", g, w)
	}
	if raw != nil && jsonMembers(raw) == mapMembers(m) {
		var direct Cob
		if err := json.Unmarshal(raw, &direct); err == nil {
			direct.Txid = ""
			if !reflect.DeepEqual(got, direct) {
				t.Fatalf("cobFromMap differs from json.Unmarshal of %s", raw)
			}
		}
	}
}

// Every request member of a Cob set (by reflection: a field added later
// is set too, and fails here until cobFromMap reads it) decodes as
// encoding/json decodes it, without falling back.
func TestCobFromMapEveryField(t *testing.T) {
	var c Cob
	(&filler{t: t}).fill(reflect.ValueOf(&c).Elem(), "cob")
	m, raw := requestMap(t, c)
	sameAsDecoded(t, m, raw, true)
	got, _ := cobFromMap(m)
	if got.Valor.Desconto == nil || len(got.Valor.Desconto.DescontoDataFixa) != 2 || got.Calendario.ValidadeAposVencimento == nil || got.Devedor.CEP == "" {
		t.Fatalf("filled members not decoded: %+v", got)
	}
	m, raw = requestMap(t, Cob{})
	sameAsDecoded(t, m, raw, true)
}

// Bodies cobFromMap must leave to encoding/json (or decode as it does).
func TestCobFromMapUnusual(t *testing.T) {
	for _, tc := range []struct {
		body string
		fast bool
	}{
		{`{"chave":"k","valor":{"original":"1.00"}}`, true},
		{`{"txid":123,"chave":"k"}`, true}, // txid is not decoded: the route's counts
		{`{"chave":null,"devedor":null,"calendario":null,"valor":null,"infoAdicionais":null}`, true},
		{`{"infoAdicionais":[],"valor":{"desconto":{"descontoDataFixa":[]}}}`, true},
		{`{"infoAdicionais":[null,{"nome":"a"}],"valor":{"desconto":{"descontoDataFixa":[null]}}}`, true},
		{`{"calendario":{"expiracao":null,"validadeAposVencimento":-0}}`, true},
		{`{"valor":{"multa":null,"juros":{"modalidade":null,"valorPerc":null}}}`, true},
		{`{"Chave":"k"}`, false}, // encoding/json matches it to chave
		{`{"chave":"a","CHAVE":"b"}`, false},
		{`{"devedor":{"CPF":"1"}}`, false},
		{`{"status":"ATIVA"}`, false},
		{`{"chave":1}`, false},
		{`{"chave":true}`, false},
		{`{"calendario":{"expiracao":1e2}}`, false},
		{`{"calendario":{"expiracao":1.0}}`, false},
		{`{"calendario":{"expiracao":"10"}}`, false},
		{`{"calendario":{"expiracao":99999999999999999999}}`, false},
		{`{"calendario":[]}`, false},
		{`{"devedor":"x"}`, false},
		{`{"infoAdicionais":{}}`, false},
		{`{"infoAdicionais":[1]}`, false},
		{`{"valor":{"desconto":{"descontoDataFixa":[{"data":1}]}}}`, false},
		{`{"valor":{"desconto":{"descontoDataFixa":[{"x":1}]}}}`, false},
		{`{"valor":{"multa":{"modalidade":2,"valorPerc":"1.00","x":1}}}`, false},
		{`{"chave":"a","chave":"b"}`, true}, // the last one, as the map has it
	} {
		v, err := decodeAny([]byte(tc.body))
		if err != nil {
			t.Fatal(tc.body, err)
		}
		m := v.(map[string]any)
		if _, ok := cobFromMap(m); ok != tc.fast {
			t.Errorf("%s: decoded by cobFromMap %v, want %v", tc.body, ok, tc.fast)
		}
		sameAsDecoded(t, m, []byte(tc.body), tc.fast)
	}
}

// FuzzCobFromMap compares cobFromMap with encoding/json on bodies made by
// the fuzzer: the bytes as a JSON body, and a Cob filled from them.
func FuzzCobFromMap(f *testing.F) {
	f.Add([]byte(`{"calendario":{"dataDeVencimento":"2026-12-31","validadeAposVencimento":30},"devedor":{"cpf":"12345678909","nome":"Fulano"},"valor":{"original":"10.00","multa":{"modalidade":2,"valorPerc":"2.00"},"desconto":{"modalidade":1,"descontoDataFixa":[{"data":"2026-12-01","valorPerc":"1.00"}]}},"chave":"k","infoAdicionais":[{"nome":"a","valor":"b"}]}`))
	f.Add([]byte(`{"calendario":{"expiracao":-0},"valor":{"modalidadeAlteracao":1e0},"Chave":null}`))
	f.Add(bytes.Repeat([]byte{7, 'x', 0xff, '"'}, 50))
	f.Fuzz(func(t *testing.T, data []byte) {
		if v, err := decodeAny(data); err == nil {
			if m, ok := v.(map[string]any); ok {
				sameAsDecoded(t, m, data, false)
			}
		}
		var c Cob
		(&filler{t: t, src: append([]byte{1}, data...)}).fill(reflect.ValueOf(&c).Elem(), "cob")
		m, raw := requestMap(t, c)
		sameAsDecoded(t, m, raw, true)
	})
}

func BenchmarkCobFromMap(b *testing.B) {
	c := sampleCharge().Body
	m, raw := requestMap(b, c)
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var c Cob
			if err := json.Unmarshal(raw, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cobFromMap", func(b *testing.B) {
		for b.Loop() {
			if _, ok := cobFromMap(m); !ok {
				b.Fatal(m)
			}
		}
	})
}
