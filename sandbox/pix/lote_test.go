package pix_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/sandbox"
)

func items(key, prefix string, n int) []api.LoteCobVItem {
	out := make([]api.LoteCobVItem, n)
	for i := range out {
		out[i] = api.LoteCobVItem{Txid: txid(prefix, i), CobVRequest: cobvReq(key, "52998224725", fmt.Sprintf("%d.%02d", 10+i, i%100))}
	}
	return out
}

// TestLote1000 is the acceptance test: 1000 items, some invalid; exactly
// those are NEGADA with a problema naming the property, the rest CRIADA
// and listed by GET /v2/cobv?loteCobVId=.
func TestLote1000(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	its := items(e.key, "big", 1000)
	bad := map[int]string{
		3:   "cobsv[3].devedor.cpf",
		10:  "cobsv[10].valor.original",
		500: "cobsv[500].chave",
		777: "cobsv[777].calendario.dataDeVencimento",
		999: "cobsv[999].valor.juros.modalidade",
	}
	its[3].Devedor.CPF = "52998224724"
	its[10].Valor.Original = "0.00"
	its[500].Chave = "naoeminha@example.com"
	its[777].Calendario.DataDeVencimento = "2030-13-01"
	its[999].Valor.Juros = &api.PixModalidade{Modalidade: 9, ValorPerc: "1.00"}
	if err := c.PutLoteCobV(ctx, "1000", api.LoteCobVRequest{Descricao: "Mensalidades", Cobsv: its}); err != nil {
		t.Fatal(err)
	}
	l := waitLote(t, c, "1000")
	if l.ID != 1000 || l.Descricao != "Mensalidades" || len(l.Cobsv) != 1000 || l.Criacao == "" {
		t.Fatalf("lote head %+v", l.ID)
	}
	criadas := 0
	for i, it := range l.Cobsv {
		if it.Txid != its[i].Txid {
			t.Fatalf("item %d txid %s", i, it.Txid)
		}
		prop, isBad := bad[i]
		switch {
		case isBad:
			if it.Status != "NEGADA" || it.Problema == nil {
				t.Fatalf("item %d: %+v", i, it)
			}
			p := it.Problema
			if p.Type != "https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida" || p.Status != 400 || len(p.Violacoes) == 0 || p.Violacoes[0].Propriedade != prop || p.Violacoes[0].Razao == "" {
				t.Fatalf("item %d problema %+v, want %s", i, p, prop)
			}
		default:
			if it.Status != "CRIADA" || it.Problema != nil || it.Criacao == "" {
				t.Fatalf("item %d: %+v", i, it)
			}
			criadas++
		}
	}
	if criadas != 995 {
		t.Fatalf("criadas %d", criadas)
	}
	w := window()
	w.ItensPorPagina = 1000
	page, err := c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: w}, LoteCobVID: 1000})
	if err != nil || len(page.Cobs) != 995 || page.Parametros.Paginacao.QuantidadeTotalDeItens != 995 || page.Parametros.LoteCobVID == nil {
		t.Fatalf("ListCobV lote: %v %d %+v", err, len(page.Cobs), page.Parametros)
	}
	seen := map[string]bool{}
	for _, cb := range page.Cobs {
		seen[cb.Txid] = true
		if cb.Status != "ATIVA" || cb.PixCopiaECola == "" || cb.Loc == nil {
			t.Fatalf("listed %+v", cb)
		}
	}
	// Pages of the batch's charges: default 100 per page, the last one short.
	w.ItensPorPagina = 0
	dflt, err := c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: w}, LoteCobVID: 1000})
	if pg := dflt.Parametros.Paginacao; err != nil || len(dflt.Cobs) != 100 || pg.ItensPorPagina != 100 || pg.QuantidadeDePaginas != 10 || pg.PaginaAtual != 0 {
		t.Fatalf("default page: %v %d %+v", err, len(dflt.Cobs), dflt.Parametros)
	}
	w.PaginaAtual = 9
	last, err := c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: w}, LoteCobVID: 1000})
	if pg := last.Parametros.Paginacao; err != nil || len(last.Cobs) != 95 || pg.PaginaAtual != 9 || pg.QuantidadeTotalDeItens != 995 {
		t.Fatalf("last page: %v %d %+v", err, len(last.Cobs), last.Parametros)
	}
	for _, cb := range append(dflt.Cobs, last.Cobs...) {
		if !seen[cb.Txid] {
			t.Fatalf("paged %s not in the full page", cb.Txid)
		}
	}
	if dflt.Cobs[0].Txid != page.Cobs[0].Txid || last.Cobs[94].Txid != page.Cobs[994].Txid {
		t.Fatalf("pages out of order: %s %s", dflt.Cobs[0].Txid, last.Cobs[94].Txid)
	}
	for i := range bad {
		if seen[its[i].Txid] {
			t.Fatalf("denied %d listed", i)
		}
		_, err := c.GetCobV(ctx, its[i].Txid)
		wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	}
	cb, err := c.GetCobV(ctx, its[0].Txid)
	if err != nil || cb.Valor.Original != "10.00" {
		t.Fatalf("GetCobV of a batch item: %v %+v", err, cb)
	}
	other, err := c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: w}, LoteCobVID: 1})
	if err != nil || len(other.Cobs) != 0 {
		t.Fatalf("other lote filter: %v %+v", err, other.Parametros)
	}

	// A denied txid may be sent again in a NEW batch (bacen/pix-api #271).
	fixed := its[3]
	fixed.Devedor.CPF = "52998224725"
	if err := c.PutLoteCobV(ctx, "1001", api.LoteCobVRequest{Cobsv: []api.LoteCobVItem{fixed}}); err != nil {
		t.Fatalf("denied txid in a new batch: %v", err)
	}
	if l := waitLote(t, c, "1001"); l.Cobsv[0].Status != "CRIADA" {
		t.Fatalf("resent: %+v", l.Cobsv[0])
	}
	// ... or created directly with PUT /v2/cobv.
	if _, err := c.PutCobV(ctx, its[10].Txid, cobvReq(e.key, "52998224725", "5.00")); err != nil {
		t.Fatalf("PUT cobv of a denied txid: %v", err)
	}
	lp, err := c.ListLoteCobV(ctx, api.ListLoteCobVParams{ListParams: window()})
	if err != nil || len(lp.Lotes) != 2 || lp.Lotes[0].ID != 1000 || lp.Lotes[1].ID != 1001 {
		t.Fatalf("ListLoteCobV: %v %+v", err, lp.Parametros)
	}
	lp, err = c.ListLoteCobV(ctx, api.ListLoteCobVParams{ListParams: window(), Status: "NEGADA"})
	if err != nil || len(lp.Lotes) != 1 || lp.Lotes[0].ID != 1000 || lp.Parametros.Status != "NEGADA" {
		t.Fatalf("ListLoteCobV NEGADA: %v %+v", err, lp.Parametros)
	}
	lp, err = c.ListLoteCobV(ctx, api.ListLoteCobVParams{ListParams: window(), CPF: "52998224724"})
	if err != nil || len(lp.Lotes) != 1 || lp.Lotes[0].ID != 1000 {
		t.Fatalf("ListLoteCobV cpf: %v %+v", err, lp.Parametros)
	}
	lp, err = c.ListLoteCobV(ctx, api.ListLoteCobVParams{ListParams: window(), CNPJ: "11222333000181"})
	if err != nil || len(lp.Lotes) != 0 {
		t.Fatalf("ListLoteCobV cnpj: %v %+v", err, lp.Parametros)
	}
	_, err = c.ListLoteCobV(ctx, api.ListLoteCobVParams{ListParams: window(), Status: "ATIVA"})
	wantProblem(t, err, http.StatusBadRequest, "RequisicaoInvalida", "status")
	_, err = c.ListLoteCobV(ctx, api.ListLoteCobVParams{})
	wantProblem(t, err, http.StatusBadRequest, "RequisicaoInvalida", "inicio")
}

