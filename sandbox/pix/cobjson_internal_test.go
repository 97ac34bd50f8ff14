package pix

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// filler sets the fields of a value by reflection, so every field the
// structs have (including one added later) gets a value: from src when
// given (fuzzing: each field zero or not, any bytes in strings), else
// every field set, each string and number different.
type filler struct {
	t   testing.TB
	src []byte
	n   int
}

func (f *filler) byte() byte {
	if len(f.src) == 0 {
		return 0
	}
	c := f.src[0]
	f.src = f.src[1:]
	return c
}

func (f *filler) int64() int64 {
	var buf [8]byte
	n := copy(buf[:], f.src)
	f.src = f.src[n:]
	return int64(binary.LittleEndian.Uint64(buf[:]))
}

// fuzzing reports whether the values come from src.
func (f *filler) fuzzing() bool { return f.src != nil }

func (f *filler) fill(v reflect.Value, path string) {
	f.n++
	if f.fuzzing() && f.byte()%4 == 0 {
		return // left zero (omitempty, nil pointers and slices)
	}
	switch v.Kind() {
	case reflect.String:
		if f.fuzzing() {
			n := int(f.byte() % 24)
			if n > len(f.src) {
				n = len(f.src)
			}
			v.SetString(string(f.src[:n]))
			f.src = f.src[n:]
			return
		}
		v.SetString(fmt.Sprintf("%s-%d-ção", path, f.n))
	case reflect.Int, reflect.Int64:
		if v.Type() == reflect.TypeFor[time.Duration]() {
			f.t.Fatalf("%s: a Duration field: teach the filler and cobjson.go", path)
		}
		if f.fuzzing() {
			x := f.int64()
			if v.Kind() == reflect.Int && v.OverflowInt(x) {
				x = int64(int32(x))
			}
			v.SetInt(x)
			return
		}
		v.SetInt(int64(1000 + f.n))
	case reflect.Bool:
		v.SetBool(!f.fuzzing() || f.byte()%2 == 1)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), path)
		v.Set(p)
	case reflect.Slice:
		n := 2
		if f.fuzzing() {
			n = int(f.byte() % 4)
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			f.fill(s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(f.time()))
			return
		}
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() {
				f.t.Fatalf("%s.%s: unexported field: teach cobjson.go and this test", path, sf.Name)
			}
			f.fill(v.Field(i), path+"."+sf.Name)
		}
	default:
		f.t.Fatalf("%s: field of kind %s: teach cobjson.go and this test", path, v.Kind())
	}
}

func (f *filler) time() time.Time {
	if !f.fuzzing() {
		return time.Date(2026, 11, 26, 12, 34, 56, 789_012_345, time.UTC)
	}
	t := time.Unix(f.int64()%(1<<40), int64(f.byte())*3_900_017)
	switch f.byte() % 4 {
	case 0:
		return t.UTC()
	case 1:
		return t.In(time.FixedZone("x", int(int32(f.int64()))%(30*3600))) // some beyond ±24h
	case 2:
		return t.In(time.FixedZone("y", -3*3600))
	}
	return t.Local()
}

// sameAsJSON checks that our encoding of v is encoding/json's.
func sameAsJSON(t *testing.T, name string, v any, ours []byte, ok bool) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		if ok {
			t.Fatalf("%s: encoding/json refuses it (%v), ours wrote %s", name, err, ours)
		}
		return
	}
	if !ok {
		t.Fatalf("%s: ours gave up where encoding/json writes %s", name, want)
	}
	if !bytes.Equal(ours, want) {
		t.Fatalf("%s differs from encoding/json:\nours %s\njson %s", name, ours, want)
	}
}

func checkAll(t *testing.T, c *charge, l *CobList) {
	t.Helper()
	raw, ok := appendCharge(nil, c)
	sameAsJSON(t, "charge", c, raw, ok)
	m, err := marshalCharge(c)
	if want, werr := json.Marshal(c); !bytes.Equal(m, want) || (err == nil) != (werr == nil) {
		t.Fatalf("marshalCharge = %s, %v; encoding/json %s, %v", m, err, want, werr)
	}
	b, err := c.Body.appendJSON(nil)
	sameAsJSON(t, "cob", &c.Body, b, err == nil)
	b, err = l.appendJSON(nil)
	sameAsJSON(t, "list", l, b, err == nil)
}

// Every field of the charge, the Cob and the list set (by reflection: a
// field added later is set too, and fails here until cobjson.go writes
// it) encodes as encoding/json encodes it.
func TestCobJSONEveryField(t *testing.T) {
	f := &filler{t: t}
	var c charge
	f.fill(reflect.ValueOf(&c).Elem(), "charge")
	var l CobList
	f.fill(reflect.ValueOf(&l).Elem(), "list")
	checkAll(t, &c, &l)
	// The filled value has what the test claims: each pointer set, each
	// slice two long (a sample: body.valor.desconto.descontoDataFixa).
	if c.Body.Valor.Desconto == nil || len(c.Body.Valor.Desconto.DescontoDataFixa) != 2 || c.Body.Pix[1].Devolucoes[1].Horario.Liquidacao == "" {
		t.Fatalf("filler left fields empty: %+v", c.Body)
	}
	for _, key := range []string{`"splitRevisao":`, `"descontoDataFixa":[{"data":`, `"liquidacao":`, `"loteCobVId":`, `"locationPresente":true`, `"validadeAposVencimento":`} {
		raw, _ := appendCharge(nil, &c)
		lb, _ := l.appendJSON(nil)
		if !bytes.Contains(raw, []byte(key)) && !bytes.Contains(lb, []byte(key)) {
			t.Errorf("no %s in the encodings", key)
		}
	}
}

