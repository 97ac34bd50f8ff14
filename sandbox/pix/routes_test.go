package pix_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"remessa/api"
	"remessa/sandbox"
	"remessa/sandbox/auth"
)

// TestEveryRouteScopeAndUnknownID goes through every Pix route with
// applications of different scopes (docs/pix-api.md, "Scopes accepted"):
// without any scope, or with every scope but the route's, the answer is
// 403 AcessoNegado; with only one of the route's scopes the request
// reaches the route and gets the documented answer for an unknown id or
// a bad body.
func TestEveryRouteScopeAndUnknownID(t *testing.T) {
	e := start(t, sandbox.Config{})
	const (
		unkTxid = "desconhecido0000000000000000001"
		unkE2E  = "E09089356202601011200SBX00000999"
		unkEVP  = "123e4567-e89b-42d3-a456-426614174000"
	)
	cobW := []string{"cob.write"}
	cobR := []string{"cob.read", "cob.write"}
	cobvW := []string{"cobv.write", "cob.write"}
	cobvR := []string{"cobv.read", "cob.read", "cobv.write", "cob.write"}
	lote := []string{"lotecobv.write", "lotecobv.read"}
	splitW, splitR := []string{"gn.split.write"}, []string{"gn.split.read"}
	pixR, pixW, send, sendR := []string{"pix.read"}, []string{"pix.write"}, []string{"pix.send"}, []string{"gn.pix.send.read"}
	hookW, hookR := []string{"webhook.write"}, []string{"webhook.read"}
	evpW, evpR := []string{"gn.pix.evp.write"}, []string{"gn.pix.evp.read"}
	rows := []struct {
		method, path, body string
		scopes             []string
		status             int
		want               string // problem type name or Efí nome; "" for a success
	}{
		{"PUT", "/v2/cob/" + unkTxid, `{`, cobW, 400, "json_invalido"},
		{"POST", "/v2/cob", `{`, cobW, 400, "json_invalido"},
		{"PATCH", "/v2/cob/" + unkTxid, `{}`, cobW, 404, "cobranca_nao_encontrada"},
		{"GET", "/v2/cob/" + unkTxid, ``, cobR, 404, "cobranca_nao_encontrada"},
		{"GET", "/v2/cob", ``, cobR, 400, "valor_invalido"},
		{"PUT", "/v2/cobv/" + unkTxid, `{`, cobvW, 400, "CobVOperacaoInvalida"},
		{"PATCH", "/v2/cobv/" + unkTxid, `{}`, cobvW, 404, "NaoEncontrado"},
		{"GET", "/v2/cobv/" + unkTxid, ``, cobvR, 404, "NaoEncontrado"},
		{"GET", "/v2/cobv", ``, cobvR, 400, "RequisicaoInvalida"},
		{"PUT", "/v2/lotecobv/77", `{"cobsv":[]}`, lote, 400, "LoteCobVOperacaoInvalida"},
		{"PATCH", "/v2/lotecobv/77", `{"cobsv":[{"txid":"` + unkTxid + `"}]}`, lote, 404, "NaoEncontrado"},
		{"GET", "/v2/lotecobv/77", ``, lote, 404, "NaoEncontrado"},
		{"GET", "/v2/lotecobv", ``, lote, 400, "RequisicaoInvalida"},
		{"POST", "/v2/gn/split/config", `{`, splitW, 400, "SplitConfigOperacaoInvalida"},
		{"PUT", "/v2/gn/split/config/abc", `{`, splitW, 400, "SplitConfigOperacaoInvalida"},
		{"GET", "/v2/gn/split/config/abc", ``, splitR, 404, "SplitConfigNaoEncontrado"},
		{"PUT", "/v2/gn/split/cob/" + unkTxid + "/vinculo/abc", ``, splitW, 404, "NaoEncontrado"},
		{"PUT", "/v2/gn/split/cobv/" + unkTxid + "/vinculo/abc", ``, splitW, 404, "NaoEncontrado"},
		{"DELETE", "/v2/gn/split/cob/" + unkTxid + "/vinculo", ``, splitW, 404, "NaoEncontrado"},
		{"DELETE", "/v2/gn/split/cobv/" + unkTxid + "/vinculo", ``, splitW, 404, "NaoEncontrado"},
		{"GET", "/v2/gn/split/cob/" + unkTxid, ``, splitR, 404, "NaoEncontrado"},
		{"GET", "/v2/gn/split/cobv/" + unkTxid, ``, splitR, 404, "NaoEncontrado"},
		{"GET", "/v2/pix/" + unkE2E, ``, pixR, 404, "NaoEncontrado"},
		{"GET", "/v2/pix", ``, pixR, 400, "RequisicaoInvalida"},
		{"PUT", "/v2/pix/" + unkE2E + "/devolucao/d1", `{"valor":"1.00"}`, pixW, 404, "NaoEncontrado"},
		{"GET", "/v2/pix/" + unkE2E + "/devolucao/d1", ``, pixR, 404, "NaoEncontrado"},
		{"PUT", "/v2/gn/pix/envio1", `{`, send, 400, "json_invalido"},
		{"PUT", "/v3/gn/pix/envio1", `{`, send, 400, "json_invalido"},
		{"GET", "/v2/gn/pix/enviados/" + unkE2E, ``, sendR, 404, "PixEnviadoNaoEncontrado"},
		{"GET", "/v2/gn/pix/enviados/id-envio/envio1", ``, sendR, 404, "PixEnviadoNaoEncontrado"},
		{"GET", "/v2/gn/pix/enviados", ``, sendR, 400, "RequisicaoInvalida"},
		{"PUT", "/v2/webhook/" + e.key, `{`, hookW, 400, "WebhookOperacaoInvalida"},
		{"GET", "/v2/webhook/" + e.key, ``, hookR, 404, "NaoEncontrado"},
		{"DELETE", "/v2/webhook/" + e.key, ``, hookW, 404, "NaoEncontrado"},
		{"GET", "/v2/webhook", ``, hookR, 400, "RequisicaoInvalida"},
		{"POST", "/v2/gn/evp", ``, evpW, 201, ""},
		{"GET", "/v2/gn/evp", ``, evpR, 200, ""},
		{"DELETE", "/v2/gn/evp/" + unkEVP, ``, evpW, 404, "NaoEncontrado"},
	}
	apps := map[string]*api.Client{}
	appOf := func(scopes []string) *api.Client {
		k := strings.Join(scopes, " ")
		if apps[k] == nil {
			apps[k], _ = e.appWith(t, false, scopes...)
		}
		return apps[k]
	}
	do := func(c *api.Client, method, path, body string) (int, string) {
		t.Helper()
		var in any
		if body != "" {
			in = []byte(body)
		}
		res, err := c.Do(ctx, api.Pix, method, path, in)
		if err == nil {
			return res.Status, ""
		}
		ae := asAPI(t, err)
		if ae.Problem != nil {
			return ae.Status, ae.Problem.TypeName()
		}
		return ae.Status, ae.Nome
	}
	for _, r := range rows {
		name := r.method + " " + r.path
		others := slices.DeleteFunc(slices.Clone(auth.AllPixScopes), func(s string) bool { return slices.Contains(r.scopes, s) })
		for _, set := range [][]string{{}, others} {
			if st, typ := do(appOf(set), r.method, r.path, r.body); st != http.StatusForbidden || typ != "AcessoNegado" {
				t.Errorf("%s with scopes %q: %d %s, want 403 AcessoNegado", name, set, st, typ)
			}
		}
		for _, sc := range r.scopes {
			if st, typ := do(appOf([]string{sc}), r.method, r.path, r.body); st != r.status || typ != r.want {
				t.Errorf("%s with scope %s: %d %q, want %d %q", name, sc, st, typ, r.status, r.want)
			}
		}
	}
}