func TestLoteRules(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	put := func(id string, its []api.LoteCobVItem) error {
		return c.PutLoteCobV(ctx, id, api.LoteCobVRequest{Cobsv: its})
	}
	// 0 and 1001 items.
	wantProblem(t, put("1", nil), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv")
	wantProblem(t, put("1", []api.LoteCobVItem{}), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv")
	wantProblem(t, put("1", items(e.key, "over", 1001)), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv")
	// Bad and repeated txids.
	its := items(e.key, "rule", 3)
	its[1].Txid = "curto"
	wantProblem(t, put("1", its), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv[1].txid")
	its = items(e.key, "rule", 3)
	its[2].Txid = its[0].Txid
	wantProblem(t, put("1", its), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv[2].txid")
	// Bad id, unknown property at the top, broken JSON.
	wantProblem(t, put("abc", items(e.key, "rule", 1)), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "id")
	_, err := c.Do(ctx, api.Pix, http.MethodPut, "/v2/lotecobv/1", []byte(`{"cobsv":[],"x":1}`))
	wantProblem(t, err, http.StatusBadRequest, "LoteCobVOperacaoInvalida", "x")
	_, err = c.Do(ctx, api.Pix, http.MethodPut, "/v2/lotecobv/1", []byte(`{"cobsv":[{"txid":`))
	wantProblem(t, err, http.StatusBadRequest, "LoteCobVOperacaoInvalida", "")
	// Unknown batch.
	_, err = c.GetLoteCobV(ctx, "404")
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	err = c.PatchLoteCobV(ctx, "404", api.LoteCobVPatch{Cobsv: []api.LoteCobVPatchItem{{Txid: txid("rule", 0)}}})
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")

	// A batch of 3.
	its = items(e.key, "rule", 3)
	if err := put("1", its); err != nil {
		t.Fatal(err)
	}
	waitLote(t, c, "1")
	// Re-PUT must carry exactly the original txids.
	wantProblem(t, put("1", its[:2]), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv")
	other := append(append([]api.LoteCobVItem(nil), its[:2]...), items(e.key, "novo", 1)...)
	wantProblem(t, put("1", other), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv[2].txid")
	// Same txids (any order) with a new value: the charges are revised.
	re := []api.LoteCobVItem{its[2], its[0], its[1]}
	re[1].Valor.Original = "77.77"
	if err := put("1", re); err != nil {
		t.Fatalf("re-PUT: %v", err)
	}
	waitLote(t, c, "1")
	cb, err := c.GetCobV(ctx, its[0].Txid)
	if err != nil || cb.Valor.Original != "77.77" || cb.Revisao != 1 {
		t.Fatalf("after re-PUT: %v %+v", err, cb)
	}
	// PATCH: fewer items fine, new txid not.
	err = c.PatchLoteCobV(ctx, "1", api.LoteCobVPatch{Cobsv: []api.LoteCobVPatchItem{{Txid: txid("novo", 0), CobPatch: api.CobPatch{Chave: e.key}}}})
	wantProblem(t, err, http.StatusBadRequest, "CobVOperacaoInvalida", "cobsv[0].txid")
	err = c.PatchLoteCobV(ctx, "1", api.LoteCobVPatch{Cobsv: []api.LoteCobVPatchItem{{Txid: its[1].Txid, CobPatch: api.CobPatch{Valor: &api.PixValor{Original: "1.5"}}}}})
	wantProblem(t, err, http.StatusBadRequest, "CobVOperacaoInvalida", "cobsv[0].valor.original")
	if err := c.PatchLoteCobV(ctx, "1", api.LoteCobVPatch{Cobsv: []api.LoteCobVPatchItem{{Txid: its[1].Txid, CobPatch: api.CobPatch{Valor: &api.PixValor{Original: "55.00"}}}}}); err != nil {
		t.Fatalf("PATCH: %v", err)
	}
	waitLote(t, c, "1")
	cb, err = c.GetCobV(ctx, its[1].Txid)
	if err != nil || cb.Valor.Original != "55.00" || cb.Revisao != 2 || cb.Devedor.CPF != "52998224725" {
		t.Fatalf("after PATCH: %v %+v", err, cb)
	}
	// A PATCH that breaks a rule denies that item only; the charge stays.
	if err := c.PatchLoteCobV(ctx, "1", api.LoteCobVPatch{Cobsv: []api.LoteCobVPatchItem{{Txid: its[2].Txid, CobPatch: api.CobPatch{Devedor: &api.PixPessoa{CPF: "11111111111"}}}}}); err != nil {
		t.Fatalf("PATCH: %v", err)
	}
	l := waitLote(t, c, "1")
	var denied *api.LoteCobVStatus
	for i := range l.Cobsv {
		if l.Cobsv[i].Txid == its[2].Txid {
			denied = &l.Cobsv[i]
		}
	}
	if denied == nil || denied.Status != "NEGADA" || denied.Problema.Violacoes[0].Propriedade != "cobsv[2].devedor.cpf" {
		t.Fatalf("denied patch: %+v", denied)
	}

	// Batch rule 2: a txid created by PUT /v2/cobv cannot join a batch.
	direct := txid("direct", 1)
	if _, err := c.PutCobV(ctx, direct, cobvReq(e.key, "52998224725", "1.00")); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, put("2", []api.LoteCobVItem{{Txid: direct, CobVRequest: cobvReq(e.key, "52998224725", "1.00")}}), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv[0].txid")
	// Batch rule 3: a batch's charge cannot join another batch.
	wantProblem(t, put("2", []api.LoteCobVItem{its[0]}), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv[0].txid")
	// ... and PUT /v2/cobv cannot take it either.
	_, err = c.PutCobV(ctx, its[0].Txid, cobvReq(e.key, "52998224725", "1.00"))
	wantProblem(t, err, http.StatusConflict, "CobVOperacaoInvalida", "txid")
	if _, err := c.GetLoteCobV(ctx, "2"); err == nil {
		t.Fatal("refused batch 2 exists")
	}
}

// TestLoteProcessingInvisible: while items are EM_PROCESSAMENTO they are
// not charges; a restart finishes the batch (work persisted as
// processing survives a stop).
func TestLoteProcessingInvisible(t *testing.T) {
	dir := t.TempDir()
	e := start(t, sandbox.Config{DataDir: dir, BatchDelay: time.Hour, ClientID: "Client_Id_lote", ClientSecret: "Client_Secret_lote"})
	its := items(e.key, "slow", 5)
	if err := e.c.PutLoteCobV(ctx, "9", api.LoteCobVRequest{Cobsv: its}); err != nil {
		t.Fatal(err)
	}
	l, err := e.c.GetLoteCobV(ctx, "9")
	if err != nil || len(l.Cobsv) != 5 || l.Done() {
		t.Fatalf("GetLoteCobV: %v %+v", err, l)
	}
	for _, it := range l.Cobsv {
		if it.Status != "EM_PROCESSAMENTO" || it.Criacao != "" {
			t.Fatalf("item %+v", it)
		}
	}
	_, err = e.c.GetCobV(ctx, its[0].Txid)
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	page, err := e.c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: window()}, LoteCobVID: 9})
	if err != nil || len(page.Cobs) != 0 {
		t.Fatalf("list while processing: %v %+v", err, page)
	}
	// A txid processing in one batch cannot join another or be PUT directly.
	wantProblem(t, e.c.PutLoteCobV(ctx, "10", api.LoteCobVRequest{Cobsv: its[:1]}), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv[0].txid")
	_, err = e.c.PutCobV(ctx, its[0].Txid, its[0].CobVRequest)
	wantProblem(t, err, http.StatusConflict, "CobVOperacaoInvalida", "txid")
	if err := e.rn.Close(); err != nil {
		t.Fatal(err)
	}
	// Restart without the delay: the worker resumes the batch.
	e2 := start(t, sandbox.Config{DataDir: dir, ClientID: "Client_Id_lote", ClientSecret: "Client_Secret_lote"})
	c2 := e2.c
	l = waitLote(t, c2, "9")
	for _, it := range l.Cobsv {
		if it.Status != "CRIADA" {
			t.Fatalf("after restart %+v", it)
		}
	}
	page, err = c2.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: window()}, LoteCobVID: 9})
	if err != nil || len(page.Cobs) != 5 {
		t.Fatalf("list after restart: %v %+v", err, page)
	}
	if !strings.HasPrefix(page.Cobs[0].Location, strings.TrimPrefix(e.rn.PixURL, "http://")) {
		t.Logf("location keeps the host of the PUT: %s", page.Cobs[0].Location)
	}
}

// TestLoteResentElsewhere: a txid denied in batch A and created in batch
// B stays B's when A is sent again (A's item is denied).
func TestLoteResentElsewhere(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	its := items(e.key, "again", 2)
	its[1].Devedor.CPF = "00000000000"
	if err := c.PutLoteCobV(ctx, "1", api.LoteCobVRequest{Cobsv: its}); err != nil {
		t.Fatal(err)
	}
	if l := waitLote(t, c, "1"); l.Cobsv[1].Status != "NEGADA" {
		t.Fatalf("%+v", l.Cobsv[1])
	}
	fixed := its[1]
	fixed.Devedor.CPF = "52998224725"
	if err := c.PutLoteCobV(ctx, "2", api.LoteCobVRequest{Cobsv: []api.LoteCobVItem{fixed}}); err != nil {
		t.Fatal(err)
	}
	waitLote(t, c, "2")
	// Batch 1 again with the same txids: item 1 now belongs to batch 2.
	if err := c.PutLoteCobV(ctx, "1", api.LoteCobVRequest{Cobsv: []api.LoteCobVItem{its[0], fixed}}); err != nil {
		t.Fatal(err)
	}
	l := waitLote(t, c, "1")
	if l.Cobsv[0].Status != "CRIADA" || l.Cobsv[1].Status != "NEGADA" || l.Cobsv[1].Problema.Violacoes[0].Propriedade != "cobsv[1].txid" {
		t.Fatalf("batch 1 again: %+v %+v", l.Cobsv[0], l.Cobsv[1])
	}
	w := window()
	p2, err := c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: w}, LoteCobVID: 2})
	if err != nil || len(p2.Cobs) != 1 || p2.Cobs[0].Txid != fixed.Txid {
		t.Fatalf("batch 2 list: %v %+v", err, p2)
	}
	// Batch 2 can still be re-sent.
	if err := c.PutLoteCobV(ctx, "2", api.LoteCobVRequest{Cobsv: []api.LoteCobVItem{fixed}}); err != nil {
		t.Fatal(err)
	}
	if l := waitLote(t, c, "2"); l.Cobsv[0].Status != "CRIADA" {
		t.Fatalf("batch 2 again: %+v", l.Cobsv[0])
	}
}

