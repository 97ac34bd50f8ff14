package pix_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/sandbox"
)

// TestHugePageIsEmptyNot500: paginaAtual times itensPorPagina used to
// overflow and panic (500) on every Pix list; a page past the end is an
// empty page with the real totals.
func TestHugePageIsEmptyNot500(t *testing.T) {
	e := start(t, sandbox.Config{})
	if _, err := e.c.PutCob(ctx, txid("page", 1), api.CobRequest{Valor: api.PixValor{Original: "1.00"}, Chave: e.key}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	q := url.Values{}
	q.Set("inicio", now.Add(-time.Hour).UTC().Format(time.RFC3339))
	q.Set("fim", now.Add(time.Hour).UTC().Format(time.RFC3339))
	q.Set("paginacao.itensPorPagina", "1000")
	for _, page := range []string{strconv.Itoa(math.MaxInt64), strconv.Itoa(math.MaxInt64 / 1000), "1"} {
		q.Set("paginacao.paginaAtual", page)
		for _, path := range []string{"/v2/cob", "/v2/cobv", "/v2/pix", "/v2/gn/pix/enviados", "/v2/lotecobv", "/v2/webhook"} {
			res, err := e.c.Do(ctx, api.Pix, http.MethodGet, path+"?"+q.Encode(), nil)
			if err != nil {
				t.Fatalf("GET %s page %s: %v", path, page, err)
			}
			if res.Status != http.StatusOK {
				t.Fatalf("GET %s page %s: %d", path, page, res.Status)
			}
		}
		var out api.CobPage
		res, _ := e.c.Do(ctx, api.Pix, http.MethodGet, "/v2/cob?"+q.Encode(), nil)
		if err := json.Unmarshal(res.Body, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Cobs) != 0 || out.Parametros.Paginacao.QuantidadeTotalDeItens != 1 {
			t.Fatalf("page %s: %d items, total %d; want an empty page of a list of 1", page, len(out.Cobs), out.Parametros.Paginacao.QuantidadeTotalDeItens)
		}
	}
}

// TestExpiracaoIsInt32: calendario.expiracao (seconds) and
// validadeAposVencimento (days) are int32 in the central bank's schema;
// larger values overflowed the expiry into the past (a fresh charge could
// not be paid). They are refused naming the field.
func TestExpiracaoIsInt32(t *testing.T) {
	e := start(t, sandbox.Config{})
	big := math.MaxInt32 + 1
	_, err := e.c.PutCob(ctx, txid("exp", 1), api.CobRequest{Calendario: &api.PixCalendario{Expiracao: &big},
		Valor: api.PixValor{Original: "1.00"}, Chave: e.key})
	ae := wantEfi(t, err, http.StatusBadRequest, "valor_invalido")
	if ae.Mensagem == "" {
		t.Fatal("no message")
	}
	max := math.MaxInt32
	if _, err := e.c.PutCob(ctx, txid("exp", 2), api.CobRequest{Calendario: &api.PixCalendario{Expiracao: &max},
		Valor: api.PixValor{Original: "1.00"}, Chave: e.key}); err != nil {
		t.Fatalf("expiracao = 2^31-1: %v", err)
	}
	req := cobvReq(e.key, "52998224725", "1.00")
	req.Calendario.ValidadeAposVencimento = &big
	_, err = e.c.PutCobV(ctx, txid("exp", 3), req)
	wantProblem(t, err, http.StatusBadRequest, "CobVOperacaoInvalida", "calendario.validadeAposVencimento")
}

// TestErrorsEchoLittle: an error repeats at most a short piece of a huge
// id, value or property name, still naming the field.
func TestErrorsEchoLittle(t *testing.T) {
	e := start(t, sandbox.Config{})
	huge := strings.Repeat("x", 50000)
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPut, "/v2/cob/" + huge, `{}`},
		{http.MethodPut, "/v2/cobv/" + txid("echo", 1), `{"` + huge + `":1}`},
		{http.MethodPut, "/v2/webhook/" + huge, `{"webhookUrl":"https://a.example"}`},
		{http.MethodPut, "/v2/pix/" + huge + "/devolucao/" + huge, `{"valor":"1.00"}`},
	} {
		_, err := e.c.Do(ctx, api.Pix, c.method, c.path, []byte(c.body))
		ae := asAPI(t, err)
		if ae.Status >= 500 || ae.Status < 400 {
			t.Fatalf("%s %.40s: %d", c.method, c.path, ae.Status)
		}
		size := len(ae.Mensagem) + len(ae.Nome)
		if ae.Problem != nil {
			size += len(ae.Problem.Detail)
			for _, v := range ae.Problem.Violacoes {
				size += len(v.Propriedade) + len(v.Valor) + len(v.Razao)
			}
		}
		if size > 2000 {
			t.Errorf("%s %.40s: the error repeats %d bytes", c.method, c.path, size)
		}
	}
}
