package pix_test

import (
	"net/http"
	"strings"
	"testing"

	"remessa/api"
	"remessa/rules"
	"remessa/sandbox"
)

func TestCobLifecycle(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	id := txid("cob", 1)
	cob, err := c.PutCob(ctx, id, api.CobRequest{
		Calendario:         &api.PixCalendario{Expiracao: intp(3600)},
		Devedor:            &api.PixPessoa{CPF: "52998224725", Nome: "Fulano"},
		Valor:              api.PixValor{Original: "123.45"},
		Chave:              e.key,
		SolicitacaoPagador: "Mensalidade",
		InfoAdicionais:     []api.PixInfoAdicional{{Nome: "Campo", Valor: "Valor"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cob.Txid != id || cob.Status != "ATIVA" || cob.Revisao != 0 || cob.Valor.Original != "123.45" || cob.Calendario.Criacao == "" {
		t.Fatalf("cob: %+v", cob)
	}
	if cob.Loc == nil || cob.Loc.TipoCob != "cob" || cob.Loc.ID <= 0 || cob.Loc.Location != cob.Location {
		t.Fatalf("loc: %+v location %q", cob.Loc, cob.Location)
	}
	host := strings.TrimPrefix(e.rn.PixURL, "http://")
	if !strings.HasPrefix(cob.Location, host+"/v2/cob/") || strings.Contains(cob.Location, "://") || len(cob.Location) > 77 {
		t.Fatalf("location %q (host %s)", cob.Location, host)
	}
	bc, err := rules.ParseBRCode(cob.PixCopiaECola)
	if err != nil {
		t.Fatalf("pixCopiaECola %q: %v", cob.PixCopiaECola, err)
	}
	if !bc.Dynamic || bc.URL != cob.Location || bc.MerchantName == "" || bc.MerchantCity == "" {
		t.Fatalf("BR Code %+v", bc)
	}
	// CRC: the last 4 characters are the CRC of everything before them.
	pc := cob.PixCopiaECola
	if rules.CRC16(pc[:len(pc)-4]) != pc[len(pc)-4:] {
		t.Fatalf("CRC of %q", pc)
	}
	if ts := cob.Calendario.Criacao; len(ts) != len("2006-01-02T15:04:05.000Z") || !strings.HasSuffix(ts, "Z") {
		t.Fatalf("criacao %q", ts)
	}

	got, err := c.GetCob(ctx, id)
	if err != nil || got.PixCopiaECola != cob.PixCopiaECola {
		t.Fatalf("GetCob: %v %+v", err, got)
	}

	// Duplicate txid: 409 in the Efí dialect.
	_, err = c.PutCob(ctx, id, api.CobRequest{Valor: api.PixValor{Original: "1.00"}, Chave: e.key})
	wantEfi(t, err, http.StatusConflict, "txid_duplicado")

	// PATCH: new value, revision 1.
	p, err := c.PatchCob(ctx, id, api.CobPatch{Valor: &api.PixValor{Original: "99.90"}})
	if err != nil || p.Revisao != 1 || p.Valor.Original != "99.90" || p.Devedor == nil || p.Devedor.CPF != "52998224725" {
		t.Fatalf("PatchCob: %v %+v", err, p)
	}
	_, err = c.PatchCob(ctx, id, api.CobPatch{Valor: &api.PixValor{Original: "9.9"}})
	wantEfi(t, err, http.StatusBadRequest, "valor_invalido")

	// POST: the service picks a valid txid.
	pc2, err := c.CreateCob(ctx, api.CobRequest{Valor: api.PixValor{Original: "0.01"}, Chave: e.key})
	if err != nil || !rules.ValidTxid(pc2.Txid) || pc2.Calendario.Expiracao == nil || *pc2.Calendario.Expiracao != 86400 {
		t.Fatalf("CreateCob: %v %+v", err, pc2)
	}

	// List.
	page, err := c.ListCob(ctx, api.ListCobParams{ListParams: window()})
	if err != nil || len(page.Cobs) != 2 || page.Parametros.Paginacao.QuantidadeTotalDeItens != 2 || page.Parametros.Paginacao.ItensPorPagina != 100 {
		t.Fatalf("ListCob: %v %+v", err, page)
	}
	w := window()
	w.ItensPorPagina, w.PaginaAtual = 1, 1
	page, err = c.ListCob(ctx, api.ListCobParams{ListParams: w})
	if err != nil || len(page.Cobs) != 1 || page.Parametros.Paginacao.QuantidadeDePaginas != 2 || page.Parametros.Paginacao.PaginaAtual != 1 {
		t.Fatalf("ListCob page 1: %v %+v", err, page.Parametros)
	}
	page, err = c.ListCob(ctx, api.ListCobParams{ListParams: window(), CPF: "52998224725"})
	if err != nil || len(page.Cobs) != 1 || page.Cobs[0].Txid != id {
		t.Fatalf("ListCob cpf: %v %+v", err, page)
	}
	_, err = c.ListCob(ctx, api.ListCobParams{})
	wantEfi(t, err, http.StatusBadRequest, "valor_invalido")
	bad := window()
	bad.Inicio, bad.Fim = bad.Fim, bad.Inicio
	err2 := func() error { _, err := c.ListCob(ctx, api.ListCobParams{ListParams: bad}); return err }()
	if e := wantEfi(t, err2, http.StatusBadRequest, "valor_invalido"); !strings.Contains(e.Mensagem, "fim") {
		t.Fatalf("fim<inicio message %q", e.Mensagem)
	}
	big := window()
	big.ItensPorPagina = 1001
	_, err = c.ListCob(ctx, api.ListCobParams{ListParams: big})
	wantEfi(t, err, http.StatusBadRequest, "valor_invalido")

	// Remove, then no more changes.
	r, err := c.PatchCob(ctx, id, api.CobPatch{Status: "REMOVIDA_PELO_USUARIO_RECEBEDOR"})
	if err != nil || r.Status != "REMOVIDA_PELO_USUARIO_RECEBEDOR" {
		t.Fatalf("remove: %v %+v", err, r)
	}
	_, err = c.PatchCob(ctx, id, api.CobPatch{Valor: &api.PixValor{Original: "1.00"}})
	wantEfi(t, err, http.StatusBadRequest, "cobranca_nao_ativa")
	_, err = c.PatchCob(ctx, id, api.CobPatch{Status: "CONCLUIDA"})
	wantEfi(t, err, http.StatusBadRequest, "valor_invalido")

	// Unknown txid.
	_, err = c.GetCob(ctx, txid("nope", 1))
	wantEfi(t, err, http.StatusNotFound, "cobranca_nao_encontrada")
	_, err = c.PatchCob(ctx, txid("nope", 1), api.CobPatch{Chave: e.key})
	wantEfi(t, err, http.StatusNotFound, "cobranca_nao_encontrada")
}

func TestCobValidation(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	ok := func() api.CobRequest { return api.CobRequest{Valor: api.PixValor{Original: "10.00"}, Chave: e.key} }
	cases := []struct {
		name  string
		txid  string
		req   func() api.CobRequest
		nome  string
		field string
	}{
		{"short txid", "abc", ok, "valor_invalido", "txid"},
		{"txid with dash", strings.Repeat("a", 25) + "-", ok, "valor_invalido", "txid"},
		{"txid 36", strings.Repeat("a", 36), ok, "valor_invalido", "txid"},
		{"zero", txid("v", 1), func() api.CobRequest { r := ok(); r.Valor.Original = "0.00"; return r }, "valor_invalido", "valor.original"},
		{"comma", txid("v", 2), func() api.CobRequest { r := ok(); r.Valor.Original = "10,00"; return r }, "valor_invalido", "valor.original"},
		{"11 digits", txid("v", 3), func() api.CobRequest { r := ok(); r.Valor.Original = "12345678901.00"; return r }, "valor_invalido", "valor.original"},
		{"missing valor", txid("v", 4), func() api.CobRequest { r := ok(); r.Valor.Original = ""; return r }, "valor_invalido", "valor.original"},
		{"foreign key", txid("v", 5), func() api.CobRequest { r := ok(); r.Chave = "outra@example.com"; return r }, "chave_invalida", "chave"},
		{"long key", txid("v", 6), func() api.CobRequest { r := ok(); r.Chave = strings.Repeat("a", 78); return r }, "chave_invalida", "chave"},
		{"solicitacao 141", txid("v", 7), func() api.CobRequest { r := ok(); r.SolicitacaoPagador = strings.Repeat("x", 141); return r }, "valor_invalido", "solicitacaoPagador"},
		{"bad cpf", txid("v", 8), func() api.CobRequest { r := ok(); r.Devedor = &api.PixPessoa{CPF: "52998224724", Nome: "X"}; return r }, "valor_invalido", "devedor.cpf"},
		{"cpf and cnpj", txid("v", 9), func() api.CobRequest {
			r := ok()
			r.Devedor = &api.PixPessoa{CPF: "52998224725", CNPJ: "11222333000181", Nome: "X"}
			return r
		}, "valor_invalido", "devedor"},
		{"devedor without nome", txid("v", 10), func() api.CobRequest { r := ok(); r.Devedor = &api.PixPessoa{CPF: "52998224725"}; return r }, "valor_invalido", "devedor.nome"},
		{"expiracao 0", txid("v", 11), func() api.CobRequest { r := ok(); r.Calendario = &api.PixCalendario{Expiracao: intp(0)}; return r }, "valor_invalido", "calendario.expiracao"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.PutCob(ctx, tc.txid, tc.req())
			ae := wantEfi(t, err, http.StatusBadRequest, tc.nome)
			if !strings.Contains(ae.Mensagem, tc.field) {
				t.Fatalf("mensagem %q does not name %s", ae.Mensagem, tc.field)
			}
		})
	}
	// Raw bodies: unknown property, wrong type, broken JSON. Never 500.
	for _, body := range []string{`{"valor":{"original":"1.00"},"chave":"` + e.key + `","extra":1}`, `{"valor":{"original":1},"chave":"x"}`, `{"valor":`, `[]`, `null`, ``} {
		_, err := c.Do(ctx, api.Pix, http.MethodPut, "/v2/cob/"+txid("raw", len(body)), []byte(body))
		ae := asAPI(t, err)
		if ae.Status != http.StatusBadRequest || ae.Nome == "" {
			t.Errorf("body %q: %d %q %q", body, ae.Status, ae.Nome, ae.Mensagem)
		}
	}
	// Nothing was created by the failures.
	page, err := c.ListCob(ctx, api.ListCobParams{ListParams: window()})
	if err != nil || len(page.Cobs) != 0 {
		t.Fatalf("list after failures: %v %+v", err, page)
	}
}

func TestCobV(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	id := txid("cobv", 1)
	req := cobvReq(e.key, "52998224725", "250.00")
	req.Devedor.Email = "fulano@example.com"
	req.Devedor.UF = "SP"
	req.Devedor.CEP = "01001000"
	req.Valor.Multa = &api.PixModalidade{Modalidade: 2, ValorPerc: "2.00"}
	req.Valor.Juros = &api.PixModalidade{Modalidade: 2, ValorPerc: "0.03"}
	req.Valor.Abatimento = &api.PixModalidade{Modalidade: 1, ValorPerc: "10.00"}
	req.Valor.Desconto = &api.PixDesconto{Modalidade: 1, DescontoDataFixa: []api.PixDataFixa{{Data: "2030-12-01", ValorPerc: "5.00"}, {Data: "2030-12-15", ValorPerc: "2.50"}}}
	cob, err := c.PutCobV(ctx, id, req)
	if err != nil {
		t.Fatal(err)
	}
	if cob.Status != "ATIVA" || cob.Loc == nil || cob.Loc.TipoCob != "cobv" || cob.Recebedor == nil || cob.Recebedor.Nome == "" || cob.Recebedor.CNPJ == "" {
		t.Fatalf("cobv %+v", cob)
	}
	if cob.Calendario.DataDeVencimento != "2030-12-31" || cob.Valor.Desconto == nil || len(cob.Valor.Desconto.DescontoDataFixa) != 2 || cob.Valor.Multa.ValorPerc != "2.00" {
		t.Fatalf("cobv fields %+v", cob)
	}
	if _, err := rules.ParseBRCode(cob.PixCopiaECola); err != nil || !strings.Contains(cob.Location, "/v2/cobv/") {
		t.Fatalf("BR Code %q: %v", cob.PixCopiaECola, err)
	}
	// Default validadeAposVencimento 30.
	r2 := cobvReq(e.key, "11144477735", "10.00")
	r2.Calendario.ValidadeAposVencimento = nil
	c2, err := c.PutCobV(ctx, txid("cobv", 2), r2)
	if err != nil || c2.Calendario.ValidadeAposVencimento == nil || *c2.Calendario.ValidadeAposVencimento != 30 {
		t.Fatalf("default validade: %v %+v", err, c2)
	}
	_, err = c.PutCobV(ctx, id, req)
	if e := wantProblem(t, err, http.StatusConflict, "CobVOperacaoInvalida", "txid"); e.Nome != "txid_duplicado" {
		t.Fatalf("409 nome %q", e.Nome)
	}

	// Violations, each naming its property.
	type mod func(r *api.CobVRequest)
	cases := []struct {
		name string
		mod  mod
		prop string
	}{
		{"no devedor doc", func(r *api.CobVRequest) { r.Devedor.CPF = "" }, "devedor.cpf"},
		{"bad cpf", func(r *api.CobVRequest) { r.Devedor.CPF = "11111111111" }, "devedor.cpf"},
		{"bad cnpj", func(r *api.CobVRequest) { r.Devedor.CPF, r.Devedor.CNPJ = "", "11222333000182" }, "devedor.cnpj"},
		{"no nome", func(r *api.CobVRequest) { r.Devedor.Nome = "" }, "devedor.nome"},
		{"no due date", func(r *api.CobVRequest) { r.Calendario.DataDeVencimento = "" }, "calendario.dataDeVencimento"},
		{"feb 30", func(r *api.CobVRequest) { r.Calendario.DataDeVencimento = "2030-02-30" }, "calendario.dataDeVencimento"},
		{"valor zero", func(r *api.CobVRequest) { r.Valor.Original = "0.00" }, "valor.original"},
		{"valor 3 decimals", func(r *api.CobVRequest) { r.Valor.Original = "1.000" }, "valor.original"},
		{"multa modalidade 3", func(r *api.CobVRequest) { r.Valor.Multa = &api.PixModalidade{Modalidade: 3, ValorPerc: "1.00"} }, "valor.multa.modalidade"},
		{"multa 101%", func(r *api.CobVRequest) { r.Valor.Multa = &api.PixModalidade{Modalidade: 2, ValorPerc: "101.00"} }, "valor.multa.valorPerc"},
		{"juros modalidade 9", func(r *api.CobVRequest) { r.Valor.Juros = &api.PixModalidade{Modalidade: 9, ValorPerc: "1.00"} }, "valor.juros.modalidade"},
		{"abatimento >= original", func(r *api.CobVRequest) { r.Valor.Abatimento = &api.PixModalidade{Modalidade: 1, ValorPerc: "250.00"} }, "valor.abatimento.valorPerc"},
		{"desconto 1 without dates", func(r *api.CobVRequest) { r.Valor.Desconto = &api.PixDesconto{Modalidade: 1} }, "valor.desconto.descontoDataFixa"},
		{"desconto date after due", func(r *api.CobVRequest) {
			r.Valor.Desconto = &api.PixDesconto{Modalidade: 2, DescontoDataFixa: []api.PixDataFixa{{Data: "2031-01-01", ValorPerc: "1.00"}}}
		}, "valor.desconto.descontoDataFixa[0].data"},
		{"desconto 4 dates", func(r *api.CobVRequest) {
			d := api.PixDataFixa{Data: "2030-01-01", ValorPerc: "1.00"}
			r.Valor.Desconto = &api.PixDesconto{Modalidade: 1, DescontoDataFixa: []api.PixDataFixa{d, d, d, d}}
		}, "valor.desconto.descontoDataFixa"},
		{"desconto 3 without valorPerc", func(r *api.CobVRequest) { r.Valor.Desconto = &api.PixDesconto{Modalidade: 3} }, "valor.desconto.valorPerc"},
		{"foreign key", func(r *api.CobVRequest) { r.Chave = "+5511987654321" }, "chave"},
		{"uf", func(r *api.CobVRequest) { r.Devedor.UF = "XX" }, "devedor.uf"},
		{"solicitacao", func(r *api.CobVRequest) { r.SolicitacaoPagador = strings.Repeat("é", 141) }, "solicitacaoPagador"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cobvReq(e.key, "52998224725", "250.00")
			tc.mod(&r)
			_, err := c.PutCobV(ctx, txid("bad", i), r)
			wantProblem(t, err, http.StatusBadRequest, "CobVOperacaoInvalida", tc.prop)
		})
	}
	_, err = c.Do(ctx, api.Pix, http.MethodPut, "/v2/cobv/"+txid("raw", 1), []byte(`{"calendario":{"dataDeVencimento":"2030-01-01"},"devedor":{"cpf":"52998224725","nome":"A"},"valor":{"original":"1.00"},"chave":"`+e.key+`","novo":true}`))
	wantProblem(t, err, http.StatusBadRequest, "CobVOperacaoInvalida", "novo")
	_, err = c.Do(ctx, api.Pix, http.MethodPut, "/v2/cobv/"+txid("raw", 2), []byte(`{"calendario":{"dataDeVencimento":"2030-01-01","validadeAposVencimento":"30"},"devedor":{"cpf":"52998224725","nome":"A"},"valor":{"original":"1.00"},"chave":"`+e.key+`"}`))
	wantProblem(t, err, http.StatusBadRequest, "CobVOperacaoInvalida", "calendario.validadeAposVencimento")

	// PATCH, GET, list with filters.
	p, err := c.PatchCobV(ctx, id, api.CobPatch{Devedor: &api.PixPessoa{Nome: "Fulano Revisado"}})
	if err != nil || p.Revisao != 1 || p.Devedor.Nome != "Fulano Revisado" || p.Devedor.CPF != "52998224725" || p.Valor.Desconto == nil {
		t.Fatalf("PatchCobV: %v %+v", err, p)
	}
	_, err = c.PatchCobV(ctx, id, api.CobPatch{Devedor: &api.PixPessoa{CPF: "123"}})
	wantProblem(t, err, http.StatusBadRequest, "CobVOperacaoInvalida", "devedor.cpf")
	_, err = c.GetCobV(ctx, txid("none", 1))
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	// Only an ATIVA cobv can be revised.
	gone := txid("gone", 1)
	if _, err := c.PutCobV(ctx, gone, cobvReq(e.key, "52998224725", "5.00")); err != nil {
		t.Fatal(err)
	}
	if r, err := c.PatchCobV(ctx, gone, api.CobPatch{Status: "REMOVIDA_PELO_USUARIO_RECEBEDOR"}); err != nil || r.Status != "REMOVIDA_PELO_USUARIO_RECEBEDOR" {
		t.Fatalf("remove cobv: %v %+v", err, r)
	}
	_, err = c.PatchCobV(ctx, gone, api.CobPatch{Valor: &api.PixValor{Original: "6.00"}})
	wantProblem(t, err, http.StatusBadRequest, "CobVOperacaoInvalida", "status")
	// A cob is not a cobv.
	if _, err := c.PutCob(ctx, txid("imed", 1), api.CobRequest{Valor: api.PixValor{Original: "1.00"}, Chave: e.key}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetCobV(ctx, txid("imed", 1))
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")

	page, err := c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: window(), CPF: "11144477735"}})
	if err != nil || len(page.Cobs) != 1 || page.Cobs[0].Txid != txid("cobv", 2) {
		t.Fatalf("ListCobV cpf: %v %+v", err, page)
	}
	page, err = c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: window(), Status: "CONCLUIDA"}})
	if err != nil || len(page.Cobs) != 0 {
		t.Fatalf("ListCobV status: %v %+v", err, page)
	}
	_, err = c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: window(), Status: "PAGA"}})
	wantProblem(t, err, http.StatusBadRequest, "RequisicaoInvalida", "status")
	_, err = c.ListCobV(ctx, api.ListCobVParams{})
	wantProblem(t, err, http.StatusBadRequest, "RequisicaoInvalida", "inicio")
}

