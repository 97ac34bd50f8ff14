package charges_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"remessa/sandbox"
	_ "remessa/sandbox/all"
	"remessa/sandbox/faults"
)

// TestTokenizationPreflight: the payer's browser calls the three card
// tokenization routes from another origin, so each answers the CORS
// preflight through the whole core (no token), even with every fault on.
func TestTokenizationPreflight(t *testing.T) {
	srv, err := sandbox.New(sandbox.Config{DataDir: sandbox.Memory,
		Faults: faults.Config{All: faults.Rule{P500: 1, Quota: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	payee := srv.Credentials().PayeeCode
	for _, path := range []string{"/v1/pubkey?code=" + payee, "/v1/card/" + payee + "/jsonp", "/v1/installments/" + payee + "/jsonp"} {
		for range 2 { // twice: a quota of 1 would refuse the second
			r := httptest.NewRequest(http.MethodOptions, "http://127.0.0.1"+path, nil)
			r.RemoteAddr = "127.0.0.1:5000"
			r.Header.Set("Origin", "https://loja.example")
			r.Header.Set("Access-Control-Request-Method", "GET")
			w := httptest.NewRecorder()
			srv.Handler().ServeHTTP(w, r)
			h := w.Header()
			if w.Code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" ||
				!strings.Contains(h.Get("Access-Control-Allow-Methods"), "GET") ||
				!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") {
				t.Fatalf("OPTIONS %s: %d %v", path, w.Code, h)
			}
		}
	}
}
