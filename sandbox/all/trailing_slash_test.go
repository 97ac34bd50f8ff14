package all_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"remessa/sandbox"
	"remessa/sandbox/sandboxtest"
)

// wildcardValues are plausible values for the path wildcards of the route
// table; a name not listed gets "1". The values name nothing that exists,
// so that a DELETE answers the same (404 of the module) in both forms.
var wildcardValues = map[string]string{
	"txid":          "abcdefghijklmnopqrstuvwxyz01",
	"e2eId":         "E09089356202603021300SBX00000001",
	"idEnvio":       "envio1",
	"chave":         "8c1f5e6a-0000-4000-8000-000000000000",
	"splitConfigId": "cfg1",
	"token":         "tok1",
	"payee_code":    "0123456789abcdef0123456789abcdef",
}

var wildcardRE = regexp.MustCompile(`\{([^}.]+)(\.\.\.)?\}`)

// bearer gets a token over HTTP from path.
func bearer(t *testing.T, rn *sandbox.Running, base, path string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(`{"grant_type":"client_credentials"}`))
	req.SetBasicAuth(rn.ClientID, rn.ClientSecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.AccessToken == "" {
		t.Fatalf("token from %s: %d %v", path, resp.StatusCode, err)
	}
	return out.AccessToken
}

// routeNotFound tells the core's "no such route" answers (both dialects)
// from a module's "no such resource".
func routeNotFound(status int, body string) bool {
	return status == http.StatusNotFound && (strings.Contains(body, `"route_not_found"`) ||
		strings.Contains(body, "Recurso solicitado não foi encontrado: "))
}

// TestEveryRouteTakesATrailingSlash walks the server's own route table
// (Server.Routes, so a route added later is covered too) and calls each
// route on a real listener in its plain form and with one trailing slash:
// both must reach the same handler (same status class, never the core's
// 404, a 405 or a redirect).
func TestEveryRouteTakesATrailingSlash(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{ClientID: "Client_Id_slash", ClientSecret: "Client_Secret_slash"})
	routes := rn.Server.Routes()
	if len(routes) < 60 {
		t.Fatalf("only %d routes registered: %v", len(routes), routes)
	}
	v1, pix := bearer(t, rn, rn.URL, "/v1/authorize"), bearer(t, rn, rn.PixURL, "/oauth/token")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	seen := map[string]bool{}
	for _, pattern := range routes {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			t.Fatalf("pattern without a method: %q", pattern)
		}
		path = routePath(path)
		seen[strings.SplitN(path, "/", 3)[1]] = true
		call := func(p string) (int, string) {
			resp, b := callRoute(t, client, rn, v1, pix, method, p)
			return resp.StatusCode, b
		}
		plain, plainBody := call(path)
		if routeNotFound(plain, plainBody) || plain == http.StatusMethodNotAllowed {
			t.Errorf("%s %s (pattern %q): the plain form did not reach its route: %d %s", method, path, pattern, plain, plainBody)
			continue
		}
		slash, slashBody := call(path + "/")
		switch {
		case routeNotFound(slash, slashBody), slash == http.StatusMethodNotAllowed,
			slash >= 300 && slash < 400:
			t.Errorf("%s %s/: %d %s (without the slash: %d)", method, path, slash, slashBody, plain)
		case slash/100 != plain/100:
			t.Errorf("%s %s/: %d, without the slash %d\n%s\n%s", method, path, slash, plain, slashBody, plainBody)
		}
	}
	for _, prefix := range []string{"v1", "v2", "v3", "oauth", "sandbox"} {
		if !seen[prefix] {
			t.Errorf("no route under /%s in the table", prefix)
		}
	}
}

// callRoute calls one route of the table on rn's listeners the way a
// client would: a token of its API (v1 or pix), Basic credentials on the
// token routes, "{}" as the body of a write. It returns the answer (its
// body already read) and the body.
func callRoute(t *testing.T, client *http.Client, rn *sandbox.Running, v1, pix, method, p string) (*http.Response, string) {
	t.Helper()
	base, body := rn.URL, ""
	if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		body = "{}"
	}
	auth := ""
	switch {
	case p == "/v1/authorize" || p == "/v1/authorize/" || strings.HasPrefix(p, "/oauth/"):
		body = `{"grant_type":"client_credentials"}`
	case strings.HasPrefix(p, "/v1/"):
		auth = "Bearer " + v1
	case strings.HasPrefix(p, "/v2/") || strings.HasPrefix(p, "/v3/"):
		base, auth = rn.PixURL, "Bearer "+pix
	}
	req, err := http.NewRequest(method, base+p, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	} else if strings.HasPrefix(p, "/v1/authorize") || strings.HasPrefix(p, "/oauth/") {
		req.SetBasicAuth(rn.ClientID, rn.ClientSecret)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, p, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// routePath fills the wildcards of a route pattern's path with
// wildcardValues ("1" for a name not listed).
func routePath(path string) string {
	return wildcardRE.ReplaceAllStringFunc(path, func(w string) string {
		name := wildcardRE.FindStringSubmatch(w)[1]
		if v, ok := wildcardValues[name]; ok {
			return v
		}
		return "1"
	})
}
