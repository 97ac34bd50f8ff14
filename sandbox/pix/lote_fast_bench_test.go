package pix

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"remessa/sandbox/clock"
	"remessa/sandbox/store"
)

// scaleBody is a PUT /v2/lotecobv body of n items shaped as the
// pipeline's cobv job sends them (pipeline.CobvRequest: calendario, txid,
// devedor with address, valor with multa, chave, solicitacaoPagador).
func scaleBody(prefix string, n int) []byte {
	var b strings.Builder
	b.WriteString(`{"descricao":"escala","cobsv":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"calendario":{"dataDeVencimento":"2030-%02d-%02d","validadeAposVencimento":30},"txid":"%s%07d",`+
			`"devedor":{"cpf":"52998224725","nome":"Responsável Número %d da Silva","email":"pagador%d@exemplo.com.br","logradouro":"Rua das Flores, %d","cidade":"São Paulo","uf":"SP","cep":"01310100"},`+
			`"valor":{"original":"%d.%02d","multa":{"modalidade":2,"valorPerc":"2.00"}},"chave":"minha@example.com","solicitacaoPagador":"Mensalidade de junho, parcela %d"}`,
			1+i%12, 1+i%28, prefix, i, i, i, 1+i%2000, 100+i%900, i%100, 1+i%12)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkPutLotePrepare measures what PUT /v2/lotecobv/{id} does for a
// new batch of 1000 items outside the write lock (parseLoteHead,
// prepareFresh, buildCharges): the sandbox's CPU per cobv of issue 13's
// 1M run spent there.
func BenchmarkPutLotePrepare(b *testing.B) {
	st, err := store.Open(store.Memory)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m := &Module{st: st, clk: clock.Real{}, queued: map[task]bool{}, locOrderedFrom: 1} // locations of the ordered form, as a new sandbox's
	m.initCaches()
	ai := accountInfo{ID: "acc", Name: "Escola Sandbox Ltda", CNPJ: "12.345.678/0001-95", Keys: []string{"minha@example.com"}}
	body := scaleBody("abcdefghijklmnopqrstuvwxyz01", 1000)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		lb, e := parseLotePut(body)
		if e != nil {
			b.Fatal(e.p)
		}
		f, err := prepareFresh(ai, "1", "pix.example.com", lb, now)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.buildCharges(ctx, ai, f); err != nil || len(f.rows.docs) != 1000 {
			b.Fatal(err, len(f.rows.docs))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/item")
}
