package pix_test

import (
	"fmt"
	"testing"

	"remessa/api"
	"remessa/sandbox"
)

// BenchmarkLote1000 measures a 1000-item batch from PUT until every item
// is final, with a file-backed store (the time includes the polling GETs).
func BenchmarkLote1000(b *testing.B) {
	e := start(b, sandbox.Config{DataDir: b.TempDir()})
	n := 0
	b.ResetTimer()
	for b.Loop() {
		n++
		id := fmt.Sprint(n)
		req := api.LoteCobVRequest{Cobsv: items(e.key, fmt.Sprintf("b%dx", n), 1000)}
		if err := e.c.PutLoteCobV(ctx, id, req); err != nil {
			b.Fatal(err)
		}
		if l := waitLote(b, e.c, id); l.Cobsv[999].Status != "CRIADA" {
			b.Fatalf("%+v", l.Cobsv[999])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*1000), "ns/item")
}

// BenchmarkListCobV1000 measures GET /v2/cobv pages of 1000 out of 5000
// charges.
func BenchmarkListCobV1000(b *testing.B) {
	e := start(b, sandbox.Config{DataDir: b.TempDir()})
	for i := 1; i <= 5; i++ {
		id := fmt.Sprint(i)
		if err := e.c.PutLoteCobV(ctx, id, api.LoteCobVRequest{Cobsv: items(e.key, fmt.Sprintf("l%dx", i), 1000)}); err != nil {
			b.Fatal(err)
		}
		waitLote(b, e.c, id)
	}
	w := window()
	w.ItensPorPagina = 1000
	page := 0
	b.ResetTimer()
	for b.Loop() {
		w.PaginaAtual = page % 5
		page++
		p, err := e.c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: w}})
		if err != nil || len(p.Cobs) != 1000 || p.Parametros.Paginacao.QuantidadeTotalDeItens != 5000 {
			b.Fatalf("%v %+v", err, p.Parametros)
		}
	}
}
