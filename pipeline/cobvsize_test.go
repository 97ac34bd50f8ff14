package pipeline

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestCobvSizeFields: cobvSize counts the fields of these types, no more
// and no fewer: a field added to one of them fails here until cobvSize
// counts it (and this list names it).
func TestCobvSizeFields(t *testing.T) {
	want := map[reflect.Type][]string{
		reflect.TypeFor[CobvRequest]():  {"calendario", "txid,omitempty", "devedor", "valor", "chave", "solicitacaoPagador,omitempty"},
		reflect.TypeFor[Calendario]():   {"dataDeVencimento", "validadeAposVencimento"},
		reflect.TypeFor[Devedor]():      {"cpf,omitempty", "cnpj,omitempty", "nome", "email,omitempty", "logradouro,omitempty", "cidade,omitempty", "uf,omitempty", "cep,omitempty"},
		reflect.TypeFor[CobvValor]():    {"original", "multa,omitempty", "juros,omitempty", "abatimento,omitempty", "desconto,omitempty"},
		reflect.TypeFor[Modalidade]():   {"modalidade", "valorPerc"},
		reflect.TypeFor[CobvDesconto](): {"modalidade", "valorPerc,omitempty", "descontoDataFixa,omitempty"},
		reflect.TypeFor[DataValor]():    {"data", "valorPerc"},
	}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] {
			return
		}
		seen[ty] = true
		var tags []string
		for f := range ty.Fields() {
			tags = append(tags, f.Tag.Get("json"))
			walk(f.Type)
		}
		if w, ok := want[ty]; !ok || !slices.Equal(tags, w) {
			t.Errorf("%s has the fields %q; cobvSize counts %q", ty, tags, w)
		}
	}
	walk(reflect.TypeFor[CobvRequest]())
	if len(seen) != len(want) {
		t.Errorf("types %v, cobvSize knows %d", seen, len(want))
	}
}

// fillRandom sets every field of v (a pointer) at random: strings from
// parts (plain, accented, escaped by encoding/json), numbers of any sign,
// pointers and lists present or not.
func fillRandom(rnd *rand.Rand, v reflect.Value, parts []string) {
	switch v.Kind() {
	case reflect.Pointer:
		if rnd.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fillRandom(rnd, v.Elem(), parts)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fillRandom(rnd, v.Field(i), parts)
		}
	case reflect.Slice:
		n := rnd.IntN(4)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fillRandom(rnd, v.Index(i), parts)
		}
	case reflect.String:
		var sb strings.Builder
		for range rnd.IntN(4) {
			sb.WriteString(parts[rnd.IntN(len(parts))])
		}
		v.SetString(sb.String())
	case reflect.Int:
		v.SetInt(rnd.Int64N(2_000_001) - 1_000_000)
	default:
		panic("fillRandom: " + v.Kind().String())
	}
}

