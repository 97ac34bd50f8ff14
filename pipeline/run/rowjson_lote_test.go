package run

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"remessa/api"
	"remessa/internal/jsonscan"
	"remessa/internal/structfill"
)

// checkUnmarshalLote fails when unmarshalLote and json.Unmarshal disagree
// on b (the batch, or whether it is an error).
func checkUnmarshalLote(t *testing.T, b []byte) {
	t.Helper()
	var got, want api.LoteCobV
	gerr, werr := unmarshalLote(b, &got), json.Unmarshal(b, &want)
	if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v (%v)\nwant %+v (%v)", b, got, gerr, want, werr)
	}
}

// TestUnmarshalLote: unmarshalLote decodes what json.Marshal writes of
// any api.LoteCobV (every field set, an item's problem by reflection) as json.Unmarshal does, a batch without problems in its one pass;
// the service's own answers, and the same cut, changed a byte at a time
// and with other spellings, too.
func TestUnmarshalLote(t *testing.T) {
	// a field added to the batch or its items must be added here and to
	// readLote (this test fills those it knows)
	if a, b := reflect.TypeFor[api.LoteCobV]().NumField(), reflect.TypeFor[api.LoteCobVStatus]().NumField(); a != 4 || b != 4 {
		t.Fatalf("api.LoteCobV has %d fields, its items %d: readLote reads 4 and 4", a, b)
	}
	words := []string{"", "a", "EM_PROCESSAMENTO", "CRIADA", "NEGADA", `aspas "e" \barra`, "2026-11-26T12:00:00.123Z", "\u2028 \x01", "rm0123456789abcdefABCDEF0000001"}
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 4 {
		for range 200 {
			next := func() string { return words[rng.IntN(len(words))] }
			l := api.LoteCobV{ID: int64(len(next())) - 3, Descricao: next(), Criacao: next()}
			for range n {
				it := api.LoteCobVStatus{Criacao: next(), Txid: next(), Status: next()}
				if rng.IntN(4) == 0 {
					it.Problema = new(api.Problem)
					structfill.Fill(reflect.ValueOf(it.Problema).Elem(), n, next)
				}
				l.Cobsv = append(l.Cobsv, it)
			}
			b, err := json.Marshal(&l)
			if err != nil {
				t.Fatal(err)
			}
			checkUnmarshalLote(t, b)
			if n > 0 && !reflect.DeepEqual(unmarshalled(t, b), l) {
				t.Fatalf("%s: not the batch marshalled %+v", b, l)
			}
			hasProblem := false
			for _, it := range l.Cobsv {
				hasProblem = hasProblem || it.Problema != nil
			}
			var back api.LoteCobV
			s := jsonscan.NewShared(b)
			if err := readLote(&s, &back); n > 0 && !hasProblem && (err != nil || s.End() != nil) {
				t.Fatalf("not read in one pass (%v): %s", err, b)
			}
		}
	}
	// the service's answer: items in processing, created, denied (a dozen:
	// the mutations below land on its structure, not on more of the same
	// items)
	var sb strings.Builder
	sb.WriteString(`{"id":1234,"descricao":"Lote \"março\"","criacao":"2026-11-26T12:00:00Z","cobsv":[`)
	for i := range 12 {
		if i > 0 {
			sb.WriteString(",")
		}
		st := []string{"EM_PROCESSAMENTO", "CRIADA", "CRIADA"}[i%3]
		fmt.Fprintf(&sb, `{"criacao":"2026-11-26T12:00:0%dZ","txid":"rm%029d","status":%q}`, i%10, i, st)
		if i == 5 {
			sb.WriteString(`,{"txid":"x","status":"NEGADA","problema":{"type":"https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida","title":"t","status":400,"violacoes":[{"razao":"r","propriedade":"cobv.valor","valor":"0"}]}}`)
		}
	}
	sb.WriteString(`]}`)
	base := []byte(sb.String())
	checkUnmarshalLote(t, base)
	for range 3000 {
		b := append([]byte(nil), base...)
		switch p := rng.IntN(len(b)); rng.IntN(4) {
		case 0:
			b = b[:p]
		case 1:
			const bytes = `{}[]",:0a\ `
			b[p] = bytes[rng.IntN(len(bytes))]
		case 2:
			b = append(b[:p], b[p+1:]...)
		case 3:
			b = []byte(strings.Replace(string(b), []string{`"txid"`, `"status"`, `"cobsv"`, `"id"`}[rng.IntN(4)], []string{`"Txid"`, `"STATUS"`, `"outro"`, `"id":null,"x"`}[rng.IntN(4)], 1))
		}
		checkUnmarshalLote(t, b)
	}
	for _, s := range []string{`{}`, `{"cobsv":[]}`, `{"cobsv":null}`, `{"cobsv":[{"txid":"a"}],"cobsv":[{"status":"b"}]}`, `{"id":1.5}`, `{"id":"1"}`,
		`{"cobsv":[{"txid":null}]}`, `{"cobsv":[{"txid":"a","problema":null}]}`, ` {"id":1} `, `{"id":1}x`, `[]`, ``} {
		checkUnmarshalLote(t, []byte(s))
	}
}

func unmarshalled(t *testing.T, b []byte) api.LoteCobV {
	var l api.LoteCobV
	if err := unmarshalLote(b, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

func BenchmarkUnmarshalLote(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"id":1234,"descricao":"Lote 1","criacao":"2026-11-26T12:00:00Z","cobsv":[`)
	for i := range 1000 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"criacao":"2026-11-26T12:00:00.123Z","txid":"rmAbCdEfGhIjKlMnOpQrStUvWx%07d","status":"CRIADA"}`, i)
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	for _, c := range []struct {
		name string
		f    func([]byte, *api.LoteCobV) error
	}{{"scan", unmarshalLote}, {"json", func(b []byte, l *api.LoteCobV) error { return json.Unmarshal(b, l) }}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var l api.LoteCobV
				if err := c.f(body, &l); err != nil || len(l.Cobsv) != 1000 {
					b.Fatal(err)
				}
			}
		})
	}
}
