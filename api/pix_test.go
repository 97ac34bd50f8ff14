package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"remessa/api"
)

// fakePix is a stand-in Pix server that records requests and answers with
// what the test queues per path.
type fakePix struct {
	mu      sync.Mutex
	reqs    []*http.Request
	bodies  [][]byte
	status  int
	answer  string
	headers []http.Header
}

func (f *fakePix) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/oauth/token" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"tok","token_type":"Bearer","expires_in":3600,"scope":"cob.write"}`)
		return
	}
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	f.bodies = append(f.bodies, b)
	f.headers = append(f.headers, r.Header.Clone())
	status, answer := f.status, f.answer
	f.mu.Unlock()
	if answer != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, answer)
}

func (f *fakePix) last(t *testing.T) (*http.Request, []byte, http.Header) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("no request")
	}
	n := len(f.reqs) - 1
	return f.reqs[n], f.bodies[n], f.headers[n]
}

func newFakePix(t *testing.T) (*fakePix, *api.Client) {
	f := &fakePix{status: 200, answer: "{}"}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := api.New(api.Config{BaseURL: srv.URL, ClientID: "id", ClientSecret: "segredo", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestPixListQuery(t *testing.T) {
	f, c := newFakePix(t)
	ctx := context.Background()
	in := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("BRT", -3*3600))
	loc := false
	_, err := c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{
		ListParams: api.ListParams{Inicio: in, Fim: in.Add(time.Hour), PaginaAtual: 2, ItensPorPagina: 1000},
		CPF:        "52998224725", Status: "ATIVA", LocationPresente: &loc,
	}, LoteCobVID: 42})
	if err != nil {
		t.Fatal(err)
	}
	r, _, h := f.last(t)
	want := url.Values{
		"inicio": {"2026-01-02T06:04:05Z"}, "fim": {"2026-01-02T07:04:05Z"},
		"paginacao.paginaAtual": {"2"}, "paginacao.itensPorPagina": {"1000"},
		"cpf": {"52998224725"}, "status": {"ATIVA"}, "locationPresente": {"false"}, "loteCobVId": {"42"},
	}
	if r.URL.Path != "/v2/cobv" || r.URL.Query().Encode() != want.Encode() {
		t.Fatalf("GET %s?%s", r.URL.Path, r.URL.RawQuery)
	}
	if h.Get("Authorization") != "Bearer tok" {
		t.Fatalf("authorization %q", h.Get("Authorization"))
	}
	// Defaults are left to the service.
	if _, err := c.ListPix(ctx, api.ListPixParams{ListParams: api.ListParams{Inicio: in, Fim: in}}); err != nil {
		t.Fatal(err)
	}
	r, _, _ = f.last(t)
	if r.URL.Query().Has("paginacao.paginaAtual") || r.URL.Query().Has("paginacao.itensPorPagina") || r.URL.Path != "/v2/pix" {
		t.Fatalf("defaults: %s", r.URL.RequestURI())
	}
}

