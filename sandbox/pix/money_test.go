package pix_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/rules"
	"remessa/sandbox"
	"remessa/sandbox/clock"
)

func TestSplit(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	a := e.rn.Server.Auth()
	own := a.Accounts()[0]
	other, err := a.CreateAccount(ctx, "Parceiro LTDA")
	if err != nil {
		t.Fatal(err)
	}
	third, _ := a.CreateAccount(ctx, "")
	req := api.SplitConfigRequest{
		Descricao:  "Divisão 60/40",
		Lancamento: api.PixLancamento{Imediato: true},
		Split: api.PixSplitSpec{
			DivisaoTarifa: "assumir_total",
			MinhaParte:    api.PixSplitParte{Tipo: "porcentagem", Valor: "60.00"},
			Repasses:      []api.PixSplitRepasse{{Tipo: "porcentagem", Valor: "40.00", Favorecido: api.PixSplitFavorecido{CPF: "52998224725", Conta: other.Conta}}},
		},
	}
	cfg, err := c.CreateSplitConfig(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ID == "" || len(cfg.ID) > 35 || cfg.Status != "ATIVA" || cfg.Revisao != 0 || cfg.Split.Repasses[0].Favorecido.Conta != other.Conta {
		t.Fatalf("config %+v", cfg)
	}
	// Same body: same revision. Changed body: new revision, old one kept.
	same, err := c.PutSplitConfig(ctx, cfg.ID, req)
	if err != nil || same.Revisao != 0 {
		t.Fatalf("same body: %v %+v", err, same)
	}
	req2 := req
	req2.Split.MinhaParte.Valor, req2.Split.Repasses = "50.00", []api.PixSplitRepasse{
		{Tipo: "porcentagem", Valor: "30.00", Favorecido: api.PixSplitFavorecido{CPF: "52998224725", Conta: other.Conta}},
		{Tipo: "porcentagem", Valor: "20.00", Favorecido: api.PixSplitFavorecido{CNPJ: "11222333000181", Conta: third.Conta}},
	}
	rev, err := c.PutSplitConfig(ctx, cfg.ID, req2)
	if err != nil || rev.Revisao != 1 {
		t.Fatalf("new revision: %v %+v", err, rev)
	}
	r0, err := c.GetSplitConfig(ctx, cfg.ID, 0)
	if err != nil || r0.Split.MinhaParte.Valor != "60.00" || r0.Revisao != 0 {
		t.Fatalf("revisao 0: %v %+v", err, r0)
	}
	latest, err := c.GetSplitConfig(ctx, cfg.ID, -1)
	if err != nil || latest.Revisao != 1 || len(latest.Split.Repasses) != 2 {
		t.Fatalf("latest: %v %+v", err, latest)
	}
	_, err = c.GetSplitConfig(ctx, cfg.ID, 5)
	wantProblem(t, err, http.StatusNotFound, "SplitConfigNaoEncontrado", "")
	_, err = c.GetSplitConfig(ctx, "naoexiste", -1)
	wantProblem(t, err, http.StatusNotFound, "SplitConfigNaoEncontrado", "")
	// PUT with a new id creates it.
	if x, err := c.PutSplitConfig(ctx, "minhaconfig1", req); err != nil || x.ID != "minhaconfig1" || x.Revisao != 0 {
		t.Fatalf("PUT new id: %v %+v", err, x)
	}

	// Rules.
	bad := func(mod func(r *api.SplitConfigRequest), prop string) {
		t.Helper()
		r := req
		r.Split.Repasses = append([]api.PixSplitRepasse(nil), req.Split.Repasses...)
		mod(&r)
		_, err := c.CreateSplitConfig(ctx, r)
		wantProblem(t, err, http.StatusBadRequest, "SplitConfigOperacaoInvalida", prop)
	}
	bad(func(r *api.SplitConfigRequest) { r.Split.MinhaParte.Valor = "70.00" }, "")               // 110%
	bad(func(r *api.SplitConfigRequest) { r.Split.Repasses[0].Favorecido.Conta = own.Conta }, "") // own account
	bad(func(r *api.SplitConfigRequest) { r.Split.Repasses[0].Favorecido.Conta = "99999999" }, "split.repasses[0].favorecido.conta")
	bad(func(r *api.SplitConfigRequest) { r.Split.DivisaoTarifa = "metade" }, "split.divisaoTarifa")
	bad(func(r *api.SplitConfigRequest) { r.Split.Repasses[0].Tipo = "fixo" }, "") // mixed types
	bad(func(r *api.SplitConfigRequest) { r.Split.Repasses = nil }, "split.repasses")
	bad(func(r *api.SplitConfigRequest) {
		r.Split.Repasses = nil
		for i := 0; i < 21; i++ {
			r.Split.Repasses = append(r.Split.Repasses, api.PixSplitRepasse{Tipo: "porcentagem", Valor: "1.00", Favorecido: api.PixSplitFavorecido{CPF: "52998224725", Conta: other.Conta}})
		}
	}, "split.repasses")
	_, err = c.Do(ctx, api.Pix, http.MethodPost, "/v2/gn/split/config", []byte(`{"lancamento":{"imediato":"sim"},"split":{}}`))
	wantProblem(t, err, http.StatusBadRequest, "SplitConfigOperacaoInvalida", "lancamento.imediato")

	// Link to cob and cobv.
	cobID, cobvID := txid("splitcob", 1), txid("splitcobv", 1)
	if _, err := c.PutCob(ctx, cobID, api.CobRequest{Valor: api.PixValor{Original: "100.00"}, Chave: e.key}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutCobV(ctx, cobvID, cobvReq(e.key, "52998224725", "100.00")); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetCobSplit(ctx, false, cobID)
	wantProblem(t, err, http.StatusNotFound, "CobrancaSplitNaoEncontrada", "")
	if err := c.LinkSplit(ctx, false, cobID, cfg.ID); err != nil {
		t.Fatalf("link cob: %v", err)
	}
	if err := c.LinkSplit(ctx, true, cobvID, cfg.ID); err != nil {
		t.Fatalf("link cobv: %v", err)
	}
	cs, err := c.GetCobSplit(ctx, true, cobvID)
	if err != nil || cs.Config.ID != cfg.ID || cs.Config.Status != "ATIVA" || cs.Config.Descricao != "Divisão 60/40" || cs.Txid != cobvID || cs.Calendario.DataDeVencimento != "2030-12-31" || cs.PixCopiaECola == "" {
		t.Fatalf("GetCobSplit: %v %+v", err, cs)
	}
	// A cob is not found on the cobv route and vice versa.
	err = c.LinkSplit(ctx, true, cobID, cfg.ID)
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	err = c.LinkSplit(ctx, false, cobID, "naoexiste")
	wantProblem(t, err, http.StatusNotFound, "SplitConfigNaoEncontrado", "")
	if err := c.UnlinkSplit(ctx, false, cobID); err != nil {
		t.Fatalf("unlink: %v", err)
	}
	_, err = c.GetCobSplit(ctx, false, cobID)
	wantProblem(t, err, http.StatusNotFound, "CobrancaSplitNaoEncontrada", "")
	err = c.UnlinkSplit(ctx, false, cobID)
	wantProblem(t, err, http.StatusNotFound, "CobrancaSplitNaoEncontrada", "")
	// Only an active charge can be linked.
	if _, err := c.PatchCob(ctx, cobID, api.CobPatch{Status: "REMOVIDA_PELO_USUARIO_RECEBEDOR"}); err != nil {
		t.Fatal(err)
	}
	err = c.LinkSplit(ctx, false, cobID, cfg.ID)
	wantProblem(t, err, http.StatusBadRequest, "SplitOperacaoInvalida", "txid")
	// Fixed split: the values must add up to the charge.
	fixed := req
	fixed.Split.MinhaParte = api.PixSplitParte{Tipo: "fixo", Valor: "60.00"}
	fixed.Split.Repasses = []api.PixSplitRepasse{{Tipo: "fixo", Valor: "30.00", Favorecido: api.PixSplitFavorecido{CPF: "52998224725", Conta: other.Conta}}}
	fc, err := c.CreateSplitConfig(ctx, fixed)
	if err != nil {
		t.Fatalf("fixed config: %v", err)
	}
	err = c.LinkSplit(ctx, true, cobvID, fc.ID)
	wantProblem(t, err, http.StatusBadRequest, "SplitOperacaoInvalida", "split")
	// Scope.
	ro, _ := e.appWith(t, false, "gn.split.read")
	_, err = ro.CreateSplitConfig(ctx, req)
	wantProblem(t, err, http.StatusForbidden, "AcessoNegado", "")
	if _, err := ro.GetSplitConfig(ctx, cfg.ID, -1); err != nil {
		t.Fatalf("read scope: %v", err)
	}
}

func TestPayAndRefund(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	rec.take()
	hook, err := c.PutWebhook(ctx, e.key, "https://example.com/webhook")
	if err != nil || hook.WebhookURL != "https://example.com/webhook" || hook.Chave != e.key {
		t.Fatalf("PutWebhook: %v %+v", err, hook)
	}
	id := txid("paga", 1)
	cob, err := c.PutCob(ctx, id, api.CobRequest{Valor: api.PixValor{Original: "10.00"}, Chave: e.key})
	if err != nil {
		t.Fatal(err)
	}
	paid, err := c.SandboxPayPix(ctx, api.PixPayRequest{Txid: id})
	if err != nil {
		t.Fatalf("pay: %v", err)
	}
	if !rules.ValidEndToEndID(paid.EndToEndID) || !strings.HasPrefix(paid.EndToEndID, "E09089356") || paid.Valor != "10.00" || paid.Txid != id {
		t.Fatalf("pay result %+v", paid)
	}
	got, err := c.GetCob(ctx, id)
	if err != nil || got.Status != "CONCLUIDA" || len(got.Pix) != 1 || got.Pix[0].EndToEndID != paid.EndToEndID {
		t.Fatalf("cob after pay: %v %+v", err, got)
	}
	d := rec.take()
	if len(d) != 1 || d[0].URL != "https://example.com/webhook/pix" {
		t.Fatalf("deliveries %+v", d)
	}
	pix := decodePix(t, d[0].Body)
	if len(pix) != 1 || pix[0]["endToEndId"] != paid.EndToEndID || pix[0]["txid"] != id || pix[0]["valor"] != "10.00" || pix[0]["chave"] != e.key {
		t.Fatalf("webhook body %s", d[0].Body)
	}
	// Paying again is refused; a cob not ATIVA cannot be paid.
	_, err = c.SandboxPayPix(ctx, api.PixPayRequest{Txid: id})
	wantProblem(t, err, http.StatusBadRequest, "CobOperacaoInvalida", "")
	_, err = c.SandboxPayPix(ctx, api.PixPayRequest{Txid: txid("naoexiste", 1)})
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")

	// Pay a cobv by its BR Code, with ?ignorar= on the webhook URL.
	if _, err := c.PutWebhook(ctx, e.key, "https://example.com/hook?ignorar="); err != nil {
		t.Fatal(err)
	}
	cv, err := c.PutCobV(ctx, txid("pagav", 1), cobvReq(e.key, "52998224725", "30.00"))
	if err != nil {
		t.Fatal(err)
	}
	paid2, err := c.SandboxPayPix(ctx, api.PixPayRequest{PixCopiaECola: cv.PixCopiaECola, Valor: "29.50"})
	if err != nil || paid2.Txid != cv.Txid || paid2.Valor != "29.50" {
		t.Fatalf("pay by BR Code: %v %+v", err, paid2)
	}
	if d := rec.take(); len(d) != 1 || d[0].URL != "https://example.com/hook?ignorar=" {
		t.Fatalf("ignorar deliveries %+v", d)
	}
	_ = cob

	// Received Pix queries.
	p, err := c.GetPix(ctx, paid.EndToEndID)
	if err != nil || p.Valor != "10.00" || p.Txid != id || p.Horario == "" {
		t.Fatalf("GetPix: %v %+v", err, p)
	}
	_, err = c.GetPix(ctx, "E09089356202601011200SBX00000999")
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	list, err := c.ListPix(ctx, api.ListPixParams{ListParams: window()})
	if err != nil || len(list.Pix) != 2 {
		t.Fatalf("ListPix: %v %+v", err, list)
	}
	list, err = c.ListPix(ctx, api.ListPixParams{ListParams: window(), Txid: cv.Txid})
	if err != nil || len(list.Pix) != 1 || list.Pix[0].EndToEndID != paid2.EndToEndID {
		t.Fatalf("ListPix txid: %v %+v", err, list)
	}
	_, err = c.ListPix(ctx, api.ListPixParams{ListParams: api.ListParams{Inicio: time.Now()}})
	wantProblem(t, err, http.StatusBadRequest, "RequisicaoInvalida", "fim")

	// Refunds.
	rec.take()
	if _, err := c.PutWebhook(ctx, e.key, "https://example.com/webhook"); err != nil {
		t.Fatal(err)
	}
	dv, err := c.PutDevolucao(ctx, paid.EndToEndID, "dev1", api.DevolucaoRequest{Valor: "4.00"})
	if err != nil || dv.Status != "EM_PROCESSAMENTO" || dv.ID != "dev1" || !rules.ValidRtrID(dv.RtrID) || !strings.HasPrefix(dv.RtrID, "D09089356") || dv.Horario.Solicitacao == "" {
		t.Fatalf("PutDevolucao: %v %+v", err, dv)
	}
	dv = waitRefund(t, c, paid.EndToEndID, "dev1")
	if dv.Status != "DEVOLVIDO" || dv.Horario.Liquidacao == "" || dv.Natureza != "ORIGINAL" {
		t.Fatalf("settled refund %+v", dv)
	}
	_, err = c.PutDevolucao(ctx, paid.EndToEndID, "dev1", api.DevolucaoRequest{Valor: "1.00"})
	if ae := wantProblem(t, err, http.StatusConflict, "PixDevolucaoInvalida", "id"); ae.Nome != "devolucao_id_duplicado" {
		t.Fatalf("409 nome %q", ae.Nome)
	}
	_, err = c.PutDevolucao(ctx, paid.EndToEndID, "dev2", api.DevolucaoRequest{Valor: "6.01"})
	wantProblem(t, err, http.StatusBadRequest, "PixDevolucaoInvalida", "valor")
	// 0.01 is refused by the sandbox rule and does not use the balance.
	if _, err := c.PutDevolucao(ctx, paid.EndToEndID, "dev3", api.DevolucaoRequest{Valor: "0.01"}); err != nil {
		t.Fatal(err)
	}
	if dv := waitRefund(t, c, paid.EndToEndID, "dev3"); dv.Status != "NAO_REALIZADO" || dv.Motivo == "" {
		t.Fatalf("0.01 refund %+v", dv)
	}
	if _, err := c.PutDevolucao(ctx, paid.EndToEndID, "dev4", api.DevolucaoRequest{Valor: "6.00", Natureza: "ORIGINAL", Descricao: "resto"}); err != nil {
		t.Fatalf("rest of the balance: %v", err)
	}
	waitRefund(t, c, paid.EndToEndID, "dev4")
	_, err = c.PutDevolucao(ctx, paid.EndToEndID, "dev5", api.DevolucaoRequest{Valor: "0.02"})
	wantProblem(t, err, http.StatusBadRequest, "PixDevolucaoInvalida", "valor")
	for _, bad := range []struct {
		id, valor, prop string
	}{{"dev-6", "1.00", "id"}, {strings.Repeat("d", 36), "1.00", "id"}, {"dev6", "1", "valor"}, {"dev6", "0.00", "valor"}} {
		_, err = c.PutDevolucao(ctx, paid.EndToEndID, bad.id, api.DevolucaoRequest{Valor: bad.valor})
		wantProblem(t, err, http.StatusBadRequest, "PixDevolucaoInvalida", bad.prop)
	}
	_, err = c.PutDevolucao(ctx, paid.EndToEndID, "dev6", api.DevolucaoRequest{Valor: "1.00", Natureza: "MED_FRAUDE"})
	wantProblem(t, err, http.StatusBadRequest, "PixDevolucaoInvalida", "natureza")
	_, err = c.PutDevolucao(ctx, "E09089356202601011200SBX00000999", "dev1", api.DevolucaoRequest{Valor: "1.00"})
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	_, err = c.GetDevolucao(ctx, paid.EndToEndID, "naoexiste")
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	p, _ = c.GetPix(ctx, paid.EndToEndID)
	if len(p.Devolucoes) != 3 {
		t.Fatalf("devolucoes %+v", p.Devolucoes)
	}
	// Each settled refund was notified on the key's webhook.
	var statuses []string
	for _, d := range rec.take() {
		for _, it := range decodePix(t, d.Body) {
			for _, dv := range it["devolucoes"].([]any) {
				statuses = append(statuses, dv.(map[string]any)["status"].(string))
			}
		}
	}
	if strings.Join(statuses, ",") != "DEVOLVIDO,NAO_REALIZADO,DEVOLVIDO" {
		t.Fatalf("refund notices %v", statuses)
	}
}

func waitRefund(tb testing.TB, c *api.Client, e2e, id string) *api.Devolucao {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := c.GetDevolucao(ctx, e2e, id)
		if err != nil {
			tb.Fatalf("GetDevolucao: %v", err)
		}
		if d.Status != "EM_PROCESSAMENTO" {
			return d
		}
		if time.Now().After(deadline) {
			tb.Fatalf("refund %s still processing", id)
		}
		time.Sleep(time.Millisecond)
	}
}

func waitSend(tb testing.TB, c *api.Client, id string, refunds int) *api.PixEnviado {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := c.GetPixEnviadoByID(ctx, id)
		if err != nil {
			tb.Fatalf("GetPixEnviadoByID: %v", err)
		}
		if s.Status != "EM_PROCESSAMENTO" && len(s.Devolucoes) >= refunds {
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("send %s still processing", id)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSend(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	send := func(id, valor, to string) (*api.PixSendResult, error) {
		return c.SendPix(ctx, id, api.PixSendRequest{Valor: valor, Pagador: api.PixPagador{Chave: e.key, InfoPagador: "Teste"}, Favorecido: api.PixFavorecido{Chave: to}})
	}
	const testKey = "efipay@sejaefi.com.br"
	_, err := send("semhook", "1.00", testKey)
	wantEfi(t, err, http.StatusBadRequest, "webhook_nao_cadastrado")
	if _, err := c.PutWebhook(ctx, e.key, "https://example.com/wh"); err != nil {
		t.Fatal(err)
	}
	rec.take()
	r, err := send("envio1", "10.00", testKey)
	if err != nil || r.Status != "EM_PROCESSAMENTO" || r.IDEnvio != "envio1" || !rules.ValidEndToEndID(r.E2EID) || r.Valor != "10.00" || r.Horario.Solicitacao == "" {
		t.Fatalf("send: %v %+v", err, r)
	}
	s := waitSend(t, c, "envio1", 0)
	if s.Status != "REALIZADO" || s.Horario.Liquidacao == "" || s.Favorecido.Chave != testKey || s.Favorecido.Identificacao == nil || s.Chave != e.key || s.EndToEndID != r.E2EID {
		t.Fatalf("sent %+v", s)
	}
	if s2, err := c.GetPixEnviado(ctx, r.E2EID); err != nil || s2.IDEnvio != "envio1" {
		t.Fatalf("GetPixEnviado: %v %+v", err, s2)
	}
	d := rec.take()
	if len(d) != 1 || d[0].URL != "https://example.com/wh/pix" {
		t.Fatalf("deliveries %+v", d)
	}
	if it := decodePix(t, d[0].Body)[0]; it["status"] != "REALIZADO" || it["endToEndId"] != r.E2EID || it["gnExtras"].(map[string]any)["idEnvio"] != "envio1" {
		t.Fatalf("webhook %s", d[0].Body)
	}
	// 10.01 .. 20.00: rejected by webhook.
	if _, err := send("envio2", "10.01", testKey); err != nil {
		t.Fatal(err)
	}
	if s := waitSend(t, c, "envio2", 0); s.Status != "NAO_REALIZADO" {
		t.Fatalf("10.01 %+v", s)
	}
	if _, err := c.SendPixV2(ctx, "envio3", api.PixSendRequest{Valor: "20.00", Pagador: api.PixPagador{Chave: e.key}, Favorecido: api.PixFavorecido{Chave: testKey}}); err != nil {
		t.Fatalf("v2 route: %v", err)
	}
	if s := waitSend(t, c, "envio3", 0); s.Status != "NAO_REALIZADO" {
		t.Fatalf("20.00 %+v", s)
	}
	d = rec.take()
	if len(d) != 2 {
		t.Fatalf("rejection notices %d", len(d))
	}
	if it := decodePix(t, d[0].Body)[0]; it["status"] != "NAO_REALIZADO" || it["gnExtras"].(map[string]any)["erro"] == nil {
		t.Fatalf("rejection webhook %s", d[0].Body)
	}
	// Above 20.00: refused on the request, nothing stored, no webhook.
	_, err = send("envio4", "20.01", testKey)
	wantEfi(t, err, http.StatusUnprocessableEntity, "pagamento_negado")
	_, err = c.GetPixEnviadoByID(ctx, "envio4")
	wantProblem(t, err, http.StatusNotFound, "PixEnviadoNaoEncontrado", "")
	// 4.00: two received refunds of 2.00; 5.00: one of 5.00.
	if _, err := send("envio5", "4.00", testKey); err != nil {
		t.Fatal(err)
	}
	if s := waitSend(t, c, "envio5", 2); s.Status != "REALIZADO" || len(s.Devolucoes) != 2 || s.Devolucoes[0].Valor != "2.00" || s.Devolucoes[1].Valor != "2.00" || !rules.ValidRtrID(s.Devolucoes[0].RtrID) {
		t.Fatalf("4.00 %+v", s)
	}
	if _, err := send("envio6", "5.00", testKey); err != nil {
		t.Fatal(err)
	}
	if s := waitSend(t, c, "envio6", 1); len(s.Devolucoes) != 1 || s.Devolucoes[0].Valor != "5.00" || s.Devolucoes[0].Status != "DEVOLVIDO" {
		t.Fatalf("5.00 %+v", s)
	}
	// Other keys, duplicates, bad input.
	_, err = send("envio7", "1.00", "outra@example.com")
	wantEfi(t, err, http.StatusBadRequest, "chave_invalida")
	_, err = c.SendPix(ctx, "envio7", api.PixSendRequest{Valor: "1.00", Pagador: api.PixPagador{Chave: "naoeminha@example.com"}, Favorecido: api.PixFavorecido{Chave: testKey}})
	wantEfi(t, err, http.StatusBadRequest, "chave_invalida")
	_, err = send("envio1", "1.00", testKey)
	wantEfi(t, err, http.StatusConflict, "id_envio_duplicado")
	_, err = send("envio-8", "1.00", testKey)
	wantEfi(t, err, http.StatusBadRequest, "valor_invalido")
	_, err = send("envio8", "1,00", testKey)
	wantEfi(t, err, http.StatusBadRequest, "valor_invalido")
	_, err = send("envio8", "0.00", testKey)
	wantEfi(t, err, http.StatusBadRequest, "valor_invalido")
	// Bank data destination.
	if _, err := c.SendPix(ctx, "envio9", api.PixSendRequest{Valor: "3.00", Pagador: api.PixPagador{Chave: e.key}, Favorecido: api.PixFavorecido{ContaBanco: &api.PixContaBanco{
		Nome: "Fulano", CPF: "52998224725", CodigoBanco: "09089356", Agencia: "1", Conta: "123453", TipoConta: "cacc"}}}); err != nil {
		t.Fatalf("contaBanco: %v", err)
	}
	if s := waitSend(t, c, "envio9", 0); s.Status != "REALIZADO" || s.Favorecido.ContaBanco == nil {
		t.Fatalf("contaBanco %+v", s)
	}
	_, err = c.SendPix(ctx, "envio10", api.PixSendRequest{Valor: "3.00", Pagador: api.PixPagador{Chave: e.key}, Favorecido: api.PixFavorecido{ContaBanco: &api.PixContaBanco{
		Nome: "Fulano", CPF: "52998224725", CodigoBanco: "364", Agencia: "12345", Conta: "12-3", TipoConta: "corrente"}}})
	wantEfi(t, err, http.StatusBadRequest, "valor_invalido")
	list, err := c.ListPixEnviados(ctx, window())
	if err != nil || len(list.Pix) != 6 || list.Pix[0].IDEnvio != "envio1" {
		t.Fatalf("ListPixEnviados: %v %d", err, len(list.Pix))
	}
	_, err = c.GetPixEnviado(ctx, "E09089356202601011200SBX00000999")
	wantProblem(t, err, http.StatusNotFound, "PixEnviadoNaoEncontrado", "")
	// Scope: gn.pix.send.read reads but does not send.
	ro, _ := e.appWith(t, false, "gn.pix.send.read")
	if _, err := ro.GetPixEnviadoByID(ctx, "envio1"); err != nil {
		t.Fatal(err)
	}
	_, err = ro.SendPix(ctx, "envio11", api.PixSendRequest{Valor: "1.00", Pagador: api.PixPagador{Chave: e.key}, Favorecido: api.PixFavorecido{Chave: testKey}})
	wantProblem(t, err, http.StatusForbidden, "AcessoNegado", "")
}

func TestWebhooksAndKeys(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	_, err := c.GetWebhook(ctx, e.key)
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	if _, err := c.PutWebhook(ctx, e.key, "http://127.0.0.1:9/meu"); err != nil {
		t.Fatalf("http URL on loopback: %v", err)
	}
	w, err := c.GetWebhook(ctx, e.key)
	if err != nil || w.WebhookURL != "http://127.0.0.1:9/meu" || w.Criacao == "" {
		t.Fatalf("GetWebhook: %v %+v", err, w)
	}
	_, err = c.PutWebhook(ctx, e.key, "nao e url")
	wantProblem(t, err, http.StatusBadRequest, "WebhookOperacaoInvalida", "webhookUrl")
	_, err = c.PutWebhook(ctx, "naoeminha@example.com", "https://example.com")
	wantProblem(t, err, http.StatusBadRequest, "WebhookOperacaoInvalida", "chave")
	_, err = c.Do(ctx, api.Pix, http.MethodPut, "/v2/webhook/"+e.key, []byte(`{"url":"https://example.com"}`))
	wantProblem(t, err, http.StatusBadRequest, "WebhookOperacaoInvalida", "webhookUrl")

	// EVP keys.
	k, err := c.CreateEVP(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if typ, err := rules.PixKeyType(k); err != nil || typ != rules.KeyEVP {
		t.Fatalf("new key %q: %v", k, err)
	}
	keys, err := c.ListEVP(ctx)
	if err != nil || len(keys) != 2 || !contains(keys, k) || !contains(keys, e.key) {
		t.Fatalf("ListEVP: %v %v", err, keys)
	}
	// The new key can receive charges and webhooks at once.
	if _, err := c.PutCob(ctx, txid("evp", 1), api.CobRequest{Valor: api.PixValor{Original: "1.00"}, Chave: k}); err != nil {
		t.Fatalf("cob on the new key: %v", err)
	}
	if _, err := c.PutWebhook(ctx, k, "https://example.com/k2"); err != nil {
		t.Fatal(err)
	}
	page, err := c.ListWebhooks(ctx, window())
	if err != nil || len(page.Webhooks) != 2 {
		t.Fatalf("ListWebhooks: %v %+v", err, page)
	}
	if err := c.DeleteWebhook(ctx, k); err != nil {
		t.Fatal(err)
	}
	err = c.DeleteWebhook(ctx, k)
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	if err := c.DeleteEVP(ctx, k); err != nil {
		t.Fatal(err)
	}
	err = c.DeleteEVP(ctx, k)
	wantProblem(t, err, http.StatusNotFound, "NaoEncontrado", "")
	_, err = c.PutCob(ctx, txid("evp", 2), api.CobRequest{Valor: api.PixValor{Original: "1.00"}, Chave: k})
	wantEfi(t, err, http.StatusBadRequest, "chave_invalida")
	ro, _ := e.appWith(t, false, "gn.pix.evp.read", "webhook.read")
	if _, err := ro.ListEVP(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = ro.CreateEVP(ctx)
	wantProblem(t, err, http.StatusForbidden, "AcessoNegado", "")
	_, err = ro.PutWebhook(ctx, e.key, "https://example.com")
	wantProblem(t, err, http.StatusForbidden, "AcessoNegado", "")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRestartKeepsEverything: every kind of Pix document is back after a
// restart on the same data directory.
func TestRestartKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	cfg := sandbox.Config{DataDir: dir, ClientID: "Client_Id_restart", ClientSecret: "Client_Secret_restart"}
	e := start(t, cfg)
	c := e.c
	other, err := e.rn.Server.Auth().CreateAccount(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutWebhook(ctx, e.key, "https://example.com/r"); err != nil {
		t.Fatal(err)
	}
	cob, err := c.PutCob(ctx, txid("rs", 1), api.CobRequest{Valor: api.PixValor{Original: "8.00"}, Chave: e.key})
	if err != nil {
		t.Fatal(err)
	}
	paid, err := c.SandboxPayPix(ctx, api.PixPayRequest{Txid: cob.Txid})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutDevolucao(ctx, paid.EndToEndID, "d1", api.DevolucaoRequest{Valor: "1.00"}); err != nil {
		t.Fatal(err)
	}
	waitRefund(t, c, paid.EndToEndID, "d1")
	cfgSplit, err := c.CreateSplitConfig(ctx, api.SplitConfigRequest{Lancamento: api.PixLancamento{Imediato: true}, Split: api.PixSplitSpec{
		DivisaoTarifa: "assumir_total", MinhaParte: api.PixSplitParte{Tipo: "porcentagem", Valor: "50.00"},
		Repasses: []api.PixSplitRepasse{{Tipo: "porcentagem", Valor: "50.00", Favorecido: api.PixSplitFavorecido{CPF: "52998224725", Conta: other.Conta}}}}})
	if err != nil {
		t.Fatal(err)
	}
	cv, err := c.PutCobV(ctx, txid("rsv", 1), cobvReq(e.key, "52998224725", "9.00"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.LinkSplit(ctx, true, cv.Txid, cfgSplit.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendPix(ctx, "rs1", api.PixSendRequest{Valor: "5.00", Pagador: api.PixPagador{Chave: e.key}, Favorecido: api.PixFavorecido{Chave: "efipay@sejaefi.com.br"}}); err != nil {
		t.Fatal(err)
	}
	waitSend(t, c, "rs1", 1)
	if err := c.PutLoteCobV(ctx, "3", api.LoteCobVRequest{Cobsv: items(e.key, "rsl", 2)}); err != nil {
		t.Fatal(err)
	}
	waitLote(t, c, "3")
	if err := e.rn.Close(); err != nil {
		t.Fatal(err)
	}

	e2 := start(t, cfg)
	c = e2.c
	if got, err := c.GetCob(ctx, cob.Txid); err != nil || got.Status != "CONCLUIDA" || got.PixCopiaECola != cob.PixCopiaECola || len(got.Pix) != 1 {
		t.Fatalf("cob: %v %+v", err, got)
	}
	if p, err := c.GetPix(ctx, paid.EndToEndID); err != nil || len(p.Devolucoes) != 1 || p.Devolucoes[0].Status != "DEVOLVIDO" {
		t.Fatalf("pix: %v %+v", err, p)
	}
	if cs, err := c.GetCobSplit(ctx, true, cv.Txid); err != nil || cs.Config.ID != cfgSplit.ID {
		t.Fatalf("split: %v %+v", err, cs)
	}
	if s, err := c.GetPixEnviadoByID(ctx, "rs1"); err != nil || s.Status != "REALIZADO" || len(s.Devolucoes) != 1 {
		t.Fatalf("send: %v %+v", err, s)
	}
	if w, err := c.GetWebhook(ctx, e.key); err != nil || w.WebhookURL != "https://example.com/r" {
		t.Fatalf("webhook: %v %+v", err, w)
	}
	if l, err := c.GetLoteCobV(ctx, "3"); err != nil || len(l.Cobsv) != 2 || l.Cobsv[0].Status != "CRIADA" {
		t.Fatalf("lote: %v %+v", err, l)
	}
	// Batch rules still hold after the restart (claims are rebuilt).
	wantProblem(t, c.PutLoteCobV(ctx, "4", api.LoteCobVRequest{Cobsv: items(e.key, "rsl", 1)}), http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv[0].txid")
	// Counters continue: a new payment gets a new endToEndId.
	cob2, _ := c.PutCob(ctx, txid("rs", 2), api.CobRequest{Valor: api.PixValor{Original: "1.00"}, Chave: e.key})
	p2, err := c.SandboxPayPix(ctx, api.PixPayRequest{Txid: cob2.Txid})
	if err != nil || p2.EndToEndID == paid.EndToEndID || cob2.Loc.ID <= cob.Loc.ID {
		t.Fatalf("after restart: %v %+v", err, p2)
	}
}

// TestPayAmountDue: paying a cobv without valor pays the amount due on the
// sandbox clock's date; past validadeAposVencimento it cannot be paid.
func TestPayAmountDue(t *testing.T) {
	e := start(t, sandbox.Config{})
	clk, ok := e.rn.Server.Clock().(*clock.Adjustable)
	if !ok {
		t.Skipf("clock %T is not adjustable", e.rn.Server.Clock())
	}
	due := rules.Today(clk.Now()).AddDate(0, 0, 2).Format("2006-01-02")
	req := cobvReq(e.key, "52998224725", "100.00")
	req.Calendario = api.PixCalendario{DataDeVencimento: due, ValidadeAposVencimento: intp(60)}
	req.Valor.Multa = &api.PixModalidade{Modalidade: 1, ValorPerc: "2.00"}
	req.Valor.Abatimento = &api.PixModalidade{Modalidade: 1, ValorPerc: "10.00"}
	early, late, expired := txid("due", 1), txid("due", 2), txid("due", 3)
	for _, id := range []string{early, late, expired} {
		if _, err := e.c.PutCobV(ctx, id, req); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := e.c.SandboxPayPix(ctx, api.PixPayRequest{Txid: early}); err != nil || p.Valor != "90.00" {
		t.Fatalf("before due: %v %+v", err, p)
	}
	clk.Advance(40 * 24 * time.Hour)
	if p, err := e.c.SandboxPayPix(ctx, api.PixPayRequest{Txid: late}); err != nil || p.Valor != "92.00" {
		t.Fatalf("after due: %v %+v", err, p)
	}
	clk.Advance(30 * 24 * time.Hour)
	_, err := e.c.SandboxPayPix(ctx, api.PixPayRequest{Txid: expired})
	wantProblem(t, err, http.StatusBadRequest, "CobOperacaoInvalida", "")
}

// TestSendSimulationTable: the spec's sandbox table for sends, at every
// boundary: status after processing, refunds received, webhook notices
// (tipo and status) and the answer on the request.
func TestSendSimulationTable(t *testing.T) {
	e := start(t, sandbox.Config{})
	c := e.c
	if _, err := c.PutWebhook(ctx, e.key, "https://example.com/sim"); err != nil {
		t.Fatal(err)
	}
	rec.take()
	cases := []struct {
		valor   string
		status  string   // after processing; "" = refused on the request
		refunds []string // values of the received refunds
		notices []string // tipo/status of each webhook notice
	}{
		{"0.01", "REALIZADO", nil, []string{"SOLICITACAO/REALIZADO"}},
		{"3.99", "REALIZADO", nil, []string{"SOLICITACAO/REALIZADO"}},
		{"4.00", "REALIZADO", []string{"2.00", "2.00"}, []string{"SOLICITACAO/REALIZADO", "DEVOLUCAO/REALIZADO"}},
		{"4.01", "REALIZADO", nil, []string{"SOLICITACAO/REALIZADO"}},
		{"5.00", "REALIZADO", []string{"5.00"}, []string{"SOLICITACAO/REALIZADO", "DEVOLUCAO/REALIZADO"}},
		{"10.00", "REALIZADO", nil, []string{"SOLICITACAO/REALIZADO"}},
		{"10.01", "NAO_REALIZADO", nil, []string{"SOLICITACAO/NAO_REALIZADO"}},
		{"20.00", "NAO_REALIZADO", nil, []string{"SOLICITACAO/NAO_REALIZADO"}},
		{"20.01", "", nil, nil},
		{"1000.00", "", nil, nil},
	}
	for i, tc := range cases {
		id := "sim" + strings.ReplaceAll(tc.valor, ".", "x")
		_, err := c.SendPix(ctx, id, api.PixSendRequest{Valor: tc.valor, Pagador: api.PixPagador{Chave: e.key}, Favorecido: api.PixFavorecido{Chave: "efipay@sejaefi.com.br"}})
		if tc.status == "" {
			wantEfi(t, err, http.StatusUnprocessableEntity, "pagamento_negado")
			_, err = c.GetPixEnviadoByID(ctx, id)
			wantProblem(t, err, http.StatusNotFound, "PixEnviadoNaoEncontrado", "")
		} else {
			if err != nil {
				t.Fatalf("%s: %v", tc.valor, err)
			}
			s := waitSend(t, c, id, len(tc.refunds))
			var got []string
			for _, d := range s.Devolucoes {
				if d.Status != "DEVOLVIDO" {
					t.Errorf("%s: refund %+v", tc.valor, d)
				}
				got = append(got, d.Valor)
			}
			if s.Status != tc.status || strings.Join(got, ",") != strings.Join(tc.refunds, ",") {
				t.Errorf("case %d %s: status %s refunds %v, want %s %v", i, tc.valor, s.Status, got, tc.status, tc.refunds)
			}
		}
		var notices []string
		for _, d := range rec.take() {
			for _, it := range decodePix(t, d.Body) {
				if ex, _ := it["gnExtras"].(map[string]any); ex == nil || ex["idEnvio"] != id {
					t.Errorf("%s: notice without its idEnvio: %s", tc.valor, d.Body)
				}
				notices = append(notices, it["tipo"].(string)+"/"+it["status"].(string))
			}
		}
		if strings.Join(notices, ",") != strings.Join(tc.notices, ",") {
			t.Errorf("%s: notices %v, want %v", tc.valor, notices, tc.notices)
		}
	}
	// Only the sandbox test key receives sends by key.
	_, err := c.SendPix(ctx, "simoutra", api.PixSendRequest{Valor: "1.00", Pagador: api.PixPagador{Chave: e.key}, Favorecido: api.PixFavorecido{Chave: e.key}})
	wantEfi(t, err, http.StatusBadRequest, "chave_invalida")
}