// TestScopesAndAccounts: a missing scope answers 403, another account's
// data answers like missing data.
func TestScopesAndAccounts(t *testing.T) {
	e := start(t, sandbox.Config{})
	id := txid("scope", 1)
	if _, err := e.c.PutCobV(ctx, id, cobvReq(e.key, "52998224725", "1.00")); err != nil {
		t.Fatal(err)
	}
	ro, _ := e.appWith(t, false, "cob.read", "cobv.read")
	_, err := ro.PutCob(ctx, txid("scope", 2), api.CobRequest{Valor: api.PixValor{Original: "1.00"}, Chave: e.key})
	wantProblem(t, err, http.StatusForbidden, "AcessoNegado", "")
	if _, err := ro.GetCobV(ctx, id); err != nil {
		t.Fatalf("read scope: %v", err)
	}
	_, err = ro.ListPix(ctx, api.ListPixParams{ListParams: window()})
	wantProblem(t, err, http.StatusForbidden, "AcessoNegado", "")
	_, err = ro.SendPix(ctx, "envio1", api.PixSendRequest{Valor: "1.00", Pagador: api.PixPagador{Chave: e.key}, Favorecido: api.PixFavorecido{Chave: "efipay@sejaefi.com.br"}})
	wantProblem(t, err, http.StatusForbidden, "AcessoNegado", "")
	_, err = ro.GetLoteCobV(ctx, "1")
	wantProblem(t, err, http.StatusForbidden, "AcessoNegado", "")

	// Batches: either lotecobv scope works for every batch route.
	for _, sc := range []string{"lotecobv.read", "lotecobv.write"} {
		lc, key := e.appWith(t, true, sc)
		if err := lc.PutLoteCobV(ctx, "7", api.LoteCobVRequest{Cobsv: []api.LoteCobVItem{{Txid: txid("l"+sc[9:], 1), CobVRequest: cobvReq(key, "52998224725", "1.00")}}}); err != nil {
			t.Fatalf("PUT lotecobv with %s: %v", sc, err)
		}
		if l := waitLote(t, lc, "7"); l.Cobsv[0].Status != "CRIADA" {
			t.Fatalf("with %s: %+v", sc, l.Cobsv[0])
		}
	}

	other, otherKey := e.appWith(t, true, "cob.read", "cob.write", "cobv.read", "cobv.write")
	_, err = other.GetCobV(ctx, id)
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	_, err = other.PatchCobV(ctx, id, api.CobPatch{SolicitacaoPagador: new(string)})
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	// The same txid is free in another account; the first account's key is not usable there.
	_, err = other.PutCobV(ctx, id, cobvReq(e.key, "52998224725", "1.00"))
	wantProblem(t, err, http.StatusBadRequest, "CobVOperacaoInvalida", "chave")
	if _, err := other.PutCobV(ctx, id, cobvReq(otherKey, "52998224725", "1.00")); err != nil {
		t.Fatalf("same txid, other account: %v", err)
	}
	page, err := other.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: window()}})
	if err != nil || len(page.Cobs) != 1 {
		t.Fatalf("other list: %v %+v", err, page)
	}
}
