package all_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"remessa/sandbox"
	"remessa/sandbox/sandboxtest"
)

// TestPixOptionalNull: typed clients serialize an unset optional field as
// null. The Pix API takes such a field as not sent (the charges API
// always did, through encoding/json); a required one sent as null is still
// refused naming it, and in a PATCH null removes the field (merge patch).
func TestPixOptionalNull(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{ClientID: "Client_Id_null", ClientSecret: "Client_Secret_null"})
	pix := bearer(t, rn, rn.PixURL, "/oauth/token")
	key := rn.PixKey
	due := time.Now().AddDate(0, 2, 0).Format("2006-01-02")
	cobv := func(txid string) string {
		return `{` + txid + `"calendario":{"dataDeVencimento":"` + due + `","validadeAposVencimento":null},` +
			`"devedor":{"cpf":"52998224725","nome":"Ana Silva","email":null,"logradouro":null,"cidade":null,"uf":null,"cep":null},` +
			`"valor":{"original":"10.00","multa":null,"juros":null,"abatimento":null,"desconto":null},"chave":"` + key + `","solicitacaoPagador":null,"infoAdicionais":null}`
	}
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"PUT", "/v2/cob/abcdefghijklmnopqrstuvwxyzN1", `{"calendario":null,"devedor":null,"loc":null,"valor":{"original":"1.00","modalidadeAlteracao":null},"chave":"` + key + `","solicitacaoPagador":null,"infoAdicionais":null}`, 201},
		{"PUT", "/v2/cob/abcdefghijklmnopqrstuvwxyzN2", `{"calendario":{"expiracao":null},"valor":{"original":"1.00"},"chave":"` + key + `"}`, 201},
		{"POST", "/v2/cob", `{"calendario":null,"valor":{"original":"1.00"},"chave":"` + key + `","solicitacaoPagador":null}`, 201},
		{"PUT", "/v2/cobv/abcdefghijklmnopqrstuvwxyzN3", cobv(""), 201},
		{"PATCH", "/v2/cobv/abcdefghijklmnopqrstuvwxyzN3", `{"valor":{"original":"12.00","multa":null},"solicitacaoPagador":null,"devedor":{"email":null}}`, 200},
		{"PUT", "/v2/lotecobv/31", `{"descricao":null,"cobsv":[` + cobv(`"txid":"abcdefghijklmnopqrstuvwxyzN4",`) + `]}`, 202},
		// A required property sent as null is not one left out.
		{"PUT", "/v2/cob/abcdefghijklmnopqrstuvwxyzN5", `{"valor":{"original":"1.00"},"chave":null}`, 400},
		{"PUT", "/v2/cobv/abcdefghijklmnopqrstuvwxyzN6", `{"calendario":{"dataDeVencimento":null},"devedor":{"cpf":"52998224725","nome":"Ana"},"valor":{"original":"1.00"},"chave":"` + key + `"}`, 400},
	} {
		status, body := send(t, c.method, rn.PixURL+c.path, pix, c.body)
		if status != c.want {
			t.Errorf("%s %s %s: %d %s, want %d", c.method, c.path, c.body, status, body, c.want)
		}
		if c.want == 400 && !strings.Contains(body, "null") {
			t.Errorf("%s %s: the refusal does not say null: %s", c.method, c.path, body)
		}
	}
	// A split configuration needs a second account; here only: descricao
	// and txid sent as null are not what is wrong with it.
	if _, b := send(t, "POST", rn.PixURL+"/v2/gn/split/config", pix, `{"descricao":null,"txid":null,"lancamento":{"imediato":true},"split":{"divisaoTarifa":"assumir_total","minhaParte":{"tipo":"porcentagem","valor":"100.00"},"repasses":[]}}`); strings.Contains(b, `"descricao"`) || strings.Contains(b, `"txid"`) || !strings.Contains(b, "split.repasses") {
		t.Errorf("split config with null descricao: %s", b)
	}
	// The batch item is created, and the PATCH's nulls removed nothing
	// required and kept the rest.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, b := send(t, "GET", rn.PixURL+"/v2/lotecobv/31", pix, "")
		if strings.Contains(b, `"CRIADA"`) {
			break
		}
		if !strings.Contains(b, `"EM_PROCESSAMENTO"`) || time.Now().After(deadline) {
			t.Fatalf("batch: %s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	status, b := send(t, "GET", rn.PixURL+"/v2/cobv/abcdefghijklmnopqrstuvwxyzN3", pix, "")
	var got struct {
		Valor   struct{ Original string } `json:"valor"`
		Devedor struct{ Nome string }     `json:"devedor"`
	}
	if err := json.Unmarshal([]byte(b), &got); status != http.StatusOK || err != nil || got.Valor.Original != "12.00" || got.Devedor.Nome != "Ana Silva" {
		t.Errorf("cobv after PATCH: %d %s", status, b)
	}
}

// TestQueryParametersAnyOrder: list and query routes read their
// parameters by name, in any order, ignore ones they do not know (an SDK's
// newer filter, a cache-buster) and take an empty value as not sent.
func TestQueryParametersAnyOrder(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{ClientID: "Client_Id_q", ClientSecret: "Client_Secret_q"})
	v1, pix := bearer(t, rn, rn.URL, "/v1/authorize"), bearer(t, rn, rn.PixURL, "/oauth/token")
	if status, b := send(t, "POST", rn.URL+"/v1/charge", v1, `{"items":[{"name":"a","value":1000}],"metadata":{"custom_id":"q1"}}`); status != 200 {
		t.Fatalf("charge: %d %s", status, b)
	}
	if status, b := send(t, "PUT", rn.PixURL+"/v2/cob/abcdefghijklmnopqrstuvwxyzQ1", pix, `{"valor":{"original":"1.00"},"chave":"`+rn.PixKey+`"}`); status != 201 {
		t.Fatalf("cob: %d %s", status, b)
	}
	for _, c := range []struct {
		base, token string
		forms       []string // the same query, written differently
		want        string   // in every answer
	}{
		{rn.URL, v1, []string{
			"/v1/charges?charge_type=billet&begin_date=2020-01-01&end_date=2099-01-01&custom_id=q1",
			"/v1/charges?custom_id=q1&end_date=2099-01-01&begin_date=2020-01-01&charge_type=billet",
			"/v1/charges?end_date=2099-01-01&_=1700000000&charge_type=billet&custom_id=q1&begin_date=2020-01-01&status=&value=",
		}, `"custom_id":"q1"`},
		{rn.URL, v1, []string{
			"/v1/installments?brand=visa&total=10000",
			"/v1/installments?total=10000&brand=visa&payee_code=x",
		}, `"name":"visa"`},
		{rn.PixURL, pix, []string{
			"/v2/cob?inicio=2020-01-01T00:00:00Z&fim=2099-01-01T00:00:00Z",
			"/v2/cob?fim=2099-01-01T00:00:00Z&paginacao.itensPorPagina=10&inicio=2020-01-01T00:00:00Z&foo=bar&cpf=",
		}, `"txid":"abcdefghijklmnopqrstuvwxyzQ1"`},
		{rn.PixURL, pix, []string{
			"/v2/pix?inicio=2020-01-01T00:00:00Z&fim=2099-01-01T00:00:00Z",
			"/v2/pix?fim=2099-01-01T00:00:00Z&x=1&inicio=2020-01-01T00:00:00Z",
		}, `"pix":[]`},
	} {
		for _, q := range c.forms {
			status, b := send(t, "GET", c.base+q, c.token, "")
			if status != http.StatusOK || !strings.Contains(b, c.want) {
				t.Errorf("GET %s: %d %s", q, status, b)
			}
		}
	}
}