var sizeParts = []string{"", "a", "150.00", "2027-01-15", "João Conceição", "Zé", "ç", "日本", "x y", "0", "-",
	"<", ">", "&", `"`, `\`, "\n", "\t", "\x00", "\x7f", "\u2028", "\u2029", "\xff", "\xe2\x80", "é\xc3"}

// TestCobvSize: on random requests, cobvSize gives json.Marshal's size
// whenever it says ok, and says ok for the plain ones. 4,000 requests:
// every block of cobvsize.go is reached at least 2,000 times (the 20,000
// it had reached no block more); FuzzCobvSize goes further.
func TestCobvSize(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 13))
	plain := 0
	for i := range 4000 {
		var c CobvRequest
		parts := sizeParts
		if i%2 == 0 {
			parts = sizeParts[:10] // nothing encoding/json escapes
		}
		fillRandom(rnd, reflect.ValueOf(&c).Elem(), parts)
		b, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		n, ok := cobvSize(&c)
		if ok && n != len(b) {
			t.Fatalf("cobvSize %d, json.Marshal %d bytes: %s", n, len(b), b)
		}
		if i%2 == 0 && !ok {
			t.Fatalf("a plain request not sized: %s", b)
		}
		if ok {
			plain++
		}
		want := len(b)
		if c.Txid == "" {
			want += len(`,"txid":""`) + 35
		}
		if got := CobvBytes(&c); got != want {
			t.Fatalf("CobvBytes %d, want %d: %s", got, want, b)
		}
	}
	if plain < 2000 {
		t.Fatalf("only %d of 4000 sized by cobvSize", plain)
	}
}

// TestAppendCobvJSON: on random requests, AppendCobvJSON writes
// json.Marshal's bytes after what dst held whenever it says ok, says ok
// for the plain ones, and leaves dst as it was otherwise. 4,000 requests,
// as TestCobvSize.
func TestAppendCobvJSON(t *testing.T) {
	rnd := rand.New(rand.NewPCG(8, 21))
	for i := range 4000 {
		var c CobvRequest
		parts := sizeParts
		if i%2 == 0 {
			parts = sizeParts[:10]
		}
		fillRandom(rnd, reflect.ValueOf(&c).Elem(), parts)
		want, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := AppendCobvJSON([]byte(`{"cobv":`), &c)
		switch {
		case ok && string(got) != `{"cobv":`+string(want):
			t.Fatalf("AppendCobvJSON\n%s\njson.Marshal\n%s", got, want)
		case !ok && string(got) != `{"cobv":`:
			t.Fatalf("not ok, dst became %s", got)
		case i%2 == 0 && !ok:
			t.Fatalf("a plain request not written: %s", want)
		}
		if n, sok := cobvSize(&c); sok != ok || ok && n != len(want) {
			t.Fatalf("cobvSize %d %v, AppendCobvJSON %v, %d bytes", n, sok, ok, len(want))
		}
	}
}

// FuzzCobvSize: whatever the strings, cobvSize agrees with json.Marshal
// or leaves the request to the encoder.
func FuzzCobvSize(f *testing.F) {
	f.Add("João", "2027-01-15", "<a&b>", int64(30), uint64(1))
	f.Add("", "", "\u2028", int64(-1), uint64(2))
	f.Fuzz(func(t *testing.T, s1, s2, s3 string, num int64, seed uint64) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		var c CobvRequest
		fillRandom(rnd, reflect.ValueOf(&c).Elem(), []string{s1, s2, s3, "a", ""})
		c.Calendario.ValidadeAposVencimento = int(num)
		b, _ := json.Marshal(&c)
		if n, ok := cobvSize(&c); ok && n != len(b) {
			t.Fatalf("cobvSize %d, json.Marshal %d bytes: %s", n, len(b), b)
		}
		if w, ok := AppendCobvJSON(nil, &c); ok && string(w) != string(b) {
			t.Fatalf("AppendCobvJSON\n%s\njson.Marshal\n%s", w, b)
		}
	})
}

// BenchmarkCobvBytes sizes a cobv request of a plain row: counted
// (cobvSize) and encoded (what CobvBytes did for every row before); and
// writes it: AppendCobvJSON and json.Marshal (a run's seed before).
//
//	go test -run '^$' -bench CobvBytes ./pipeline/
func BenchmarkCobvBytes(b *testing.B) {
	c := &CobvRequest{Calendario: Calendario{DataDeVencimento: "2027-01-15", ValidadeAposVencimento: 30},
		Devedor: Devedor{CPF: "52998224725", Nome: "João da Conceição Silva", Email: "joao@example.com"},
		Valor:   CobvValor{Original: "150.00", Multa: &Modalidade{Modalidade: 2, ValorPerc: "2.00"}},
		Chave:   "financeiro@example.com", SolicitacaoPagador: "Associado K0001"}
	b.Run("counted", func(b *testing.B) {
		for b.Loop() {
			CobvBytes(c)
		}
	})
	b.Run("encoded", func(b *testing.B) {
		for b.Loop() {
			e := sizers.Get().(*jsonSizer)
			e.n = 0
			e.enc.Encode(c)
			sizers.Put(e)
		}
	})
	buf := make([]byte, 0, 1024)
	b.Run("AppendCobvJSON", func(b *testing.B) {
		for b.Loop() {
			AppendCobvJSON(buf[:0], c)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(c)
		}
	})
}
