package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// codesPage is a page of 1,000 charges as the sandbox answers them.
func codesPage() []byte {
	var p CobVPage
	p.Parametros.Inicio, p.Parametros.Fim = "2026-11-25T00:00:00Z", "2026-11-28T00:00:00Z"
	p.Parametros.Paginacao.QuantidadeDePaginas, p.Parametros.Paginacao.ItensPorPagina = 1, 1000
	for i := range 1000 {
		exp := 30
		c := Cob{Txid: fmt.Sprintf("rmab12cd34ef56ab78cd90ef12ab34%04d", i), Status: "ATIVA", Chave: "079a0fdd-039a-4e9e-a827-7e1a420a3922",
			Location: fmt.Sprintf("127.0.0.1:8080/v2/cobv/%032x", i), SolicitacaoPagador: "Mensalidade escolar de novembro <&>",
			PixCopiaECola: fmt.Sprintf("00020101021226830014BR.GOV.BCB.PIX2561127.0.0.1:8080/qr/v2/cobv/%032x5204000053039865802BR5913Escola Modelo6009SAO PAULO62070503***6304ABCD", i)}
		c.Calendario.Criacao = "2026-11-26T09:00:00Z"
		c.Calendario.DataDeVencimento = "2026-12-10"
		c.Calendario.ValidadeAposVencimento = &exp
		c.Loc = &PixLoc{ID: int64(i), Location: c.Location, TipoCob: "cobv", Criacao: "2026-11-26T09:00:00Z"}
		c.Devedor = &PixPessoa{CPF: "12345678909", Nome: "Fulano de Tal da Silva"}
		c.Valor.Original = "123.45"
		c.InfoAdicionais = []PixInfoAdicional{{Nome: "Matrícula", Valor: "ação"}}
		p.Cobs = append(p.Cobs, c)
	}
	b, _ := json.Marshal(p)
	return b
}

// checkCodes fails when decodeCobVCodes reads b otherwise than
// json.Unmarshal, or reads what json.Unmarshal refuses; it reports
// whether the fast path read it.
func checkCodes(t *testing.T, b []byte) bool {
	t.Helper()
	var want CobVCodePage
	werr := json.Unmarshal(b, &want)
	var got CobVCodePage
	if err := decodeCobVCodes(b, &got); err != nil {
		return false
	}
	if werr != nil {
		t.Fatalf("%q: read, but encoding/json refuses it: %v", b, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
	}
	return true
}

func TestDecodeCobVCodes(t *testing.T) {
	if !checkCodes(t, codesPage()) {
		t.Fatal("a sandbox page was not read in one pass")
	}
	fast := []string{
		`{}`,
		` {"cobs":[]} `,
		`{"parametros":{"paginacao":{"quantidadeDePaginas":3}},"cobs":[{"txid":"a","loc":{"location":"x","id":-1.5e+3}},{}],"x":[true,false,null,{"y":[]}]}`,
		`{"cobs":[{"calendario":{"dataDeVencimento":"2026-01-01","n":0},"calendario":{"criacao":"z"},"txid":"a\"b\\u00e9\u00e9\/"}]}`,
		`{"cobs":[{"loc":{"location":"a"},"loc":{"id":2}}]}`,
		`{"cobs":[{"pixCopiaECola":"` + "\xff\xfe" + `","txid":"1","txid":"2"}]}`,
		`{"parametros":null,"cobs":[{"x":"\ud800"}]}`,
		`{"parametros":{"paginacao":{"itensPorPagina":1000000000}},"cobs":[{"txid":"a"}]}`,
		`{"parametros":{"paginacao":{"itensPorPagina":-5}},"cobs":[{"txid":"a"},{"txid":"b"}]}`,
	}
	for _, s := range fast {
		if !checkCodes(t, []byte(s)) {
			t.Errorf("%s: not read in one pass", s)
		}
	}
	// The list is made as long as the page says, but not longer than its text could hold.
	var p CobVCodePage
	if err := decodeCobVCodes([]byte(`{"parametros":{"paginacao":{"itensPorPagina":1000000000}},"cobs":[{"txid":"a"}]}`), &p); err != nil || cap(p.Cobs) > 2 {
		t.Errorf("a page saying it holds 10⁹ items: %v, room for %d", err, cap(p.Cobs))
	}
	slow := []string{
		`{"cobs":[{"TXID":"a"}]}`,
		`{"cobs":[{"t\u0078id":"a"}]}`,
		`{"cobs":[{"txıd":"a"}]}`,
		`{"cobs":[{"loc":null}]}`,
		`{"cobs":[{"txid":1}]}`,
		`{"cobs":null}`,
		`{"cobs":[],"cobs":[]}`,
		`{"cobs":[{"x":01}]}`,
		`{"cobs":[{"x":1.}]}`,
		`{"cobs":[{"x":"a` + "\n" + `"}]}`,
		`{"cobs":[{"x":"\x"}]}`,
		`{"cobs":[{"x":tru}]}`,
		`{"cobs":[{"x":1},]}`,
		`{"cobs":[{"x":1}]} x`,
		`{"cobs":[{"x":1}]`,
		`[]`,
		`null`,
	}
	for _, s := range slow {
		if checkCodes(t, []byte(s)) {
			t.Errorf("%s: read in one pass, want encoding/json", s)
		}
	}
}

func FuzzDecodeCobVCodes(f *testing.F) {
	f.Add([]byte(`{"parametros":{"paginacao":{"quantidadeDePaginas":3}},"cobs":[{"txid":"a","loc":{"location":"x"},"calendario":{"dataDeVencimento":"d"}}]}`))
	f.Add([]byte(`{"cobs":[{"pixCopiaECola":"\u00e9\n","location":"l","x":[1,-0.5E-2,"s",{}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) { checkCodes(t, b) })
}

func BenchmarkDecodeCobVCodes(b *testing.B) {
	body := codesPage()
	b.SetBytes(int64(len(body)))
	b.Run("one-pass", func(b *testing.B) {
		for b.Loop() {
			var p CobVCodePage
			if err := decodeCobVCodes(body, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var p CobVCodePage
			if err := json.Unmarshal(body, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