// TestLoteDoneByPut: without a batch delay a new batch is final when its
// PUT answers (no polling needed), and the same new batch PUT many times
// at once (the first commits; the others, built as new ones, find it in
// their transaction and revise it through the worker) ends with each
// charge created once, in that batch, every item CRIADA.
func TestLoteDoneByPut(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	its := items(e.key, "done", 20)
	its[7].Devedor.CPF = "52998224724"
	if err := c.PutLoteCobV(ctx, "1", api.LoteCobVRequest{Cobsv: its}); err != nil {
		t.Fatal(err)
	}
	l, err := c.GetLoteCobV(ctx, "1")
	if err != nil || !l.Done() || len(l.Cobsv) != 20 || l.Cobsv[7].Status != "NEGADA" || l.Cobsv[0].Status != "CRIADA" {
		t.Fatalf("right after PUT: %v %+v", err, l)
	}
	if cb, err := c.GetCobV(ctx, its[0].Txid); err != nil || cb.Status != "ATIVA" || cb.Loc == nil || cb.Loc.ID <= 0 {
		t.Fatalf("charge right after PUT: %v %+v", err, cb)
	}

	same := items(e.key, "race", 300) // (enough that PUTs overlap: each checks its items before the lock)
	errs := make(chan error, 6)
	for range 6 {
		go func() { errs <- c.PutLoteCobV(ctx, "2", api.LoteCobVRequest{Cobsv: same}) }()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent PUT of one new batch: %v", err)
		}
	}
	l = waitLote(t, c, "2")
	locs := map[int64]bool{}
	for i, it := range l.Cobsv {
		if it.Status != "CRIADA" || it.Txid != same[i].Txid {
			t.Fatalf("item %d: %+v", i, it)
		}
		cb, err := c.GetCobV(ctx, it.Txid)
		if err != nil || cb.Loc == nil || locs[cb.Loc.ID] {
			t.Fatalf("charge %d: %v %+v", i, err, cb)
		}
		locs[cb.Loc.ID] = true
	}
	w := window()
	w.ItensPorPagina = 1000
	page, err := c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: w}, LoteCobVID: 2})
	if err != nil || len(page.Cobs) != 300 {
		t.Fatalf("batch 2 lists %v %d charges", err, len(page.Cobs))
	}
}