// The zero values (every omitempty member left out, nil lists) encode as
// encoding/json encodes them.
func TestCobJSONZero(t *testing.T) {
	checkAll(t, &charge{}, &CobList{})
	checkAll(t, &charge{Body: Cob{Valor: Valor{Desconto: &Desconto{}, Multa: &Modalidade{}}, Loc: &Loc{}, Devedor: &Pessoa{}, Pix: []Recebido{{Devolucoes: []Devolucao{{}}}}}},
		&CobList{Cobs: []Cob{}})
	zero := 0
	checkAll(t, &charge{Body: Cob{Calendario: Calendario{Expiracao: &zero}, Valor: Valor{ModalidadeAlteracao: &zero}}}, &CobList{Cobs: []Cob{{}, {}}})
	var nilList *CobList
	var nilCob *Cob
	b, _ := nilList.appendJSON(nil)
	sameAsJSON(t, "nil list", nilList, b, true)
	b, _ = nilCob.appendJSON(nil)
	sameAsJSON(t, "nil cob", nilCob, b, true)
}

// A time encoding/json refuses (year 10000, a zone 24 hours off) makes
// marshalCharge fail as json.Marshal does.
func TestCobJSONBadTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("z", 24*3600)),
	} {
		c := &charge{Created: tm}
		_, ok := appendCharge(nil, c)
		if ok {
			t.Errorf("%v: appendCharge wrote it", tm)
		}
		if _, err := marshalCharge(c); err == nil || !strings.Contains(err.Error(), "Time.MarshalJSON") {
			t.Errorf("%v: marshalCharge error %v, want encoding/json's", tm, err)
		}
	}
}

// writeJSON answers a *Cob and a *CobList with the hand-written encoding
// and anything else (a struct embedding a Cob) with encoding/json; the
// bytes are encoding/json's either way.
func TestWriteJSONCob(t *testing.T) {
	f := &filler{t: t}
	var c charge
	f.fill(reflect.ValueOf(&c).Elem(), "charge")
	type withCob struct {
		Cob
		Extra string `json:"extra"`
	}
	for _, v := range []any{&c.Body, &CobList{Cobs: []Cob{c.Body, {}}}, &withCob{Cob: c.Body, Extra: "x"}, c.Body} {
		rec := httptest.NewRecorder()
		writeJSON(rec, 201, v)
		want, _ := json.Marshal(v)
		if rec.Code != 201 || !bytes.Equal(rec.Body.Bytes(), want) || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
			t.Fatalf("%T: %d %q\n%s\nwant %s", v, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes(), want)
		}
	}
}

// FuzzCobJSON sets the fields from the fuzzer's bytes (each zero or not,
// strings of any bytes, any numbers and times) and compares with
// encoding/json.
func FuzzCobJSON(f *testing.F) {
	f.Add([]byte("seed"))
	f.Add(bytes.Repeat([]byte{1, 5, 'a', '<', '\xff', 0xe2, 0x80, 0xa8}, 40))
	f.Add(bytes.Repeat([]byte{0xff}, 300))
	f.Add(bytes.Repeat([]byte("\x03\x04ação\"\\\n"), 60))
	f.Fuzz(func(t *testing.T, data []byte) {
		fl := &filler{t: t, src: append([]byte{1}, data...)}
		var c charge
		fl.fill(reflect.ValueOf(&c).Elem(), "charge")
		var l CobList
		fl.fill(reflect.ValueOf(&l).Elem(), "list")
		checkAll(t, &c, &l)
	})
}

// sampleCharge is a cobv as a batch stores it (the fields a run sets).
func sampleCharge() *charge {
	exp, val := 0, 30
	return &charge{Kind: kindCobV, LoteID: "17", Created: time.Date(2026, 11, 26, 12, 0, 0, 123_000_000, time.UTC), Cents: 12345, LocID: 987654, Host: "127.0.0.1:8080",
		Body: Cob{Calendario: Calendario{DataDeVencimento: "2026-12-31", ValidadeAposVencimento: &val, Expiracao: &exp}, Status: StatusAtiva, Revisao: 0,
			Devedor: &Pessoa{CPF: "12345678909", Nome: "Fulano de Tal da Silva", Logradouro: "Rua das Flores, 123", Cidade: "São Paulo", UF: "SP", CEP: "01001000"},
			Valor:   Valor{Original: "123.45", Multa: &Modalidade{Modalidade: 2, ValorPerc: "2.00"}, Juros: &Modalidade{Modalidade: 2, ValorPerc: "1.00"}},
			Chave:   "a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d", SolicitacaoPagador: "Mensalidade de novembro",
			InfoAdicionais: []InfoAdicional{{Nome: "Contrato", Valor: "C-000123"}}}}
}

func BenchmarkChargeEncode(b *testing.B) {
	c := sampleCharge()
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cobjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalCharge(c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkCobListEncode(b *testing.B) {
	ai := accountInfo{ID: "acc", CNPJ: "12345678000195", Name: "Empresa Exemplo Ltda"}
	l := &CobList{Parametros: Parametros{Inicio: "2026-01-01T00:00:00.000Z", Fim: "2026-12-31T00:00:00.000Z"}}
	for i := range 100 {
		c := sampleCharge()
		if err := c.derive(ai, fmt.Sprintf("txid%028d", i), 1); err != nil {
			b.Fatal(err)
		}
		l.Cobs = append(l.Cobs, c.Body)
	}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(l); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cobjson", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1<<17)
		for b.Loop() {
			buf, _ = l.appendJSON(buf[:0])
		}
	})
}
