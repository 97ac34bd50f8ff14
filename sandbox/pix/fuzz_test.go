package pix_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"remessa/sandbox"
)

// handlerEnv serves the sandbox handler in-process (httptest) with a Pix
// token, the worker running.
type handlerEnv struct {
	h   http.Handler
	tok string
	key string
}

func newHandlerEnv(tb testing.TB) *handlerEnv {
	tb.Helper()
	e := start(tb, sandbox.Config{})
	h := e.rn.Server.Handler()
	req := httptest.NewRequest(http.MethodPost, "/oauth/token", strings.NewReader(`{"grant_type":"client_credentials"}`))
	req.SetBasicAuth(e.rn.ClientID, e.rn.ClientSecret)
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "127.0.0.1:1234"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &tok) != nil || tok.AccessToken == "" {
		tb.Fatalf("token: %d %s", w.Code, w.Body)
	}
	return &handlerEnv{h: h, tok: tok.AccessToken, key: e.key}
}

func (he *handlerEnv) do(method, path string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+he.tok)
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "127.0.0.1:1234"
	w := httptest.NewRecorder()
	he.h.ServeHTTP(w, req)
	return w
}

// checkAnswer fails on a 5xx or on an error body that is not a problem or
// an Efí error.
func checkAnswer(t *testing.T, w *httptest.ResponseRecorder, allowed ...int) {
	t.Helper()
	ok := false
	for _, s := range allowed {
		ok = ok || w.Code == s
	}
	if !ok {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if w.Code >= 400 {
		var p struct {
			Type, Nome string
			Status     int
		}
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || (p.Type == "" && p.Nome == "") {
			t.Fatalf("error body %d %q", w.Code, w.Body)
		}
	}
}

var fuzzSeq atomic.Int64

func cobvSeeds(key string) []string {
	return []string{
		`{"calendario":{"dataDeVencimento":"2030-01-31","validadeAposVencimento":30},"devedor":{"cpf":"52998224725","nome":"A"},"valor":{"original":"1.00"},"chave":"` + key + `"}`,
		`{"calendario":{"dataDeVencimento":"2030-01-31"},"devedor":{"cnpj":"11222333000181","nome":"A"},"valor":{"original":"100.00","multa":{"modalidade":2,"valorPerc":"2.00"},"juros":{"modalidade":3,"valorPerc":"1.00"},"desconto":{"modalidade":1,"descontoDataFixa":[{"data":"2030-01-01","valorPerc":"5.00"}]}},"chave":"` + key + `"}`,
		`{"calendario":{"dataDeVencimento":"2030-02-30"},"devedor":{"cpf":"1","nome":""},"valor":{"original":"0.00"},"chave":""}`,
		`{"valor":{"original":1e400},"devedor":null,"calendario":[]}`,
		`{"valor":{"desconto":{"modalidade":1,"descontoDataFixa":[{"data":"x"},null,1]}}}`,
		`{`, `null`, `"x"`, `[]`, ``, `{"a":1}{"b":2}`, "{\"devedor\":{\"nome\":\"\xff\"}}",
	}
}

func FuzzCobVBody(f *testing.F) {
	he := newHandlerEnv(f)
	for _, s := range cobvSeeds(he.key) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		txid := fmt.Sprintf("fuzz%026d", fuzzSeq.Add(1))
		checkAnswer(t, he.do(http.MethodPut, "/v2/cobv/"+txid, body), http.StatusCreated, http.StatusBadRequest, http.StatusConflict)
		checkAnswer(t, he.do(http.MethodPatch, "/v2/cobv/"+txid, body), http.StatusOK, http.StatusBadRequest, http.StatusNotFound)
		checkAnswer(t, he.do(http.MethodPut, "/v2/cob/"+txid, body), http.StatusCreated, http.StatusBadRequest, http.StatusConflict)
	})
}

func FuzzLoteBody(f *testing.F) {
	he := newHandlerEnv(f)
	for _, s := range cobvSeeds(he.key) {
		var item map[string]any
		if json.Unmarshal([]byte(s), &item) == nil && item != nil {
			item["txid"] = "txid00000000000000000000000001"
			b, _ := json.Marshal(map[string]any{"descricao": "x", "cobsv": []any{item}})
			f.Add(b)
		}
		f.Add([]byte(`{"cobsv":[` + s + `]}`))
	}
	f.Add([]byte(`{"cobsv":[{"txid":"txid00000000000000000000000001"},{"txid":"txid00000000000000000000000001"}]}`))
	f.Add([]byte(`{"cobsv":[1,"a",null,{"txid":12}],"descricao":5}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		id := fmt.Sprint(fuzzSeq.Add(1))
		checkAnswer(t, he.do(http.MethodPut, "/v2/lotecobv/"+id, body), http.StatusAccepted, http.StatusBadRequest)
		checkAnswer(t, he.do(http.MethodPatch, "/v2/lotecobv/"+id, body), http.StatusAccepted, http.StatusBadRequest, http.StatusNotFound)
		checkAnswer(t, he.do(http.MethodGet, "/v2/lotecobv/"+id, nil), http.StatusOK, http.StatusNotFound)
	})
}
