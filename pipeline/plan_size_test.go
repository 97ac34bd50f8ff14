package pipeline

import (
	"encoding/json"
	"testing"
)

// TestCobvBytes: the size counted is json.Marshal's (what the batch body
// carries), plus room for a derived txid when the request has none.
func TestCobvBytes(t *testing.T) {
	reqs := []CobvRequest{
		{Txid: "abcdefghijklmnopqrstuvwxyz0123456", Chave: "financeiro@example.com", SolicitacaoPagador: "Mensalidade <março> & taxas \u2028 \"aspas\"",
			Devedor: Devedor{Nome: "José da Silva", CPF: "52998224725", Logradouro: "Rua São Bento, 1"}, Valor: CobvValor{Original: "1234.56"}},
		{Chave: "+5511987654321", Devedor: Devedor{Nome: "Empresa", CNPJ: "12ABC34501DE35"}, Valor: CobvValor{Original: "0.01", Multa: &Modalidade{Modalidade: 2, ValorPerc: "2.00"}}},
	}
	for i := range reqs {
		c := &reqs[i]
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		want := len(b)
		if c.Txid == "" {
			want += len(`,"txid":""`) + 35
		}
		for k := 0; k < 3; k++ { // pooled sizers start from zero
			if got := CobvBytes(c); got != want {
				t.Errorf("request %d: CobvBytes = %d, want %d", i, got, want)
			}
		}
	}
}