func TestPixPathsAndBodies(t *testing.T) {
	f, c := newFakePix(t)
	ctx := context.Background()
	if _, err := c.PutWebhook(ctx, "fulano@example.com", "https://example.com/wh"); err != nil {
		t.Fatal(err)
	}
	r, body, _ := f.last(t)
	if r.Method != http.MethodPut || r.URL.Path != "/v2/webhook/fulano@example.com" || string(body) != `{"webhookUrl":"https://example.com/wh"}` {
		t.Fatalf("%s %s %s", r.Method, r.URL.Path, body)
	}
	item := api.LoteCobVItem{Txid: "t1", CobVRequest: api.CobVRequest{
		Calendario: api.PixCalendario{DataDeVencimento: "2030-01-01"}, Devedor: api.PixPessoa{CPF: "52998224725", Nome: "A"},
		Valor: api.PixValor{Original: "1.00"}, Chave: "k"}}
	f.status, f.answer = http.StatusAccepted, ""
	if err := c.PutLoteCobV(ctx, "7", api.LoteCobVRequest{Cobsv: []api.LoteCobVItem{item}}); err != nil {
		t.Fatalf("202 without body: %v", err)
	}
	r, body, _ = f.last(t)
	var got map[string]any
	_ = json.Unmarshal(body, &got)
	first := got["cobsv"].([]any)[0].(map[string]any)
	if r.URL.Path != "/v2/lotecobv/7" || first["txid"] != "t1" || first["chave"] != "k" || first["devedor"].(map[string]any)["cpf"] != "52998224725" {
		t.Fatalf("batch body %s", body)
	}
	// Split links: 204 and 201 are both success.
	for _, st := range []int{http.StatusNoContent, http.StatusCreated, http.StatusOK} {
		f.status = st
		if err := c.LinkSplit(ctx, true, "tx", "cfg"); err != nil {
			t.Fatalf("link answered %d: %v", st, err)
		}
	}
	r, _, _ = f.last(t)
	if r.URL.Path != "/v2/gn/split/cobv/tx/vinculo/cfg" {
		t.Fatalf("link path %s", r.URL.Path)
	}
	f.status = http.StatusOK
	if err := c.UnlinkSplit(ctx, false, "tx"); err != nil {
		t.Fatal(err)
	}
	if r, _, _ = f.last(t); r.Method != http.MethodDelete || r.URL.Path != "/v2/gn/split/cob/tx/vinculo" {
		t.Fatalf("unlink %s %s", r.Method, r.URL.Path)
	}
	f.status, f.answer = http.StatusCreated, `{"idEnvio":"e1","e2eId":"E1","valor":"1.00","horario":{"solicitacao":"x"},"status":"EM_PROCESSAMENTO"}`
	res, err := c.SendPix(ctx, "e1", api.PixSendRequest{Valor: "1.00", Pagador: api.PixPagador{Chave: "k"}, Favorecido: api.PixFavorecido{Chave: "efipay@sejaefi.com.br"}})
	if err != nil || res.E2EID != "E1" || res.Status != "EM_PROCESSAMENTO" {
		t.Fatalf("SendPix: %v %+v", err, res)
	}
	if r, _, _ = f.last(t); r.URL.Path != "/v3/gn/pix/e1" {
		t.Fatalf("send path %s", r.URL.Path)
	}
	if _, err := c.GetSplitConfig(ctx, "cfg", 3); err != nil {
		t.Fatal(err)
	}
	if r, _, _ = f.last(t); r.URL.RequestURI() != "/v2/gn/split/config/cfg?revisao=3" {
		t.Fatalf("revisao %s", r.URL.RequestURI())
	}
	// The control route carries no credentials.
	f.answer = `{"endToEndId":"E2","txid":"t","valor":"1.00","horario":"h"}`
	if p, err := c.SandboxPayPix(ctx, api.PixPayRequest{Txid: "t"}); err != nil || p.EndToEndID != "E2" {
		t.Fatalf("pay: %v %+v", err, p)
	}
	if _, _, h := f.last(t); h.Get("Authorization") != "" {
		t.Fatalf("pay sent Authorization %q", h.Get("Authorization"))
	}
}

func TestPixErrorsBothDialects(t *testing.T) {
	f, c := newFakePix(t)
	ctx := context.Background()
	f.status, f.answer = http.StatusConflict, `{"type":"https://pix.bcb.gov.br/api/v2/error/PixDevolucaoInvalida","title":"t","status":409,"detail":"d","violacoes":[{"razao":"r","propriedade":"id","valor":"x"}],"nome":"devolucao_id_duplicado","mensagem":"m"}`
	_, err := c.PutDevolucao(ctx, "E1", "x", api.DevolucaoRequest{Valor: "1.00"})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 409 || ae.Problem.TypeName() != "PixDevolucaoInvalida" || ae.Nome != "devolucao_id_duplicado" || ae.Problem.Violacoes[0].Propriedade != "id" {
		t.Fatalf("%v %+v", err, ae)
	}
	f.status, f.answer = http.StatusConflict, `{"nome":"txid_duplicado","mensagem":"Campo txid já utilizado"}`
	_, err = c.PutCob(ctx, "t", api.CobRequest{})
	if !errors.As(err, &ae) || ae.Nome != "txid_duplicado" || ae.Problem != nil {
		t.Fatalf("%v %+v", err, ae)
	}
	f.status, f.answer = http.StatusOK, `{"id":3,"criacao":"c","cobsv":[{"txid":"a","status":"CRIADA"},{"txid":"b","status":"EM_PROCESSAMENTO"}]}`
	l, err := c.GetLoteCobV(ctx, "3")
	if err != nil || l.ID != 3 || l.Done() {
		t.Fatalf("%v %+v", err, l)
	}
	l.Cobsv[1].Status = "NEGADA"
	if !l.Done() {
		t.Fatal("Done with no item processing")
	}
}

