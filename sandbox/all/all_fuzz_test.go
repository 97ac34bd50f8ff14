package all_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"remessa/sandbox"
	_ "remessa/sandbox/all"
	"remessa/sandbox/clock"
)

var methods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

// token asks the whole sandbox for a token at path.
func token(t testing.TB, h http.Handler, creds [2]string, path string) string {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"grant_type":"client_credentials"}`))
	r.SetBasicAuth(creds[0], creds[1])
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || out.AccessToken == "" {
		t.Fatalf("token from %s: %d %s", path, w.Code, w.Body)
	}
	return out.AccessToken
}

// FuzzAnyRoute sends any method, path and body, with a valid token of the
// path's API, through the whole sandbox (every module, the core's routing,
// auth and decoding): no answer may be a 5xx and nothing may panic. The
// control routes (/sandbox/...) are left out: they deliver webhooks to
// URLs the fuzzer would choose.
func FuzzAnyRoute(f *testing.F) {
	srv, err := sandbox.New(sandbox.Config{DataDir: sandbox.Memory, ClientID: "Client_Id_fuzz", ClientSecret: "Client_Secret_fuzz",
		Clock: clock.NewFake(time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC))})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	h := srv.Handler()
	creds := [2]string{"Client_Id_fuzz", "Client_Secret_fuzz"}
	v1, pix := token(f, h, creds, "/v1/authorize"), token(f, h, creds, "/oauth/token")
	key := srv.Credentials().PixKey
	payee := srv.Credentials().PayeeCode
	cobv := `{"calendario":{"dataDeVencimento":"2026-12-31"},"devedor":{"cpf":"52998224725","nome":"F"},"valor":{"original":"10.00"},"chave":"` + key + `"}`
	seeds := []struct {
		m    uint8
		path string
		body string
	}{
		{1, "/v1/charge", `{"items":[{"name":"a","value":1000}]}`},
		{1, "/v1/charge/one-step", `{"items":[{"name":"a","value":1000}],"payment":{"banking_billet":{"customer":{"name":"A B","cpf":"52998224725"},"expire_at":"2026-03-20"}}}`},
		{1, "/v1/carnet", `{"items":[{"name":"a","value":1000}],"customer":{"name":"A B","cpf":"52998224725"},"expire_at":"2026-03-31","repeats":3}`},
		{0, "/v1/charge/1000000", ``},
		{2, "/v1/charge/1000000/billet", `{"expire_at":"2026-04-01"}`},
		{2, "/v1/carnet/100000/parcels", `{"parcels":[{"parcel":1,"expire_at":"2026-05-01"}]}`},
		{0, "/v1/charges?charge_type=billet&begin_date=2026-01-01&end_date=2026-12-31&page=2&limit=1", ``},
		{0, "/v1/installments?brand=visa&total=10000", ``},
		{0, "/v1/pubkey?code=" + payee, ``},
		{5, "/v1/card/" + payee + "/jsonp", ``},
		{2, "/v2/cob/abcdefghijklmnopqrstuvwxyz01", `{"valor":{"original":"1.00"},"chave":"` + key + `"}`},
		{2, "/v2/cobv/abcdefghijklmnopqrstuvwxyz02", cobv},
		{3, "/v2/cobv/abcdefghijklmnopqrstuvwxyz02", `{"valor":{"original":"2.00"}}`},
		{2, "/v2/lotecobv/1", `{"cobsv":[` + strings.Replace(cobv, `{"calendario"`, `{"txid":"abcdefghijklmnopqrstuvwxyz03","calendario"`, 1) + `]}`},
		{0, "/v2/cob?inicio=2026-01-01T00:00:00Z&fim=2027-01-01T00:00:00Z&paginacao.paginaAtual=1", ``},
		{0, "/v2/pix?inicio=2026-01-01T00:00:00Z&fim=2027-01-01T00:00:00Z", ``},
		{2, "/v2/pix/E09089356202603021300SBX00000001/devolucao/d1", `{"valor":"1.00"}`},
		{2, "/v3/gn/pix/envio1", `{"valor":"1.00","pagador":{"chave":"` + key + `"},"favorecido":{"chave":"efipay@sejaefi.com.br"}}`},
		{1, "/v2/gn/split/config", `{"lancamento":{"imediato":true},"split":{"divisaoTarifa":"assumir_total","minhaParte":{"tipo":"porcentagem","valor":"100.00"},"repasses":[]}}`},
		{2, "/v2/webhook/" + key, `{"webhookUrl":"https://example.com/h"}`},
		{1, "/v2/gn/evp", ``},
		{0, "/v1/documents/charge/x/pdf", ``},
	}
	for _, s := range seeds {
		f.Add(s.m, s.path, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, m uint8, path string, body []byte) {
		if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "/sandbox") {
			return
		}
		u, err := url.ParseRequestURI(path)
		if err != nil || strings.HasPrefix(u.Path, "/sandbox") {
			return
		}
		method := methods[int(m)%len(methods)]
		r := httptest.NewRequest(method, "http://127.0.0.1:8080/", bytes.NewReader(body))
		r.URL = u
		r.RequestURI = path
		r.RemoteAddr = "127.0.0.1:40000"
		r.Header.Set("Content-Type", "application/json")
		if strings.HasPrefix(u.Path, "/v1/") {
			r.Header.Set("Authorization", "Bearer "+v1)
		} else {
			r.Header.Set("Authorization", "Bearer "+pix)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%s %q %q: %d %s", method, path, body, w.Code, w.Body)
		}
	})
}