func TestWaitLoteCobV(t *testing.T) {
	polls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/token" {
			_, _ = io.WriteString(w, `{"access_token":"tok","token_type":"Bearer","expires_in":3600}`)
			return
		}
		polls++
		status := "EM_PROCESSAMENTO"
		if polls >= 3 {
			status = "CRIADA"
		}
		_, _ = io.WriteString(w, `{"id":5,"criacao":"c","cobsv":[{"txid":"a","status":"`+status+`"}]}`)
	}))
	defer srv.Close()
	var waits []time.Duration
	c, err := api.New(api.Config{BaseURL: srv.URL, ClientID: "id", ClientSecret: "s",
		Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.WaitLoteCobV(context.Background(), "5", 250*time.Millisecond)
	if err != nil || !l.Done() || polls != 3 || len(waits) != 2 || waits[0] != 250*time.Millisecond {
		t.Fatalf("%v %+v polls=%d waits=%v", err, l, polls, waits)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	polls = -100
	if _, err := c.WaitLoteCobV(ctx, "5", 0); err == nil {
		t.Fatal("cancelled wait returned no error")
	}
}

// ListCobVCodes sends ListCobV's query and reads the same codes ListCobV
// reads of each charge.
func TestListCobVCodes(t *testing.T) {
	f, c := newFakePix(t)
	ctx := context.Background()
	f.answer = `{"parametros":{"inicio":"a","fim":"b","paginacao":{"paginaAtual":0,"itensPorPagina":1000,"quantidadeDePaginas":3,"quantidadeTotalDeItens":2001}},` +
		`"cobs":[{"calendario":{"criacao":"2026-01-02T03:04:05Z","dataDeVencimento":"2026-02-10","validadeAposVencimento":30},"txid":"abc123abc123abc123abc123abc1","revisao":0,` +
		`"loc":{"id":7,"location":"pix.example.com/v2/cobv/7","tipoCob":"cobv"},"location":"pix.example.com/v2/cobv/7","status":"ATIVA",` +
		`"devedor":{"cpf":"52998224725","nome":"Fulano \"de\" Tal"},"valor":{"original":"10.00"},"chave":"k","infoAdicionais":[{"nome":"a","valor":"b"}],` +
		`"pixCopiaECola":"000201\u00e9xyz"},{"calendario":{},"txid":"t2","loc":{"location":"only-loc"}}]}`
	p := api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: api.ListParams{PaginaAtual: 1, ItensPorPagina: 1000}}, LoteCobVID: 42}
	full, err := c.ListCobV(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	r1, _, _ := f.last(t)
	codes, err := c.ListCobVCodes(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	r2, _, _ := f.last(t)
	if r1.URL.RequestURI() != r2.URL.RequestURI() {
		t.Fatalf("query %s, want %s", r2.URL.RequestURI(), r1.URL.RequestURI())
	}
	if codes.Parametros.Paginacao != full.Parametros.Paginacao || len(codes.Cobs) != len(full.Cobs) || len(codes.Cobs) != 2 {
		t.Fatalf("page %+v, want %+v", codes.Parametros, full.Parametros)
	}
	for i, c := range codes.Cobs {
		w := full.Cobs[i]
		loc, wloc := "", ""
		if c.Loc != nil {
			loc = c.Loc.Location
		}
		if w.Loc != nil {
			wloc = w.Loc.Location
		}
		if c.Txid != w.Txid || c.PixCopiaECola != w.PixCopiaECola || c.Location != w.Location || loc != wloc ||
			c.Calendario.DataDeVencimento != w.Calendario.DataDeVencimento {
			t.Errorf("cob %d: %+v, want %+v", i, c, w)
		}
	}
	if codes.Cobs[0].PixCopiaECola != "000201éxyz" || codes.Cobs[1].Loc.Location != "only-loc" {
		t.Fatalf("codes %+v", codes.Cobs)
	}
}
